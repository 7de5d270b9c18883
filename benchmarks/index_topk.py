"""Does a rebuilt index return what a run retrieved? Compares each record's first search with the index's top k now.

A fresh machine rebuilds an index (`hoprag index build`, or `frozen_run.sh` before a resumed run) from the same
sources; its answers are comparable with the committed rows only if it returns the same passages. This replays the
first search of every record of a run's results.jsonl (standard RAG's: one search of the question) against the index
and counts the questions whose top k is the same in order, and the same as a set; it prints each one that differs.

    python benchmarks/index_topk.py hotpot-hard benchmarks/partial/a6addbb/hotpot-rag-small.results.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.partial_row import read_records, run_script  # noqa: E402


def first_search(record: dict) -> tuple[str, list[str]] | None:
    """The query and retrieved ids of the record's first step that searched; None where it never searched."""
    for step in record.get("trajectory") or []:
        if step.get("query") and step.get("retrieved_ids"):
            return step["query"], list(step["retrieved_ids"])
    return None


def compare_top_k(records: list[dict], search: Callable[[str, int], list[str]]) -> tuple[int, int, int, list[str]]:
    """(searched questions, same top k in order, same as a set, one line per question that differs)."""
    searched = in_order = as_set = 0
    differs: list[str] = []
    for record in records:
        found = first_search(record)
        if found is None:
            continue
        query, recorded = found
        now = search(query, len(recorded))
        searched += 1
        in_order += now == recorded
        as_set += set(now) == set(recorded)
        if now != recorded:
            differs.append(f"{record.get('id')}: recorded {recorded}, now {now}")
    return searched, in_order, as_set, differs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", help="the index name, as `hoprag index list` shows it")
    parser.add_argument("results", type=Path, help="a run's results.jsonl on that index (standard RAG's)")
    args = parser.parse_args()
    records = read_records(args.results)
    if records is None:
        return 2
    from hoprag.errors import HopragError
    from hoprag.retrievers.retrievers import make_retriever

    try:
        retriever = make_retriever(args.index, kind="dense")  # the runs' retriever: the index's dense vectors
        searched, in_order, as_set, differs = compare_top_k(
            records, lambda query, k: [document.id for document in retriever.search(query, k)])
    except HopragError as error:
        print(error, file=sys.stderr)
        return 2
    for line in differs:
        print(line)
    print(f"{args.index}: {in_order} of {searched} questions get the recorded top k in order, {as_set} as a set")
    return 0


if __name__ == "__main__":
    run_script(main)
