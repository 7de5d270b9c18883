"""Self-RAG (`self-rag`): the retrieve decision at the threshold, the ISREL/ISSUP/ISUSE scores as the official
short-form code combines them, the refusal of models without reflection tokens, and its parsers on malformed
output; with scripted models that report top log-probabilities and the OpenAI-compatible test stub."""

from __future__ import annotations

import json
import math
import random

import pytest
from langchain_core.messages import AIMessage

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.eval.runner import run_eval
from hoprag.graphs import mermaid
from hoprag.llm import ScriptedChatModel, register_fake, top_token_logprobs
from hoprag.nodes.retrieve import register_retriever
from hoprag.nodes.self_rag import (
    NotSelfRagModelError,
    critique_scores,
    retrieve_probability,
    shows_reflection_tokens,
    strip_reflection,
)
from hoprag.presets import preset_options
from hoprag.run import run_question


class TwoDocs:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        return [Document(id="a", title="Page A", text="Rush is a band."),
                Document(id="b", title="Page B", text="Yes is a band.")][:k]


def entry(token: str, top: dict[str, float] | None = None) -> dict:
    """A generated token and its position's top probabilities (OpenAI's logprobs layout)."""
    top = top or {token: 0.99}
    return {"token": token, "logprob": math.log(top[token]),
            "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()]}


def self_rag_model(p_retrieval: float):
    """A Self-RAG checkpoint: p([Retrieval]) = p_retrieval, p([No Retrieval]) = 1 - p_retrieval at the first position;
    page A's generation is relevant (0.9), partly supported, utility 4 or 5; page B's half relevant, fully supported."""

    def reply(messages):
        prompt = str(messages[-1].content)
        if prompt.endswith("### Response:\n"):
            first = {"[Retrieval]": p_retrieval, "[No Retrieval]": 1 - p_retrieval}
            best = max(first, key=first.get)
            return f"{best}Rush", [entry(best, first), entry("Rush")]
        if prompt.endswith("[No Retrieval]"):
            return "Rush from memory[Utility:4]", [entry("Rush"), entry(" from memory"), entry("[Utility:4]")]
        if "Page A" in prompt:
            return "[Relevant]Rush[Partially supported][Utility:5]", [
                entry("[Relevant]", {"[Relevant]": 0.9, "[Irrelevant]": 0.1}), entry("Rush"),
                entry("[Partially supported]", {"[Fully supported]": 0.2, "[Partially supported]": 0.6,
                                                "[No support / Contradictory]": 0.2}),
                entry("[Utility:5]", {"[Utility:4]": 0.5, "[Utility:5]": 0.5})]
        return "[Relevant]Yes[Fully supported]", [
            entry("[Relevant]", {"[Relevant]": 0.5, "[Irrelevant]": 0.5}), entry("Yes"),
            entry("[Fully supported]", {"[Fully supported]": 1.0})]

    return reply


def setup(script, name: str, **options) -> tuple[Context, TwoDocs, ScriptedChatModel]:
    retriever = TwoDocs()
    register_retriever(f"{name}-index", retriever)
    model = ScriptedChatModel(script)
    return Context(index=f"{name}-index", llm=register_fake(f"fake:{name}", model), **options), retriever, model


def test_the_retrieve_decision_flips_at_the_threshold():
    # p([Retrieval]) normalised = 0.3: above the threshold 0.2 it retrieves, below 0.35 it does not.
    ctx, retriever, model = setup(self_rag_model(0.3), "srag-retrieve", self_rag_threshold=0.2)
    result = run_question("self-rag", "Which band?", ctx)
    decision = result["trajectory"][0]
    assert decision["retrieve"] and decision["retrieve_probability"] == pytest.approx(0.3)
    assert retriever.queries == ["Which band?"] and len(model.prompts) == 3  # decide, then one per passage
    assert model.prompts[0] == "### Instruction:\nWhich band?\n\n### Response:\n"
    assert model.prompts[1].endswith("### Response:\n[Retrieval]<paragraph>Page A\nRush is a band.</paragraph>")
    ctx, retriever, model = setup(self_rag_model(0.3), "srag-no-retrieve", self_rag_threshold=0.35)
    result = run_question("self-rag", "Which band?", ctx)
    assert not result["trajectory"][0]["retrieve"] and retriever.queries == []
    assert model.prompts[-1].endswith("### Response:\n[No Retrieval]")
    assert result["answer"] == "Rush from memory"  # the reflection token stripped


def test_the_scores_combine_as_the_official_code_weights_them():
    ctx, _, _ = setup(self_rag_model(0.9), "srag-scores")
    result = run_question("self-rag", "Which band?", ctx)
    page_a, page_b = result["trajectory"][1:]
    # A: ISREL .9; ISSUP .2 + .5 x .6 = .5; ISUSE (.5 x .5 + 1 x .5) = .75; 1.0 x .9 + 1.0 x .5 + 0.5 x .75 = 1.775.
    assert page_a["scores"] == pytest.approx({"relevance": 0.9, "support": 0.5, "utility": 0.75, "final": 1.775},
                                             abs=1e-5)
    # B: ISREL .5; ISSUP 1 (the other two tokens absent: exp(-100)); no utility token: 0; final 1.5.
    assert page_b["scores"] == pytest.approx({"relevance": 0.5, "support": 1.0, "utility": 0.0, "final": 1.5}, abs=1e-5)
    assert result["answer"] == "Rush" and page_a["selected"] and "selected" not in page_b
    assert page_a["thought"] == "[Relevant]Rush[Partially supported][Utility:5]"
    assert result["invalid_outputs"] == 0


def test_a_model_that_is_not_a_self_rag_checkpoint_is_refused_in_one_line():
    ctx, _, _ = setup(lambda m: ("Rush", [entry("Rush", {"Rush": 0.9, "Yes": 0.1})]), "srag-plain")
    with pytest.raises(NotSelfRagModelError) as error:
        run_question("self-rag", "Which band?", ctx)
    assert "\n" not in str(error.value) and "showed none of them" in str(error.value)
    # The embedded models are known by name: refused before any call (nothing is loaded).
    register_retriever("srag-local-index", TwoDocs())
    with pytest.raises(NotSelfRagModelError, match="local:qwen2.5-coder-1.5b is not one"):
        run_question("self-rag", "Which band?", Context(index="srag-local-index", llm="local:qwen2.5-coder-1.5b"))


def test_the_cli_refuses_an_embedded_model_in_one_line(tmp_path):
    from .test_cli import assert_one_line_error, hoprag

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "1", "title": "Rush", "text": "Rush is a band."}) + "\n")
    assert hoprag("index", "build", "srag", "--source", f"jsonl:{corpus}").returncode == 0
    assert_one_line_error(hoprag("ask", "Which band?", "--method", "self-rag", "--index", "srag", "--retriever", "bm25",
                                 "--llm", "local:qwen2.5-coder-1.5b"), "self-rag needs a Self-RAG checkpoint")


def test_an_endpoint_that_serves_reflection_tokens(openai_stub):
    register_retriever("srag-endpoint", TwoDocs())
    result = run_question("self-rag", "Which band?", Context(index="srag-endpoint", llm="openai:selfrag"))
    assert result["answer"] == "Rush" and result["trajectory"][0]["retrieve"]
    bodies = openai_stub.bodies
    assert len(bodies) == 3 and all(b["top_logprobs"] == 20 and b["skip_special_tokens"] is False for b in bodies)
    assert all(b["temperature"] == 0.0 for b in bodies)  # greedy: top_p 1.0 is not sent (it changes nothing)
    assert bodies[1]["messages"][-1]["content"].endswith("[Retrieval]<paragraph>Page A\nRush is a band.</paragraph>")


def test_two_hundred_malformed_outputs_through_the_parsers():
    rng = random.Random(94)
    pieces = ["[Retrieval]", "[No Retrieval]", "[Relevant]", "[Irrelevant]", "[Fully supported]", "[Utility:3]",
              "<paragraph>", "#", ":", "\n", "</s>", "Rush", "", " ", "[Utility:9]", "[Relevant", "nan", "{}"]
    values = [None, "x", float("nan"), float("-inf"), float("inf"), -1e9, 3.0, -0.2, [], {}]
    for _ in range(200):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        content = []
        for _ in range(rng.randint(0, 5)):
            tops = [rng.choice([{"token": rng.choice(pieces), "logprob": rng.choice(values)}, None, "x", {"token": 1}])
                    for _ in range(rng.randint(0, 4))]
            content.append(rng.choice([{"token": rng.choice(pieces), "logprob": rng.choice(values),
                                        "top_logprobs": rng.choice([tops, None, "bad"])}, None, 7, "x"]))
        metadata = rng.choice([{"logprobs": {"content": content}}, {"logprobs": None}, {"logprobs": "x"}, {},
                               {"logprobs": {"content": "x"}}])
        positions = top_token_logprobs(AIMessage(text, response_metadata=metadata))
        scores = critique_scores(positions)
        assert all(math.isfinite(v) for v in scores.values())
        assert 0.0 <= retrieve_probability(positions) <= 1.0
        assert isinstance(strip_reflection(text), str) and "[Retrieval]" not in strip_reflection(text)
        shows_reflection_tokens(text, positions)


def test_presets_counters_and_eval(tmp_path):
    paper, small = preset_options("paper", "self-rag"), preset_options("small", "self-rag")
    for options in (paper, small):
        assert (options["temperature"], options["top_p"], options["max_tokens"], options["k"]) == (0.0, 1.0, 100, 10)
        assert options["self_rag_threshold"] == 0.2 and options["top_logprobs"] == 20
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Which band?", "answers": ["Rush"]}))
    ctx, _, _ = setup(self_rag_model(0.9), "srag-eval")
    summary = run_eval("self-rag", f"jsonl:{data}", tmp_path / "out", ctx, progress=False)
    assert summary["em"] == 100.0
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert record["counters"] == {"retrieved": 1, "scored_generations": 2, "invalid_outputs": 0}
    from hoprag.eval.html_report import render_html

    assert "generate[Page A]" in render_html([tmp_path / "out"])


def test_the_graph_is_registered_exported_and_drawn():
    from pathlib import Path

    from hoprag.graphs import DIAGRAMS, METHODS

    assert "self-rag" in METHODS and "self-rag" in DIAGRAMS
    assert "self-rag" in json.loads((Path(__file__).resolve().parents[1] / "langgraph.json").read_text())["graphs"]
    drawn = mermaid("self-rag")
    assert "decide" in drawn and "generate_per_document" in drawn and "generate_without_retrieval" in drawn


from .test_serve import served  # noqa: E402, F401  (langgraph dev over langgraph.json, the test stub as the model)


def test_replug_and_self_rag_answer_through_langgraph_dev(served):  # noqa: F811
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=served)
    context = {"llm": "openai:stub", "index": "served", "retriever": "bm25"}
    for method in ("replug", "self-rag"):  # the stub serves REPLUG's top log-probabilities and Self-RAG's tokens
        result = client.runs.wait(None, method, input={"question": "Which band?"}, context=context)
        assert result["answer"] == "Rush", (method, result)
