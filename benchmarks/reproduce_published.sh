#!/usr/bin/env bash
# The published `hoprag reproduce` tables (docs/results.md): ReSP Table 1, and NotesWriting Tables 2-4 on HotpotQA,
# with the embedded model on each dataset file's closed corpus (--index auto), the first 50 questions, each row with
# the preset its table names. Two workers (WORKERS), the cores shared out between them, take the cells in turn; every cell resumes, so rerun the
# script to continue. Run it from one commit, start to end:
#   bash benchmarks/reproduce_published.sh [OUT]   (../shared/data beside the checkout)
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/jobs.sh  # HOPRAG, DATA, WORKERS, HOPRAG_THREADS
OUT=${1:-runs/reproduce}
LIMIT=${LIMIT:-50}
# One job a cell: TABLE DATASET METHOD. ReSP Table 1 first, so it is whole before the slow ReAct-family cells
# (up to 25 steps a question at `paper`); within a table the longest first, so the two workers end together.
JOBS=("resp-table1|hotpotqa|resp" "resp-table1|2wiki|resp")
for method in sure recomp iter-retgen ircot replug rag; do
  for dataset in hotpotqa 2wiki; do JOBS+=("resp-table1|$dataset|$method"); done
done
JOBS+=("notes-table2|hotpotqa|renact" "notes-table2|hotpotqa|react" "notes-table3|hotpotqa|ircot-notes"
  "notes-table4|hotpotqa|flare-notes" "notes-table4|hotpotqa|flare" "notes-table3|hotpotqa|ircot")

reproduce() {  # TABLE [flags]: one response cache per table
  HOPRAG_LLM_CACHE="$OUT/$1.llm-cache.sqlite" "$HOPRAG" reproduce "$@" --data "$DATA" --limit "$LIMIT" --out "$OUT/$1"
}
job() { reproduce "$1" --datasets "$2" --methods "$3"; }

mkdir -p "$OUT"
run_jobs "$WORKERS" || exit 1
for table in resp-table1 notes-table2 notes-table3 notes-table4; do
  datasets=$([ "$table" = resp-table1 ] && echo hotpotqa,2wiki || echo hotpotqa)
  reproduce "$table" --datasets "$datasets" --table-only > "$OUT/$table.log" 2>&1
done
