#!/usr/bin/env bash
# The published `hoprag reproduce` tables (docs/results.md): ReSP Table 1, and NotesWriting Tables 2-4 on HotpotQA,
# with the embedded model on each dataset file's closed corpus (--index auto), the first 50 questions, each row with
# the preset its table names. Two halves side by side, one core each; every cell resumes, so rerun to continue.
# Run it from one commit, start to end:  bash benchmarks/reproduce_published.sh [OUT]   (../shared/data beside the checkout)
set -uo pipefail
cd "$(dirname "$0")/.."
HOPRAG=${HOPRAG:-.venv/bin/hoprag}
OUT=${1:-runs/reproduce}
DATA=${DATA:-../shared/data}
LIMIT=${LIMIT:-50}
export HOPRAG_THREADS=${HOPRAG_THREADS:-1}
mkdir -p "$OUT"
table() {  # TABLE [more reproduce flags]: one response cache per table
  HOPRAG_LLM_CACHE="$OUT/$1.llm-cache.sqlite" "$HOPRAG" reproduce "$@" --data "$DATA" --limit "$LIMIT" \
    --out "$OUT/$1"
}
table resp-table1 > "$OUT/resp-table1.log" 2>&1 &
for notes_table in notes-table2 notes-table3 notes-table4; do
  table "$notes_table" --datasets hotpotqa
done > "$OUT/notes-tables.log" 2>&1 &
wait
