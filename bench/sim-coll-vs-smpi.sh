#!/usr/bin/env bash
# Simulation speed on one collective call at scale, side by side with SimGrid SMPI: allreduce
# (f64 sum) and bcast (from rank 0) of 8 B and 1 MiB on RANKS ranks (default 4,096), on the same
# cluster platform as bench/sim-ring.sh (1 us / 10 GB/s links, literal latency). Per case the
# host wall time and peak RSS of each simulator's whole run (start, ranks made, the call, the
# end), and the ratio of host times (goal: SMPI / mpsim at least 100).
# - SMPI runs bench/peers/coll.c (MPI_Allreduce / MPI_Bcast with SMPI's default selector, one
#   call after a barrier, then a 4-byte check allreduce) with its fastest settings
#   (docs/peers.md: -no-privatize, no stack guard pages, its tree barrier) and 512 KiB stacks
#   (its default 8 MiB per rank reserves 32 GiB of address space at 4,096 ranks, over the
#   cap; coll.c needs little stack), under TIMEOUT seconds
#   (default 600) and a 22 GiB address-space cap; a run that times out is reported as "> T s",
#   and its ratio as a lower bound.
# - mpsim runs examples/coll_table.rs's simulation of one call of the algorithm the default
#   model chooses (--sim-limit lifted so that 1 MiB is simulated too), under the same caps.
# Each case runs once per side, mpsim first; the machine's speed moves by up to 2x over
# seconds (docs/peers.md), which a ratio of 100x or more does not hide.
# Usage: bench/sim-coll-vs-smpi.sh [RANKS=4096] [TIMEOUT=600] [CASES="allreduce:8 bcast:8
#        allreduce:1048576 bcast:1048576"]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
ranks=${1:-4096}; limit=${2:-600}
cases=${3:-"allreduce:8 bcast:8 allreduce:1048576 bcast:1048576"}
command -v smpicc >/dev/null || "$here/install-peers.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

(cd "$root" && cargo build --release -q -p mpsim --example coll_table)
table="${CARGO_TARGET_DIR:-$root/target}/release/examples/coll_table"
smpicc -O2 "$here/peers/coll.c" -o "$tmp/coll" 2>/dev/null
"$here/peers/smpi-platform.sh" "$ranks" "$tmp"
mkdir "$tmp/t"

# capped LOG CMD...: CMD under the caps, /usr/bin/time -v into LOG and its wall time in
# seconds into LOG.wall; prints "ok", "timeout" or "failed".
capped() {
  local log=$1 rc=0 t0 t1; shift
  t0=$(date +%s.%N)
  ( ulimit -v $((22 * 1024 * 1024)); timeout "$limit" /usr/bin/time -v "$@" ) >"$log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }' >"$log.wall"
  if [ "$rc" -eq 0 ]; then echo ok; elif [ "$rc" -eq 124 ]; then echo timeout; else echo failed; fi
}
# seconds and GiB of a LOG written by capped.
wall_s() { cat "$1.wall"; }
rss_gib() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1" | awk '{ printf "%.2f", $1 / 1048576 }'; }

printf '%-9s %8s %6s  %-22s %-22s %s\n' op bytes ranks "mpsim s (GiB)" "smpi s (GiB)" "smpi/mpsim"
for c in $cases; do
  op=${c%%:*}; bytes=${c##*:}
  st=$(capped "$tmp/mpsim.log" "$table" --collectives "$op" --ranks "$ranks" --bytes "$bytes" \
       --sim-limit 1000000000000000)
  if [ "$st" != ok ]; then echo "$op $bytes: mpsim run $st:"; tail -3 "$tmp/mpsim.log"; exit 1; fi
  m=$(wall_s "$tmp/mpsim.log"); mg=$(rss_gib "$tmp/mpsim.log")
  st=$(cd "$tmp" && TMPDIR="$tmp/t" capped "$tmp/smpi.log" smpirun -np "$ranks" \
       -platform cluster.xml -hostfile hosts.txt -no-privatize --cfg=smpi/lat-factor:0:1 \
       --cfg=smpi/bw-factor:0:1 --cfg=contexts/guard-size:0 --cfg=contexts/stack-size:512 \
       --cfg=smpi/barrier:ompi_tree \
       ./coll "$op" "$bytes" 1)
  case $st in
    ok) s=$(wall_s "$tmp/smpi.log"); sg=$(rss_gib "$tmp/smpi.log")
        ratio=$(awk -v s="$s" -v m="$m" 'BEGIN { printf "%.1fx", s / m }') ;;
    timeout) s="> $limit"; sg="?"; ratio=$(awk -v s="$limit" -v m="$m" 'BEGIN { printf "> %.0fx", s / m }') ;;
    *) s="failed"; sg="?"; ratio="-"; tail -3 "$tmp/smpi.log" >&2 ;;
  esac
  printf '%-9s %8d %6d  %-22s %-22s %s\n' "$op" "$bytes" "$ranks" "$m ($mg)" "$s ($sg)" "$ratio"
done
