#!/usr/bin/env bash
# Simulator at scale on a collective: one 8-byte allreduce (the algorithm the default model
# chooses: recursive doubling) of RANKS ranks, default 1,048,576; prints the predicted time,
# host wall time, peak RSS and bytes per rank (goal: under 60 s and 2 KB per rank), under
# bench/guarded-run.sh's memory and time limits. Runs examples/coll_table's simulation of one
# call (the program's whole run: ranks made, the allreduce, the report).
# Usage: bench/sim-allreduce-scale.sh [RANKS=1048576] [BYTES=8]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/guarded-run.sh"
ranks=${1:-1048576}; bytes=${2:-8}
cd "$here/.."
cargo build --release -q -p mpsim --example coll_table
log=$(mktemp); trap 'rm -f "$log"' EXIT
guarded_run "$log" target/release/examples/coll_table --collectives allreduce --ranks "$ranks" \
  --bytes "$bytes" --sim-limit 1000000000000000
grep -E '^ *[0-9]' "$log"
report_rss "$log" "$ranks" "allreduce $ranks ranks x $bytes B"
