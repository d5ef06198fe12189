#!/usr/bin/env bash
# How the threads backend's waits (--wait) do when ranks share cores: a token ring
# (examples/ring --backend threads) of each rank count under each wait policy, microseconds
# per hop (trips 2..N timed on rank 0, see examples/ring.rs), minimum and median over ROUNDS
# interleaved runs. `auto` is what a run gets by default (crates/mpsim-threads/src/rank.rs,
# WaitPolicy, says what it picks and why).
# Usage: bench/threads-wait.sh [-r ROUNDS=5] [-i TRIPS=4000] [-w "auto yield park"] [RANKS...]
#        (default RANKS: 2 3 4 5 8 16 64)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=5; trips=4000; waits="auto yield park"
while getopts "r:i:w:" o; do
  case $o in r) rounds=$OPTARG ;; i) trips=$OPTARG ;; w) waits=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 3 4 5 8 16 64)
cd "$here/.."
cargo build --release -q -p mpsim --example ring
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
for _ in $(seq "$rounds"); do
  for n in "${ranks[@]}"; do
    for w in $waits; do
      target/release/examples/ring --backend threads --wait "$w" --ranks "$n" \
        --iterations "$trips" 2>/dev/null | grep -o 'time_ns=[0-9]*' | cut -d= -f2 |
        awk -v n="$n" -v w="$w" -v i="$trips" '{ printf "%s %s %.3f\n", n, w, $1 / ((i - 1) * n) / 1000 }' >>"$raw"
    done
  done
done
echo "token ring under threads on $(nproc) cores, us per hop over $rounds runs (min / median):"
printf '%6s' ranks; for w in $waits; do printf '%18s' "$w"; done; echo
for n in "${ranks[@]}"; do
  printf '%6s' "$n"
  for w in $waits; do
    awk -v n="$n" -v w="$w" '$1 == n && $2 == w { print $3 }' "$raw" | sort -n |
      awk '{ a[NR] = $1 } END { printf "%18s", sprintf("%.2f / %.2f", a[1], a[int((NR + 1) / 2)]) }'
  done
  echo
done
