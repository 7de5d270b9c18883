"""`hoprag eval`, `ask`, `reproduce` and `merge-seeds` on bad input: what every question needs (a model spec, the
endpoint, a judge) fails before or at the first question in one line, instead of every question being recorded as
failed with exit 0; a run whose every question failed exits non-zero; a closed-book method needs no index; options,
data folders and output paths are checked; a message's own brackets are printed, not read as markup."""

from __future__ import annotations

import json

import pytest

from hoprag.documents import Document
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever

from .cli_main import one_line_error as one_line
from .cli_main import run_main


class OnePage:
    def search(self, query: str, k: int) -> list[Document]:
        return [Document(id="a", title="Alpha", text="alpha")]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"question": f"Question {i}?", "answers": [f"ans{i}"]}) + "\n" for i in (1, 2)))
    register_retriever("bad-input-index", OnePage())
    return path






def eval_args(data, out, *extra: str) -> list[str]:
    return ["eval", "--method", "rag", "--dataset", f"jsonl:{data}", "--retriever", "bad-input-index",
            "--out", str(out), "--no-llm-cache", *extra]


@pytest.mark.parametrize(("flags", "fragment"), [
    (["--llm", "bogus"], "unknown model spec 'bogus'"),
    (["--llm", "local:no-such-model"], "unknown local model 'no-such-model'"),
    (["--llm", "local:missing/model.gguf"], "GGUF file not found"),
    (["--notes-llm", "openai:"], "the notes model (--notes-llm): unknown model spec 'openai:'"),
    (["--llm", "local-server:no-such-model"], "the reasoner model (--llm): unknown local model 'no-such-model'"),
])
def test_a_mistyped_model_fails_before_any_question(data, tmp_path, monkeypatch, capsys, flags, fragment):
    line = one_line(monkeypatch, capsys, *eval_args(data, tmp_path / "r", *flags))
    assert fragment in line, line
    assert not (tmp_path / "r" / "results.jsonl").exists()


def test_a_mistyped_judge_fails_before_any_question(data, tmp_path, monkeypatch, capsys):
    register_fake("fake:bad-input", ScriptedChatModel(lambda messages: "ans1"))
    line = one_line(monkeypatch, capsys, *eval_args(data, tmp_path / "r", "--llm", "fake:bad-input",
                                                    "--judge", "gpt4"))
    assert "the judge (--judge): unknown model spec 'gpt4'" in line and not (tmp_path / "r" / "results.jsonl").exists()


def test_a_role_model_from_the_environment_is_named_by_its_variable(data, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOPRAG_NOTES_LLM", "local:gone/model.gguf")
    register_fake("fake:bad-input-env", ScriptedChatModel(lambda messages: "ans1"))
    line = one_line(monkeypatch, capsys, *eval_args(data, tmp_path / "r", "--llm", "fake:bad-input-env"))
    assert "the notes model ($HOPRAG_NOTES_LLM): GGUF file not found: gone/model.gguf" in line, line


def test_reproduce_table_only_checks_no_model(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOPRAG_NOTES_LLM", "local:gone/model.gguf")  # never called by rendering a table
    code, _, err = run_main(monkeypatch, capsys, "reproduce", "resp-table1", "--table-only", "--out",
                            str(tmp_path / "out"))
    assert code == 0, err


def test_an_endpoint_that_is_not_there_stops_the_run(data, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens on port 9
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    line = one_line(monkeypatch, capsys, *eval_args(data, tmp_path / "r", "--llm", "openai:some-model",
                                                    "--option", "max_retries=0"))
    assert "cannot reach the endpoint" in line and "rerun the same command to resume" in line, line
    assert "finished question" not in line, line  # nothing finished: no "0 finished questions are kept"
    assert not (tmp_path / "r" / "results.jsonl").read_text().strip()  # no question recorded as failed


def test_an_endpoint_that_answered_and_then_went_away_fails_only_the_questions_in_flight(monkeypatch):
    # A server restarting mid-run: the calls after it answered fail one by one (the run goes on), as before.
    import httpx

    from hoprag.errors import EndpointError, EndpointUnavailableError
    from hoprag.llm import _ANSWERED, _describe_failure, _endpoint_key

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    refused = httpx.ConnectError("refused")
    first = _describe_failure("openai:m", "reasoner", 3, refused)
    assert isinstance(first, EndpointUnavailableError)
    monkeypatch.setattr("hoprag.llm._ANSWERED", _ANSWERED | {_endpoint_key("openai:m")})
    later = _describe_failure("openai:m", "reasoner", 3, refused)
    assert isinstance(later, EndpointError) and not isinstance(later, EndpointUnavailableError)
    timeout = _describe_failure("openai:m", "reasoner", 3, httpx.ReadTimeout("slow"))
    assert "timed out" in str(timeout) and not isinstance(timeout, EndpointUnavailableError)


def test_a_run_whose_every_question_failed_exits_non_zero(data, tmp_path, monkeypatch, capsys):
    def broken(messages):
        raise RuntimeError("the model crashed")

    register_fake("fake:bad-input-broken", ScriptedChatModel(broken))
    line = one_line(monkeypatch, capsys, *eval_args(data, tmp_path / "r", "--llm", "fake:bad-input-broken",
                                                    "--option", "max_retries=0"))
    assert "all 2 questions failed" in line and "results.jsonl" in line, line
    records = [json.loads(x) for x in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all("the model crashed" in r["error"] for r in records)  # kept for a rerun


def test_a_closed_book_method_needs_no_index_for_a_dataset_without_paragraphs(data, tmp_path, monkeypatch, capsys):
    register_fake("fake:bad-input-cot", ScriptedChatModel(lambda messages: "So the answer is: ans1."))
    code, _, err = run_main(monkeypatch, capsys, "eval", "--method", "cot", "--dataset", f"jsonl:{data}",
                            "--llm", "fake:bad-input-cot", "--out", str(tmp_path / "r"), "--no-llm-cache")
    assert code == 0, err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["questions"] == 2 and summary["config"]["index"] == "none"


@pytest.mark.parametrize(("pair", "fragment"), [
    ("notes_mode=zzz", "notes_mode takes parallel | iterative"),
    ("grounded_notes", "give the value too, as grounded_notes=VALUE"),
])
def test_an_option_value_is_checked_by_its_type(data, tmp_path, monkeypatch, capsys, pair, fragment):
    line = one_line(monkeypatch, capsys, *eval_args(data, tmp_path / "r", "--llm", "bogus", "--option", pair))
    assert fragment in line, line


def test_an_empty_dataset_is_one_line(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    register_fake("fake:bad-input-empty", ScriptedChatModel(lambda messages: "x"))
    line = one_line(monkeypatch, capsys, *eval_args(empty, tmp_path / "r", "--llm", "fake:bad-input-empty"))
    assert "holds no questions" in line, line


def test_reproduce_with_a_data_folder_that_is_not_there(tmp_path, monkeypatch, capsys):
    line = one_line(monkeypatch, capsys, "reproduce", "resp-table1", "--data", str(tmp_path / "nope"),
                    "--out", str(tmp_path / "out"), "--llm", "bogus")
    assert "no such folder" in line or "unknown model spec" in line, line
    register_fake("fake:bad-input-repro", ScriptedChatModel(lambda messages: "x"))
    line = one_line(monkeypatch, capsys, "reproduce", "resp-table1", "--data", str(tmp_path / "nope"),
                    "--out", str(tmp_path / "out"), "--llm", "fake:bad-input-repro")
    assert f"--data {tmp_path / 'nope'}: no such folder" in line, line


def test_reproduce_table_only_before_any_run_says_to_run_it(tmp_path, monkeypatch, capsys):
    register_fake("fake:bad-input-table", ScriptedChatModel(lambda messages: "x"))
    code, _, err = run_main(monkeypatch, capsys, "reproduce", "resp-table1", "--table-only", "--out",
                            str(tmp_path / "out"), "--llm", "fake:bad-input-table")
    assert code == 0 and "run the same command without --table-only" in err, err


def test_merge_seeds_into_a_file_is_one_line(tmp_path, monkeypatch, capsys, data):
    register_fake("fake:bad-input-seeds", ScriptedChatModel(lambda messages: "ans1"))
    for seed in (0, 1):
        code, _, err = run_main(monkeypatch, capsys, *eval_args(data, tmp_path / f"s{seed}", "--llm",
                                                                "fake:bad-input-seeds", "--seed", str(seed)))
        assert code == 0, err
    (tmp_path / "afile").write_text("")
    line = one_line(monkeypatch, capsys, "merge-seeds", str(tmp_path / "s0"), str(tmp_path / "s1"),
                    "--out", str(tmp_path / "afile"))
    assert "is a file" in line, line


def test_a_messages_brackets_are_printed_not_read_as_markup(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "no question here"}) + "\n")
    line = one_line(monkeypatch, capsys, *eval_args(bad, tmp_path / "r", "--llm", "bogus"))
    assert "unknown model spec" in line  # the model is checked first
    register_fake("fake:bad-input-markup", ScriptedChatModel(lambda messages: "x"))
    line = one_line(monkeypatch, capsys, *eval_args(bad, tmp_path / "r", "--llm", "fake:bad-input-markup"))
    assert '"answers": [...]' in line, line
