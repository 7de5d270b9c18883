"""Self-Ask (`self-ask`) as FlashRAG's SelfAskPipeline runs it: a chain with two follow-ups, the round cap, the
parser on random and malformed outputs, the presets and the counters, with scripted models."""

from __future__ import annotations

import json
import random
import string

import pytest

from hoprag.context import Context
from hoprag.eval.runner import run_eval
from hoprag.graphs import mermaid, method_counters
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.self_ask import (
    EMPTY_FOLLOW_UP,
    EMPTY_ROUND,
    NO_FOLLOW_UP,
    NO_INTERMEDIATE_ANSWER,
    SelfAskRound,
    next_transcript,
    parse_round,
)
from hoprag.presets import preset_options
from hoprag.prompts.self_ask import FOLLOW_UP, INTERMEDIATE_ANSWER, SELF_ASK_MULTI_HOP
from hoprag.run import run_question

from .conftest import FreshDocs, scripted_setup

QUESTION = "Who is the mother of the director of film Polish-Russian War?"
FIRST = "Who is the director of the film Polish-Russian War?"
SECOND = "Who is the mother of Xawery Żuławski?"
# What a model that honours the stop sequences writes in each round: a follow-up (stopped at "Intermediate
# answer:"), its answer (stopped at "Follow up:"), the next follow-up, its answer and the final answer.
CHAIN = [f"Follow up: {FIRST}\n", "\nIntermediate answer: Xawery Żuławski.\n", f"\nFollow up: {SECOND}\n",
         "\nIntermediate answer: Małgorzata Braunek.\nSo the final answer is: Małgorzata Braunek\n"]


def setup(replies, name: str = "self-ask", **options) -> tuple[Context, FreshDocs, ScriptedChatModel]:
    return scripted_setup(replies, name, **options)


def test_a_chain_with_two_follow_ups():
    ctx, retriever, model = setup(list(CHAIN))
    result = run_question("self-ask", QUESTION, ctx)
    assert retriever.queries == [QUESTION, FIRST, SECOND]
    assert result["answer"] == "Małgorzata Braunek" and result["finished_by"] == "finish"
    first, second, last = model.prompts[0], model.prompts[1], model.prompts[-1]
    # FlashRAG's input_prompt: P_INS, a newline, the passages, the question, "Yes.", the transcript.
    assert first == (SELF_ASK_MULTI_HOP + "\nContext1: Passage 0 of search 1.\nContext2: Passage 1 of search 1.\n"
                     f"\nQuestion: {QUESTION}\nAre follow up questions needed here: Yes.\n")
    # The follow-up's passages replace the question's: the intermediate answer is written from them.
    assert "Context1: Passage 0 of search 2." in second and "search 1." not in second.split(SELF_ASK_MULTI_HOP)[1]
    assert second.endswith(f"Yes.\nFollow up: {FIRST}")
    assert last.endswith(f"Yes.\nFollow up: {FIRST}\nIntermediate answer: Xawery Żuławski.\nFollow up: {SECOND}")
    assert "search 3." in last
    steps = result["trajectory"]
    assert [(s["round"], s["kind"]) for s in steps] == [(0, "search"), (1, "search"), (2, "reason"), (3, "search"),
                                                       (4, "reason")]
    assert steps[1]["follow_up"] == FIRST and steps[1]["retrieved_titles"] == ["Page 2.0", "Page 2.1"]
    assert steps[2]["intermediate_answer"] == "Xawery Żuławski." and steps[4]["action"] == "finish[Małgorzata Braunek]"
    assert result["invalid_outputs"] == 0 and result["parsed_outputs"] == 4
    assert method_counters("self-ask", result) == {"rounds": 4, "searches": 3, "follow_ups": 2, "invalid_outputs": 0}


def test_a_model_that_runs_past_the_stop_is_cut_there():
    # A backend that ignores stop sequences writes the whole chain at once: the round keeps the text up to the label
    # it was to stop at, as FlashRAG's stopped generation would be, and the chain goes on from there.
    ctx, retriever, _ = setup(lambda m: f"Follow up: {FIRST}\nIntermediate answer: made up\nSo the final answer is: X",
                              name="self-ask-nostop")
    result = run_question("self-ask", QUESTION, ctx)
    assert retriever.queries[:2] == [QUESTION, FIRST]
    assert result["trajectory"][1]["thought"] == f"Follow up: {FIRST}"


def test_at_the_round_cap_paper_answers_nothing_and_small_asks_once():
    ctx, retriever, model = setup(lambda m: "I am not sure.", name="self-ask-cap")
    result = run_question("self-ask", QUESTION, ctx)
    assert (result["answer"], result["finished_by"]) == ("", "cap")
    assert len(model.prompts) == 5 and result["invalid_outputs"] == 5 and retriever.queries == [QUESTION]
    assert result["invalid_replies"][0]["problem"] == NO_FOLLOW_UP
    assert result["invalid_replies"][1]["problem"] == NO_INTERMEDIATE_ANSWER

    def small(messages):
        return " Rush\n" if str(messages[-1].content).endswith("So the final answer is:") else "I am not sure."

    ctx, _, model = setup(small, name="self-ask-cap-small", preset="small", self_ask_max_rounds=3)
    result = run_question("self-ask", QUESTION, ctx)
    assert (result["answer"], result["finished_by"]) == ("Rush", "cap") and len(model.prompts) == 4


def test_an_empty_first_round_ends_the_chain_without_an_answer():
    ctx, _, model = setup(["\n"], name="self-ask-empty")  # FlashRAG: res is "" once its last newline goes
    result = run_question("self-ask", QUESTION, ctx)
    assert (result["answer"], result["finished_by"], result["invalid_outputs"]) == ("", "empty", 1)
    assert len(model.prompts) == 1


def test_small_shows_the_passages_titles():
    ctx, _, model = setup(["So the final answer is: Rush\n"], name="self-ask-titles", preset="small")
    assert run_question("self-ask", QUESTION, ctx)["answer"] == "Rush"
    assert "Context1: Page 1.0: Passage 0 of search 1.\n" in model.prompts[0]
    paper, small = preset_options("paper", "self-ask"), preset_options("small", "self-ask")
    assert (paper["self_ask_max_rounds"], paper["max_tokens"], paper["temperature"], paper["k"]) == (5, 100, 0.0, 5)
    assert not paper["self_ask_context_titles"] and not paper["self_ask_answer_at_cap"]
    assert small["self_ask_context_titles"] and small["self_ask_answer_at_cap"] and small["self_ask_max_rounds"] == 5


@pytest.mark.parametrize(("text", "expecting", "follow_up", "final", "problem"), [
    ("Follow up: Who is X?\n", INTERMEDIATE_ANSWER, "Who is X?", "", ""),
    ("Follow up:\n", INTERMEDIATE_ANSWER, "", "", EMPTY_FOLLOW_UP),
    ("So the final answer is: Rush", INTERMEDIATE_ANSWER, "", "Rush", ""),
    ("So the final answer is:   ", INTERMEDIATE_ANSWER, "", "", NO_FOLLOW_UP),
    ("\nIntermediate answer: Rush.\n", FOLLOW_UP, "", "", ""),
    ("\nIntermediate answer: Rush.\nFollow up: Who?", FOLLOW_UP, "", "", ""),  # cut at the stop
    ("Rush is a band.", FOLLOW_UP, "", "", NO_INTERMEDIATE_ANSWER),
    ("", INTERMEDIATE_ANSWER, "", "", EMPTY_ROUND),
    ("#\nContext1: a", INTERMEDIATE_ANSWER, "", "", EMPTY_ROUND),
])
def test_parse_round(text, expecting, follow_up, final, problem):
    parsed = parse_round(text, expecting)
    assert (parsed.follow_up, parsed.final_answer, parsed.problem) == (follow_up, final, problem)


def random_outputs(count: int, seed: int = 93) -> list[str]:
    """Random strings, the format's pieces shuffled, truncated and mixed with unicode and control characters."""
    rng = random.Random(seed)
    pieces = ["Follow up:", "Follow up: ", "Intermediate answer:", "So the final answer is:", "So the final answer is: ",
              "Are follow up questions needed here: Yes.", "Context:", "Context1:", "#", "\n", "\r\n", " ", "\t",
              "Who is X?", "Rush", "Żuławski", "盲井", "🙂", "\x00", "\u200b", "\ud7ff", "{question}", "{}", "\\n"]
    alphabet = string.printable + "ŻłąéüßΩЖ中文🙂\u2028\u0301"
    outputs: list[str] = []
    for index in range(count):
        kind = index % 4
        if kind == 0:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        elif kind == 1:
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        elif kind == 2:  # a well-formed chain cut at a random point
            chain = "".join(CHAIN)
            text = chain[: rng.randint(0, len(chain))]
        else:  # pieces and random characters interleaved
            text = "".join(rng.choice(pieces) + rng.choice(alphabet) * rng.randint(0, 3) for _ in range(rng.randint(1, 8)))
        outputs.append(text)
    return outputs


def test_two_hundred_random_and_malformed_outputs_never_raise():
    transcript = ""
    for text in random_outputs(240):
        for expecting in (INTERMEDIATE_ANSWER, FOLLOW_UP):
            parsed = parse_round(text, expecting)
            assert isinstance(parsed, SelfAskRound)
            assert not parsed.appended.strip() or parsed.problem or parsed.follow_up or parsed.final_answer \
                or INTERMEDIATE_ANSWER in parsed.appended
            assert "#" not in parsed.appended and expecting not in parsed.appended
            transcript = next_transcript(transcript, parsed.appended)
    assert parse_round(None, FOLLOW_UP).problem == NO_INTERMEDIATE_ANSWER  # not even a string: read as its text


def test_random_outputs_through_the_graph_end_as_answers_never_crashes():
    outputs = iter(random_outputs(200, seed=7))
    ctx, _, _ = setup(lambda m: next(outputs), name="self-ask-fuzz")
    for number in range(25):
        result = run_question("self-ask", f"{QUESTION} {number}", ctx)
        assert result["finished_by"] in ("finish", "cap", "empty") and isinstance(result["answer"], str)
        assert result["invalid_outputs"] <= result["parsed_outputs"] <= 5


def test_eval_records_the_counters_in_summary(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": QUESTION, "answers": ["Małgorzata Braunek"]}))
    ctx, _, _ = setup(list(CHAIN), name="self-ask-eval")
    summary = run_eval("self-ask", f"jsonl:{data}", tmp_path / "out", ctx, progress=False)
    assert summary["em"] == 100.0 and summary["invalid_outputs"] == 0
    assert summary["counters"] == {"follow_ups": {"total": 2, "mean": 2.0}, "invalid_outputs": {"total": 0, "mean": 0.0},
                                   "rounds": {"total": 4, "mean": 4.0}, "searches": {"total": 3, "mean": 3.0}}
    # The HTML report's trajectory view shows each round: its follow-up, the retrieved pages, the intermediate answer.
    from hoprag.eval.html_report import render_html

    page = render_html([tmp_path / "out"])
    assert "Page 2.0" in page and "Xawery Żuławski." in page and "follow up" in page and "finish[Małgorzata Braunek]" in page


def test_the_graph_is_drawn():
    drawn = mermaid("self-ask")
    assert all(node in drawn for node in ("search_question", "round", "search", "answer_at_cap"))
