#!/usr/bin/env bash
# Host-time speed of SimGrid SMPI on a ring: RANKS ranks pass 8 B around ITERS times
# (RANKS*ITERS blocking sends), reported as simulated messages per host second.
# Usage: bench/smpi-ring.sh [RANKS=1024] [ITERS=1000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=${1:-1024}; iters=${2:-1000}
command -v smpicc >/dev/null || "$here/install-peers.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# SMPI side
smpicc -O2 "$here/peers/ring.c" -o "$tmp/ring"
"$here/peers/smpi-platform.sh" "$ranks" "$tmp"
mkdir "$tmp/t"
t0=$(date +%s.%N)
( cd "$tmp" && TMPDIR="$tmp/t" timeout 900 smpirun -np "$ranks" -platform cluster.xml \
    -hostfile hosts.txt -no-privatize --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 \
    --cfg=contexts/guard-size:0 --cfg=smpi/display-timing:yes ./ring "$iters" )
t1=$(date +%s.%N)
awk -v r="$ranks" -v i="$iters" -v t0="$t0" -v t1="$t1" 'BEGIN { m = r * i; w = t1 - t0
  printf "smpi: %d ranks x %d iters = %d msgs in %.3f s host time = %.0f msgs/s\n", r, i, m, w, m / w }'

# mpsim side: added later
