#!/usr/bin/env bash
# Simulator speed on a ring, side by side with SimGrid SMPI on the same ring (1 us links):
# RANKS ranks pass 8 B around ITERS times; simulated messages per host second for both, and
# the ratio. Runs alternate (smpi, mpsim) ROUNDS times; medians are compared.
# Both sides are timed over the same length of host time: this machine's speed flips by up to
# 2x every few seconds (docs/peers.md), an SMPI run takes tens of seconds (it averages over those
# phases) and an mpsim run a fraction of a second (it lands in one). So each round runs mpsim
# again and again for as long as its SMPI run took (3 runs at least) and takes the aggregate
# rate, all messages over all the time; the fastest and slowest single runs are printed too.
# Each round also runs the same ring on a bare event loop (futures as ranks, a binary heap, no
# matching, protocol or model: crates/mpsim-sim/examples/bare_ring.rs, docs/peers.md's yardstick)
# for 20 runs: the host's speed today for the least a simulator must do, so that the ratio to
# SMPI can be read beside what the host allows (SMPI's speed moves with the host far more
# than a loop that stays in the CPU's caches).
# Usage: bench/sim-ring.sh [RANKS=1024] [ITERS=1000] [ROUNDS=3]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=${1:-1024}; iters=${2:-1000}; rounds=${3:-3}
cd "$here/.."
cargo build --release -q -p mpsim --example ring
cargo build --release -q -p mpsim-sim --example bare_ring
msgs=$((ranks * iters))
smpi_rates=(); mpsim_rates=(); bare_rates=()
for round in $(seq "$rounds"); do
  line=$("$here/smpi-ring.sh" "$ranks" "$iters" 2>/dev/null | grep '^smpi:')
  smpi_rates+=("$(awk '{print $(NF-1)}' <<<"$line")")
  smpi_s=$(awk '{print $(NF-6)}' <<<"$line")
  runs=0; total=0; fastest=0; slowest=0
  while [ "$runs" -lt 3 ] || awk -v t="$total" -v s="$smpi_s" 'BEGIN { exit !(t < s) }'; do
    t0=$(date +%s.%N)
    target/release/examples/ring --backend sim --ranks "$ranks" --iterations "$iters" >/dev/null 2>&1
    t1=$(date +%s.%N)
    read -r total fastest slowest < <(awk -v a="$t0" -v b="$t1" -v t="$total" -v f="$fastest" \
      -v s="$slowest" -v m="$msgs" 'BEGIN { r = m / (b - a); if (f == 0 || r > f) f = r
        if (s == 0 || r < s) s = r; printf "%.6f %.0f %.0f\n", t + b - a, f, s }')
    runs=$((runs + 1))
  done
  mpsim_rates+=("$(awk -v m="$msgs" -v n="$runs" -v t="$total" 'BEGIN { printf "%.0f", n * m / t }')")
  t0=$(date +%s.%N)
  for _ in $(seq 20); do target/release/examples/bare_ring "$ranks" "$iters" >/dev/null; done
  t1=$(date +%s.%N)
  bare_rates+=("$(awk -v m="$msgs" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", 20 * m / (b - a) }')")
  echo "round $round: smpi ${smpi_rates[-1]} msgs/s (${smpi_s} s), mpsim ${mpsim_rates[-1]} msgs/s" \
    "(${runs} runs in ${total%.*} s; single runs ${slowest}-${fastest}), bare loop ${bare_rates[-1]} msgs/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
s=$(median "${smpi_rates[@]}"); m=$(median "${mpsim_rates[@]}"); b=$(median "${bare_rates[@]}")
echo "ring ${ranks} ranks x ${iters} iterations (${msgs} msgs), medians of ${rounds}:"
echo "  smpi  ${s} msgs/s"
echo "  mpsim ${m} msgs/s"
echo "  bare  ${b} msgs/s (event loop, no protocol)"
awk -v s="$s" -v m="$m" -v b="$b" 'BEGIN {
  printf "  mpsim / smpi = %.1fx (goal: 150x)\n", m / s
  printf "  mpsim / bare = %.1f%%; bare / smpi = %.0fx\n", 100 * m / b, b / s }'
