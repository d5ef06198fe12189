#!/usr/bin/env bash
# CPU cost per simulated message of ring binaries, compared side by side: CPU cycles,
# instructions and store-to-load interlocks (loads that cannot take their data from the
# stores just before them and wait; AMD Zen's ls_bad_status2.stli_other) per message of a
# RANKS x ITERS ring under --backend sim, from `perf stat`.
#
# Cycles move with this machine's fast and slow phases (the same binary takes 60% more
# cycles per message in a slow phase), so the binaries' runs are interleaved ROUNDS times and
# the minimum and first quartile are compared; instructions do not move. Copy each build's
# binary aside first (target/release/examples/ring is overwritten by the next build).
# On a host whose perf has no hardware counters, the script says so and compares task-clock
# nanoseconds per message (the whole process) instead, and counts instructions per message
# with valgrind's callgrind (the difference between 200 and 100 iterations, set-up left out).
# Usage: bench/sim-ring-cycles.sh [-r ROUNDS=12] [-n RANKS=1024] [-i ITERS=1000] BIN...
set -euo pipefail
rounds=12; ranks=1024; iters=1000
while getopts "r:n:i:" o; do
  case $o in r) rounds=$OPTARG ;; n) ranks=$OPTARG ;; i) iters=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
command -v perf >/dev/null || { echo "sim-ring-cycles: needs perf (linux-perf)" >&2; exit 1; }
msgs=$((ranks * iters))
events=cycles:u,instructions:u
if [ "$(perf list 2>/dev/null | grep -c ls_bad_status2.stli_other || true)" -gt 0 ]; then
  events=$events,ls_bad_status2.stli_other:u
fi
# Some hosts of this kind give no hardware counters (perf prints "<not supported>"): count
# task-clock nanoseconds in the cycles column instead, and say so.
label=cycles
if perf stat -x, -e cycles:u true 2>&1 | grep -q "not supported"; then
  events=task-clock:u; label="ns (task-clock: no hardware counters here)"
fi
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
for _ in $(seq "$rounds"); do
  for i in $(seq $#); do
    bin=${!i}
    perf stat -x, -e "$events" "$bin" --backend sim --ranks "$ranks" --iterations "$iters" \
      2>&1 >/dev/null | awk -F, -v i="$i" -v m="$msgs" '
        /cycles/ { c = $1 } /task-clock/ { c = $1 * 1e6 } /instructions/ { n = $1 } /stli/ { s = $1 }
        END { printf "%d %.1f %.1f %.1f\n", i, c / m, n / m, s / m }' >>"$raw"
  done
done
# Instructions per message from callgrind, when perf could not count them.
callgrind_per_msg() {
  local bin=$1 its n n100 n200
  command -v valgrind >/dev/null || { echo 0; return; }
  for its in 100 200; do
    n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --backend sim \
      --ranks "$ranks" --iterations "$its" 2>&1 >/dev/null | sed -n 's/.*Collected : //p')
    if [ "$its" = 100 ]; then n100=$n; else n200=$n; fi
  done
  awk -v a="$n100" -v b="$n200" -v m=$((ranks * 100)) 'BEGIN { printf "%.1f", (b - a) / m }'
}
echo "ring ${ranks} ranks x ${iters} iterations under sim, per message, ${rounds} interleaved rounds:"
for i in $(seq $#); do
  ins=""
  [ "$events" = task-clock:u ] && ins=$(callgrind_per_msg "${!i}")
  awk -v i="$i" '$1 == i' "$raw" | sort -k2 -n | awk -v b="${!i}" -v l="$label" -v ins="$ins" '
    { c[NR] = $2; n += $3; s += $4 }
    END { if (ins != "") n = ins * NR
          printf "  %-40s %s min %.1f q1 %.1f median %.1f  instructions %.0f  stli %.1f\n",
          b, l, c[1], c[int(NR / 4) + 1], c[int((NR + 1) / 2)], n / NR, s / NR }'
done
