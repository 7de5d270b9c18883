"""Parsers of LLM output: the bugs a review found, and a property test that no output crashes them."""

from __future__ import annotations

import random
import re
import string

import pytest

from hoprag.nodes.generate import first_line
from hoprag.nodes.parsing import parse_furepa_plan, parse_note, parse_plan, parse_react, parse_yes_no

# ---------------------------------------------------------------- note verdicts


@pytest.mark.parametrize("text", ["Norway is a Nordic country.", "Nothing in this page is about rock bands.",
                                  "Yesterday the band released a single.", "Yesenia Ortiz is a singer."])
def test_a_word_that_starts_with_yes_or_no_is_not_a_verdict(text):
    strict = parse_note(text)
    assert strict.body == text  # nothing cut off the front ("rway is ...", "terday ...")
    assert not strict.relevant and strict.problem == "no YES/NO verdict"


def test_lenient_notes_keep_unprefixed_text_whole():
    note = parse_note("Norway is a Nordic country.", lenient=True)
    assert note.relevant and note.body == "Norway is a Nordic country."
    assert note.problem  # still counted as an output without a verdict


@pytest.mark.parametrize("text", ["The text does not mention Rush.", "This page doesn't provide any information about the album.",
                                  "The document is not related to the query.", "There is no relevant information here."])
def test_unprefixed_refusals_are_not_notes(text):
    assert not parse_note(text, lenient=True).relevant
    assert not parse_note(text).relevant


@pytest.mark.parametrize(("text", "relevant", "body"), [
    ("YES#Rush released Counterparts in 1993.", True, "Rush released Counterparts in 1993."),
    ("NO#No relevant context.", False, "No relevant context."),
    ("**YES** # Neil Peart was inducted in 1983.", True, "Neil Peart was inducted in 1983."),
    ("yes: the band is Rush", True, "the band is Rush"),
    ("NO#", False, ""),
    ("YES#", False, ""),
])
def test_verdicts(text, relevant, body):
    note = parse_note(text)
    assert (note.relevant, note.body, note.problem) == (relevant, body, "")


# ---------------------------------------------------------------- ReAct actions


def test_an_answer_with_brackets_is_kept_whole():
    action = parse_react("Thought: done\nAction: finish[Dune [novel]]")
    assert action.kind == "finish" and action.argument == "Dune [novel]"
    action = parse_react("Thought: x\nAction: search[Array [computing]; what is it]")
    assert action.entity == "Array [computing]" and action.query == "what is it"


def test_an_unbalanced_answer_ends_at_the_last_bracket_of_its_line():
    action = parse_react("Thought: done\nAction: finish[a ] b]\nObservation")
    assert action.argument == "a ] b"


def test_several_actions_are_a_warning_and_the_first_runs():
    action = parse_react("Thought: t\nAction 1: search[a]\nAction 2: finish[b]")
    assert action.kind == "search" and action.query == "a" and "2 actions" in action.problem


@pytest.mark.parametrize(("text", "kind", "argument"), [
    # A search named inside the Thought is not run; the Action line is.
    ("Thought: I could search[Arthur's Magazine; start] but I know it.\nAction: finish[1844]", "finish", "1844"),
    ("Thought 2: first search[A] then search[B]\nAction 2: search[B; when]", "search", "B; when"),
    ("Thought: search[X; y] is what I need.\nAction: search[Z; w]\nObservation", "search", "Z; w"),
    # No Action label: an action that begins its own line runs; one inside the Thought line does not.
    ("Thought: I need X.\nsearch[X; when]", "search", "X; when"),
    ("finish[Paris]", "finish", "Paris"),
    ("Thought: I will search[X; when] next.", "invalid", ""),
    ("Thought: the answer is finish[Paris]", "invalid", ""),
    # An Action label with no action after it: the Thought's search is still not run.
    ("Thought: search[X]\nAction: I will look it up.", "invalid", ""),
    ("Thought 1: search[X; y]\nAction 1:", "invalid", ""),
])
def test_an_action_is_read_only_from_the_action_part(text, kind, argument):
    action = parse_react(text)
    assert (action.kind, action.argument) == (kind, argument)
    assert "search[" not in action.argument and "finish[" not in action.argument
    if kind == "invalid":
        assert action.problem


def test_a_thought_that_names_a_search_keeps_it_in_the_thought():
    action = parse_react("Thought 3: I could search[A] again.\nAction 3: search[B; q]")
    assert action.thought == "I could search[A] again." and action.entity == "B" and action.query == "q"
    assert not action.problem  # one action in the Action part: no "several actions" warning
    refused = parse_react("Thought: I will search[A; q].")
    assert "inside the Thought" in refused.problem and refused.thought == "I will search[A; q]."


# ---------------------------------------------------------------- ReSP


def test_yes_no_verdicts():
    assert parse_yes_no("Yes, Charlie Murphy").yes and parse_yes_no("Yes, Charlie Murphy").answer == "Charlie Murphy"
    assert not parse_yes_no("No.").yes and not parse_yes_no("No.").problem
    assert not parse_yes_no("Yesterday").yes and parse_yes_no("Yesterday").problem
    assert parse_yes_no("I cannot tell").problem


def test_a_furepa_plan_is_its_tags_line():
    """"Lines only start with [Analysis] or [Answer] or [Search]": what follows the tag's line is not the answer."""
    plan = parse_furepa_plan("[Analysis] The stadium\nis in Jhansi.\n[Answer] Jhansi, India\nBecause the stadium is there.")
    assert (plan.kind, plan.value, plan.analysis) == ("answer", "Jhansi, India", "The stadium is in Jhansi.")
    assert parse_furepa_plan("[Analysis] x\n[Search]\n  Who built it?  \nmore").value == "Who built it?"


def test_first_line_skips_a_label_alone_on_its_line():
    assert first_line("Answer:\nCharlie Murphy") == "Charlie Murphy"
    assert first_line("Final answer: 1974.\nBecause ...") == "1974"
    assert first_line("  \n") == ""


def test_plans_lose_their_label():
    assert parse_plan("[You Thought]: Who directed Big Stone Gap?") == ("Who directed Big Stone Gap?", "")
    assert parse_plan("\n\nSub-question 2: Where was he born?\nmore") == ("Where was he born?", "")
    assert parse_plan("  \n") == ("", "empty plan")


# ---------------------------------------------------------------- property test: never a crash

FRAGMENTS = ["Thought", "Thought 3:", "Action:", "Action 2:", "search[", "finish[", "]", "[", ";", "#", "YES", "NO",
             "YES#", "NO#", "Yes", "No", "\n", "Observation:", "```", "{", "}", "'", '"', "\\", "\x00", "é", "🙂",
             " ", "[DONE]", "Sub-question:", "None", "null", "<s>", "</s>", "<answer>", "…"]


def random_outputs(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    outputs = []
    for _ in range(count):
        if rng.random() < 0.5:
            outputs.append("".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 12))))
        else:
            alphabet = string.printable + "äß中文🙂\x00\u200b"
            outputs.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200))))
    return outputs


MALFORMED = ["", "   ", "\n\n", "search", "finish", "search[]", "finish[]", "finish[   ]", "Action: search[",
             "Action: finish[unclosed", "Thought: only a thought", "[]", "]]]]", "#", "##", "maybe", "\x00\x00"]


@pytest.mark.parametrize("text", random_outputs(300))
def test_no_parser_crashes_on_random_output(text):
    action = parse_react(text)
    assert action.kind in ("search", "finish", "invalid")
    assert action.kind != "invalid" or action.problem
    starts_with_verdict = re.match(r"^[\W_]*(yes|no)(?![a-z0-9])", text.strip(), re.IGNORECASE)
    for note in (parse_note(text), parse_note(text, lenient=True)):
        assert note.problem or starts_with_verdict  # no verdict is always a recorded problem
    verdict = parse_yes_no(text)
    assert verdict.problem or starts_with_verdict
    plan, problem = parse_plan(text)
    assert plan or problem


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_outputs_are_recorded_problems(text):
    assert parse_react(text).kind == "invalid" and parse_react(text).problem
    assert parse_note(text).problem
    assert parse_yes_no(text).problem
