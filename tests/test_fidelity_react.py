"""The ReAct family as the ReNAct paper runs it (issue 91): a search[entity; query] retrieves with the entity and the
note writer gets the query; `search_entity_and_query` keeps the joined search (on in `small`). Also `hoprag ask`'s
preset line (max_tokens, FuRePA's scorer, the renact name)."""

from __future__ import annotations

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question

DOCS = [Document(id=f"d{i}", title=f"Page {i}", text=f"Fact number {i}.") for i in range(3)]
SEARCH = "Thought: I need the start date.\nAction: search[Arthur's Magazine; When was it started?]"


class RecordingRetriever:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        return DOCS[:k]


def run_react(method: str, reasoner: list[str], **options) -> tuple[RecordingRetriever, ScriptedChatModel, dict]:
    retriever = RecordingRetriever()
    register_retriever("fidelity-react", retriever)
    notes = ScriptedChatModel(lambda m: "YES#a note")
    ctx = Context(reasoner_llm=register_fake("fake:fidelity-reasoner", ScriptedChatModel(reasoner)),
                  notes_llm=register_fake("fake:fidelity-notes", notes),
                  generator_llm=register_fake("fake:fidelity-generator", ScriptedChatModel(lambda m: "1844")),
                  index="fidelity-react", **options)
    return retriever, notes, run_question(method, "When was Arthur's Magazine started?", ctx)


@pytest.mark.parametrize("method", ["renact", "renact-iterative"])
def test_paper_retrieves_with_the_entity_and_the_note_writer_gets_the_query(method):
    retriever, notes, result = run_react(method, [SEARCH, "Thought: done\nAction: finish[1844]"])
    assert retriever.queries == ["Arthur's Magazine"]
    assert notes.prompts and all(p.rstrip().endswith("Query: When was it started?") for p in notes.prompts)
    assert result["answer"] == "1844"
    # The trajectory keeps the action as written.
    assert result["trajectory"][0]["argument"] == "Arthur's Magazine; When was it started?"


@pytest.mark.parametrize("method", ["react", "react-bm25"])
def test_the_react_baselines_retrieve_with_the_entity_too(method):
    retriever, _, _ = run_react(method, [SEARCH, "Action: finish[1844]"])
    assert retriever.queries == ["Arthur's Magazine"]


def test_a_search_without_an_entity_retrieves_with_its_query():
    retriever, notes, _ = run_react("renact", ["Action: search[first women's magazine]", "Action: finish[x]"])
    assert retriever.queries == ["first women's magazine"]
    assert notes.prompts[0].rstrip().endswith("Query: first women's magazine")


@pytest.mark.parametrize("options", [{"search_entity_and_query": True}, {"preset": "small"}])
def test_search_entity_and_query_keeps_the_joined_search(options):
    retriever, notes, _ = run_react("renact", [SEARCH, "Action: finish[1844]"], **options)
    assert retriever.queries == ["Arthur's Magazine When was it started?"]
    assert notes.prompts[0].rstrip().endswith("Query: Arthur's Magazine; When was it started?")


def test_the_option_is_off_in_paper_and_on_in_small():
    assert Context(preset="paper").resolved("renact").search_entity_and_query is False
    assert Context(preset="small").resolved("react").search_entity_and_query is True


# ---------------------------------------------------------------- hoprag ask's preset line


@pytest.fixture
def ask(monkeypatch):
    """`hoprag ask` in-process with the run stubbed out: only the lines printed before the run matter here."""
    from typer.testing import CliRunner

    import hoprag.run
    from hoprag.cli import app

    def fake_run(method, question, ctx, on_update=None):
        return {"answer": "x", "steps": 0, "usage": {}, "llm_calls": 0, "seconds": 0.0, "finished_by": "finish"}

    monkeypatch.setattr(hoprag.run, "run_question", fake_run)
    register_retriever("fidelity-cli", RecordingRetriever())

    def invoke(*args: str) -> str:
        result = CliRunner().invoke(app, ["ask", "Who?", "--index", "fidelity-cli", "--preset", "paper", *args])
        assert result.exit_code == 0, result.output
        return result.output + (result.stderr if result.stderr_bytes is not None else "")

    return invoke


def preset_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("preset "))


@pytest.mark.parametrize(("method", "expected"), [("resp", "max_tokens=200"), ("rearag", "max_tokens=1024")])
def test_the_preset_line_shows_the_max_tokens_a_method_sets(ask, method, expected):
    assert expected in preset_line(ask("--method", method))


def test_the_preset_line_shows_the_values_this_run_has(ask):
    line = preset_line(ask("--method", "rearag", "--temperature", "0.3", "--option", "max_tokens=512"))
    assert "temperature=0.3" in line and "max_tokens=512" in line
    assert "temperature=1.0" not in line and "max_tokens=1024" not in line
    assert "max_tokens=512" in preset_line(ask("--method", "renact", "--option", "max_tokens=512"))
    assert "max_tokens" not in preset_line(ask("--method", "renact"))  # the shared default is not repeated


def test_the_preset_line_says_which_furepa_scorer_runs(ask, tmp_path):
    assert "training-free stand-in" in preset_line(ask("--method", "furepa"))
    trained = preset_line(ask("--method", "furepa", "--furepa-scorer", str(tmp_path)))
    assert "training-free" not in trained and f"trained, from {tmp_path}" in trained
    assert "scorer" not in preset_line(ask("--method", "furepa-no-pa"))  # no plan assessor, no scorer


def test_the_preset_line_names_what_renact_is(ask):
    assert "'ReNAct' is renact-iterative" in preset_line(ask("--method", "renact"))
    assert "'NotesWriting' rows" not in preset_line(ask("--method", "renact-iterative"))
