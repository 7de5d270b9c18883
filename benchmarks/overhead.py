"""Framework and harness overhead with zero-latency scripted models.

Usage: HOPRAG_HOME=.hoprag/bench python benchmarks/overhead.py
- ms per ReNAct step: scripted reasoner/notes (no latency), BM25 over the HotpotQA-hard closed corpus;
- harness seconds for 100 questions through `run_eval` with the same setup;
- concurrency speed-up of `run_eval` with a model that sleeps 50 ms per call.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from hoprag.context import Context
from hoprag.eval.runner import run_eval
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.retrievers.index import build_index, list_indexes
from hoprag.run import run_question

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "hotpotqa" / "hotpot_dev_distractor_hard_100.json"
STEPS = 5


def scripted(delay: float = 0.0) -> ScriptedChatModel:
    def reply(messages):
        prompt = "\n".join(str(m.content) for m in messages)
        if prompt.startswith("Extract relevant"):
            return "YES#a note"
        tail = prompt.rsplit("\nQuestion: ", 1)[-1]
        if tail.count("\nObservation ") >= STEPS:
            return "Thought: done\nAction: finish[yes]"
        return f"Thought: keep looking\nAction: search[{tail.splitlines()[0][:60]} {tail.count('Observation')}]"

    return ScriptedChatModel(reply, delay=delay)


def main() -> None:
    if not any(i["name"] == "hotpot-hard" for i in list_indexes()):
        build_index("hotpot-hard", f"hotpotqa:{DATA}")
    ctx = Context(llm=register_fake("fake:zero", scripted()), index="hotpot-hard", retriever="bm25")
    questions = [r["question"] for r in json.loads(DATA.read_text())]
    per_step = []
    for question in questions[:20]:
        result = run_question("renact", question, ctx)
        per_step.append(1000 * result["seconds"] / result["turns"])
    print(f"ReNAct framework overhead, BM25, zero-latency model: median {statistics.median(per_step):.1f} ms per step "
          f"({STEPS} searches + finish per question, 20 questions)")
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        run_eval("renact", f"hotpotqa:{DATA}", Path(tmp) / "a", ctx, limit=100, progress=False)
        print(f"Harness, 100 questions, zero-latency model, concurrency 1: {time.perf_counter() - started:.1f} s")
        slow = Context(llm=register_fake("fake:slow", scripted(0.05)), index="hotpot-hard", retriever="bm25")
        timings = {}
        for concurrency in (1, 8):
            started = time.perf_counter()
            run_eval("renact", f"hotpotqa:{DATA}", Path(tmp) / f"c{concurrency}", slow, limit=20,
                     concurrency=concurrency, progress=False)
            timings[concurrency] = time.perf_counter() - started
        print(f"Concurrency, 20 questions, model sleeping 50 ms per call: {timings[1]:.1f} s at 1, "
              f"{timings[8]:.1f} s at 8 ({timings[1] / timings[8]:.1f}x)")


if __name__ == "__main__":
    main()
