#!/usr/bin/env bash
# Runs the MPI Bugs Initiative's codes (MBI: small C MPI programs, each either correct or with
# one labelled error) against mpsim's C door, simulated, and scores what mpsim reports: each
# code built by `mpsim cc -g`, run by `mpsim run -np N` (N from the code's header) under
# `timeout`, then counted by the label its header expects (`OK`, or the error's class such as
# `CallMatching`, `InvalidRoot`, `MissingWait`) and what the run did:
#
#   found       an error code whose run failed (non-zero exit) or wrote a finding
#   missed      an error code whose run ended cleanly with no finding
#   clean       a correct code whose run ended cleanly (a warning finding is counted apart)
#   false       a correct code whose run failed or wrote an error finding
#   hang        the timeout (mpsim must never hang: always a bug)
#   unsupported the code calls a function mpsim does not implement (one-sided, ...)
#   nobuild     the code does not build against mpsim's mpi.h
#
# Not part of CI, and nothing of MBI is kept in this repository: give it a checkout of MBI
# (a work tree or a bare/mirror git directory); its generators (python3) write the codes.
#
# Usage: bench/mbi-suite.sh MBI [OUT=/tmp/mpsim-mbi]
#   environment: JOBS (parallel runs, default 2), TIMEOUT (seconds per run, default 30),
#                ONLY (a regular expression of code names to run),
#                FLAGS (more flags for `mpsim run`, e.g. "--eager-threshold 0": every standard
#                send then waits for its receive, so a program that relies on MPI buffering
#                its messages deadlocks, as MPI allows it to)
# Prints one line per run and a table by label; OUT/results.txt keeps the lines, OUT/logs/
# each run's output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mbi=${1:?usage: bench/mbi-suite.sh MBI [OUT]}
out=${2:-/tmp/mpsim-mbi}
jobs=${JOBS:-2}
limit=${TIMEOUT:-30}
only=${ONLY:-.}
flags=${FLAGS:-}
command -v python3 >/dev/null || { echo "python3 is needed to generate MBI's codes"; exit 1; }

# The generators, fresh, and the codes they write.
# shellcheck source=bench/suite-prelude.sh
. "$here/suite-prelude.sh"
suite_prelude "$mbi" scripts
mkdir -p "$out/src/gencodes"
for g in "$out/src/scripts/"*Generator.py; do
    (cd "$out/src/gencodes" && python3 "$g" >/dev/null) || { echo "generator $g failed"; exit 1; }
done

# The runs: "name np label" from each code's header (between BEGIN_MBI_TESTS and
# END_MBI_TESTS: a `$ mpirun -np N ${EXE}` line, then `| OK` or `| ERROR: Label`).
list="$out/runs.txt"
for c in "$out/src/gencodes/"*.c; do
    awk -v name="$(basename "$c" .c)" '
        /BEGIN_MBI_TESTS/ { in_tests = 1; next }
        /END_MBI_TESTS/ { in_tests = 0 }
        in_tests && /\$ mpirun/ { for (i = 1; i <= NF; i++) if ($i == "-np") np = $(i + 1) }
        in_tests && /^ *\| OK/ { print name, np, "OK" }
        in_tests && /^ *\| ERROR:/ { print name, np, $3 }
    ' "$c"
done | awk -v re="$only" '!seen[$0]++ && $1 ~ re' > "$list"

one() { # name np label
    local name=$1 np=$2 label=$3 exe="$out/bin/$1" log="$out/logs/$1-$2.txt"
    if ! "$mpsim" cc -g -O0 -w -o "$exe" "$out/src/gencodes/$name.c" >"$log.build" 2>&1; then
        echo "nobuild $label $name"
        return
    fi
    # shellcheck disable=SC2086 # FLAGS is a list of flags
    timeout -k 5 "$limit" "$mpsim" run -np "$np" $flags --report-out /dev/null "$exe" >"$log" 2>&1
    local rc=$?
    local errors warnings
    errors=$(grep -c '^mpsim: finding \[[a-z-]*\]' "$log")
    warnings=$(grep -c '^mpsim: finding \[[a-z-]*, warning\]' "$log")
    local what
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        what=hang
    elif grep -q "is not implemented in this version of mpsim" "$log"; then
        what=unsupported
    elif [ "$label" = OK ]; then
        if [ $rc -ne 0 ] || [ "$errors" -gt 0 ]; then what=false
        elif [ "$warnings" -gt 0 ]; then what=clean-warned
        else what=clean; fi
    else
        if [ $rc -ne 0 ] || [ "$errors" -gt 0 ] || [ "$warnings" -gt 0 ]; then what=found
        else what=missed; fi
    fi
    echo "$what $label $name"
}
export -f one
export out mpsim limit flags

xargs -r -P "$jobs" -L 1 bash -c 'one "$@"' _ < "$list" | tee "$out/results.txt"
echo "----"
awk '{ n[$2 " " $1]++; labels[$2] = 1; whats[$1] = 1 }
     END {
         printf "%-22s", "label"
         split("found missed clean clean-warned false hang unsupported nobuild", cols, " ")
         for (i = 1; i <= 8; i++) printf " %12s", cols[i]
         printf "\n"
         for (l in labels) {
             printf "%-22s", l
             for (i = 1; i <= 8; i++) printf " %12d", n[l " " cols[i]]
             printf "\n"
         }
     }' "$out/results.txt" | { read -r head; echo "$head"; sort; }
