#!/usr/bin/env bash
# Simulator speed on a ring, side by side with SimGrid SMPI on the same ring (1 us links):
# RANKS ranks pass 8 B around ITERS times; simulated messages per host second for both, and
# the ratio. Runs alternate (smpi, mpsim) ROUNDS times; medians are compared (PEERS.md: this
# machine's speed flips by 2.5x every few seconds).
# Usage: bench/sim-ring.sh [RANKS=1024] [ITERS=1000] [ROUNDS=3]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=${1:-1024}; iters=${2:-1000}; rounds=${3:-3}
cd "$here/.."
cargo build --release -q -p mpsim --example ring
msgs=$((ranks * iters))
smpi_rates=(); mpsim_rates=()
for round in $(seq "$rounds"); do
  line=$("$here/smpi-ring.sh" "$ranks" "$iters" 2>/dev/null | grep '^smpi:')
  smpi_rates+=("$(awk '{print $(NF-1)}' <<<"$line")")
  t0=$(date +%s.%N)
  target/release/examples/ring --backend sim --ranks "$ranks" --iterations "$iters" >/dev/null 2>&1
  t1=$(date +%s.%N)
  mpsim_rates+=("$(awk -v m="$msgs" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", m / (b - a) }')")
  echo "round $round: smpi ${smpi_rates[-1]} msgs/s, mpsim ${mpsim_rates[-1]} msgs/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
s=$(median "${smpi_rates[@]}"); m=$(median "${mpsim_rates[@]}")
echo "ring ${ranks} ranks x ${iters} iterations (${msgs} msgs), medians of ${rounds}:"
echo "  smpi  ${s} msgs/s"
echo "  mpsim ${m} msgs/s"
awk -v s="$s" -v m="$m" 'BEGIN { printf "  mpsim / smpi = %.1fx (goal: 150x)\n", m / s }'
