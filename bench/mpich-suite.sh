#!/usr/bin/env bash
# Runs C test programs of MPICH's test suite (test/mpi) against mpsim's C door, simulated:
# each program built by `mpsim cc`, run by `mpsim run -np N` (N from the directory's testlist)
# under `timeout`, and counted as passed (exit 0 and "No Errors", any case), failed, unsupported (it
# called a function mpsim does not implement, or it does not build against mpsim's mpi.h) or
# hung (the timeout). Not part of CI, and nothing of MPICH is kept in this repository: give it
# a checkout of MPICH (a work tree, or a bare/mirror git directory, read with `git archive`).
#
# Usage: bench/mpich-suite.sh MPICH [OUT=/tmp/mpsim-mpich] [DIRS="coll pt2pt datatype"]
#   environment: JOBS (parallel runs, default 2), TIMEOUT (seconds per run, default 60),
#                ONLY (a regular expression of test names to run)
# Prints one line per run and the counts; OUT/results.txt keeps the lines, OUT/logs/ the output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mpich=${1:?usage: bench/mpich-suite.sh MPICH [OUT] [DIRS]}
out=${2:-/tmp/mpsim-mpich}
dirs=${3:-coll pt2pt datatype}
jobs=${JOBS:-2}
limit=${TIMEOUT:-60}
only=${ONLY:-.}

# The suite's sources, fresh.
# shellcheck source=bench/suite-prelude.sh
. "$here/suite-prelude.sh"
suite_prelude "$mpich" test/mpi 1
t="$out/src/mpi"

# What MPICH's configure would generate: an empty MPIX header and a configuration header
# for this host (Linux, gcc or clang, 64 bits), written here.
: > "$t/include/mtest_mpix.h"
cat > "$t/include/mpitestconf.h" <<'EOF'
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STRING_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_INTEGER16 1
#define HAVE_MPI_REAL16 1
#define HAVE_MPI_COMPLEX32 1
#define HAVE_PTHREAD_H 1
#define THREAD_PACKAGE_INVALID 0
#define THREAD_PACKAGE_NONE 1
#define THREAD_PACKAGE_POSIX 2
#define THREAD_PACKAGE_SOLARIS 3
#define THREAD_PACKAGE_WIN 4
#define THREAD_PACKAGE_ARGOBOTS 5
#define THREAD_PACKAGE_QTHREADS 6
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
#define USE_STRICT_MPI 1
#define HAVE_INT8_T 1
#define HAVE_INT16_T 1
#define HAVE_INT32_T 1
#define HAVE_INT64_T 1
#define HAVE_UINT8_T 1
#define HAVE_UINT16_T 1
#define HAVE_UINT32_T 1
#define HAVE_UINT64_T 1
#define HAVE__BOOL 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_VOID_P 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_MPI_OFFSET 8
#define POINTERINT_t long
#endif
EOF

# The harness (mtest), as a static library. MTEST_COMPAT (a header) may add what it needs
# from an mpi.h that lacks it, to measure a library before such a fix; the tests never get it.
compat=()
[ -n "${MTEST_COMPAT:-}" ] && compat=(-include "$MTEST_COMPAT")
for f in mtest mtest_common mtest_single dtypes run_mpitests; do
    "$mpsim" cc -O1 -w "${compat[@]}" -I"$t/include" -c "$t/util/$f.c" -o "$out/bin/$f.o" \
        2>"$out/logs/harness-$f.txt" || { echo "the harness ($f.c) does not build: $out/logs/harness-$f.txt"; exit 1; }
done
ar rcs "$out/bin/libmtest.a" "$out/bin"/{mtest,mtest_common,mtest_single,dtypes}.o
# The `main` of the tests written as `run(args)` (MPICH's run_mpitests.c), linked only where
# a test has no `main` of its own.
ar rcs "$out/bin/librun.a" "$out/bin/run_mpitests.o"

# The runs: "dir name np args" from each testlist (duplicate lines that differ only in
# MPICH's environment settings are run once), skipping sub-directories, tests MPICH expects
# to fail and tests of MPICH's own behaviour (strict=false).
list="$out/runs.txt"
: > "$list"
for d in $dirs; do
    tl="$t/$d/testlist.in"
    [ -f "$tl" ] || tl="$t/$d/testlist"
    [ -f "$tl" ] || continue
    grep -v '^\s*#' "$tl" | grep -v '^\s*$' | while read -r name np rest; do
        [ -z "${np:-}" ] && continue          # a sub-directory
        case "$np" in *[!0-9]*) continue ;; esac
        case " $rest " in *" xfail="*|*" strict=false "*) continue ;; esac
        args=""
        for kv in $rest; do
            case "$kv" in arg=*) args="$args ${kv#arg=}" ;; esac
        done
        echo "$d $name $np$args"
    done
done | awk -v re="$only" '!seen[$0]++ && $2 ~ re' > "$list"

build() { # dir name
    local exe="$out/bin/$1-$2"
    [ -e "$exe" ] && return 0
    [ -e "$exe.nobuild" ] && return 1
    if "$mpsim" cc -O1 -w -I"$t/include" -o "$exe" "$t/$1/$2.c" "$out/bin/librun.a" "$out/bin/libmtest.a" -lm \
        >"$out/logs/$1-$2.build.txt" 2>&1; then
        return 0
    fi
    touch "$exe.nobuild"
    return 1
}

one() { # dir name np args...
    local d=$1 name=$2 np=$3; shift 3
    local key="$d/$name -np $np${*:+ $*}" log="$out/logs/$d-$name-$np-$(echo "$*" | tr -c 'a-zA-Z0-9=\n' '_').txt"
    if ! build "$d" "$name"; then
        echo "unsupported(build) $key"
        return
    fi
    timeout -k 5 "$limit" "$mpsim" run -np "$np" --report-out /dev/null "$out/bin/$d-$name" "$@" \
        >"$log" 2>&1
    local rc=$?
    if [ $rc -eq 0 ] && grep -qi "no errors" "$log"; then
        echo "pass $key"
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "hang $key"
    elif grep -q "is not implemented in this version of mpsim" "$log"; then
        echo "unsupported(call) $key"
    else
        echo "fail $key"
    fi
}
export -f build one
export out t mpsim limit

# Builds first, one at a time per program, then the runs in parallel.
cut -d' ' -f1,2 "$list" | sort -u | while read -r d name; do build "$d" "$name"; done
xargs -r -P "$jobs" -L 1 bash -c 'one "$@"' _ < "$list" | tee "$out/results.txt"
echo "----"
awk '{ n[$1]++; t++ } END { for (k in n) printf "%s %d\n", k, n[k]; printf "total %d\n", t }' \
    "$out/results.txt" | sort
