"""The answer at the step cap under `plain_synthesis`, replayed on the capped questions of finished ReAct-family runs.

Usage: python benchmarks/synthesis_replay.py RESULTS.jsonl [RESULTS.jsonl ...] [--preset small] [--method renact]

For every record of each RESULTS file that ended at the step cap, the recorded trajectory (its thoughts, searches,
observations and notes) is handed to the `synthesize` node once, with `plain_synthesis` on, under the preset's other
options and the configured generator (the embedded model by default). The run's own cap answer (the chat synthesis,
`plain_synthesis` off) is compared with the replayed one on EM and F1 against the record's gold answers. Only the
synthesis changes: the trajectories stay the recorded ones, so the figure isolates the cap's answer step. Each
replayed call is printed as a JSON line, then one summary line a file and one for all of them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from hoprag.context import Context
from hoprag.eval.metrics import best_em, best_f1
from hoprag.graphs import method_context
from hoprag.nodes.generate import synthesize


class _Runtime:
    """What a node reads from LangGraph's runtime: the context."""

    def __init__(self, context: Context) -> None:
        self.context = context


def replay(record: dict[str, Any], ctx: Context) -> dict[str, Any]:
    state = {"question": record["question"], "trajectory": record["trajectory"]}
    started = time.perf_counter()
    update = synthesize(state, _Runtime(ctx))  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    gold = record["gold"]
    before, after = record.get("prediction") or "", update["answer"]
    call = update["calls"][0] if update.get("calls") else {}
    return {
        "id": record["id"], "gold": gold, "chat_answer": before, "plain_answer": after,
        "chat_em": best_em(before, gold), "plain_em": best_em(after, gold),
        "chat_f1": round(100 * best_f1(before, gold)[0], 2), "plain_f1": round(100 * best_f1(after, gold)[0], 2),
        "prompt_tokens": call.get("input_tokens"), "seconds": round(seconds, 1),
    }


def summary(name: str, rows: list[dict[str, Any]], total: int) -> dict[str, Any]:
    """Totals over a file's capped questions, and the change they make to its F1 over all `total` questions."""
    chat, plain = sum(r["chat_f1"] for r in rows), sum(r["plain_f1"] for r in rows)
    return {
        "file": name, "questions": total, "capped": len(rows),
        "chat_em": sum(r["chat_em"] for r in rows), "plain_em": sum(r["plain_em"] for r in rows),
        "run_f1_change": round((plain - chat) / total, 2) if total else 0.0,
        "improved": sum(r["plain_f1"] > r["chat_f1"] for r in rows),
        "worsened": sum(r["plain_f1"] < r["chat_f1"] for r in rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--preset", default="small", choices=["paper", "small"])
    parser.add_argument("--method", default="renact")
    args = parser.parse_args()
    for path in args.results:
        if not path.is_file():
            sys.exit(f"error: {path} is not a file; pass the results.jsonl of a finished hoprag eval run")
    ctx = method_context(args.method, Context(preset=args.preset)).with_options(plain_synthesis=True)
    everything: list[dict[str, Any]] = []
    questions = 0
    for path in args.results:
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        capped = [r for r in records if r.get("finished_by") == "cap" and r.get("trajectory")]
        rows = []
        for record in capped:
            rows.append(replay(record, ctx))
            print(json.dumps(rows[-1]), flush=True)
        print(json.dumps(summary(path.name, rows, len(records))), flush=True)
        everything += rows
        questions += len(records)
    print(json.dumps(summary("all", everything, questions)), flush=True)


if __name__ == "__main__":
    main()
