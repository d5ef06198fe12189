#!/usr/bin/env bash
# Threads backend: short 2-rank token rings with ranks kept to cores of their own (--bind
# auto, the default) against left to the OS (--bind none), runs interleaved. An unbound rank thread may start on its parent's core, and two spinning ranks
# on one core wait for the OS's load balancer (milliseconds); the script counts such runs.
# Prints, per setting: the fastest, median and slowest run, and how many took over SLOW_MS.
# Usage: bench/threads-bind.sh [RUNS=25] [ITERS=1000] [SLOW_MS=1]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-25}; iters=${2:-1000}; slow_ms=${3:-1}
cd "$here/.."
cargo build --release -q -p mpsim --example ring
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
for _ in $(seq "$runs"); do
  for bind in auto none; do
    t=$(target/release/examples/ring --backend threads --ranks 2 --iterations "$iters" --bind "$bind" \
      2>/dev/null | sed -n 's/.*time_ns=\([0-9]*\).*/\1/p')
    echo "$bind $t" >>"$raw"
  done
done
echo "2-rank ring, $iters trips, $runs runs each (time of trips 2..$iters):"
for bind in auto none; do
  awk -v b="$bind" '$1 == b { print $2 }' "$raw" | sort -n | awk -v b="$bind" -v s="$slow_ms" '
    { a[NR] = $1; if ($1 > s * 1e6) n++ }
    END { printf "  --bind %-4s  min %8.3f ms  median %8.3f ms  max %8.3f ms  over %s ms: %d of %d\n",
          b, a[1] / 1e6, a[int((NR + 1) / 2)] / 1e6, a[NR] / 1e6, s, n, NR }'
done
