#!/usr/bin/env bash
# Instructions per matching operation (callgrind), engine vs naive lists, per case and depth.
# Repeatable on a noisy machine. Usage: bench/matching-callgrind.sh [ITERS]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
N=${1:-20000}
cargo build --release -q -p mpsim-proto --example matching_cycles
bin=target/release/examples/matching_cycles
count() { # case depth iters engine -> total instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per_op() { # case depth engine -> instructions per operation
  local a b; a=$(count "$1" "$2" "$N" "$3"); b=$(count "$1" "$2" $((2 * N)) "$3")
  echo $(( (b - a) / N ))
}
printf '%-9s %6s %10s %10s %8s\n' case depth engine naive naive/eng
for case in exact wildcard miss arrive; do
  for depth in 1 16 256 4096 65536; do
    e=$(per_op "$case" "$depth" fast); n=$(per_op "$case" "$depth" naive)
    printf '%-9s %6d %10d %10d %8.1f\n' "$case" "$depth" "$e" "$n" "$(echo "$n / $e" | bc -l)"
  done
done
