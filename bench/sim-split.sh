#!/usr/bin/env bash
# `split` at scale: examples/grid_split on RANKS simulated ranks (a square-ish grid split into
# its rows and its columns, every row and column summed and checked) on the default model;
# prints host time, peak RSS and bytes per rank. Evenly spaced members keep no table
# (crates/mpsim/src/comm/group.rs); before that, one split of 64,000 ranks took 16 GB.
# Guarded like bench/sim-scale.sh (bench/guarded-run.sh).
# Usage: bench/sim-split.sh [RANKS=1000000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/guarded-run.sh"
ranks=${1:-1000000}
cd "$here/.."
cargo build --release -q -p mpsim --example grid_split
log=$(mktemp); trap 'rm -f "$log"' EXIT
guarded_run "$log" target/release/examples/grid_split --backend sim --ranks "$ranks"
grep -E 'predicted time|sum checked' "$log"
report_rss "$log" "$ranks" "grid_split $ranks ranks (2 splits)"
