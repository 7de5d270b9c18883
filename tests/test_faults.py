"""An OpenAI-compatible endpoint on 127.0.0.1 that returns HTTP 500, hangs past the timeout or sends
malformed JSON during an eval: each call is retried within bounds, a question whose calls keep failing
is recorded as failed, the run goes on, and a rerun retries only the failed questions."""

from __future__ import annotations

import json

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.eval.runner import run_eval
from hoprag.nodes.retrieve import register_retriever

from .openai_stub import start_stub


class Static:
    def search(self, query, k):
        return [Document(id="r", title="Rush (band)", text="Rush recorded the album Counterparts.")]


def test_endpoint_faults_are_bounded_recorded_and_only_failed_questions_rerun(tmp_path, monkeypatch):
    seen: dict[str, int] = {}

    def faults(prompt: str) -> str | None:
        question = prompt.rsplit("Question: ", 1)[-1].split("?")[0]
        seen[question] = seen.get(question, 0) + 1
        if question == "Question 1":
            return "500"  # keeps failing
        if question == "Question 4":
            return "malformed"  # keeps failing
        if question == "Question 2" and seen[question] == 1:
            return "malformed"  # once: the retry succeeds
        if question == "Question 3" and seen[question] == 1:
            return "timeout"  # once: the retry succeeds
        return None

    stub = start_stub(faults=faults)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{stub.server_port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("HOPRAG_TIMEOUT", "1")
    register_retriever("faults-index", Static())
    data = tmp_path / "questions.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "answers": ["Rush"]})
                              for i in range(5)))
    ctx = Context(llm="openai:stub-faults", index="faults-index", max_retries=1, llm_cache=False)
    out = tmp_path / "run"

    summary = run_eval("rag", f"jsonl:{data}", out, ctx, progress=False)
    records = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert summary["questions"] == 5 and summary["failures"] == 2
    assert "after 2 attempt(s)" in records["q1"]["error"] and "500" in records["q1"]["error"]
    assert "after 2 attempt(s)" in records["q4"]["error"]
    assert all(records[i]["prediction"] and not records[i]["error"] for i in ("q0", "q2", "q3"))
    assert seen == {"Question 0": 1, "Question 1": 2, "Question 2": 2, "Question 3": 2, "Question 4": 2}  # bounded

    stub.faults = None  # the endpoint recovers; the rerun asks only for the two failed questions
    stub.prompts.clear()
    summary = run_eval("rag", f"jsonl:{data}", out, ctx, progress=False)
    asked = sorted(p.rsplit("Question: ", 1)[-1].split("?")[0] for p in stub.prompts)
    assert asked == ["Question 1", "Question 4"]
    assert summary["questions"] == 5 and summary["failures"] == 0
    stub.shutdown()
