"""SearChain: the Chain-of-Query parser (never an exception), the verification that corrects a node or supplies
missing knowledge, the round cap, the reader a run used (LLM or DPR, which fails in one line without its weights)."""

from __future__ import annotations

import json
import random

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.retrieve import register_retriever
from hoprag.nodes.searchain import chain_answer, chain_problem, matches, parse_chain
from hoprag.run import run_question

from .conftest import fake_roles

WRONG = """[Question]: Which band's drummer wrote the lyrics of Counterparts?
[Query 1]: Who is the drummer of the band that recorded Counterparts?
[Answer 1]: The drummer is Alex Lifeson.
[Final Content]: The drummer is Alex Lifeson [1]. So the final answer is Alex Lifeson."""
RIGHT = """[Query 1]: Who is the drummer of the band that recorded Counterparts?
[Answer 1]: The drummer of Rush is Neil Peart.
[Final Content]: Rush's drummer is Neil Peart [1]. So the final answer is Neil Peart."""


def test_the_chain_is_read_as_the_official_server_reads_it():
    nodes = parse_chain("[Question]: q\n[Query 1]: Who is X?\nIf you know the answer:\n[Answer 1]: Y.\n"
                        "[Unsolved Query]: Where was Y born?\n[Final Content]: So the final answer is Z.")
    assert [(n.label, n.query, n.unsolved, n.answer_line) for n in nodes] == [
        ("[Query 1", "Who is X?", False, "[Answer 1]: Y."), ("[Unsolved Query", "Where was Y born?", True, "")]
    assert chain_answer(["[Final Content]: A [1]. So the final answer is Toronto Coach Terminal."]) == "Toronto Coach Terminal"
    assert chain_answer(["[Final Content]: Arthur's Magazine started in 1844 [1].", "no final content"]) == \
        "Arthur's Magazine started in 1844"
    assert chain_answer(["[Query 1]: q\n[Answer 1]: 1844."]) == "1844"
    assert chain_problem("I think the answer is Rush.") == "no [Query] node and no [Final Content]"
    assert matches("[Answer 1]: The drummer of Rush is Neil Peart.", "neil peart") and not matches("[Answer 1]: Lifeson", "Peart")


def test_random_and_malformed_chains_never_raise():
    pieces = ["[Query 1]", "[Query", "]:", "]", ":", "[Answer 1]:", "[Unsolved Query]:", "[Final Content]:", "answer is",
              "\n", " ", "Rush", "[1]", ".", "", "Query", "Answer", "é", "\x00"]
    rng = random.Random(93)
    outputs = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(250)]
    outputs += ["".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(0, 80))) for _ in range(50)]
    outputs += [None, 12, ["list"]]
    for output in outputs:
        for node in parse_chain(output):
            assert node.query and isinstance(node.answer_line, str)
        chain_problem(output)
        chain_answer([output])


class Passages:
    def __init__(self):
        self.queries: list[str] = []

    def search(self, query, k):
        self.queries.append(query)
        return [Document(id=f"p{i}", title="Rush (band)", text="Rush's drummer and lyricist was Neil Peart.")
                for i in range(k)]


def setup(reasoner, reader, **options):
    retriever = Passages()
    register_retriever("searchain-index", retriever)
    models = {"reasoner": ScriptedChatModel(reasoner), "answerer": ScriptedChatModel(reader),
              "generator": ScriptedChatModel(lambda m: "Neil Peart")}
    return Context(index="searchain-index", **fake_roles("searchain", models), **options), retriever, models


def test_a_node_the_reader_corrects_is_written_again():
    ctx, retriever, models = setup([WRONG, RIGHT], lambda m: "Neil Peart")
    result = run_question("searchain", "Which band's drummer wrote the lyrics of Counterparts?", ctx)
    assert result["answer"] == "Neil Peart" and result["finished_by"] == "verified"
    steps = result["trajectory"]
    assert [(s["kind"], s.get("verdict")) for s in steps] == [
        ("chain", None), ("search", "corrected"), ("chain", None), ("seen", "seen before")]
    corrected = steps[1]
    assert (corrected["reader_answer"], corrected["reader"], corrected["retrieved_titles"]) == ("Neil Peart", "llm", ["Rush (band)"])
    # The official feedback prompt, its fields labelled as the server's message splits them; the passage as indexed.
    feedback = models["reasoner"].prompts[1]
    assert 'the answer for "[Query]:Who is the drummer of the band that recorded Counterparts?" should be ' \
           '"[Answer]:Neil Peart"' in feedback
    assert "Reference: [Reference]:Title: Rush (band) Text: Rush's drummer and lyricist was Neil Peart." in feedback
    assert retriever.queries == ["Who is the drummer of the band that recorded Counterparts?"]  # top-1, once
    assert result["invalid_outputs"] == 0 and result["parsed_outputs"] == 2


def test_missing_knowledge_an_unconfident_reader_and_the_round_cap():
    # An [Unsolved Query] is never skipped as seen; a [Query] with no [Answer] after it would be corrected first, as
    # the official server checks it before the [Unsolved Query] line.
    unsolved = "[Question]: Who wrote the lyrics?\n[Unsolved Query]: Who wrote Counterparts' lyrics?"
    ctx, retriever, models = setup(lambda m: unsolved, lambda m: "Neil Peart", max_iterations=2)
    result = run_question("searchain", "Who wrote the lyrics?", ctx)
    assert result["finished_by"] == "cap" and len(models["reasoner"].prompts) == 2
    assert "you can give your answer based on the Reference" in models["reasoner"].prompts[1]
    assert [s.get("verdict") for s in result["trajectory"] if s["kind"] != "chain"] == [
        "missing knowledge", "missing knowledge"]
    # A reader that cannot answer is not confident: nothing to correct, the chain stands.
    ctx, _, _ = setup(lambda m: WRONG, lambda m: "unanswerable")
    result = run_question("searchain", "Who?", ctx)
    assert result["finished_by"] == "verified" and result["trajectory"][1]["verdict"] == "reader not confident"
    assert result["answer"] == "Alex Lifeson"


def test_a_free_text_round_is_an_invalid_output_and_ends_verified():
    ctx, _, _ = setup(lambda m: "It is Rush.", lambda m: "x")
    result = run_question("searchain", "Which band?", ctx)
    assert result["invalid_outputs"] == 1 and result["answer"] == "" and result["finished_by"] == "verified"


def test_dpr_without_its_weights_fails_in_one_clear_line(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-hf-home")
    ctx, _, _ = setup(lambda m: WRONG, lambda m: "x", searchain_reader="dpr")
    with pytest.raises(HopragError) as error:
        run_question("searchain", "Which band?", ctx)
    message = str(error.value)
    assert "facebook/dpr-reader-multiset-base" in message and "searchain_reader=llm" in message and "\n" not in message


def test_eval_records_the_reader_and_the_counters(tmp_path):
    from hoprag.eval.runner import run_eval

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q", "question": "Which drummer?", "answers": ["Neil Peart"]}))
    ctx, _, _ = setup([WRONG, RIGHT], lambda m: "Neil Peart")
    summary = run_eval("searchain", f"jsonl:{data}", tmp_path / "run", ctx, progress=False)
    assert summary["reader"] == "llm" and summary["config"]["searchain_reader"] == "llm"
    assert summary["counters"]["rounds"]["total"] == 2 and summary["counters"]["corrections"]["total"] == 1
    assert summary["em"] == 100.0 and summary["finish_rate"] == 100.0


def test_searchain_is_exported_drawn_and_on_the_cli():
    import subprocess
    import sys
    from pathlib import Path

    from hoprag.graphs import DIAGRAMS, METHODS

    root = Path(__file__).resolve().parents[1]
    assert "searchain" in METHODS and "searchain" in DIAGRAMS
    assert json.loads((root / "langgraph.json").read_text())["graphs"]["searchain"] == "./hoprag/graphs/searchain.py:graph"
    for method, node in (("searchain", "verify"), ("search-o1", "reason_in_documents")):
        drawn = subprocess.run([sys.executable, "-m", "hoprag.cli", "diagram", method], capture_output=True, text=True,
                               timeout=120)
        assert drawn.returncode == 0 and node in drawn.stdout, drawn.stderr
