#!/usr/bin/env bash
# Host-time speed of a C MPI program under mpsim (`mpsim cc` + `mpsim run`, ranks as
# processes) against SimGrid SMPI on the same program (bench/peers/ring.c) and platform:
# RANKS ranks pass 8 B around ITERS times (RANKS*ITERS blocking sends, as many receives).
# Prints simulated messages per host second for both, their ratio, and mpsim's host time per
# blocking MPI call (each message is one MPI_Send and one MPI_Recv).
# Usage: bench/c-ring.sh [RANKS=1024] [ITERS=100] [--no-smpi]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ranks=${1:-1024}; iters=${2:-100}; smpi=${3:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# mpsim side
(cd "$root" && cargo build --release --quiet -p mpsim-cli -p mpsim-c)
mpsim="$root/target/release/mpsim"
"$mpsim" cc -O2 "$here/peers/ring.c" -o "$tmp/ring-mpsim"
t0=$(date +%s.%N)
"$mpsim" run -np "$ranks" --compute modeled --report-out "$tmp/report.txt" "$tmp/ring-mpsim" "$iters" >/dev/null
t1=$(date +%s.%N)
mpsim_rate=$(awk -v r="$ranks" -v i="$iters" -v t0="$t0" -v t1="$t1" 'BEGIN { m = r * i; w = t1 - t0
  printf "%.0f", m / w
  printf "mpsim: %d ranks x %d iters = %d msgs in %.3f s host time = %.0f msgs/s, %.2f us per blocking call\n", r, i, m, w, m / w, w / (2 * m) * 1e6 > "/dev/stderr" }')

[ "$smpi" = "--no-smpi" ] && exit 0

# SMPI side
command -v smpicc >/dev/null || "$here/install-peers.sh"
smpicc -O2 "$here/peers/ring.c" -o "$tmp/ring-smpi"
"$here/peers/smpi-platform.sh" "$ranks" "$tmp"
mkdir "$tmp/t"
t0=$(date +%s.%N)
( cd "$tmp" && TMPDIR="$tmp/t" timeout 900 smpirun -np "$ranks" -platform cluster.xml \
    -hostfile hosts.txt -no-privatize --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 \
    --cfg=contexts/guard-size:0 ./ring-smpi "$iters" >/dev/null )
t1=$(date +%s.%N)
awk -v r="$ranks" -v i="$iters" -v t0="$t0" -v t1="$t1" -v mine="$mpsim_rate" 'BEGIN { m = r * i; w = t1 - t0
  printf "smpi: %d ranks x %d iters = %d msgs in %.3f s host time = %.0f msgs/s\n", r, i, m, w, m / w
  printf "ratio mpsim/smpi: %.2fx\n", mine / (m / w) }'
