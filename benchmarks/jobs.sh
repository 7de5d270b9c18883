# Sourced by the benchmark scripts that run many cells: `run_jobs WORKERS` calls the script's `job ARGS...` for each
# entry of its JOBS array ("|" between an entry's arguments), WORKERS at a time. Each worker claims the next
# unclaimed entry (mkdir is atomic) under $OUT/.claims, so no core idles while a cell is left; a rerun starts the
# claims afresh and every cell resumes where it stopped. A lock on $OUT refuses a rerun while any process of an
# earlier one still lives (background workers outlive a Ctrl-C to the script). Worker N appends to $OUT/worker-N.log.
run_jobs() {
  local workers=$1 n
  exec 9> "$OUT/.lock"  # inherited by every worker and hoprag process, so the lock lasts as long as any of them
  flock -n 9 || { echo "a run of this script still holds $OUT (see $OUT/worker-*.log); stop it first" >&2; return 1; }
  rm -rf "$OUT/.claims" && mkdir "$OUT/.claims" || return 1
  for ((n = 1; n <= workers; n++)); do
    _job_worker >> "$OUT/worker-$n.log" 2>&1 &
  done
  wait
}

_job_worker() {
  local i args
  for i in "${!JOBS[@]}"; do
    mkdir "$OUT/.claims/$i" 2>/dev/null || continue
    echo "== ${JOBS[$i]} $(date -u +%H:%M:%S)"
    IFS='|' read -ra args <<< "${JOBS[$i]}"
    job "${args[@]}" || echo "!! ${JOBS[$i]} failed"
  done
}

# The settings every such script shares, each overridable from the environment: the hoprag command, the data
# folder, the number of workers, and each worker's model threads (the cores shared out, at least one).
HOPRAG=${HOPRAG:-.venv/bin/hoprag}
DATA=${DATA:-../shared/data}
WORKERS=${WORKERS:-2}
_core_share=$(( $(nproc) / WORKERS ))
export HOPRAG_THREADS=${HOPRAG_THREADS:-$(( _core_share > 0 ? _core_share : 1 ))}
