# Sourced by the scale benchmarks (bench/sim-scale.sh, bench/sim-split.sh): runs a command under
# a 22 GiB address-space limit and a 30-minute timeout, so that a run that does not fit fails
# instead of taking the machine down, and reports its wall time and peak memory per rank.

# guarded_run LOG CMD...: runs CMD with /usr/bin/time -v into LOG; on failure prints its tail
# and exits.
guarded_run() {
  local log=$1; shift
  ( ulimit -v $((22 * 1024 * 1024)); timeout 1800 /usr/bin/time -v "$@" ) >"$log" 2>&1 \
    || { echo "run failed:"; tail -5 "$log"; exit 1; }
}

# report_rss LOG RANKS WHAT: "WHAT: wall W, peak RSS G GiB, B bytes per rank" from LOG.
report_rss() {
  local log=$1 ranks=$2 what=$3 rss_kib wall
  rss_kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  awk -v r="$ranks" -v k="$rss_kib" -v w="$wall" -v what="$what" 'BEGIN {
    printf "%s: wall %s, peak RSS %.2f GiB, %.0f bytes per rank\n", what, w, k / 1048576, k * 1024 / r }'
}
