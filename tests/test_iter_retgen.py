"""Iter-RetGen (`iter-retgen`): its rounds and query construction, its presets, its counters in `hoprag eval`,
with scripted models and an in-memory retriever."""

from __future__ import annotations

import json

from hoprag.context import Context
from hoprag.eval.runner import run_eval
from hoprag.graphs import mermaid, method_counters
from hoprag.llm import ScriptedChatModel
from hoprag.presets import preset_options
from hoprag.run import run_question

from .conftest import FreshDocs, scripted_setup


def setup(replies, name: str = "iter", **options) -> tuple[Context, FreshDocs, ScriptedChatModel]:
    return scripted_setup(replies, name, **options)


def test_round_t_retrieves_with_the_question_and_round_t_minus_1_generation():
    ctx, retriever, generator = setup(["Neil Peart", "Rush band drummer", "Rush"])
    result = run_question("iter-retgen", "Which band?", ctx)
    # FlashRAG's IterativePipeline: q_1 = question, q_t = f"{question} {y_(t-1)}", iter_num 3.
    assert retriever.queries == ["Which band?", "Which band? Neil Peart", "Which band? Rush band drummer"]
    assert result["answer"] == "Rush" and result["finished_by"] == "generate"
    assert len(generator.prompts) == 3
    # Each round reads its own retrieval only, in the standard RAG prompt.
    second = generator.prompts[1]
    assert second.startswith("Answer the question based on the given document.") and "search 2" in second
    assert "search 1" not in second and second.endswith("Question: Which band?")
    steps = result["trajectory"]
    assert [s["round"] for s in steps] == [1, 2, 3] and [s["query"] for s in steps] == retriever.queries
    assert [s["thought"] for s in steps] == ["Neil Peart", "Rush band drummer", "Rush"]
    assert steps[2]["retrieved_titles"] == ["Page 3.0", "Page 3.1"] and "search 3" in steps[2]["observation"]
    assert result["steps"] == 3 and result["invalid_outputs"] == 0
    assert method_counters("iter-retgen", result) == {"rounds": 3, "searches": 3, "invalid_outputs": 0}


def test_the_number_of_rounds_is_an_option():
    ctx, retriever, _ = setup(lambda m: "Rush", name="iter-t", iter_retgen_rounds=5)
    assert run_question("iter-retgen", "Which band?", ctx)["steps"] == 5 and len(retriever.queries) == 5
    ctx, retriever, generator = setup(lambda m: "Rush", name="iter-one", iter_retgen_rounds=1)
    result = run_question("iter-retgen", "Which band?", ctx)
    assert retriever.queries == ["Which band?"] and len(generator.prompts) == 1 and result["answer"] == "Rush"


def test_an_empty_generation_is_an_invalid_output_and_the_rounds_go_on():
    ctx, retriever, _ = setup(["", "  ", "Rush"], name="iter-empty")
    result = run_question("iter-retgen", "Which band?", ctx)
    assert result["answer"] == "Rush" and result["invalid_outputs"] == 2 and result["parsed_outputs"] == 3
    assert retriever.queries[1] == "Which band? "  # FlashRAG's f"{q} {r}" with an empty r
    assert result["trajectory"][0]["problem"] == "empty generation"


def test_presets_follow_flashrag_and_small_adds_the_answer_steps():
    paper = preset_options("paper", "iter-retgen")
    assert (paper["iter_retgen_rounds"], paper["temperature"], paper["k"], paper["max_tokens"]) == (3, 0.0, 5, 32)
    assert not paper["answer_choices"] and not paper["concise_answer"]
    small = preset_options("small", "iter-retgen")
    assert small["iter_retgen_rounds"] == 3 and small["answer_choices"] and small["concise_answer"]


def test_small_keeps_the_answer_to_the_questions_choices():
    def generator(messages):
        prompt = str(messages[-1].content)
        return "Rush" if prompt.startswith("Pick the answer") else "The band from Toronto"

    ctx, _, model = setup(generator, name="iter-small", preset="small")
    result = run_question("iter-retgen", "Which band formed first, Rush or Yes?", ctx)
    assert result["answer"] == "Rush" and model.prompts[-1].startswith("Pick the answer")
    ctx, _, model = setup(generator, name="iter-paper")
    assert run_question("iter-retgen", "Which band formed first, Rush or Yes?", ctx)["answer"] == "The band from Toronto"


def test_eval_records_the_counters_in_summary(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Which band {i}?", "answers": ["Rush"]})
                              for i in range(2)))
    ctx, _, _ = setup(lambda m: "Rush", name="iter-eval")
    summary = run_eval("iter-retgen", f"jsonl:{data}", tmp_path / "out", ctx, progress=False)
    assert summary["em"] == 100.0
    assert summary["counters"]["rounds"] == {"total": 6, "mean": 3.0}
    assert summary["counters"]["searches"]["mean"] == 3.0 and summary["counters"]["invalid_outputs"]["total"] == 0
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert record["counters"] == {"rounds": 3, "searches": 3, "invalid_outputs": 0}
    from hoprag.eval.html_report import render_html

    page = render_html([tmp_path / "out"])  # the HTML report's trajectory view: each round's query and pages
    assert "retrieve[Which band 0? Rush]" in page and "Page 3.1" in page


def test_the_graph_is_drawn():
    drawn = mermaid("iter-retgen")
    assert "retrieve" in drawn and "generate" in drawn and "concise_answer" in drawn
