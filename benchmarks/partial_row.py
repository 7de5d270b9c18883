"""The BENCHMARKS.md table row of a run's results.jsonl, finished or not.

A run of an older build (the grid's frozen 8d4f9c3) writes summary.json only when it finishes; this aggregates its
records as they are, with this checkout's `aggregate`, into `preset_table.py`'s row, so a session can report a run it
stops part-way (`benchmarks/partial/<commit>/<run>.results.jsonl`, named `<dataset>-<method>-<preset>`). It adds the
median and largest seconds a question; `--records` also prints one line per question. `--baseline` (standard RAG's
results.jsonl on the same index) adds the run's F1 minus RAG's on the questions the run holds, and RAG's F1 there.

    python benchmarks/partial_row.py ../frozen-8d4f9c3/runs/presets/musique-renact-paper/results.jsonl --records
    python benchmarks/partial_row.py benchmarks/partial/a6addbb/open-hotpot-renact-paper.results.jsonl \
        --baseline benchmarks/partial/a6addbb/open-hotpot-rag-small.results.jsonl
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.preset_table import f1_against, f1_by_question, read_results, records_summary, summary_row  # noqa: E402


def read_records(results: Path) -> list[dict] | None:
    """The file's records; None (after one line on stderr) where it is missing or empty."""
    if not results.is_file():
        print(f"no such results file: {results}", file=sys.stderr)
        return None
    records = read_results(results)
    if not records:
        print(f"{results} holds no records yet", file=sys.stderr)
        return None
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a run's results.jsonl")
    parser.add_argument("--records", action="store_true", help="also print one line per question")
    parser.add_argument("--baseline", type=Path, help="standard RAG's results.jsonl on the same questions and index")
    args = parser.parse_args()
    records = read_records(args.results)
    baseline = read_records(args.baseline) if args.baseline else []
    if records is None or baseline is None:
        return 2
    summary = records_summary(records, args.results)
    seconds = [r["seconds"] for r in records]
    print(summary_row(summary))
    print(f"seconds a question: median {statistics.median(seconds):.1f}, max {max(seconds):,.0f}; "
          f"retrieval recall {summary.get('retrieval_recall')}; repeated queries {summary['avg_repeated_queries']}")
    if baseline:
        against = f1_against(f1_by_question(records), f1_by_question(baseline))
        if against is None:
            print(f"{args.baseline} shares no question with {args.results}", file=sys.stderr)
            return 2
        difference, shared, rag_f1 = against
        print(f"F1 - RAG on the {shared} questions both hold: {difference:+.2f} (RAG {rag_f1:.2f} on them)")
    if args.records:
        for r in records:
            print(f"{r['id'][:12]} {r['finished_by']} {r['steps']} {r['seconds']:.0f}s F1 {r['metrics']['f1']} | "
                  f"{r['prediction'][:70]} | {r['gold'][:2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
