#!/usr/bin/env bash
# Simulator memory at scale: a ring of RANKS ranks, one iteration, on the default model;
# prints host time, peak RSS and bytes per rank (goal: at most 1 KB per rank at 10,000,000).
# Guarded by a 22 GiB address-space limit and a 30-minute timeout so a run that does not fit
# fails instead of taking the machine down.
# Usage: bench/sim-scale.sh [RANKS=10000000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=${1:-10000000}
cd "$here/.."
cargo build --release -q -p mpsim --example ring
log=$(mktemp); trap 'rm -f "$log"' EXIT
( ulimit -v $((22 * 1024 * 1024)); timeout 1800 /usr/bin/time -v \
    target/release/examples/ring --backend sim --ranks "$ranks" --iterations 1 ) >"$log" 2>&1 \
  || { echo "run failed:"; tail -5 "$log"; exit 1; }
grep -E 'predicted time|token intact' "$log"
rss_kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
awk -v r="$ranks" -v k="$rss_kib" -v w="$wall" 'BEGIN {
  printf "ring %d ranks x 1: wall %s, peak RSS %.2f GiB, %.0f bytes per rank\n", r, w, k / 1048576, k * 1024 / r }'
