"""ChatCoT: the turn parser (malformed turns are invalid outputs, never exceptions), the chat with its retrieval tool
(documents back as user turns, rejected ones taken out), the hop cap, invalid-output recovery, the official window
truncation, and its counters in summary.json."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hoprag.context import Context
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.chatcot import clean_reply, parse_chatcot_turn
from hoprag.nodes.retrieve import register_retriever
from hoprag.prompts.chatcot import (
    CONTINUE_REASONING,
    DEMOS,
    FINAL_GET_ANSWER,
    SYSTEM,
    USE_RETRIEVER,
    USER_BEGIN,
)
from hoprag.run import run_question

from .conftest import Passages, fake_roles

# ---------------------------------------------------------------- the parser


def test_a_reasoning_turn_is_a_sub_problem_or_the_answer():
    turn = parse_chatcot_turn("First, we need to know who recorded Counterparts", "reason")
    assert (turn.kind, turn.problem) == ("reason", "")
    # The official `split('the answer is')[-1].strip()`, any case, the answer's own case kept.
    turn = parse_chatcot_turn("We get the answer. The answer is Rush", "reason")
    assert (turn.kind, turn.answer, turn.problem) == ("answer", "Rush", "")
    # call_chat_completion cuts the model's own next demo question.
    assert clean_reply("  the answer is Rush\nProblem: Who is ...") == "the answer is Rush"
    assert clean_reply("x Q: y") == "x"


@pytest.mark.parametrize(("text", "asked", "kind", "problem"), [
    ("", "reason", "reason", "an empty reasoning turn"),
    ("So the answer is", "reason", "answer", "with no answer after it"),
    ("First, we need X.\nEvidence: made up\nIs this evidence useful?", "reason", "reason", "writes the user's turn"),
    ("   ", "query", "query", "an empty retrieval sentence"),
    ("I think the answer is Rush", "query", "query", "an answer where a retrieval sentence was asked"),
    ("", "evidence", "useful", "an empty evidence judgment"),  # the official `not ''.startswith('no')`: kept
    ("Maybe, it mentions the band", "evidence", "useful", "neither yes nor no"),
    ("", "final", "final", "an empty answer"),
])
def test_malformed_turns_are_the_turns_problem(text, asked, kind, problem):
    turn = parse_chatcot_turn(text, asked)
    assert turn.kind == kind and problem in turn.problem


def test_an_evidence_judgment_reads_as_the_official_startswith_no():
    assert parse_chatcot_turn("No", "evidence").kind == "not_useful"
    assert parse_chatcot_turn("not useful", "evidence").kind == "not_useful"
    turn = parse_chatcot_turn("Yes. We can find that Rush recorded it", "evidence")
    assert (turn.kind, turn.problem) == ("useful", "")
    assert parse_chatcot_turn("Base on the context, Rush.", "final").answer == "Base on the context, Rush."


def test_random_and_malformed_outputs_never_raise():
    pieces = ["the answer is", "The Answer Is", "Problem: ", "Q: ", "Evidence:", "Is this evidence useful?", "No",
              "Yes.", "no", "Continue reasoning", USE_RETRIEVER, "\n", "\n\n", "Rush", " ", "", "İ", "é", "\x00", "|",
              "{", "}", "First, we need", "."]
    rng = random.Random(93)
    outputs = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(250)]
    outputs += ["".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(0, 80))) for _ in range(50)]
    outputs += [None, 12, b"bytes", ["list"]]
    for output in outputs:
        for asked in ("reason", "query", "evidence", "final"):
            turn = parse_chatcot_turn(output, asked)
            assert turn.kind in ("reason", "answer", "query", "useful", "not_useful", "final")
            assert turn.text == turn.text.strip()
            assert turn.kind != "answer" or turn.answer or turn.problem
    with pytest.raises(ValueError):
        parse_chatcot_turn("x", "tool")  # a programming error, not a model output


# ---------------------------------------------------------------- the graph




def chat_script(reasoning, queries, judgments, final="Based on the context, the band is Rush."):
    """A reasoner that answers each kind of user turn from its own list, as the chat asks for it."""
    reasoning, queries, judgments = iter(reasoning), iter(queries), iter(judgments)

    def reply(messages):
        last = str(messages[-1].content)
        if last == USE_RETRIEVER:
            return next(queries)
        if last.endswith("Is this evidence useful?"):
            return next(judgments)
        if last == FINAL_GET_ANSWER:
            return final
        return next(reasoning)

    return reply


def setup(script, **options):
    retriever = Passages()
    register_retriever("chatcot-index", retriever)
    models = {"reasoner": ScriptedChatModel(script), "generator": ScriptedChatModel(lambda m: "Rush")}
    return Context(index="chatcot-index", **fake_roles("chatcot", models), **options), retriever, models


def test_a_tool_call_brings_the_documents_into_the_chat_and_the_chat_answers():
    ctx, retriever, models = setup(chat_script(
        ["First, we need to know who recorded Counterparts", "We get the answer. The answer is Rush"],
        ["the band that recorded Counterparts"],
        ["No", "Yes. We can find that Rush recorded Counterparts"]))
    result = run_question("chatcot", "Which band recorded Counterparts?", ctx)
    assert result["answer"] == "Rush" and result["finished_by"] == "finish"
    assert retriever.queries == ["the band that recorded Counterparts"]
    reason, search, answer = result["trajectory"]
    assert (reason["kind"], search["kind"], answer["kind"]) == ("reason", "search", "answer")
    assert search["retrieved_titles"] == [f"T{i}" for i in range(5)]  # paper: at most five documents, k = 5
    assert [j["useful"] for j in search["judgments"]] == [False, True]
    assert search["observation"].startswith("Evidence: Passage 1 about the band")
    prompts = models["reasoner"].prompts
    # The official prefix: the system message, the four demos, the "Do you understand?" exchange, the problem.
    assert prompts[0].startswith(SYSTEM) and USER_BEGIN in prompts[0]
    assert prompts[0].endswith("Problem: Which band recorded Counterparts?\nLet's think step by step to solve this problem")
    assert prompts[2].endswith("Evidence: Passage 0 about the band that recorded Counterparts.\nIs this evidence useful?")
    # The rejected document and its "No" left the chat; the kept one and its judgment stay, then "Continue reasoning".
    last = prompts[-1]
    assert "Passage 0 about the band" not in last and "Evidence: Passage 1 about the band" in last
    assert last.endswith(f"Yes. We can find that Rush recorded Counterparts\n{CONTINUE_REASONING}")
    assert result["invalid_outputs"] == 0 and result["parsed_outputs"] == 5


def test_the_hop_cap_asks_for_the_answer_and_takes_the_whole_reply():
    ctx, retriever, models = setup(chat_script([f"Step {i}, we need more" for i in range(9)],
                                               [f"query {i}" for i in range(9)], ["No"] * 99), max_iterations=2)
    result = run_question("chatcot", "Which band?", ctx)
    assert retriever.queries == ["query 0", "query 1"] and result["finished_by"] == "cap"
    assert result["answer"] == "Based on the context, the band is Rush."  # paper: the whole reply, as the official
    # Every document rejected: five shown per tool call, none kept, and the chat goes on without them.
    searches = [s for s in result["trajectory"] if s["kind"] == "search"]
    assert [len(s["judgments"]) for s in searches] == [5, 5] and searches[0]["observation"] == "No evidence was judged useful."
    final_prompt = models["reasoner"].prompts[-1]
    # The last "Continue reasoning" became "Base on the context, what is the answer?".
    assert final_prompt.endswith(f"query 1\n{FINAL_GET_ANSWER}")
    # small: the concise-answer step shortens the reply.
    long_reply = "Based on the context and the evidence above, the band that recorded it is Rush."
    ctx, _, _ = setup(chat_script(["we need more"] * 9, ["q"] * 9, ["No"] * 99, final=long_reply), max_iterations=1,
                      preset="small")
    assert run_question("chatcot", "Which band?", ctx)["answer"] == "Rush"


def test_invalid_outputs_are_recorded_and_the_chat_recovers():
    ctx, retriever, models = setup(chat_script(
        ["", "First, we need the band", "So the answer is Rush"], ["", "the band"], ["Perhaps, it names a band"]))
    result = run_question("chatcot", "Which band recorded Counterparts?", ctx)
    # An empty reasoning turn and an empty retrieval sentence: no search, "Continue reasoning", the next hop goes on;
    # a judgment neither yes nor no keeps the document, as the official loop does.
    assert retriever.queries == ["the band"] and result["answer"] == "Rush" and result["finished_by"] == "finish"
    assert result["invalid_outputs"] == 3 and result["parsed_outputs"] == 6
    problems = [c["problem"] for c in result["invalid_replies"]]
    assert problems == ["an empty reasoning turn", "an empty retrieval sentence", "a judgment that is neither yes nor no"]
    first_search = result["trajectory"][1]
    assert first_search["observation"] == "No retrieval: the retrieval sentence was empty."
    assert "Evidence: Passage 0 about the band.\nIs this evidence useful?\nPerhaps, it names a band\nContinue reasoning" \
        in models["reasoner"].prompts[-1]


def test_a_chat_past_the_window_drops_the_oldest_demo_turns_as_the_official_code_does():
    ctx, _, models = setup(chat_script(["The answer is Rush"], [], []), context_window=900)
    assert run_question("chatcot", "Which band?", ctx)["answer"] == "Rush"
    prompt = models["reasoner"].prompts[0]
    assert prompt.startswith(SYSTEM) and DEMOS[0][0][1] not in prompt and DEMOS[3][-1][1] in prompt
    assert prompt.endswith("Problem: Which band?\nLet's think step by step to solve this problem")


def test_eval_records_the_counters(tmp_path):
    from hoprag.eval.runner import run_eval

    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Which band {i}?", "answers": ["Rush"]})
                              for i in range(2)))
    ctx, _, _ = setup(chat_script(["we need the band", "The answer is Rush", "The answer is Rush"], ["the band"],
                                  ["No", "Yes, it names Rush"]))
    summary = run_eval("chatcot", f"jsonl:{data}", tmp_path / "run", ctx, progress=False)
    assert summary["counters"]["rounds"] == {"total": 3, "mean": 1.5}
    assert summary["counters"]["tool_calls"] == {"total": 1, "mean": 0.5}
    assert summary["counters"]["evidence_turns"] == {"total": 2, "mean": 1.0}
    assert summary["counters"]["useful_evidence"] == {"total": 1, "mean": 0.5}
    assert summary["counters"]["invalid_outputs"] == {"total": 0, "mean": 0.0}
    assert summary["finished_by"] == {"finish": 2}


def test_chatcot_is_exported_drawn_and_preset():
    from hoprag.graphs import DIAGRAMS, METHODS, mermaid
    from hoprag.presets import preset_options

    root = Path(__file__).resolve().parents[1]
    assert "chatcot" in METHODS and "chatcot" in DIAGRAMS
    assert json.loads((root / "langgraph.json").read_text())["graphs"]["chatcot"] == "./hoprag/graphs/chatcot.py:graph"
    assert "judge_evidence" in mermaid("chatcot") and "call_retriever" in mermaid("chatcot")
    paper, small = preset_options("paper", "chatcot"), preset_options("small", "chatcot")
    for options in (paper, small):
        assert {k: options[k] for k in ("temperature", "max_tokens", "k", "max_iterations")} == {
            "temperature": 0.0, "max_tokens": 128, "k": 5, "max_iterations": 5}
    assert (paper["concise_answer"], small["concise_answer"]) == (False, True)
    assert (paper["answer_choices"], small["answer_choices"]) == (False, True)
