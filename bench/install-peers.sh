#!/usr/bin/env bash
# Installs the peer MPIs the benchmarks compare against: Open MPI (mpicc/mpirun) and
# SimGrid SMPI (smpicc/smpirun), from Debian. Idempotent. Usage: bench/install-peers.sh
set -euo pipefail
need=()
command -v mpicc >/dev/null && command -v mpirun >/dev/null || need+=(openmpi-bin libopenmpi-dev)
command -v smpicc >/dev/null || need+=(libsimgrid-dev)   # no package named "simgrid" exists
if ((${#need[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
echo "open mpi: $(mpirun --version 2>/dev/null | head -n1)"
echo "simgrid:  $(smpirun -version 2>/dev/null | head -n1) (libsimgrid-dev $(dpkg-query -W -f='${Version}' libsimgrid-dev))"
