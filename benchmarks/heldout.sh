#!/usr/bin/env bash
# The held-out table (docs/results.md): `small` for every method, with `rag` and `cot`, on the questions after the
# first 50 of each dev file, which no `small` option was tuned on: HotpotQA-hard 51-100, MuSiQue 51-100, 2Wiki 51-82.
# Embedded model, closed corpora (`--index auto`), k = 5; one response cache per cell; every cell resumes.
# Run it from one commit, start to end:  bash benchmarks/heldout.sh [OUT]   (../shared/data beside the checkout)
# Self-RAG is left out: it needs a Self-RAG checkpoint, which the embedded model is not.
set -uo pipefail
cd "$(dirname "$0")/.."
HOPRAG=${HOPRAG:-.venv/bin/hoprag}
OUT=${1:-runs/heldout}
DATA=${DATA:-../shared/data}
METHODS=${METHODS:-"rag cot renact renact-iterative react resp rearag furepa ircot ircot-notes flare flare-notes
  iter-retgen self-ask search-o1 searchain chatcot infogent replug sure recomp long-context"}
mkdir -p "$OUT"
datasets=(
  "hotpot|hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_hard_100.json|51-100"
  "musique|musique:$DATA/musique/musique_ans_dev_100.jsonl|51-100"
  "2wiki|2wiki:$DATA/2wikimultihopqa/2wiki_dev_82.json|51-82"
)
for method in $METHODS; do
  for entry in "${datasets[@]}"; do
    IFS='|' read -r name dataset range <<< "$entry"
    dir="$OUT/$name-$method-small"
    echo "== $name $method $(date -u +%H:%M:%S)"
    HOPRAG_LLM_CACHE="$dir.llm-cache.sqlite" "$HOPRAG" eval --method "$method" --preset small --dataset "$dataset" \
      --questions "$range" --index auto --out "$dir" || echo "!! $name $method failed"
  done
done
for name in hotpot musique 2wiki; do
  "$HOPRAG" report "$OUT"/"$name"-*-small > "$OUT/$name.md"
done
