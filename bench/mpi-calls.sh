#!/usr/bin/env bash
# The mpi backend's instructions per message, against C on the same Open MPI, counted by
# callgrind (stable on a loaded host, where bench/mpi-ring.sh's times are not): a ring of ONE
# process (each iteration a blocking send to itself and the blocking receive of it, 8 bytes:
# bench/peers/ring.c and examples/ring.rs under `mpirun -np 1`), run at ITERS and 2 x ITERS
# iterations; the difference over ITERS is the instructions of one iteration (MPI_Init and the
# rest cancel out). Nothing waits, so this is the cost of the calls themselves, MPI's share
# included (the same in both), not a latency.
# Prints C's and mpsim's instructions per iteration and the ratio mpsim/C.
# Usage: bench/mpi-calls.sh [ITERS=10000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
iters=${1:-10000}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || "$root/scripts/install-deps"
command -v valgrind >/dev/null || { echo "bench/mpi-calls.sh needs valgrind" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

mpicc -O2 "$here/peers/ring.c" -o "$tmp/ring"
(cd "$root" && cargo build --release -q -p mpsim --features mpi --example ring)
bin="${CARGO_TARGET_DIR:-$root/target}/release/examples/ring"

# Instructions of a whole run of "$@" (one process under callgrind).
count() {
  mpirun -np 1 valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$@" >/dev/null 2>&1
  awk '/^totals:/ { print $2 }' "$tmp/out"
}
per_iter() {
  local one two
  one=$(count "$@" "$iters")
  two=$(count "$@" $((2 * iters)))
  echo $(((two - one) / iters))
}
echo "$(mpirun --version | head -n1), 1 process, $iters and $((2 * iters)) iterations" >&2
c=$(per_iter "$tmp/ring")
m=$(per_iter "$bin" --backend mpi --iterations)
printf "%-44s %10s %10s %8s\n" "instructions per iteration (send + recv)" "C" "mpsim" "mpsim/C"
awk -v c="$c" -v m="$m" 'BEGIN { printf "%-44s %10d %10d %8.2f\n", "blocking 8 B to itself", c, m, m / c }'
