#!/usr/bin/env bash
# Predicted time of every algorithm of allreduce and bcast (more with COLLS) on the default
# machine model, at 16, 256, 4096 and 65536 ranks and 8 B, 64 KiB and 1 MiB per rank, beside
# the algorithm the model chooses; each algorithm's column also gives its time over the chosen
# one's. The figures are the cost formulas (docs/collectives.md §4), which the simulator
# matches exactly on flat models (crates/mpsim/tests/coll_timing.rs); runs that fit in
# SIM_LIMIT bytes (ranks x bytes, default 256 MiB) are also simulated with the chosen algorithm,
# and the simulated time and its ratio to the formula printed at the end of the line (the
# default model mixes eager and rendezvous messages in one call, where the formulas estimate).
# No host timing: nothing here depends on this machine's speed.
# Usage: bench/coll-table.sh [COLLS=allreduce,bcast] [RANKS=16,256,4096,65536]
#                            [BYTES=8,65536,1048576] [SIM_LIMIT=268435456]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
colls=${1:-allreduce,bcast}; ranks=${2:-16,256,4096,65536}
bytes=${3:-8,65536,1048576}; limit=${4:-268435456}
cd "$here/.."
cargo build --release -q -p mpsim --example coll_table
target/release/examples/coll_table --collectives "$colls" --ranks "$ranks" --bytes "$bytes" \
  --sim-limit "$limit"
