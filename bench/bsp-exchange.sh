#!/usr/bin/env bash
# BSP total exchange on the threads backend against the same exchange with Open MPI (issue 36):
# mpsim's examples/bsp_exchange.rs (BSMP messages, DRMA puts) beside bench/peers/exchange.c
# (point-to-point Isend/Irecv/Waitall; one-sided MPI_Put between MPI_Win_fence), 2 and 4
# processes, 16 B to 64 KiB per message. Prints messages and bytes per second of each and the
# ratio mpsim / Open MPI (higher is better for mpsim). Each pair runs back to back, never
# together; numbers from a 2-core host shared with other work move between runs.
# Usage: bench/bsp-exchange.sh [STEPS=200]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
steps=${1:-200}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || "$here/install-peers.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$root" && cargo build --release -q -p mpsim --example bsp_exchange)
mpsim="${CARGO_TARGET_DIR:-$root/target}/release/examples/bsp_exchange"
mpicc -O2 "$here/peers/exchange.c" -o "$tmp/exchange"
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
echo "# $steps supersteps each; mpsim threads backend vs $(mpirun --version | head -n1)"
printf "%5s %6s %8s %12s %12s %7s %14s %14s %7s\n" procs mode bytes mpsim_msg/s ompi_msg/s ratio \
  mpsim_B/s ompi_B/s ratio
for p in 2 4; do
  for pair in "bsmp p2p" "drma rma"; do
    set -- $pair
    for bytes in 16 256 4096 65536; do
      m=$("$mpsim" --backend threads --ranks "$p" --mode "$1" --bytes "$bytes" --supersteps "$steps" | grep '^result')
      o=$(mpirun --allow-run-as-root --oversubscribe -np "$p" "$tmp/exchange" "$2" "$bytes" "$steps")
      mm=$(echo "$m" | field msgs_per_s); om=$(echo "$o" | field msgs_per_s)
      mb=$(echo "$m" | field bytes_per_s); ob=$(echo "$o" | field bytes_per_s)
      awk -v p="$p" -v mode="$1/$2" -v b="$bytes" -v mm="$mm" -v om="$om" -v mb="$mb" -v ob="$ob" 'BEGIN {
        printf "%5d %6s %8d %12.0f %12.0f %7.2f %14.0f %14.0f %7.2f\n", p, mode, b, mm, om, mm / om, mb, ob, mb / ob }'
    done
  done
done
