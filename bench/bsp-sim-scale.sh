#!/usr/bin/env bash
# BSP at scale on the simulator (issue 36): bsp_shift, one 8-byte BSMP message per process per
# superstep, at P processes; prints the host time per superstep (the difference between a run
# of S+1 supersteps and one of 1, divided by S: start-up and the end excluded) and peak RSS per
# process of the longer run. Goals of the issue: a 1,048,576-process superstep in under 10 s,
# under 2 KB per process. Guarded like bench/sim-scale.sh (22 GiB address space, 30 minutes).
# Usage: bench/bsp-sim-scale.sh [P...=4096 1048576] (S=10, BSP_TIMING=p2p by default)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/guarded-run.sh"
cd "$here/.."
steps=${S:-10}
timing=${BSP_TIMING:-p2p}
[ $# -gt 0 ] || set -- 4096 1048576
cargo build --release -q -p mpsim --example bsp_shift
seconds() { # wall time of LOG in seconds
  sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }'
}
for p in "$@"; do
  one=$(mktemp); many=$(mktemp)
  guarded_run "$one" target/release/examples/bsp_shift --ranks "$p" --supersteps 1 --bsp-timing "$timing"
  guarded_run "$many" target/release/examples/bsp_shift --ranks "$p" --supersteps $((steps + 1)) --bsp-timing "$timing"
  grep -E '^result|predicted time' "$many"
  awk -v a="$(seconds "$one")" -v b="$(seconds "$many")" -v s="$steps" -v p="$p" 'BEGIN {
    printf "bsp_shift %d processes: %.3f s host time per superstep\n", p, (b - a) / s }'
  report_rss "$many" "$p" "bsp_shift $p processes x $((steps + 1)) supersteps"
  rm -f "$one" "$many"
done
