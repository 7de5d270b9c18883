"""Infogent: the Navigator / Extractor / Aggregator loop with a feedback round, the official parsers (malformed replies
are invalid outputs with the official error text, never exceptions), the small preset's lenient reading, and its
counters in summary.json."""

from __future__ import annotations

import json
import random

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.infogent import (
    apply_actions,
    parse_aggregator_reply,
    parse_extractor_reply,
    parse_navigator_reply,
)
from hoprag.nodes.retrieve import register_retriever
from hoprag.prompts.infogent import USER_INPUT
from hoprag.run import run_question

from .conftest import fake_roles


def command(name: str, argument: str = "", thought: str = "I need more.", **extra) -> str:
    """A Navigator reply in AutoGPT's response format."""
    args = {"response": argument} if name == "finish" else {"tool_input": argument}
    return json.dumps({"thoughts": {"text": thought, "reasoning": f"because {thought.lower()}", "plan": "- go",
                                    "criticism": "", "speak": ""}, "command": {"name": name, "args": args}, **extra})


def extracted(*paragraphs: str) -> str:
    return json.dumps({"thoughts": "relevant", "paragraphs": list(paragraphs)})


def aggregated(actions: list[str], feedback: str) -> str:
    return json.dumps({"thoughts": "deciding", "actions": actions, "feedback": feedback})


URL = "https://en.wikipedia.org/wiki/"
PAGES = {
    "Counterparts album": [("Counterparts (album)", "Counterparts is the fifteenth album by the Canadian band Rush."),
                           ("Counterpart", "A counterpart is a thing that corresponds to another.")],
    "Rush drummer": [("Rush (band)", "Rush were a Canadian rock band. Neil Peart was their drummer and lyricist.")],
}


class Pages:
    def __init__(self):
        self.queries: list[str] = []

    def search(self, query, k):
        self.queries.append(query)
        return [Document(id=f"wiki:{title}", title=title, text=f"# {title}\n\n{text}",
                         metadata={"url": URL + title.replace(" ", "_")}) for title, text in PAGES.get(query, [])][:k]


def setup(navigator, extractor=None, aggregator=None, generator=None, **options):
    retriever = Pages()
    register_retriever("infogent-pages", retriever)
    models = {"reasoner": ScriptedChatModel(navigator),
              "notes": ScriptedChatModel(extractor or (lambda m: extracted("Nothing here."))),
              "summarizer": ScriptedChatModel(aggregator or (lambda m: aggregated([], "Keep looking."))),
              "generator": ScriptedChatModel(generator or (lambda m: "Neil Peart"))}
    return Context(retriever="infogent-pages", **fake_roles("infogent", models), **options), retriever, models


# ---------------------------------------------------------------- the loop


def test_a_feedback_round_the_aggregator_asks_for_more_and_the_navigator_searches_again():
    ctx, retriever, models = setup(
        [command("search", "Counterparts album", "I need the band of Counterparts."),
         command("extract", URL + "Counterparts_(album)"),
         command("search", "Rush drummer", "The aggregator asks for the drummer of Rush."),
         command("extract", URL + "Rush_(band)"),
         command("finish", "aggregation is done")],
        extractor=[extracted("Counterparts is an album by Rush."), extracted("Neil Peart was Rush's drummer.")],
        aggregator=[aggregated(["ADD(P1)"], "Now find who the drummer of Rush was."),
                    aggregated(["ADD(P1)"], "Enough information has been aggregated; terminate.")])
    result = run_question("infogent", "Who was the drummer of the band that recorded Counterparts?", ctx)
    assert retriever.queries == ["Counterparts album", "Rush drummer"]
    assert [s["kind"] for s in result["trajectory"]] == ["search", "extract", "search", "extract", "finish"]
    # The Aggregator's feedback is the extract command's result, which the Navigator reads before its next search.
    navigator_prompt = models["reasoner"].prompts[2]
    assert ("Command extract returned: Now find who the drummer of Rush was. Passages aggregated so far: 1"
            in navigator_prompt)
    assert navigator_prompt.rstrip().endswith(USER_INPUT)
    # The search result shows title, url and snippet; the Extractor reads the chosen page with the Navigator's
    # motivation at its last search (thoughts.text + reasoning).
    search_step = result["trajectory"][0]
    assert "'url': 'https://en.wikipedia.org/wiki/Counterparts_(album)'" in search_step["observation"]
    assert search_step["retrieved_titles"] == ["Counterparts (album)", "Counterpart"]
    first_extraction = models["notes"].prompts[0]
    assert "Counterparts is the fifteenth album" in first_extraction
    assert "searching the web: I need the band of Counterparts. because i need the band of counterparts." in first_extraction
    # The second Aggregator call sees the first's entry, its own earlier feedback and the counter the official raises.
    second_aggregation = models["summarizer"].prompts[1]
    assert "ID: E1 Text: Counterparts is an album by Rush." in second_aggregation
    assert "Feedback - Now find who the drummer of Rush was." in second_aggregation
    assert "Current Iteration Counter: 3" in second_aggregation and "maximum of 15 iterations" in second_aggregation
    # The answer comes from the aggregated list alone.
    answer_prompt = models["generator"].prompts[0]
    assert "1) Counterparts is an album by Rush.\n2) Neil Peart was Rush's drummer.\n" in answer_prompt
    assert "Counterparts is the fifteenth album" not in answer_prompt
    assert result["answer"] == "Neil Peart" and result["finished_by"] == "finish"
    assert result["invalid_outputs"] == 0
    from hoprag.graphs import method_counters

    assert method_counters("infogent", result) == {"rounds": 5, "searches": 2, "pages_read": 2, "feedback_rounds": 2,
                                                   "invalid_outputs": 0}


def test_malformed_replies_get_the_official_error_text_and_never_crash():
    ctx, retriever, models = setup(
        ["I will search for Counterparts.",  # not JSON: AutoGPT's ERROR command
         json.dumps({"thoughts": {"text": "x"}}),  # no command
         command("browse", "Counterparts"),  # an unknown command
         command("search", "Counterparts album"),
         command("extract", URL + "Nowhere"),  # a page no search showed: nothing to read
         command("extract", URL + "Counterparts_(album)")],
        extractor=["The page says Counterparts is by Rush."],  # not JSON: the reply itself is the one paragraph
        aggregator=["ADD(P1) please"],  # not JSON: the official "failed to parse" feedback
        max_steps=6)
    result = run_question("infogent", "Which band recorded Counterparts?", ctx)
    observations = [s["observation"] for s in result["trajectory"]]
    assert observations[0].startswith("Error: {'error': 'Could not parse invalid json: I will search")
    assert observations[1].startswith("Error: {'error': \"Incomplete command args: {'thoughts'")
    assert observations[2].startswith("Unknown command 'browse'. Please refer to the 'COMMANDS' list")
    assert observations[4] == ("Command extract returned: Did not find any relevant information on the website. Continue collecting "
                               "information. Passages aggregated so far: 0")
    assert observations[5] == ("Command extract returned: Aggregator failed to parse the website content. Continue with a "
                               "different website.")
    assert result["trajectory"][4]["unknown_page"] and "extracted" not in result["trajectory"][4]
    assert models["summarizer"].prompts[0].count("ID: P1 Text: The page says Counterparts is by Rush.") == 1
    # 3 Navigator replies, the Extractor's and the Aggregator's: invalid outputs, counted; the run ends at the cap.
    assert result["invalid_outputs"] == 5 and result["finished_by"] == "cap"
    from hoprag.graphs import method_counters

    counts = method_counters("infogent", result)
    assert counts["invalid_outputs"] == 5 and counts["rounds"] == 6 and counts["feedback_rounds"] == 0
    assert "Context: \n" in models["generator"].prompts[0]  # nothing was aggregated


def test_small_reads_fenced_json_and_loose_actions_and_limits_the_list():
    fenced = "Sure!\n```json\n" + command("Search", "Counterparts album") + "\n```"
    aggregator = aggregated(["add(p1)", "ADD( P2 )"], "Done.")
    script = [fenced, command("extract", "Counterparts (album)"), command("finish", "done")]
    extractor = "Here:\n" + extracted("Counterparts is by Rush.", "It came out in 1993.")
    # paper: the official parsers read none of it.
    ctx, retriever, _ = setup(script, extractor=[extractor], aggregator=[aggregator], max_steps=3)
    result = run_question("infogent", "Which band recorded Counterparts?", ctx)
    assert retriever.queries == [] and result["trajectory"][0]["kind"] == "invalid"
    # small (`infogent_lenient_json`): the fenced reply, the capitalized command, the page by its title, the prose
    # around the Extractor's JSON and the loose actions are read; `infogent_max_aggregated` 1 keeps one entry.
    ctx, retriever, models = setup(script, extractor=[extractor], aggregator=[aggregator], preset="small",
                                   infogent_max_aggregated=1)
    result = run_question("infogent", "Which band recorded Counterparts?", ctx)
    assert retriever.queries == ["Counterparts album"]
    extract_step = result["trajectory"][1]
    assert extract_step["extracted"] == ["Counterparts is by Rush.", "It came out in 1993."]
    assert extract_step["aggregator_actions"] == ["add(p1)"] and extract_step["aggregated"] == 1
    assert "1) Counterparts is by Rush.\n" in models["generator"].prompts[0] and "1993" not in models["generator"].prompts[0]
    assert result["answer"] == "Neil Peart" and result["finished_by"] == "finish"


def test_an_extractor_reply_the_official_code_cannot_unpack_fails_the_extract_command():
    ctx, _, _ = setup([command("search", "Counterparts album"), command("extract", URL + "Counterparts_(album)")],
                      extractor=['{"paragraphs": ["Counterparts is by Rush."]}'], max_steps=2)
    result = run_question("infogent", "Which band recorded Counterparts?", ctx)
    step = result["trajectory"][1]
    assert step["observation"] == ("Command extract returned: Error: not enough values to unpack (expected 3, got 1), "
                                   "ValueError, args: {'tool_input': 'https://en.wikipedia.org/wiki/Counterparts_(album)'}")
    assert step["extractor_problem"] and result["invalid_outputs"] == 1 and "feedback" not in step


def test_the_navigator_cap_is_max_steps_and_the_answer_comes_from_the_list():
    ctx, retriever, models = setup(lambda m: command("search", "Counterparts album"), max_steps=3)
    result = run_question("infogent", "Which band?", ctx)
    assert retriever.queries == ["Counterparts album"] * 3 and result["finished_by"] == "cap"
    assert len(models["reasoner"].prompts) == 3 and result["answer"] == "Neil Peart"


# ---------------------------------------------------------------- the parsers


@pytest.mark.parametrize(("reply", "name", "problem"), [
    (command("search", "Rush"), "search", ""),
    ('{"thoughts": {"text": "a", "reasoning": "b"}, "command": {"name": "search", "args": {"query": "Rush"}}}',
     "search", ""),
    ('{"thoughts": {"text": "a"}, "command": {"name": "search", "args": {"q": "Rush"}}}', "search", "thoughts"),
    ('{"thoughts": {"text": "a", "reasoning": "b"}, "command": {"name": "search", "args": {}}}', "search", "one argument"),
    ("```json\n" + command("search", "Rush") + "\n```", "ERROR", "not JSON"),
    ('{"command": "search"}', "ERROR", "no command"),
    (command("lookup", "Rush"), "lookup", "unknown command"),
    (command("finish", "done"), "finish", ""),
])
def test_the_navigator_reply_is_read_as_autogpt_reads_it(reply, name, problem):
    parsed = parse_navigator_reply(reply)
    assert parsed.name == name and problem in parsed.problem and bool(parsed.problem) == bool(problem)
    if name == "search" and not problem:
        assert parsed.argument == "Rush" and parsed.motivation in ("a b", "I need more. because i need more.")


def test_the_extractor_and_aggregator_replies_and_actions_are_read_as_the_official_code():
    assert parse_extractor_reply(extracted("a", "b")) == (["a", "b"], "", None)
    assert parse_extractor_reply('```json\n{"thoughts": "t", "paragraphs": "one"}\n```') == (["one"], "", None)
    assert parse_extractor_reply("plain text") == (["plain text"], "the reply is not JSON", None)
    paragraphs, problem, error = parse_extractor_reply('{"paragraphs": ["a"]}')
    assert paragraphs == [] and problem and error == ("not enough values to unpack (expected 3, got 1)", "ValueError")
    assert parse_extractor_reply('{"paragraphs": ["a"]}', lenient=True) == (["a"], "", None)
    reply = parse_aggregator_reply(aggregated(["ADD(P1)", "REPLACE(E1, P2)"], "next"))
    assert reply.parsed and reply.actions == ["ADD(P1)", "REPLACE(E1, P2)"] and reply.feedback == "next"
    assert not parse_aggregator_reply('{"actions": []}').parsed
    assert apply_actions(["ADD(P1)", "REPLACE(E1, P2)", "ADD(P9)", "add(p2)"], ["old"], ["p1", "p2"]) == (
        ["p2", "p1"], ["ADD(P1)", "REPLACE(E1, P2)"], ["ADD(P9)", "add(p2)"])
    assert apply_actions(["ADD(P1)", "ADD(P2)"], [], ["p1", "p2"], limit=1) == (["p1"], ["ADD(P1)"], ["ADD(P2)"])


def test_random_and_malformed_outputs_never_raise():
    pieces = ['{', '}', '[', ']', '"', ':', ',', '"thoughts"', '"text"', '"reasoning"', '"command"', '"name"', '"args"',
              '"search"', '"extract"', '"finish"', '"paragraphs"', '"actions"', '"feedback"', '"ADD(P1)"',
              '"REPLACE(E1, P2)"', "ADD(P-1)", "```json", "```", "\\", "\\u12", "null", "1", "true", " ", "\n", "é", "\x00"]
    rng = random.Random(93)
    outputs = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(250)]
    outputs += ["".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(0, 80))) for _ in range(50)]
    outputs += [json.dumps(v) for v in ({"command": None}, {"command": {"name": 1, "args": [1]}}, {"thoughts": 1},
                                         {"paragraphs": None, "thoughts": 1}, {"feedback": 1, "thoughts": [], "actions": 3},
                                         [1, 2], "s", 12)]
    outputs += [None, 12, b"bytes", ["list"]]
    for output in outputs:
        for lenient in (False, True):
            command_ = parse_navigator_reply(output, lenient)
            assert command_.name == "finish" or command_.problem or command_.name in ("search", "extract")
            paragraphs, _, _ = parse_extractor_reply(output, lenient)
            assert all(isinstance(p, str) for p in paragraphs)
            reply = parse_aggregator_reply(output, lenient)
            apply_actions(reply.actions or [str(output)], ["e"], ["p"], lenient, limit=2)


# ---------------------------------------------------------------- eval, export


def test_eval_records_the_counters(tmp_path):
    from hoprag.eval.runner import run_eval

    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Which band {i}?", "answers": ["Neil Peart"]})
                              for i in range(2)))
    ctx, _, _ = setup(lambda m: command("search", "Counterparts album") if "Command search" not in str(m[-2].content)
                      else command("finish", "done"), max_steps=4)
    summary = run_eval("infogent", f"jsonl:{data}", tmp_path / "run", ctx, progress=False)
    assert summary["counters"]["rounds"] == {"total": 4, "mean": 2.0}
    assert summary["counters"]["searches"] == {"total": 2, "mean": 1.0}
    assert summary["finished_by"] == {"finish": 2}


def test_infogent_is_exported_drawn_and_reads_pages():
    from pathlib import Path

    from hoprag.graphs import DIAGRAMS, METHODS, mermaid, reads_pages

    root = Path(__file__).resolve().parents[1]
    assert "infogent" in METHODS and "infogent" in DIAGRAMS and reads_pages("infogent")
    assert json.loads((root / "langgraph.json").read_text())["graphs"]["infogent"] == "./hoprag/graphs/infogent.py:graph"
    assert "aggregate" in mermaid("infogent") and "extract" in mermaid("infogent")
