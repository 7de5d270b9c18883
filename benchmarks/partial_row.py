"""One BENCHMARKS.md table row's figures from a run's results.jsonl, finished or not.

A run of an older build (the grid's frozen 8d4f9c3) writes summary.json only when it finishes; this reads its
records as they are, with this checkout's `aggregate`, so a session can report a run it stops part-way
(`benchmarks/partial/<commit>/<run>.results.jsonl`). `--records` also prints one line per question.

    python benchmarks/partial_row.py ../frozen-8d4f9c3/runs/presets/musique-renact-paper/results.jsonl --records
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hoprag.eval.runner import aggregate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a run's results.jsonl")
    parser.add_argument("--records", action="store_true", help="also print one line per question")
    args = parser.parse_args()
    if not args.results.is_file():
        print(f"no such results file: {args.results}", file=sys.stderr)
        return 2
    records = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    if not records:
        print(f"{args.results} holds no records yet", file=sys.stderr)
        return 2
    summary = aggregate(records)
    tokens = ", ".join(f"{role} {usage['input_tokens']:.0f}/{usage['output_tokens']:.0f}"
                       for role, usage in summary["tokens_per_question"].items())
    seconds = [r["seconds"] for r in records]
    ended_by = ", ".join(f"{how} {count}" for how, count in sorted(summary["finished_by"].items(), key=lambda kv: -kv[1]))
    print(f"n {summary['questions']} | EM {summary['em']} | F1 {summary['f1']} | cover-EM {summary.get('cover_em')} | "
          f"retrieval recall {summary.get('retrieval_recall')} | steps {summary['avg_steps']} | "
          f"finish {summary['finish_rate']} ({ended_by}) | invalid {summary['invalid_output_rate']} | "
          f"repeated {summary['avg_repeated_queries']} | {tokens} | s/q {summary['avg_seconds']} "
          f"(median {statistics.median(seconds):.1f}, max {max(seconds):,.0f}) | "
          f"re-processed {summary.get('reprocessed_prompt_share')} | peak RSS {summary.get('peak_rss_mb')}")
    if args.records:
        for r in records:
            print(f"{r['id'][:12]} {r['finished_by']} {r['steps']} {r['seconds']:.0f}s F1 {r['metrics']['f1']} | "
                  f"{r['prediction'][:70]} | {r['gold'][:2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
