"""Long-context reading (`long-context`, ReaRAG's "in-context" baseline): the question's own corpus in the prompt,
cut to the window with what was cut recorded, the retrieval fallback, its presets and its counters in `hoprag eval`,
with scripted models."""

from __future__ import annotations

import json

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.eval.runner import run_eval
from hoprag.graphs import load_method, mermaid, method_counters
from hoprag.llm import ScriptedChatModel, count_tokens, register_fake
from hoprag.nodes.long_context import prompt_budget
from hoprag.nodes.retrieve import register_retriever
from hoprag.presets import preset_options
from hoprag.run import run_question


def paragraphs(n: int, words: int = 100) -> list[dict[str, str]]:
    return [{"title": f"Page {i}", "text": " ".join(f"p{i}w{j}" for j in range(words))} for i in range(n)]


class Passages:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, k: int) -> list[Document]:
        self.calls.append((query, k))
        return [Document(id=f"d{i}", title=f"Hit {i}", text=f"Passage {i}.") for i in range(min(k, 3))]


def setup(name: str, reply: str = "Rush", **options) -> tuple[Context, ScriptedChatModel, Passages]:
    retriever = Passages()
    register_retriever(f"{name}-index", retriever)
    model = ScriptedChatModel(lambda messages: reply)
    return Context(index=f"{name}-index", llm=register_fake(f"fake:{name}", model), **options), model, retriever


def test_truncation_keeps_the_window_and_records_what_was_cut():
    ctx, model, retriever = setup("lc-cut", context_window=1200, max_tokens=32)
    corpus = paragraphs(30)  # about 30 * 250 tokens by the estimate for served models: far over 1200
    result = run_question("long-context", "Which band?", ctx, paragraphs=corpus)
    prompt = model.prompts[0]
    budget = 1200 - 32 - 8
    assert count_tokens("fake:lc-cut", "generator", ctx, prompt) <= budget
    assert retriever.calls == []  # the question's own corpus: nothing retrieved
    assert prompt.startswith('#Context\n"Page 0"\np0w0 ') and prompt.endswith("Query: Which band?\nResponse:")
    step = result["trajectory"][0]
    kept = len(step["retrieved_titles"])
    assert 1 < kept < 30 and "Page 29" not in prompt
    assert f'"Page {kept - 1}"' in prompt and f'"Page {kept}"' not in prompt  # a prefix, in the corpus's order
    assert step["paragraphs"] == 30 and step["cut_paragraphs"] >= 30 - kept and step["cut_tokens"] > 0
    assert step["kind"] == "read" and "to fit the window" in step["observation"]
    # The cut is in the call's record too, so `hoprag eval` counts the cut call like any other.
    assert result["cut_calls"] == 1 and result["cut_tokens"] == step["cut_tokens"]
    assert method_counters("long-context", result) == {"paragraphs": 30, "cut_paragraphs": step["cut_paragraphs"],
                                                       "cut_tokens": step["cut_tokens"], "invalid_outputs": 0}
    assert result["answer"] == "Rush" and result["finished_by"] == "generate"


def test_a_paragraph_longer_than_the_window_is_cut_within():
    ctx, model, _ = setup("lc-one", context_window=300, max_tokens=32)
    result = run_question("long-context", "Which band?", ctx, paragraphs=paragraphs(2, words=500))
    step = result["trajectory"][0]
    assert step["retrieved_titles"] == ["Page 0"] and step["cut_paragraphs"] == 2
    assert count_tokens("fake:lc-one", "generator", ctx, model.prompts[0]) <= 300 - 32 - 8
    assert "p0w10 " in model.prompts[0] and "p0w499" not in model.prompts[0]


def test_a_corpus_that_fits_is_read_whole():
    ctx, model, _ = setup("lc-whole", context_window=100_000)
    result = run_question("long-context", "Which band?", ctx, paragraphs=paragraphs(10))
    step = result["trajectory"][0]
    assert step["cut_paragraphs"] == 0 and step["cut_tokens"] == 0 and result["cut_calls"] == 0
    assert all(f'"Page {i}"' in model.prompts[0] for i in range(10)) and "nothing cut" in step["observation"]


def test_without_a_corpus_of_its_own_the_top_n_retrieval_stands_in():
    ctx, model, retriever = setup("lc-retrieve", long_context_passages=40)
    result = run_question("long-context", "Which band?", ctx)
    assert retriever.calls == [("Which band?", 40)]
    step = result["trajectory"][0]
    assert step["kind"] == "search" and step["corpus"] == "retrieval" and step["retrieved_ids"] == ["d0", "d1", "d2"]
    assert '"Hit 0"\nPassage 0.\n\n"Hit 1"' in model.prompts[0]


def test_the_window_defaults_to_the_providers(monkeypatch):
    monkeypatch.setenv("HOPRAG_N_CTX", "4096")
    ctx = Context(max_tokens=100)
    assert prompt_budget(ctx, "local:any-model") == 4096 - 100 - 8
    assert prompt_budget(ctx.with_options(context_window=2000), "local:any-model") == 2000 - 100 - 8


def test_the_graph_takes_the_paragraphs_as_input():
    ctx, model, retriever = setup("lc-input")
    graph, _ = load_method("long-context")
    out = graph.invoke({"question": "Which band?", "paragraphs": [{"title": "Rush", "text": "A band."}]}, context=ctx)
    assert out["answer"] == "Rush" and '"Rush"\nA band.' in model.prompts[0] and retriever.calls == []


def test_presets():
    paper = preset_options("paper", "long-context")
    assert (paper["temperature"], paper["top_p"], paper["max_tokens"]) == (0.95, 0.7, 1024)
    assert not paper["concise_answer"] and not paper["answer_choices"]
    small = preset_options("small", "long-context")
    assert small["temperature"] == 0.0 and small["concise_answer"] and small["answer_choices"]


def test_eval_reads_each_questions_own_paragraphs(tmp_path):
    records = [{"_id": f"q{i}", "question": f"Which band {i}?", "answer": "Rush", "type": "bridge",
                "supporting_facts": [[f"Gold {i}", 0]],
                "context": [[f"Gold {i}", [f"Rush is band {i}."]], [f"Distractor {i}", ["Something else."]]]}
               for i in range(2)]
    data = tmp_path / "hotpot.json"
    data.write_text(json.dumps(records))
    ctx, model, retriever = setup("lc-eval", context_window=100_000)
    summary = run_eval("long-context", f"hotpotqa:{data}", tmp_path / "out", ctx, progress=False)
    assert summary["em"] == 100.0 and retriever.calls == []
    first = next(p for p in model.prompts if "Which band 0?" in p)
    assert '"Gold 0"\nRush is band 0.\n\n"Distractor 0"' in first and "Gold 1" not in first
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    assert record["counters"] == {"paragraphs": 2, "cut_paragraphs": 0, "cut_tokens": 0, "invalid_outputs": 0}
    assert record["metrics"]["retrieval_recall"] == 1.0
    assert summary["counters"]["paragraphs"] == {"total": 4, "mean": 2.0}
    from hoprag.eval.html_report import render_html

    assert "read[2 of 2 paragraphs]" in render_html([tmp_path / "out"])


def test_the_graph_is_drawn():
    drawn = mermaid("long-context")
    assert "read" in drawn and "concise_answer" in drawn
