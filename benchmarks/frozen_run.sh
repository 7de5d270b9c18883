#!/usr/bin/env bash
# Run a benchmark command from a frozen checkout of COMMIT, with this checkout's virtual environment, so that a grid
# measured over several sessions stays on one build (issue 9's `paper` cells run from 8d4f9c3).
# Usage (from the repository root):
#   bash benchmarks/frozen_run.sh COMMIT DIR COMMAND...
#   e.g. bash benchmarks/frozen_run.sh 8d4f9c3 ../frozen-8d4f9c3 env N=30 METHODS=renact bash benchmarks/presets.sh hotpot paper
# DIR (outside this checkout) gets `git archive COMMIT` once; COMMAND runs in DIR with HOPRAG pointing at a wrapper that
# runs that tree's `hoprag` with this checkout's .venv. Partial results committed under benchmarks/partial/ are copied
# into DIR/runs/presets/<run>/results.jsonl before the first run there, so the run resumes where a session stopped;
# <run>@seed-N.results.jsonl goes to <run>/seed-N/, a multi-seed run's (SEEDS=3) folder for seed N (a link
# <run>@seed-0.results.jsonl -> <run>.results.jsonl makes a single-seed run that run's seed 0).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bash benchmarks/frozen_run.sh COMMIT DIR COMMAND..." >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
commit=$1 dir=$2; shift 2
git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null || { echo "unknown commit '$commit' in $root" >&2; exit 2; }
[ -x "$root/.venv/bin/python" ] || { echo "no .venv in $root: run the README's first command first" >&2; exit 2; }
if [ ! -d "$dir/hoprag" ]; then
  mkdir -p "$dir"
  git -C "$root" archive "$commit" | tar -x -C "$dir"
fi
dir=$(cd "$dir" && pwd)
mkdir -p "$dir/.frozen-bin"
cat > "$dir/.frozen-bin/hoprag" <<EOF
#!/usr/bin/env bash
PYTHONPATH="$dir" exec "$root/.venv/bin/python" -m hoprag.cli "\$@"
EOF
chmod +x "$dir/.frozen-bin/hoprag"
# Seed each run folder from its committed partial results (benchmarks/partial/<commit>/<run>.results.jsonl) once.
for partial in "${HOPRAG_PARTIAL_DIR:-$root/benchmarks/partial}/$commit"/*.results.jsonl; do
  [ -f "$partial" ] || continue
  run=$(basename "$partial" .results.jsonl)
  target="$dir/runs/presets/${run/@//}/results.jsonl"
  if [ ! -f "$target" ]; then mkdir -p "$(dirname "$target")"; cp "$partial" "$target"; fi
done
cd "$dir"
HOPRAG="$dir/.frozen-bin/hoprag" exec "$@"
