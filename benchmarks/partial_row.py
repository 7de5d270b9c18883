"""The results-table row of a run's results.jsonl, finished or not.

A run of an older build (the grid's frozen 8d4f9c3) writes summary.json only when it finishes; this aggregates its
records as they are, with this checkout's `aggregate`, into `preset_table.py`'s row, so a session can report a run it
stops part-way (`benchmarks/partial/<commit>/<run>.results.jsonl`, named `<dataset>-<method>-<preset>`). It adds the
median and largest seconds a question; `--records` also prints one line per question. `--baseline` (standard RAG's
results.jsonl on the same index) adds the run's F1 minus RAG's on the questions the run holds, RAG's F1 there, and how
many questions score better and worse than RAG. `--questions 22-29` keeps the 22nd to 29th records (file order), the
questions one session added; `--prompt-tps` and `--gen-tps` (that session's throughput) add the LLM floor columns.

    python benchmarks/partial_row.py ../frozen-8d4f9c3/runs/presets/musique-renact-paper/results.jsonl --records
    python benchmarks/partial_row.py benchmarks/partial/a6addbb/open-hotpot-renact-paper.results.jsonl \
        --baseline benchmarks/partial/a6addbb/open-hotpot-rag-small.results.jsonl
    python benchmarks/partial_row.py benchmarks/partial/a6addbb/hotpot-renact-paper.results.jsonl \
        --questions 22-29 --prompt-tps 41 --gen-tps 11.7
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.preset_table import (  # noqa: E402
    NotResultsError,
    f1_against,
    f1_by_question,
    read_results,
    records_summary,
    summary_row,
)


def read_records(results: Path) -> list[dict] | None:
    """The file's records; None (after one line on stderr) where it is missing, empty or not JSON lines."""
    if not results.is_file():
        print(f"no such results file: {results}", file=sys.stderr)
        return None
    try:
        records = read_results(results)
    except NotResultsError as error:  # a usage error here, not a traceback
        print(error, file=sys.stderr)
        return None
    if not records:
        print(f"{results} holds no records yet", file=sys.stderr)
        return None
    return records


def question_range(text: str) -> tuple[int, int]:
    """`A-B` (1-based, inclusive) as a pair; argparse reports anything else as a usage error."""
    first, dash, last = text.partition("-")
    if not (dash and first.isdigit() and last.isdigit() and 1 <= int(first) <= int(last)):
        raise argparse.ArgumentTypeError(f"{text!r}: expected FIRST-LAST, e.g. 22-29")
    return int(first), int(last)


def better_worse(run: dict[str, float], baseline: dict[str, float]) -> tuple[int, int]:
    """How many shared questions the run scores higher and lower F1 on than the baseline."""
    shared = run.keys() & baseline.keys()
    return sum(run[q] > baseline[q] for q in shared), sum(run[q] < baseline[q] for q in shared)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a run's results.jsonl")
    parser.add_argument("--records", action="store_true", help="also print one line per question")
    parser.add_argument("--baseline", type=Path, help="standard RAG's results.jsonl on the same questions and index")
    parser.add_argument("--questions", type=question_range, metavar="FIRST-LAST",
                        help="only the FIRST-th to LAST-th records (1-based, file order)")
    parser.add_argument("--prompt-tps", type=float, help="embedded model prompt tokens/s, measured in the run's session")
    parser.add_argument("--gen-tps", type=float, help="embedded model generation tokens/s, measured in the run's session")
    args = parser.parse_args()
    records = read_records(args.results)
    baseline = read_records(args.baseline) if args.baseline else []
    if records is None or baseline is None:
        return 2
    if args.questions:
        first, last = args.questions
        if last > len(records):
            print(f"{args.results} holds {len(records)} records, fewer than {last}", file=sys.stderr)
            return 2
        records = records[first - 1:last]
    summary = records_summary(records, args.results)
    seconds = [r["seconds"] for r in records]
    print(summary_row(summary, args.prompt_tps, args.gen_tps))
    print(f"seconds a question: median {statistics.median(seconds):.1f}, max {max(seconds):,.0f}; "
          f"retrieval recall {summary.get('retrieval_recall')}; repeated queries {summary['avg_repeated_queries']}")
    if baseline:
        run_by_question, baseline_by_question = f1_by_question(records), f1_by_question(baseline)
        against = f1_against(run_by_question, baseline_by_question)
        if against is None:
            print(f"{args.baseline} shares no question with {args.results}", file=sys.stderr)
            return 2
        difference, shared, rag_f1 = against
        better, worse = better_worse(run_by_question, baseline_by_question)
        print(f"F1 - RAG on the {shared} questions both hold: {difference:+.2f} (RAG {rag_f1:.2f} on them); "
              f"{better} better, {worse} worse")
    if args.records:
        for r in records:
            print(f"{r['id'][:12]} {r['finished_by']} {r['steps']} {r['seconds']:.0f}s F1 {r['metrics']['f1']} | "
                  f"{r['prediction'][:70]} | {r['gold'][:2]}")
    return 0


def run_script(main: Callable[[], int]) -> NoReturn:
    """A benchmark script's entry point, its exit status main's. Piped into `head`, it stops quietly as other Unix
    tools do instead of ending in a BrokenPipeError traceback."""
    if hasattr(signal, "SIGPIPE"):  # not on Windows
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    raise SystemExit(main())


if __name__ == "__main__":
    run_script(main)
