# Sourced by the benchmark scripts that run many cells: `run_jobs WORKERS` calls the script's `job WORDS...` for each
# entry of its JOBS array, WORKERS at a time. Each worker claims the next unclaimed entry (mkdir is atomic) under
# $OUT/.claims, so the workers end together whatever each cell costs; a rerun starts the claims afresh and every cell
# resumes where it stopped. Worker N logs to $OUT/worker-N.log.
run_jobs() {
  local workers=$1 n
  rm -rf "$OUT/.claims" && mkdir -p "$OUT/.claims"
  for ((n = 1; n <= workers; n++)); do
    _job_worker > "$OUT/worker-$n.log" 2>&1 &
  done
  wait
}

_job_worker() {
  local i
  for i in "${!JOBS[@]}"; do
    mkdir "$OUT/.claims/$i" 2>/dev/null || continue
    echo "== ${JOBS[$i]} $(date -u +%H:%M:%S)"
    # shellcheck disable=SC2086  # an entry's words are the job's arguments
    job ${JOBS[$i]} || echo "!! ${JOBS[$i]} failed"
  done
}
