#!/usr/bin/env bash
# How many ranks a C MPI program reaches under `mpsim run` (ranks as processes) on this host,
# and what a rank costs: bench/peers/coll.c (a barrier, then one MPI_Allreduce of 8 B, each
# rank checking the sum) simulated with --compute modeled at growing rank counts, each run
# under a timeout, stopping before the host's memory would pass LIMIT_GIB.
# For each count it prints the host time, the host's memory in use at the peak (MemTotal -
# MemAvailable, less what was in use before the run: every process of the run, page tables and
# the shared segment included), the proportional set size (PSS) summed over the rank processes
# and the zygote (sampled while every rank was alive), the mpsim process's peak RSS, and each
# per rank. It also prints the limits that bound the count of processes (pid_max, threads-max,
# ulimit -u): each rank is one process.
# Other work on the host moves the memory-in-use figure; PSS is the rank processes' own.
# Usage: bench/c-scale.sh [MAX_RANKS=32000] [LIMIT_GIB=18] [TIMEOUT_S=900]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
max=${1:-32000}; limit_gib=${2:-18}; timeout_s=${3:-900}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

echo "limits: pid_max $(cat /proc/sys/kernel/pid_max), threads-max $(cat /proc/sys/kernel/threads-max), ulimit -u $(ulimit -u), processes now $(ls -d /proc/[0-9]* | wc -l)"
(cd "$root" && cargo build --release --quiet -p mpsim-cli -p mpsim-c)
mpsim="$root/target/release/mpsim"
"$mpsim" cc -O2 "$here/peers/coll.c" -o "$tmp/coll"

avail_kib() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }

# pss_of_group PGID: summed PSS (KiB) and count of the processes in process group PGID (one
# awk over all their smaps_rollup files: a process per rank would slow the run it measures).
pss_of_group() {
  ps -eo pid=,pgid= | awk -v g="$1" '$2 == g { print "/proc/" $1 "/smaps_rollup" }' \
    | xargs -r cat 2>/dev/null | awk '/^Pss:/ { s += $2; n++ } END { print s + 0, n + 0 }'
}

printf '%8s %9s %11s %10s %10s %11s %10s\n' ranks host_s peak_GiB peak/rank PSS/rank mpsim_RSS mpsim/rank
ranks=1024
while [ "$ranks" -le "$max" ]; do
  base=$(avail_kib)
  log="$tmp/run.log"
  # timeout signals its whole process group; the program's processes die with mpsim.
  timeout "$timeout_s" /usr/bin/time -v "$mpsim" run -np "$ranks" --compute modeled \
      --report-out /dev/null "$tmp/coll" allreduce 8 1 >"$tmp/out" 2>"$log" &
  job=$!
  low=$base; pss=""; t0=$(date +%s.%N)
  while kill -0 "$job" 2>/dev/null; do
    a=$(avail_kib); [ "$a" -lt "$low" ] && low=$a
    if [ $(( (base - a) / 1048576 )) -ge "$limit_gib" ]; then
      echo "memory in use passed ${limit_gib} GiB at $ranks ranks: stopping the run"
      kill -TERM "$job" 2>/dev/null || true
      wait "$job" || true
      break 2
    fi
    # Sample PSS once, while every rank lives (the zygote plus one process per rank).
    if [ -z "$pss" ]; then
      zyg=$(pgrep -f -o "^$tmp/coll allreduce" || true)
      if [ -n "$zyg" ]; then
        read -r s n < <(pss_of_group "$zyg")
        [ "$n" -ge $((ranks + 1)) ] && pss=$s
      fi
    fi
    sleep 0.2
  done
  if ! wait "$job" || ! grep -q "result example=allreduce" "$tmp/out"; then
    echo "$ranks ranks: the run failed:"; tail -5 "$log"; tail -3 "$tmp/out"; break
  fi
  t1=$(date +%s.%N)
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  awk -v r="$ranks" -v b="$base" -v l="$low" -v p="${pss:-0}" -v m="$rss" -v t0="$t0" -v t1="$t1" 'BEGIN {
    peak = (b - l) * 1024
    printf "%8d %9.1f %11.2f %9.0fK %9.0fK %10.0fM %9.1fK\n", r, t1 - t0, peak / 2^30, peak / r / 1024,
      p / r, m / 1024, m / r }'
  # The next count, unless the memory it would take (per rank as measured) passes the limit.
  next=$((ranks * 2)); [ "$next" -gt "$max" ] && [ "$ranks" -lt "$max" ] && next=$max
  if [ $(( (base - low) / ranks * next / 1048576 )) -ge "$limit_gib" ]; then
    echo "stopping: $next ranks would take over ${limit_gib} GiB at this rate"; break
  fi
  ranks=$next
done
