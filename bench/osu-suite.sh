#!/usr/bin/env bash
# Runs the OSU Micro-Benchmarks' MPI programs (c/mpi/pt2pt and c/mpi/collective) against
# mpsim's C door, simulated: each built by `mpsim cc` with OSU's own utility files, run by
# `mpsim run -np N` with data validation (`-c`) where the benchmark offers it, and counted as
# passed (exit 0, no "Fail" line), failed, or over time. Not part of CI, and nothing of OSU is
# kept in this repository: give it a checkout of the benchmarks (a work tree, or a git
# directory read with `git archive`; the layout of OMB 7.x, `c/mpi/...` and `c/util/...`).
#
# The latencies and bandwidths it prints are predictions of the default model (or --model):
# the model has no link contention (README, "Known gaps"), so the windowed bandwidth tests
# (osu_bw, osu_bibw, osu_mbw_mr) predict more than one link carries.
#
# Usage: bench/osu-suite.sh OSU [OUT=/tmp/mpsim-osu] [NP=4]
#   environment: TIMEOUT (seconds per run, default 120), SIZES (default 1:4096),
#                MPSIM_RUN_ARGS (extra `mpsim run` flags, e.g. "--compute modeled")
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
osu=${1:?usage: bench/osu-suite.sh OSU [OUT] [NP]}
out=${2:-/tmp/mpsim-osu}
np=${3:-4}
limit=${TIMEOUT:-120}
sizes=${SIZES:-1:4096}

# shellcheck source=bench/suite-prelude.sh
. "$here/suite-prelude.sh"
suite_prelude "$osu" c
s="$out/src/c"
: > "$s/util/config.h" # what OSU's configure would write: nothing this build needs
util="$s/util/osu_util.c $s/util/osu_util_mpi.c $s/util/osu_util_graph.c $s/util/osu_util_papi.c"

: > "$out/results.txt"
for src in "$s"/mpi/pt2pt/*.c "$s"/mpi/collective/*.c; do
    name=$(basename "$src" .c)
    bin="$out/bin/$name"
    log="$out/logs/$name.txt"
    # shellcheck disable=SC2086
    if ! "$mpsim" cc -O2 -I"$s/util" -o "$bin" "$src" $util -lm -lpthread >"$log" 2>&1; then
        echo "unbuilt $name" | tee -a "$out/results.txt"
        continue
    fi
    n=$np
    case $name in osu_latency | osu_bw | osu_bibw | osu_latency_mt | osu_latency_mp) n=2 ;; esac
    check=-c
    case $name in osu_barrier | osu_ibarrier) check= ;; esac
    # shellcheck disable=SC2086
    timeout -k 5 "$limit" "$mpsim" run -np "$n" --report-out /dev/null ${MPSIM_RUN_ARGS:-} \
        "$bin" $check -m "$sizes" -i 10 -x 2 >>"$log" 2>&1
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        verdict=hung
    elif [ $rc -eq 0 ] && ! grep -q "Fail" "$log"; then
        verdict=pass
    else
        verdict=fail
    fi
    echo "$verdict $name -np $n" | tee -a "$out/results.txt"
done
echo ----
awk '{print $1}' "$out/results.txt" | sort | uniq -c | awk '{print $2, $1}'
echo "total $(wc -l <"$out/results.txt")"
