#!/usr/bin/env bash
# The held-out table (docs/results.md): `small` for the results page's methods, with `rag` and `cot`, and `paper`
# for those whose `paper` preset the embedded 1.5B model can run in reasonable time (below), on the questions after
# the first 50 of each dev file, which no `small` option was tuned on: HotpotQA-hard 51-100, MuSiQue 51-100, 2Wiki
# 51-82.
# Embedded model, closed corpora (--index auto), k = 5; one response cache per cell. Two workers (WORKERS), the cores
# shared out, take the cells in turn. The cells grow in rounds (ROUNDS: the questions of each range a cell holds
# after each round); every cell's job of a round starts before any job of the next, so a run stopped early leaves
# the cells within one round of each other (heldout_table.py states the count most hold, and marks the others).
# Every cell resumes, so rerun the script to continue. Writes OUT/heldout.md, the results page's tables. Run it from
# one commit:
#   bash benchmarks/heldout.sh [OUT]   (../shared/data beside the checkout)
# METHODS (`small`) and PAPER_METHODS (`paper`; empty: none) take others: any of hoprag's methods but Self-RAG,
# which needs a Self-RAG checkpoint. `paper` runs by default for RAG, CoT and ReSP. Left out by default: ReNAct (ReAct's
# loop of up to 25 steps read about 67,000 tokens a HotpotQA-hard tuning question, RAG about 700), ReaRAG (its prompt
# is the fine-tuned ReaRAG-9B's: no step the 1.5B model wrote on the tuning questions parsed, F1 0), and, for time
# (hours more on two CPU cores), FuRePA, FLARE + notes and IRCoT + notes: add them to PAPER_METHODS to run them.
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/jobs.sh  # HOPRAG, DATA, WORKERS, HOPRAG_THREADS
OUT=${1:-runs/heldout}
# A round runs its `small` cells, then its `paper` cells, each list slowest first, so it ends on short cells.
METHODS=${METHODS:-"furepa renact flare-notes rearag ircot-notes resp rag cot"}
PAPER_METHODS=${PAPER_METHODS-"resp rag cot"}
ROUNDS=${ROUNDS:-"10 20 30 40 50"}
# hoprag's Python (the one beside HOPRAG, or PYTHON) reads the cells and writes the tables.
PYTHON=${PYTHON:-$(dirname "$(command -v "$HOPRAG")")/python}
# A cell's finished questions, as hoprag's reader of a run folder counts them (a question's last record, not failed).
FINISHED='import sys; from pathlib import Path; from hoprag.eval.runs import read_records
print(sum(not record.get("error") for record in read_records(Path(sys.argv[1])).values()))'
DATASETS=(
  "hotpot|hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_hard_100.json|51-100"
  "musique|musique:$DATA/musique/musique_ans_dev_100.jsonl|51-100"
  "2wiki|2wiki:$DATA/2wikimultihopqa/2wiki_dev_82.json|51-82"
)
JOBS=()
for count in $ROUNDS; do
  for method in $METHODS; do
    for entry in "${DATASETS[@]}"; do JOBS+=("$method|small|$entry|$count"); done
  done
  for method in $PAPER_METHODS; do
    for entry in "${DATASETS[@]}"; do JOBS+=("$method|paper|$entry|$count"); done
  done
done

job() {  # METHOD PRESET NAME DATASET RANGE COUNT
  local dir="$OUT/$3-$1-$2" first=${5%-*} last=${5#*-}
  # A cell that already holds this round's questions, none failed, is skipped: `hoprag eval --limit` would only
  # start a process and rewrite its summary.json for fewer questions than it holds.
  local want=$(( $6 < last - first + 1 ? $6 : last - first + 1 )) finished
  finished=$("$PYTHON" -c "$FINISHED" "$dir") || finished=0
  if (( finished >= want )); then
    echo "-- $dir holds its $want questions"
    return 0
  fi
  # A rerun's worker can race past finished jobs to a lagging cell's next round while the other still runs that
  # cell's earlier one: the lock makes it wait, so one cell never has two writers.
  flock "$dir.lock" env HOPRAG_LLM_CACHE="$dir.llm-cache.sqlite" "$HOPRAG" eval --method "$1" --preset "$2" \
    --dataset "$4" --questions "$5" --limit "$6" --index auto --out "$dir"
}

mkdir -p "$OUT"
run_jobs "$WORKERS" || exit 1
# The results page's two tables (accuracy with F1 − RAG, cost), and `hoprag report`'s full table per dataset.
"$PYTHON" benchmarks/heldout_table.py "$OUT" > "$OUT/heldout.md"
# RAG's `small` cell first: the report compares every run with its first.
shopt -s nullglob
for name in hotpot musique 2wiki; do
  rag="$OUT/$name-rag-small" cells=()
  [[ -d $rag ]] && cells+=("$rag")
  for dir in "$OUT/$name"-*-small "$OUT/$name"-*-paper; do [[ $dir == "$rag" ]] || cells+=("$dir"); done
  if ((${#cells[@]})); then "$HOPRAG" report "${cells[@]}" > "$OUT/$name.md"; fi
done
