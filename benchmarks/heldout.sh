#!/usr/bin/env bash
# The held-out table (docs/results.md): `small` for the results page's methods, with `rag` and `cot`, on the questions
# after the first 50 of each dev file, which no `small` option was tuned on: HotpotQA-hard 51-100, MuSiQue 51-100,
# 2Wiki 51-82. Embedded model, closed corpora (--index auto), k = 5; one response cache per cell. Two workers
# (WORKERS), the cores shared out, take the cells in turn. The cells grow in rounds (ROUNDS: the questions of each
# range a cell holds after each round); every cell's job of a round starts before any job of the next, so a run
# stopped early leaves the cells within one round of each other (heldout_table.py states the count most hold, and
# marks the others). Every cell resumes, so rerun the script to continue. Writes OUT/heldout.md, the results page's
# tables. Run it from one commit:
#   bash benchmarks/heldout.sh [OUT]   (../shared/data beside the checkout)
# METHODS adds others (any of hoprag's methods but Self-RAG, which needs a Self-RAG checkpoint).
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/jobs.sh  # HOPRAG, DATA, WORKERS, HOPRAG_THREADS
OUT=${1:-runs/heldout}
# The slowest first within a round, so the two workers end a round together.
METHODS=${METHODS:-"furepa renact flare-notes rearag ircot-notes resp rag cot"}
ROUNDS=${ROUNDS:-"10 20 30 40 50"}
DATASETS=(
  "hotpot|hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_hard_100.json|51-100"
  "musique|musique:$DATA/musique/musique_ans_dev_100.jsonl|51-100"
  "2wiki|2wiki:$DATA/2wikimultihopqa/2wiki_dev_82.json|51-82"
)
JOBS=()
for count in $ROUNDS; do
  for method in $METHODS; do
    for entry in "${DATASETS[@]}"; do JOBS+=("$method|$entry|$count"); done
  done
done

job() {  # METHOD NAME DATASET RANGE COUNT
  local dir="$OUT/$2-$1-small"
  # A rerun's worker can race past finished jobs to a lagging cell's next round while the other still runs that
  # cell's earlier one: the lock makes it wait, so one cell never has two writers.
  flock "$dir.lock" env HOPRAG_LLM_CACHE="$dir.llm-cache.sqlite" "$HOPRAG" eval --method "$1" --preset small \
    --dataset "$3" --questions "$4" --limit "$5" --index auto --out "$dir"
}

mkdir -p "$OUT"
run_jobs "$WORKERS" || exit 1
# The results page's two tables (accuracy with F1 − RAG, cost; by the Python beside HOPRAG, or PYTHON), and
# `hoprag report`'s full table per dataset.
"${PYTHON:-$(dirname "$(command -v "$HOPRAG")")/python}" benchmarks/heldout_table.py "$OUT" > "$OUT/heldout.md"
for name in hotpot musique 2wiki; do
  "$HOPRAG" report "$OUT"/"$name"-*-small > "$OUT/$name.md"
done
