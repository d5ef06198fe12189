#!/usr/bin/env bash
# The parallel simulator's speed-up: examples/stencil2d (2D halo exchange, thousands of
# messages per lookahead), examples/ring (one message in flight: a round carries the token
# across a block) and examples/pingpong with 2 ranks (the worst case: every message ends a
# round) simulated on 1 and on THREADS threads (--sim-threads), ROUNDS interleaved rounds;
# prints the median wall time of each and the speed-up, and checks that the outputs (report
# included) are the same bytes.
# Usage: bench/sim-parallel.sh [-t THREADS=nproc] [-r ROUNDS=3] [-n RANKS=4096] [-i ITERS=20]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=$(nproc); rounds=3; ranks=4096; iters=20
while getopts "t:r:n:i:" o; do
  case $o in t) threads=$OPTARG ;; r) rounds=$OPTARG ;; n) ranks=$OPTARG ;; i) iters=$OPTARG ;; *) exit 2 ;; esac
done
cargo build --release -q -p mpsim --example stencil2d --example ring --example pingpong
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cases=("stencil2d --ranks $ranks --iterations $iters --n 8 --compute modeled"
       "ring --ranks 1024 --iterations 300"
       "pingpong --ranks 2 --sizes 8 --reps 20")
echo "host: $(nproc) cores; $rounds interleaved rounds; median wall time"
for c in "${cases[@]}"; do
  set -- $c
  bin=target/release/examples/$1; shift
  for r in $(seq "$rounds"); do
    for t in 1 "$threads"; do
      s=$(date +%s.%N)
      "$bin" "$@" --sim-threads "$t" --report text >"$tmp/out.$t" 2>/dev/null
      e=$(date +%s.%N)
      echo "$t $(echo "$e - $s" | bc)" >>"$tmp/times"
    done
    cmp -s "$tmp/out.1" "$tmp/out.$threads" || { echo "outputs differ: $c" >&2; exit 1; }
  done
  med() { awk -v t="$1" '$1 == t { print $2 }' "$tmp/times" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
  one=$(med 1); many=$(med "$threads")
  printf "%-62s 1 thread %6.2f s   %d threads %6.2f s   speed-up %.2fx   same output\n" \
    "$c" "$one" "$threads" "$many" "$(echo "$one / $many" | bc -l)"
  rm -f "$tmp/times"
done
