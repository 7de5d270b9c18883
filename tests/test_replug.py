"""REPLUG (`replug`): the score-weighted ensemble of per-document next-token distributions, token by token, with
scripted models that report top log-probabilities, an in-memory retriever and the OpenAI-compatible test stub."""

from __future__ import annotations

import json
import math

import pytest
from langchain_core.messages import AIMessage

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import HopragError, NoLogprobsError
from hoprag.eval.runner import run_eval
from hoprag.graphs import mermaid, method_counters
from hoprag.llm import ScriptedChatModel, register_fake, top_token_logprobs
from hoprag.nodes.replug import document_weights, ensemble, next_token_distribution
from hoprag.nodes.retrieve import register_retriever
from hoprag.presets import preset_options
from hoprag.run import run_question


class ScoredDocs:
    """Two documents with fixed retrieval scores, and every query it saw."""

    def __init__(self, scores: tuple[float | None, ...] = (3.0, 1.0)) -> None:
        self.scores, self.queries = scores, []

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        return [Document(id=f"d{i}", title=f"Page {'AB'[i]}", text=f"Passage {'AB'[i]}.", score=s)
                for i, s in enumerate(self.scores)][:k]


def entry(token: str, top: dict[str, float]) -> dict:
    """A generated token with its position's top probabilities, in OpenAI's logprobs layout."""
    return {"token": token, "logprob": math.log(top[token]),
            "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()]}


# Page A's prompt prefers "Yes" (0.6 / 0.4), page B's "Rush" (0.9 / 0.1); after the first token both end.
DISTRIBUTIONS = {"Page A": {"Yes": 0.6, "Rush": 0.4}, "Page B": {"Rush": 0.9, "Yes": 0.1}}


def two_documents(messages):
    if isinstance(messages[-1], AIMessage):  # the reply so far, continued: the end token (an empty reply)
        return "", []
    prompt = str(messages[0].content)
    top = next(d for title, d in DISTRIBUTIONS.items() if f"Document(Title: {title}): " in prompt)
    best = max(top, key=top.get)
    return best, [entry(best, top)]


def setup(script, name: str, scores=(3.0, 1.0), **options) -> tuple[Context, ScoredDocs, ScriptedChatModel]:
    retriever = ScoredDocs(scores)
    register_retriever(f"{name}-index", retriever)
    model = ScriptedChatModel(script)
    return Context(index=f"{name}-index", llm=register_fake(f"fake:{name}", model), **options), retriever, model


def test_the_ensemble_weights_follow_the_retrieval_scores_and_pick_the_weighted_argmax():
    # softmax (REPLUG's Eq. 1-2): weights e^3 : e^1 = 0.881 : 0.119; "Yes" = .881*.6 + .119*.1 = .540 beats
    # "Rush" = .881*.4 + .119*.9 = .459. With equal weights "Rush" (.65) would win: the scores decide.
    ctx, retriever, model = setup(two_documents, "replug-softmax", replug_weighting="softmax")
    result = run_question("replug", "Which band?", ctx)
    step = result["trajectory"][0]
    assert retriever.queries == ["Which band?"]
    assert step["weights"] == [round(math.exp(3) / (math.exp(3) + math.exp(1)), 6),
                               round(math.exp(1) / (math.exp(3) + math.exp(1)), 6)]
    assert result["answer"] == "Yes" and [t["token"] for t in step["tokens"]] == ["Yes", ""]
    assert step["tokens"][0]["score"] == pytest.approx(0.880797 * 0.6 + 0.119203 * 0.1, abs=1e-5)
    # One call per document per token: 2 documents x (the token, then the end).
    assert len(model.prompts) == 4 and step["generator_calls"] == 4
    assert model.prompts[2].endswith("Question: Which band?\nYes")  # step 2 continues the reply so far
    # Swap the scores and the other document's preference wins.
    ctx, _, _ = setup(two_documents, "replug-swapped", scores=(1.0, 3.0), replug_weighting="softmax")
    assert run_question("replug", "Which band?", ctx)["answer"] == "Rush"


def test_flashrag_weighting_mixes_log_probabilities_with_scores_over_their_sum():
    # FlashRAG (paper): weights 3/4 and 1/4; "Rush" = .75 ln .4 + .25 ln .9 = -.713 beats "Yes" = .75 ln .6 + .25 ln .1
    # = -.959: the log-linear mix punishes a token one document finds unlikely.
    ctx, _, _ = setup(two_documents, "replug-flashrag")
    result = run_question("replug", "Which band?", ctx)
    step = result["trajectory"][0]
    assert preset_options("paper", "replug")["replug_weighting"] == "flashrag"
    assert step["weights"] == [0.75, 0.25] and step["weighting"] == "flashrag"
    assert step["tokens"][0]["score"] == pytest.approx(0.75 * math.log(0.4) + 0.25 * math.log(0.9), abs=1e-5)
    assert result["answer"] == "Rush" and result["finished_by"] == "generate"


def test_weights_and_ensemble_directly():
    assert document_weights([2.0, 2.0, 4.0], "flashrag")[0] == [0.25, 0.25, 0.5]
    weights, origin = document_weights([0.5, -1.0], "flashrag")  # a non-positive score: equal weights, said so
    assert weights == [0.5, 0.5] and origin.startswith("equal")
    assert document_weights([1.0, None], "softmax")[0] == [0.5, 0.5]
    # A token outside one document's top-k: 0 probability there (softmax), that document's lowest log-prob (flashrag).
    scores = ensemble([{"a": math.log(0.5), "b": math.log(0.5)}, {"a": math.log(0.9)}], [0.5, 0.5], "softmax")
    assert scores == pytest.approx({"a": 0.7, "b": 0.25})
    scores = ensemble([{"a": -1.0, "b": -2.0}, {"c": -0.5}], [0.5, 0.5], "flashrag")
    assert scores == pytest.approx({"a": -0.75, "b": -1.25, "c": -1.25})  # c: -2.0 (floor) and -0.5


def test_a_backend_without_log_probabilities_gets_one_clear_error():
    ctx, _, _ = setup(lambda messages: "Rush", "replug-plain")
    with pytest.raises(NoLogprobsError) as error:
        run_question("replug", "Which band?", ctx)
    assert "REPLUG" in str(error.value) and "top_logprobs" in str(error.value) and "\n" not in str(error.value)


def test_an_endpoint_is_asked_for_its_top_log_probabilities_and_continues_the_reply(openai_stub):
    register_retriever("replug-endpoint", ScoredDocs())
    result = run_question("replug", "Which band?", Context(index="replug-endpoint", llm="openai:stub"))
    step = result["trajectory"][0]
    assert result["answer"] == "Rush" and step["top_logprobs"] == 20  # the top-k used is recorded
    bodies = openai_stub.bodies
    assert len(bodies) == 4 and all(b["top_logprobs"] == 20 and b["logprobs"] for b in bodies)
    first, continued = bodies[0], bodies[2]
    assert "continue_final_message" not in first and first["messages"][-1]["role"] == "user"
    assert continued["continue_final_message"] and not continued["add_generation_prompt"]
    assert continued["messages"][-1] == {"role": "assistant", "content": "Rush"}


def test_a_llama_cpp_server_cannot_continue_a_reply():
    from hoprag.llm import call_llm

    with pytest.raises(HopragError, match="cannot continue a reply"):
        call_llm("generator", "x", Context(llm="local-server:qwen2.5-coder-1.5b", temperature=0.0, max_tokens=1),
                 continue_reply=True)


def test_the_next_token_distribution_of_odd_replies():
    # The endpoint reports nothing for a reply that ended at once: the end token alone.
    assert next_token_distribution(AIMessage("")) == {"": 0.0}
    message = AIMessage("x", response_metadata={"logprobs": {"content": [
        {"token": "x", "logprob": -0.5, "top_logprobs": [{"token": "y", "logprob": "nan"}, {"token": "x"}, None]}]}})
    assert top_token_logprobs(message) == [("x", {"x": -0.5})] and next_token_distribution(message) == {"x": -0.5}


def test_presets_and_counters_in_eval(tmp_path):
    paper, small = preset_options("paper", "replug"), preset_options("small", "replug")
    assert (paper["temperature"], paper["k"], paper["max_tokens"], paper["top_logprobs"]) == (0.0, 5, 32, 20)
    assert not paper["answer_choices"] and small["answer_choices"] and small["replug_weighting"] == "flashrag"
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Which band {i}?", "answers": ["Rush"]})
                              for i in range(2)))
    ctx, _, _ = setup(two_documents, "replug-eval")
    summary = run_eval("replug", f"jsonl:{data}", tmp_path / "out", ctx, progress=False)
    assert summary["em"] == 100.0
    assert summary["counters"]["ensemble_tokens"] == {"total": 4, "mean": 2.0}
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert record["counters"] == {"documents": 2, "ensemble_tokens": 2, "generator_calls": 4, "invalid_outputs": 0}
    assert method_counters("replug", {"trajectory": [], "calls": []})["documents"] == 0
    from hoprag.eval.html_report import render_html

    page = render_html([tmp_path / "out"])
    assert "retrieve[Which band 0?]" in page and "Page B" in page


def test_the_graph_is_registered_exported_and_drawn():
    from pathlib import Path

    from hoprag.graphs import DIAGRAMS, METHODS

    assert "replug" in METHODS and "replug" in DIAGRAMS
    assert "replug" in json.loads((Path(__file__).resolve().parents[1] / "langgraph.json").read_text())["graphs"]
    drawn = mermaid("replug")
    assert "retrieve" in drawn and "ensemble_generate" in drawn and "concise_answer" in drawn


class FakeLlama:
    """What ChatLlamaCpp reads of llama.cpp to report top tokens and continue a reply: no model is loaded."""

    pieces = {1: b"Rush", 2: b"Yes", 0: b""}  # 0: the end token, which decodes to nothing
    metadata = {"tokenizer.chat_template": "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
                                           "{% if add_generation_prompt %}<|assistant|>{% endif %}"}

    class _model:  # noqa: N801  (llama_cpp.Llama's attribute name)
        @staticmethod
        def token_get_text(token: int) -> str:
            return "<eos>"

    def detokenize(self, tokens: list[int]) -> bytes:
        return b"".join(self.pieces[t] for t in tokens)

    def token_eos(self) -> int:
        return 0

    def token_bos(self) -> int:
        return -1

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        self.tokenized = text.decode()
        return [1]


def test_the_embedded_model_reports_top_tokens_the_end_token_and_continues_a_reply():
    from types import SimpleNamespace

    from hoprag.llama_local import ChatLlamaCpp

    llama = FakeLlama()
    model = ChatLlamaCpp(runtime=SimpleNamespace(llama=llama), role="generator")
    # A reply that ended at once still reports its position: the end token ("") and the runners-up.
    content = model._text_logprobs("", [(0, -0.2)], [[(0, -0.2), (1, -1.9)]])
    assert content == [{"token": "", "logprob": -0.2, "top_logprobs": [{"token": "", "logprob": -0.2},
                                                                         {"token": "Rush", "logprob": -1.9}]}]
    assert len(model._text_logprobs("Rush", [(1, -0.1), (0, -0.3)], [[(1, -0.1)], [(0, -0.3)]])) == 2
    assert model._text_logprobs("Rush", [(1, -0.1), (0, -0.3)]) == [{"token": "Rush", "logprob": -0.1}]  # FLARE's
    model._continuation([{"role": "user", "content": "Question?"}, {"role": "assistant", "content": "Ru"}])
    assert llama.tokenized == "<|user|>Question?\n<|assistant|>Ru"  # the template, its generation prompt, the reply
