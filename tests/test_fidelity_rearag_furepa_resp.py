"""Issue 91 for ReaRAG, FuRePA and ReSP: `paper` follows the paper (or the official code) at the step bound, at an
empty query filter and at the last iteration; the counters and records say what happened."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from hoprag.context import Context
from hoprag.eval.runner import run_eval
from hoprag.furepa_scorer import STAND_IN, scorer_description
from hoprag.nodes.rearag import reason
from hoprag.run import run_question

from . import test_furepa as furepa_tests
from . import test_rearag as rearag_tests
from . import test_resp_graph as resp_tests

FORCE_PREFIX = "You have reached the maximum number of steps"


def searching_reasoner(messages):
    """A ReaRAG reasoner that never finishes (a new query each step), and finishes only when forced to."""
    if str(messages[-1].content).startswith(FORCE_PREFIX):
        return rearag_tests.finish(9, "Forced")
    number = sum(1 for m in messages if m.type == "ai") + 1
    return rearag_tests.search(number, f"query {number}")


# ---------------------------------------------------------------- ReaRAG: no answer at the step bound


def test_the_forced_finish_is_off_in_paper_and_on_in_small():
    assert Context(preset="paper").resolved("rearag").rearag_forced_finish is False
    assert Context(preset="small").resolved("rearag").rearag_forced_finish is True


@pytest.mark.parametrize(("forced_finish", "answer", "finished_by"),
                         [(None, "", "cap_no_answer"), (True, "Exeter College", "cap")])
def test_paper_gives_no_answer_at_the_step_bound(forced_finish, answer, finished_by):
    """The official `run()` returns None after 15 steps without `finish`; the forced finish is `small`'s option."""
    ctx, retriever, models = rearag_tests.setup(searching_reasoner, max_steps=3, rearag_forced_finish=forced_finish)
    result = run_question("rearag", "Q?", ctx)
    assert (result["answer"], result["finished_by"]) == (answer, finished_by)
    assert retriever.queries == ["query 1", "query 2", "query 3"] and result["steps"] == 3
    asked_to_finish = any(FORCE_PREFIX in p for p in models["reasoner"].prompts)
    assert asked_to_finish is bool(forced_finish)
    assert bool(models["generator"].prompts) is bool(forced_finish)  # no concise answer of nothing


def test_small_still_forces_the_finish_at_the_bound():
    ctx, _, _ = rearag_tests.setup(searching_reasoner, max_steps=2, preset="small", resample_repeated_queries=0)
    result = run_question("rearag", "Q?", ctx)
    assert result["answer"] == "Forced" and result["finished_by"] == "cap"


def test_a_run_without_an_answer_is_recorded_as_such_and_scored_wrong(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Q?", "answers": ["query 2"], "hops": 2}))
    ctx, _, _ = rearag_tests.setup(searching_reasoner, max_steps=2)
    summary = run_eval("rearag", f"jsonl:{data}", tmp_path / "run", ctx, progress=False)
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text())
    assert record["prediction"] == "" and record["finished_by"] == "cap_no_answer" and record["error"] is None
    assert record["metrics"]["em"] == 0 and record["metrics"]["f1"] == 0 and record["metrics"]["cover_em"] == 0
    assert summary["finished_by"] == {"cap_no_answer": 1} and summary["finish_rate"] == 0


# ---------------------------------------------------------------- ReaRAG: the invalid-step retry counter


@pytest.mark.parametrize(("replies", "retries", "outputs"), [
    (["no action"] * 4, 3, 4),  # the budget of 3 spent: 4 outputs, 3 of them retries
    (["no action", rearag_tests.search(1, "author")], 1, 2),
    ([rearag_tests.search(1, "author")], 0, 1),
])
def test_the_invalid_step_counter_counts_the_retries_made(replies, retries, outputs):
    script = iter(replies)
    ctx, _, _ = rearag_tests.setup(lambda m: next(script), rearag_invalid_retries=3)
    update = reason({"question": "Q?", "trajectory": []}, SimpleNamespace(context=ctx))
    assert update["invalid_retries"] == retries and len(update["calls"]) == outputs


# ---------------------------------------------------------------- FuRePA: the temperature raise


def recorded_temperatures(monkeypatch) -> list[float]:
    import hoprag.nodes.furepa as furepa

    temperatures: list[float] = []
    real_call = furepa.call_llm

    def recording(role, prompt, ctx, **kwargs):
        temperatures.append(ctx.temperature)
        return real_call(role, prompt, ctx, **kwargs)

    monkeypatch.setattr(furepa, "call_llm", recording)
    return temperatures


def test_the_raise_cap_is_off_in_paper_and_two_in_small():
    assert Context(preset="paper").resolved("furepa").furepa_raise_cap == 0
    assert Context(preset="small").resolved("furepa").furepa_raise_cap == 2
    assert Context(preset="paper").resolved("furepa-no-pa").furepa_raise_cap == 0


def test_in_paper_a_raise_ends_the_iteration_and_counts_toward_t(monkeypatch):
    """§3.2.2: an empty query set ends the iteration with the temperature raised; T = 3 here."""
    temperatures = recorded_temperatures(monkeypatch)
    ctx, corpus, _ = furepa_tests.setup(lambda m: "[Search] Rush band", max_iterations=3)
    result = run_question("furepa", "Which band?", ctx)
    assert [s["kind"] for s in result["trajectory"]] == ["search", "raise", "raise", "answer"]
    assert [s["iteration"] for s in result["trajectory"][:3]] == [0, 1, 2]
    # 5 plans at 1.0 (t = 0, the search), 5 at 1.0 (t = 1, raised), 5 at 1.5 (t = 2, raised), the forced answer at tp0
    assert temperatures == [1.0] * 10 + [1.5] * 5 + [1.0]
    assert corpus.queries.count("Rush band") == 1
    assert result["finished_by"] == "cap"  # T iterations, the raises among them


def test_in_paper_the_raises_have_no_cap(monkeypatch):
    temperatures = recorded_temperatures(monkeypatch)
    ctx, _, _ = furepa_tests.setup(lambda m: "[Search] Rush band", max_iterations=6)
    result = run_question("furepa", "Which band?", ctx)
    assert sum(s["kind"] == "raise" for s in result["trajectory"]) == 5  # every iteration after the first
    assert max(temperatures) == 2.0 and result["finished_by"] == "cap"


def test_the_raise_cap_plans_the_same_iteration_again_then_forces(monkeypatch):
    """`furepa_raise_cap=2` (small's): two raises within the iteration, then the answer is forced before T."""
    temperatures = recorded_temperatures(monkeypatch)
    ctx, _, _ = furepa_tests.setup(lambda m: "[Search] Rush band", max_iterations=6, furepa_raise_cap=2)
    result = run_question("furepa", "Which band?", ctx)
    assert temperatures == [1.0] * 10 + [1.5] * 5 + [2.0] * 5 + [1.0]
    assert [s["kind"] for s in result["trajectory"]] == ["search", "answer"]
    assert result["finished_by"] == "no_new_query"


def test_after_a_raise_the_next_iteration_can_search_and_vote():
    replies = iter(["[Search] Rush band"] * 5 + ["[Analysis] a\n[Search] Rush band"] * 5
                   + ["[Analysis] b\n[Search] Neil Peart drummer"] * 5 + ["[Analysis] c\n[Answer] Rush"] * 5)
    ctx, corpus, _ = furepa_tests.setup(lambda m: next(replies), max_iterations=6)
    result = run_question("furepa", "Which band?", ctx)
    assert [s["kind"] for s in result["trajectory"]] == ["search", "raise", "search", "answer"]
    assert corpus.queries[-1] == "Neil Peart drummer" and result["answer"] == "Rush" and result["finished_by"] == "vote"


# ---------------------------------------------------------------- FuRePA: which query scorer ran


def test_the_scorer_description_names_the_stand_in_or_the_trained_scorer():
    assert scorer_description(None).startswith("training-free stand-in for the paper's trained roberta-large scorer")
    assert scorer_description("scorers/hotpot") == "trained scorer scorers/hotpot"
    assert "no query scorer" in scorer_description(None, plan_assessor=False)


@pytest.mark.parametrize(("method", "scorer"), [("furepa", STAND_IN), ("furepa-no-pa", "none (w/o PA")])
def test_summary_json_says_which_scorer_ran(tmp_path, method, scorer):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Which band?", "answers": ["Rush"], "hops": 2}))

    def reasoner(messages):
        return "[Search] Rush band" if furepa_tests.last_user(messages).startswith("To solve") else "[Answer] Rush"

    ctx, _, _ = furepa_tests.setup(reasoner)
    run_eval(method, f"jsonl:{data}", tmp_path / "run", ctx, progress=False)
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["furepa_scorer"].startswith(scorer)


def test_other_methods_name_no_furepa_scorer(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Q?", "answers": ["x"], "hops": 2}))
    ctx, _, _ = rearag_tests.setup(lambda m: rearag_tests.finish(1, "x"))
    run_eval("rearag", f"jsonl:{data}", tmp_path / "run", ctx, progress=False)
    assert "furepa_scorer" not in json.loads((tmp_path / "run" / "summary.json").read_text())


# ---------------------------------------------------------------- ReSP: no judgement after the last iteration


def judge_calls(models) -> int:
    return sum(p.startswith("Judging based solely") for p in models["reasoner"].prompts)


@pytest.mark.parametrize(("max_iterations", "judgements", "queries"), [(3, 2, 3), (1, 0, 1), (2, 1, 2)])
def test_the_last_iteration_goes_to_the_generator_unjudged(max_iterations, judgements, queries):
    """ReSP §4.1: at most 3 iterations, then "directly proceed to the final response generation"."""
    ctx, retriever, models = resp_tests.setup(["No"] * 3, ["Sub one?", "Sub two?"], max_iterations=max_iterations)
    result = run_question("resp", "Who?", ctx)
    assert judge_calls(models) == judgements and len(retriever.queries) == queries
    assert result["finished_by"] == "cap" and len(models["generator"].prompts) == 1


def test_a_sufficient_judgement_still_ends_the_loop_early():
    ctx, retriever, models = resp_tests.setup(["No", "Yes"], ["Sub one?"])
    result = run_question("resp", "Who?", ctx)
    assert judge_calls(models) == 2 and retriever.queries == ["Who?", "Sub one?"]
    assert result["finished_by"] == "sufficient"
