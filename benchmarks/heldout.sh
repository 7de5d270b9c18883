#!/usr/bin/env bash
# The held-out table (docs/results.md): `small` for every method, with `rag` and `cot`, on the questions after the
# first 50 of each dev file, which no `small` option was tuned on: HotpotQA-hard 51-100, MuSiQue 51-100, 2Wiki 51-82.
# Embedded model, closed corpora (--index auto), k = 5; one response cache per cell. Two workers (WORKERS), the cores
# shared out, take the cells in turn; every cell resumes, so rerun the script to continue. Writes OUT/heldout.md, the
# results page's tables. Run it from one commit, start to end:
#   bash benchmarks/heldout.sh [OUT]   (../shared/data beside the checkout)
# Self-RAG is left out: it needs a Self-RAG checkpoint, which the embedded model is not.
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/jobs.sh  # HOPRAG, DATA, WORKERS, HOPRAG_THREADS
OUT=${1:-runs/heldout}
METHODS=${METHODS:-"rag cot renact renact-iterative react resp rearag furepa ircot ircot-notes flare flare-notes
  iter-retgen self-ask search-o1 searchain chatcot infogent replug sure recomp long-context"}
DATASETS=(
  "hotpot|hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_hard_100.json|51-100"
  "musique|musique:$DATA/musique/musique_ans_dev_100.jsonl|51-100"
  "2wiki|2wiki:$DATA/2wikimultihopqa/2wiki_dev_82.json|51-82"
)
JOBS=()
for method in $METHODS; do
  for entry in "${DATASETS[@]}"; do JOBS+=("$method|$entry"); done
done

job() {  # METHOD NAME DATASET RANGE
  local dir="$OUT/$2-$1-small"
  HOPRAG_LLM_CACHE="$dir.llm-cache.sqlite" "$HOPRAG" eval --method "$1" --preset small --dataset "$3" \
    --questions "$4" --index auto --out "$dir"
}

mkdir -p "$OUT"
run_jobs "$WORKERS" || exit 1
# The results page's two tables (accuracy with F1 − RAG, cost; by the Python beside HOPRAG, or PYTHON), and
# `hoprag report`'s full table per dataset.
"${PYTHON:-$(dirname "$(command -v "$HOPRAG")")/python}" benchmarks/heldout_table.py "$OUT" > "$OUT/heldout.md"
for name in hotpot musique 2wiki; do
  "$HOPRAG" report "$OUT"/"$name"-*-small > "$OUT/$name.md"
done
