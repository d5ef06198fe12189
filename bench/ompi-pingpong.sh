#!/usr/bin/env bash
# 2-rank blocking ping-pong latency/bandwidth (1 B .. 4 MiB) of Open MPI over shared memory,
# min and median of REPS sweeps (default 5). Both ranks busy-poll both cores: run nothing else
# meanwhile. Usage: bench/ompi-pingpong.sh [REPS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
reps=${1:-5}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || "$here/install-peers.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Open MPI side
mpicc -O2 "$here/peers/pingpong.c" -o "$tmp/pingpong"
echo "open mpi ($(mpirun --version | head -n1)), 2 ranks, $reps reps:"
mpirun --allow-run-as-root --oversubscribe -np 2 "$tmp/pingpong" "$reps"

# mpsim side: added later
