#!/usr/bin/env bash
# Simulator memory at scale: a ring of RANKS ranks, one iteration, on the default model;
# prints host time, peak RSS and bytes per rank (goal: at most 1 KB per rank at 10,000,000).
# Guarded by a 22 GiB address-space limit and a 30-minute timeout so a run that does not fit
# fails instead of taking the machine down (bench/guarded-run.sh).
# Usage: bench/sim-scale.sh [RANKS=10000000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/guarded-run.sh"
ranks=${1:-10000000}
cd "$here/.."
cargo build --release -q -p mpsim --example ring
log=$(mktemp); trap 'rm -f "$log"' EXIT
guarded_run "$log" target/release/examples/ring --backend sim --ranks "$ranks" --iterations 1
grep -E 'predicted time|token intact' "$log"
report_rss "$log" "$ranks" "ring $ranks ranks x 1"
