"""The BENCHMARKS.md table row of a run's results.jsonl, finished or not.

A run of an older build (the grid's frozen 8d4f9c3) writes summary.json only when it finishes; this aggregates its
records as they are, with this checkout's `aggregate`, into `preset_table.py`'s row, so a session can report a run it
stops part-way (`benchmarks/partial/<commit>/<run>.results.jsonl`, named `<dataset>-<method>-<preset>`). It adds the
median and largest seconds a question; `--records` also prints one line per question.

    python benchmarks/partial_row.py ../frozen-8d4f9c3/runs/presets/musique-renact-paper/results.jsonl --records
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.preset_table import records_summary, summary_row  # noqa: E402


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
    summary = records_summary(records, args.results)
    seconds = [r["seconds"] for r in records]
    print(summary_row(summary))
    print(f"seconds a question: median {statistics.median(seconds):.1f}, max {max(seconds):,.0f}; "
          f"retrieval recall {summary.get('retrieval_recall')}; repeated queries {summary['avg_repeated_queries']}")
    if args.records:
        for r in records:
            print(f"{r['id'][:12]} {r['finished_by']} {r['steps']} {r['seconds']:.0f}s F1 {r['metrics']['f1']} | "
                  f"{r['prediction'][:70]} | {r['gold'][:2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
