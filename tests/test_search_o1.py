"""Search-o1: the special-token parser (malformed turns are invalid outputs, never exceptions), the loop with
Reason-in-Documents, the search limit, the \\boxed{} answer, and its counters in summary.json."""

from __future__ import annotations

import json
import random

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.retrieve import register_retriever
from hoprag.nodes.search_o1 import (
    boxed_answer,
    final_information,
    parse_search_o1_turn,
    previous_reasoning,
    unboxed_answer,
    web_pages,
)
from hoprag.prompts.search_o1 import BEGIN_SEARCH_QUERY as BQ
from hoprag.prompts.search_o1 import BEGIN_SEARCH_RESULT as BR
from hoprag.prompts.search_o1 import END_SEARCH_QUERY as EQ
from hoprag.prompts.search_o1 import END_SEARCH_RESULT as ER
from hoprag.run import run_question

from .conftest import Passages, fake_roles

# ---------------------------------------------------------------- the parser


def test_a_query_ended_by_the_stop_string_is_a_search():
    # The backend drops the stop string: the last begin token without an end is the query it ended.
    turn = parse_search_o1_turn(f"I need the band.\n{BQ}Counterparts album band")
    assert (turn.kind, turn.query, turn.thought, turn.problem) == ("search", "Counterparts album band", "I need the band.", "")
    assert turn.text.endswith(EQ)  # the official output keeps the end token
    # A backend that ignores stop strings: cut after the first end token.
    turn = parse_search_o1_turn(f"{BQ} Rush drummer {EQ} and then more {BQ}x{EQ}")
    assert (turn.kind, turn.query, turn.problem) == ("search", "Rush drummer", "") and turn.text.endswith(f"drummer {EQ}")


@pytest.mark.parametrize(("text", "truncated", "kind", "problem"), [
    (f"Thinking... {BQ}Who founded", True, "invalid", "a begin token with no end token"),
    (f"Rush drummer{EQ}", False, "invalid", "an end token without a begin token"),
    (f"{BQ}   {EQ}", False, "invalid", "an empty search query"),
    (f"{BQ}a {BQ}b{EQ}", False, "search", "two begin tokens before one end token"),
    ("<|begin_search_query>Rush<|end_search_query>", False, "invalid", "malformed special token"),
    ("<search>Rush</search>", False, "invalid", "malformed special token"),
    (f"{BR}I know it{ER} so \\boxed{{Rush}}", False, "invalid", "search-result token"),
])
def test_malformed_special_tokens_are_the_turns_problem(text, truncated, kind, problem):
    turn = parse_search_o1_turn(text, truncated)
    assert turn.kind == kind and problem in turn.problem


def test_a_turn_without_special_tokens_is_the_answer():
    turn = parse_search_o1_turn("So the band is Rush.\n\n\\boxed{Rush}")
    assert (turn.kind, turn.problem) == ("answer", "")


def test_boxed_answer_reads_as_the_official_evaluation():
    assert boxed_answer("first \\boxed{A}\nthen \\boxed{\\text{Rush}}") == "Rush"
    assert boxed_answer("\\boxed{(1844)}") == "1844"
    assert boxed_answer("no box here") == ""
    assert unboxed_answer("So the answer is Rush.") == "Rush"
    assert final_information("x\n**Final Information**\n\nRush is a band.\n") == "Rush is a band."
    assert final_information("nothing") == "No helpful information found."


def test_previous_reasoning_keeps_the_official_steps():
    output = "\n".join(f"line {i}" for i in range(8)) + f"\n{BQ}q{EQ}\nafter"
    text = previous_reasoning(output)
    assert text.startswith("Step 1: line 0\n\n...") and f"{BQ}q{EQ}" in text and text.endswith("after")
    assert previous_reasoning("one line") == "Step 1: one line"
    assert json.loads(web_pages([Document(id="1", title="Rush", text="A band.")]).split("\n", 1)[1]) == {
        "id": 1, "title": "Rush", "context": "A band."}


def test_random_and_malformed_outputs_never_raise():
    pieces = [BQ, EQ, BR, ER, "<|begin_search_query>", "<search>", "</search>", "<|end_search|>", "\\boxed{",
              "}", "\\text{", "answer is", "\n", "\n\n", "**Final Information**", "Step 3:", "Rush", " ", "", "|", "<",
              ">", "{", "é", "\x00", "query"]
    rng = random.Random(93)
    outputs = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(250)]
    outputs += ["".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(0, 80))) for _ in range(50)]
    outputs += [None, 12, b"bytes", ["list"]]
    for output in outputs:
        for truncated in (False, True):
            turn = parse_search_o1_turn(output, truncated)
            assert turn.kind in ("search", "answer", "invalid")
            assert turn.kind != "search" or turn.query
        boxed_answer(output)
        unboxed_answer(output)
        final_information(output)
        previous_reasoning(output if isinstance(output, str) else str(output))


# ---------------------------------------------------------------- the graph




def setup(reasoner, summarizer=None, **options):
    retriever = Passages()
    register_retriever("search-o1-index", retriever)
    models = {"reasoner": ScriptedChatModel(reasoner),
              "summarizer": ScriptedChatModel(summarizer or (lambda m: "The pages say so.\n**Final Information**\n\nRush recorded it.")),
              "generator": ScriptedChatModel(lambda m: "Rush")}
    return Context(index="search-o1-index", **fake_roles("search-o1", models), **options), retriever, models


def test_a_chain_searches_reads_the_documents_and_answers_from_boxed():
    ctx, retriever, models = setup([f"I need the band.\n{BQ}Counterparts album band", "It is Rush.\n\\boxed{Rush}"])
    result = run_question("search-o1", "Which band recorded Counterparts?", ctx)
    assert result["answer"] == "Rush" and result["finished_by"] == "finish"
    assert retriever.queries == ["Counterparts album band"]
    search, final = result["trajectory"]
    assert (search["kind"], search["query"], search["observation"]) == ("search", "Counterparts album band", "Rush recorded it.")
    assert search["retrieved_titles"] == [f"T{i}" for i in range(10)]  # paper: the official top 10
    # Reason-in-Documents got the official prompt with the query and the reasoning so far, and the reasoner went on
    # after the appended result.
    rid = models["summarizer"].prompts[0]
    assert rid.startswith("**Task Instruction:**") and 'current search query "Counterparts album band"' in rid
    assert f"{BR}Rush recorded it.{ER}" in models["reasoner"].prompts[1]
    assert result["invalid_outputs"] == 0 and result["parsed_outputs"] == 2 and final["kind"] == "answer"


def test_a_malformed_special_token_is_recorded_as_invalid_and_never_crashes():
    # paper: the official loop ends a chain whose turn has no well-formed query; the answer is read from \boxed{}.
    ctx, retriever, _ = setup([f"I think it is \\boxed{{Rush}} but let me check {BQ}Counterparts{BQ}band<|end_search_query>"])
    result = run_question("search-o1", "Which band recorded Counterparts?", ctx)
    assert result["invalid_outputs"] == 1 and result["parsed_outputs"] == 1 and retriever.queries == []
    assert result["finished_by"] == "invalid" and result["answer"] == "Rush"
    assert "malformed special token" in result["invalid_replies"][0]["problem"]
    # small (`search_o1_invalid_feedback`): the reasoning goes on after a note saying what was wrong.
    ctx, retriever, models = setup([f"{BQ}Counterparts band", f"Counterparts band{EQ}", f"{BQ}Counterparts band",
                                    "So the answer is Rush."], preset="small")
    result = run_question("search-o1", "Which band recorded Counterparts?", ctx)
    kinds = [s["kind"] for s in result["trajectory"]]
    assert kinds == ["search", "invalid", "refused", "answer"] and result["invalid_outputs"] == 1
    assert "Invalid search (an end token without a begin token)" in models["reasoner"].prompts[2]
    assert "You have searched this query" in models["reasoner"].prompts[3]  # the official repeat message
    assert result["answer"] == "Rush"  # no \boxed{}: `search_o1_unboxed_answer` reads "answer is"


def test_the_search_limit_and_the_turn_cap_are_the_officials():
    ctx, retriever, models = setup(lambda m: f"{BQ}query {len(models['reasoner'].prompts)}",
                                   search_o1_max_searches=2, max_steps=3)
    result = run_question("search-o1", "Which band?", ctx)
    assert retriever.queries == ["query 1", "query 2"] and result["finished_by"] == "cap" and result["answer"] == ""
    assert [s["kind"] for s in result["trajectory"]] == ["search", "search", "refused"]
    assert "limited to 2." in models["reasoner"].prompts[0]
    assert "The maximum search limit is exceeded" in result["trajectory"][-1]["observation"]
    # A search asked at the last turn (MAX_TURN) is not run, but is a step of the trajectory.
    ctx, retriever, models = setup(lambda m: f"{BQ}query {len(models['reasoner'].prompts)}", max_steps=2)
    result = run_question("search-o1", "Which band?", ctx)
    assert retriever.queries == ["query 1"] and [s.get("unread_at_cap", False) for s in result["trajectory"]] == [False, True]


def test_eval_records_the_counters_and_the_invalid_rate(tmp_path):
    from hoprag.eval.runner import run_eval

    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Which band {i}?", "answers": ["Rush"]})
                              for i in range(2)))
    replies = iter([f"{BQ}Counterparts", "\\boxed{Rush}", f"{BQ}{EQ}"])
    ctx, _, _ = setup(lambda m: next(replies))
    summary = run_eval("search-o1", f"jsonl:{data}", tmp_path / "run", ctx, progress=False)
    assert summary["invalid_outputs"] == 1 and summary["invalid_output_rate"] == round(100 / 3, 2)
    assert summary["counters"]["rounds"] == {"total": 3, "mean": 1.5}
    assert summary["counters"]["searches"] == {"total": 1, "mean": 0.5}
    assert summary["finished_by"] == {"finish": 1, "invalid": 1}


def test_search_o1_is_exported_and_drawn():
    from pathlib import Path

    from hoprag.graphs import DIAGRAMS, METHODS, mermaid

    root = Path(__file__).resolve().parents[1]
    assert "search-o1" in METHODS and "search-o1" in DIAGRAMS
    assert json.loads((root / "langgraph.json").read_text())["graphs"]["search-o1"] == "./hoprag/graphs/search_o1.py:graph"
    assert "reason_in_documents" in mermaid("search-o1")
