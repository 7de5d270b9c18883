"""FuRePA's query scorer trained on a GPU from the same labelled queries as `hoprag furepa train-scorer` (issue 12).

    python benchmarks/scorer_device.py dump QUERIES.jsonl DATASET EXAMPLES.jsonl     # here: label the sampled queries
    python benchmarks/scorer_device.py train EXAMPLES.jsonl OUT [--base DIR] [--device cuda] [--epochs 2,4] [--seeds 0,1]
    python benchmarks/scorer_device.py rule EXAMPLES.jsonl [--seeds 0,1]     # here: the training-free rule's correlation

`dump` labels the queries of a train-scorer run (its queries.jsonl) exactly as train-scorer does
(`labelled_examples`: BM25 over each question's own paragraphs, positives up to the first gold one, target 1/g)
and writes them one JSON object a line. `train` runs `hoprag.furepa_scorer.train_scorer` on them: the same
split, loss and held-out report, on any device. It needs only torch, transformers and rich (no chromadb, no
langgraph, no bm25s), so it runs on a GPU machine that lacks the rest of hoprag's install. One JSON line of
train_scorer's report per seed and epoch count; each trains from the base again into OUT/seed-S-epochs-N.
`rule` scores the same held-out queries (the split of each seed) with the graph's training-free stand-in,
Eq. 10's rule over min-max scaled retriever scores, here BM25's over the question's own paragraphs (needs bm25s):
the bar a trained scorer has to clear.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hoprag.training.furepa_scorer import ScorerExample

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from hoprag.training.furepa_scorer import ScorerExample, labelled_examples, train_scorer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump")
    dump.add_argument("queries", type=Path)
    dump.add_argument("dataset", help="KIND:PATH, as train-scorer's --dataset")
    dump.add_argument("examples", type=Path)
    train = commands.add_parser("train")
    train.add_argument("examples", type=Path)
    train.add_argument("out", type=Path)
    train.add_argument("--base", default=None, help="encoder folder (default: the packaged all-MiniLM-L6-v2)")
    train.add_argument("--device", default="cuda")
    train.add_argument("--epochs", default="2")
    train.add_argument("--seeds", default="0", help="seeds (each also draws its own held-out questions)")
    rule = commands.add_parser("rule")
    rule.add_argument("examples", type=Path)
    rule.add_argument("--seeds", default="0")
    args = parser.parse_args()

    if args.command == "dump":
        rows = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
        examples = labelled_examples(args.dataset, [r for r in rows if r.get("query")])
        args.examples.write_text("".join(json.dumps(asdict(e)) + "\n" for e in examples))
        print(f"{len(examples)} labelled queries of {len(rows)} sampled -> {args.examples}")
        return
    examples = [ScorerExample(**json.loads(line)) for line in args.examples.read_text().splitlines() if line.strip()]
    if args.command == "rule":
        print_rule_correlations(examples, [int(n) for n in args.seeds.split(",")])
        return
    for seed in (int(n) for n in args.seeds.split(",")):
        for epochs in (int(n) for n in args.epochs.split(",")):
            report = train_scorer(examples, args.out / f"seed-{seed}-epochs-{epochs}", base=args.base, epochs=epochs,
                                  device=args.device, progress=False, seed=seed)
            print(json.dumps({"device": args.device, "seed": seed, **report}), flush=True)


def print_rule_correlations(examples: list[ScorerExample], seeds: list[int]) -> None:
    from hoprag.furepa_scorer import RetrievalScorer
    from hoprag.training.furepa_scorer import bm25_ranking, held_out_correlations, split_by_question

    rule = RetrievalScorer()
    for seed in seeds:
        _, test = split_by_question(examples, seed=seed)
        predicted = [rule.score_ranked([score for _, score in bm25_ranking(e.query, e.documents) or []]) for e in test]
        print(json.dumps({"scorer": "rule (BM25 over D)", "seed": seed, "held_out_queries": len(test),
                          **held_out_correlations(predicted, [e.target for e in test])}), flush=True)


if __name__ == "__main__":
    main()
