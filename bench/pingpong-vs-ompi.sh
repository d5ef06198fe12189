#!/usr/bin/env bash
# 2-rank blocking ping-pong, Open MPI (bench/peers/pingpong.c over shared memory) against mpsim
# (crates/mpsim/examples/pingpong.rs, threads backend), 1 B .. 4 MiB. Both busy-poll both cores,
# so the two run back to back, never together, alternating ROUNDS times (ompi, mpsim, ompi, ...)
# so that the machine's fast/slow phases hit both; each run does REPS sweeps. Per size: the
# minimum one-way latency over all runs, and the bandwidth at it. Then the issue's two goals,
# 8 B latency (mpsim <= ompi) and 1 MiB bandwidth (mpsim >= 80% of ompi), with the per-round
# ratios as the spread. PASS/MISS is informational: exit status 0 either way.
# Usage: bench/pingpong-vs-ompi.sh [ROUNDS=3] [REPS=5]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
rounds=${1:-3}; reps=${2:-5}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || "$here/install-peers.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

(cd "$root" && cargo build --release -q -p mpsim --example pingpong)
mpsim="${CARGO_TARGET_DIR:-$root/target}/release/examples/pingpong"

for r in $(seq "$rounds"); do
  echo "round $r/$rounds: open mpi ($reps reps), then mpsim ($reps reps)" >&2
  "$here/ompi-pingpong.sh" "$reps" | awk '/^[0-9]/' >"$tmp/ompi.$r"
  "$mpsim" --backend threads --ranks 2 --reps "$reps" | awk '/^[0-9]/' >"$tmp/mpsim.$r"
done

# Per round: "round size ompi_us mpsim_us"; over all rounds: "size ompi_us mpsim_us" (minima).
for r in $(seq "$rounds"); do
  join <(sort -k1,1 "$tmp/ompi.$r") <(sort -k1,1 "$tmp/mpsim.$r") | awk -v r="$r" '{ print r, $1, $2, $5 }'
done >"$tmp/rounds"
awk '!(($2) in o) || $3 < o[$2] { o[$2] = $3 } !(($2) in m) || $4 < m[$2] { m[$2] = $4 }
  END { for (s in o) print s, o[s], m[s] }' "$tmp/rounds" | sort -n >"$tmp/all"

echo "# min one-way latency (us) and bandwidth at it (MB/s) over $rounds rounds x $reps reps"
awk 'BEGIN { printf "%9s %10s %10s %7s %10s %10s %7s\n", "size_B", "ompi_us", "mpsim_us", "lat_x",
               "ompi_MBps", "mpsim_MBps", "bw_x" }
  { printf "%9d %10.3f %10.3f %7.2f %10.1f %10.1f %7.2f\n", $1, $2, $3, $3 / $2, $1 / $2, $1 / $3, $2 / $3 }' "$tmp/all"

# The issue's goals, with each round's own ratio as the spread.
echo
awk 'NR == FNR { if ($2 == 8) l = l sprintf(" %.2f", $4 / $3); if ($2 == 1048576) b = b sprintf(" %.2f", $3 / $4); next }
  $1 == 8 { printf "8 B one-way latency: ompi %.3f us, mpsim %.3f us, mpsim/ompi %.2f (rounds:%s): %s (goal: mpsim <= ompi)\n",
                   $2, $3, $3 / $2, l, ($3 <= $2 ? "PASS" : "MISS") }
  $1 == 1048576 { printf "1 MiB bandwidth: ompi %.1f MB/s, mpsim %.1f MB/s, mpsim/ompi %.2f (rounds:%s): %s (goal: mpsim >= 0.80 x ompi)\n",
                   $1 / $2, $1 / $3, $2 / $3, b, ($2 / $3 >= 0.8 ? "PASS" : "MISS") }' "$tmp/rounds" "$tmp/all"
