#!/usr/bin/env bash
# Simulator speed on a 2D halo exchange, side by side with SimGrid SMPI (1 us links): RANKS
# ranks on stencil2d's process grid exchange N doubles with each of their (up to 4,
# non-periodic) neighbours ITERS times. SMPI runs bench/peers/halo.c (the same messages, no
# compute); mpsim runs examples/stencil2d with --compute modeled (its sweep then costs no
# simulated time, though the host still does it). Prints simulated messages per host second for
# both (wall time around the process, start-up included) and the ratio. As in sim-ring.sh,
# mpsim is run again and again for as long as the SMPI run took (3 runs at least) and its rate
# is the aggregate, all messages over all the time (this machine's speed flips every few
# seconds, docs/peers.md). Message counts: halo.c counts its sends, mpsim's report its traffic table.
# SIM_THREADS=K simulates on K threads (--sim-threads; the same report, faster on many ranks);
# SMPI always runs on one. The pair runs ROUNDS times and the medians of the rates are compared:
# SMPI's own rate moves by 20% from one run to the next here.
# Usage: bench/sim-stencil.sh [RANKS=1024] [ITERS=100] [N=8] [ROUNDS=3]   (SMPI_TIMEOUT=900
#        seconds, SIM_THREADS=1)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=${1:-1024}; iters=${2:-100}; n=${3:-8}; rounds=${4:-3}
command -v smpicc >/dev/null || "$here/install-peers.sh"
cd "$here/.."
cargo build --release -q -p mpsim --example stencil2d
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# SMPI side
smpicc -O2 "$here/peers/halo.c" -o "$tmp/halo"
"$here/peers/smpi-platform.sh" "$ranks" "$tmp"
mkdir "$tmp/t"
cmd=(target/release/examples/stencil2d --backend sim --ranks "$ranks" --iterations "$iters"
  --n "$n" --compute modeled --sim-threads "${SIM_THREADS:-1}")
smpi_rates=(); mpsim_rates=()
for round in $(seq "$rounds"); do
  t0=$(date +%s.%N)
  ( cd "$tmp" && TMPDIR="$tmp/t" timeout "${SMPI_TIMEOUT:-900}" smpirun -np "$ranks" \
      -platform cluster.xml -hostfile hosts.txt -no-privatize --cfg=smpi/lat-factor:0:1 \
      --cfg=smpi/bw-factor:0:1 --cfg=contexts/guard-size:0 --cfg=smpi/display-timing:yes \
      ./halo "$n" "$iters" >smpi.out 2>smpi.err ) || { tail "$tmp/smpi.err"; exit 1; }
  t1=$(date +%s.%N)
  smpi_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  smpi_msgs=$(awk '$1 == "ranks" { print $NF }' "$tmp/smpi.out")
  grid=$(awk '$1 == "ranks" { print $4 }' "$tmp/smpi.out")

  # mpsim side, for as long as SMPI took
  runs=0; total=0; fastest=0; slowest=0
  while [ "$runs" -lt 3 ] || awk -v t="$total" -v s="$smpi_s" 'BEGIN { exit !(t < s) }'; do
    t0=$(date +%s.%N)
    "${cmd[@]}" >"$tmp/mpsim.out"
    t1=$(date +%s.%N)
    [ "$runs" -gt 0 ] || mpsim_msgs=$(awk '$1 ~ /^(eager|buffered|rendezvous|ready)$/ && NF == 3 \
      { m += $2 } END { print m }' "$tmp/mpsim.out")
    read -r total fastest slowest < <(awk -v a="$t0" -v b="$t1" -v t="$total" -v f="$fastest" \
      -v s="$slowest" -v m="$mpsim_msgs" 'BEGIN { r = m / (b - a); if (f == 0 || r > f) f = r
        if (s == 0 || r < s) s = r; printf "%.6f %.0f %.0f\n", t + b - a, f, s }')
    runs=$((runs + 1))
  done
  smpi_rates+=("$(awk -v m="$smpi_msgs" -v t="$smpi_s" 'BEGIN { printf "%.0f", m / t }')")
  mpsim_rates+=("$(awk -v m="$mpsim_msgs" -v n="$runs" -v t="$total" 'BEGIN { printf "%.0f", n * m / t }')")
  echo "round $round: smpi ${smpi_rates[-1]} msgs/s (${smpi_msgs} msgs in ${smpi_s} s), mpsim" \
    "${mpsim_rates[-1]} msgs/s (${runs} runs in ${total%.*} s; single runs ${slowest}-${fastest})"
  [ "$smpi_msgs" = "$mpsim_msgs" ] ||
    echo "warning: message counts differ (smpi ${smpi_msgs}, mpsim ${mpsim_msgs})" >&2
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
s=$(median "${smpi_rates[@]}"); m=$(median "${mpsim_rates[@]}")
echo "stencil ${ranks} ranks (${grid}) x ${iters} iterations of ${n} doubles (mpsim on ${SIM_THREADS:-1} thread(s)), medians of ${rounds}:"
echo "  smpi  ${s} msgs/s"
echo "  mpsim ${m} msgs/s"
awk -v s="$s" -v m="$m" 'BEGIN { printf "  mpsim / smpi = %.1fx\n", m / s }'
