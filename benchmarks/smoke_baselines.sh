#!/usr/bin/env bash
# Smoke table for the seed papers' baselines: each of them on the first 10 questions of
# HotpotQA-hard and MuSiQue with the embedded model, `small` then `paper`, beside `rag` from the same
# commit. Closed corpora (`--index auto`), k = 5. Each cell resumes if interrupted. A cell has a time budget
# (SMALL_BUDGET / PAPER_BUDGET seconds): `paper` presets allow up to 8,192 output tokens a call, which a 2-core CPU
# cannot spend on every question, so the table shows how many questions each cell finished.
# Usage: bash benchmarks/smoke_baselines.sh [OUT]   (from the repository root, ../shared/data beside it;
# PRESETS="small" or "paper" runs one half, so two halves can run side by side with HOPRAG_THREADS=1 each;
# SINGLE_PRESETS names the presets the single-round methods run under, "small paper" by default)
set -uo pipefail
cd "$(dirname "$0")/.."
HOPRAG=${HOPRAG:-.venv/bin/hoprag}
OUT=${1:-runs/smoke}
DATA=${DATA:-../shared/data}
N=${N:-10}
SMALL_BUDGET=${SMALL_BUDGET:-720}
PAPER_BUDGET=${PAPER_BUDGET:-300}
hotpot=hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_hard_100.json
musique=musique:$DATA/musique/musique_ans_dev_100.jsonl
mkdir -p "$OUT"

cell() {  # cell DATASET-NAME DATASET METHOD PRESET [options]
  local name=$1 dataset=$2 method=$3 preset=$4; shift 4
  local dir="$OUT/$name-$method-$preset"
  [ -f "$dir/summary.json" ] && [ "$(grep -c . "$dir/results.jsonl" 2>/dev/null)" -ge "$N" ] && return 0
  [ -f "$dir.budget-spent" ] && return 0
  echo "== $name $method $preset $(date -u +%H:%M:%S)"
  local budget=$SMALL_BUDGET
  [ "$preset" = paper ] && budget=$PAPER_BUDGET
  # One response cache per cell: nothing is served from another cell's calls.
  HOPRAG_LLM_CACHE="$dir.llm-cache.sqlite" timeout "$budget" "$HOPRAG" eval --method "$method" --preset "$preset" \
    --dataset "$dataset" --index auto --limit "$N" --out "$dir" "$@"
  local rc=$?
  [ $rc = 124 ] && { echo "!! $name $method $preset: time budget spent"; touch "$dir.budget-spent"; }
  [ $rc != 0 ] && [ $rc != 124 ] && echo "!! $name $method $preset failed ($rc)"
}

iterative="iter-retgen self-ask search-o1 searchain chatcot infogent"
single="replug sure recomp long-context"
for preset in ${PRESETS:-small paper}; do
  cell hotpot "$hotpot" rag "$preset"
  cell musique "$musique" rag "$preset"
  for method in $iterative; do
    cell hotpot "$hotpot" "$method" "$preset"
    cell musique "$musique" "$method" "$preset"
  done
  case " ${SINGLE_PRESETS:-small paper} " in *" $preset "*) ;; *) continue ;; esac
  for method in $single; do
    # RECOMP's `paper` compressor is the released T5 checkpoint, absent here: the LLM compressor stands in.
    if [ "$method" = recomp ] && [ "$preset" = paper ]; then
      cell hotpot "$hotpot" recomp paper --option recomp_compressor=llm
    else
      cell hotpot "$hotpot" "$method" "$preset"
    fi
  done
done
"${PYTHON:-.venv/bin/python}" benchmarks/smoke_table.py "$OUT" > "$OUT/table.md"
echo "== done $(date -u +%H:%M:%S)"
