#!/usr/bin/env bash
# Writes a SimGrid platform of N hosts (OUTDIR/cluster.xml: 1 Gf hosts, 10 GBps / 1 us links and
# backbone) and the matching SMPI hostfile (OUTDIR/hosts.txt, exactly N lines).
# Usage: bench/peers/smpi-platform.sh N OUTDIR
set -euo pipefail
n=${1:?usage: smpi-platform.sh N OUTDIR}; out=${2:?usage: smpi-platform.sh N OUTDIR}
mkdir -p "$out"
cat >"$out/cluster.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="cluster" prefix="node-" suffix="" radical="0-$((n - 1))" speed="1Gf"
           bw="10GBps" lat="1us" bb_bw="10GBps" bb_lat="1us"/>
</platform>
XML
seq -f 'node-%.0f' 0 $((n - 1)) >"$out/hosts.txt"
