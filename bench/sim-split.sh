#!/usr/bin/env bash
# `split` at scale: examples/grid_split on RANKS simulated ranks (a square-ish grid split into
# its rows and its columns, every row and column summed and checked) on the default model;
# prints host time, peak RSS and bytes per rank. Evenly spaced members keep no table
# (crates/mpsim/src/comm/group.rs); before that, one split of 64,000 ranks took 16 GB.
# Guarded like bench/sim-scale.sh: a 22 GiB address-space limit and a 30-minute timeout.
# Usage: bench/sim-split.sh [RANKS=1000000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=${1:-1000000}
cd "$here/.."
cargo build --release -q -p mpsim --example grid_split
log=$(mktemp); trap 'rm -f "$log"' EXIT
( ulimit -v $((22 * 1024 * 1024)); timeout 1800 /usr/bin/time -v \
    target/release/examples/grid_split --backend sim --ranks "$ranks" ) >"$log" 2>&1 \
  || { echo "run failed:"; tail -5 "$log"; exit 1; }
grep -E 'predicted time|sum checked' "$log"
rss_kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
awk -v r="$ranks" -v k="$rss_kib" -v w="$wall" 'BEGIN {
  printf "grid_split %d ranks (2 splits): wall %s, peak RSS %.2f GiB, %.0f bytes per rank\n", r, w, k / 1048576, k * 1024 / r }'
