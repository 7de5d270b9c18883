"""End to end with the real embedded model on a real HotpotQA question (slow: loads the 1.5B GGUF)."""

from __future__ import annotations

import json

import pytest

from hoprag.context import Context
from hoprag.run import run_question

from .conftest import SHARED_DATA, needs_shared_data


@pytest.mark.slow
@needs_shared_data
def test_renact_answers_a_real_hotpotqa_question(tmp_path):
    from hoprag.retrievers.index import build_index

    record = json.loads((SHARED_DATA / "hotpotqa" / "hotpot_dev_distractor_hard_100.json").read_text())[0]
    corpus = tmp_path / "q0.jsonl"
    corpus.write_text("\n".join(
        json.dumps({"id": f"p{i}", "title": title, "text": " ".join(sentences)})
        for i, (title, sentences) in enumerate(record["context"])
    ))
    build_index("hotpot-q0", f"jsonl:{corpus}")
    ctx = Context(index="hotpot-q0", retriever="hybrid", k=3, max_steps=4, max_tokens=160)
    result = run_question("renact", record["question"], ctx)
    # A real run: the model searched, notes were written, and an answer came back within the cap.
    assert result["answer"].strip()
    assert result["usage"]["reasoner"]["calls"] >= 1
    assert result["turns"] <= 4
    if result["steps"]:
        assert result["usage"]["notes"]["calls"] >= 1
