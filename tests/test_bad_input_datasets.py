"""A bad dataset or corpus file gets one clear line naming where it goes wrong (lines counted from 1, as the
bad-JSON messages count them), what is missing and the layout expected; a folder given for a file says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.eval.datasets import load_dataset
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever
from hoprag.retrievers.sources import iter_source

from .cli_main import one_line_error


class Static:
    def search(self, query: str, k: int) -> list[Document]:
        return [Document(id="a", title="Alpha", text="alpha")]




def eval_error(monkeypatch, capsys, tmp_path: Path, dataset: str) -> str:
    register_retriever("bad-input-index", Static())
    register_fake("fake:bad-input", ScriptedChatModel(lambda messages: "unknown"))
    line = one_line_error(monkeypatch, capsys, "eval", "--method", "rag", "--dataset", dataset, "--retriever",
                          "bad-input-index", "--llm", "fake:bad-input", "--out", str(tmp_path / "out"))
    assert not (tmp_path / "out" / "results.jsonl").exists()
    return line


def write_lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_a_jsonl_line_without_a_question_is_named_by_its_line(tmp_path, monkeypatch, capsys):
    data = write_lines(tmp_path / "d.jsonl", json.dumps({"question": "Who?", "answers": ["x"]}),
                       json.dumps({"q": "Who?", "answers": ["x"]}))
    line = eval_error(monkeypatch, capsys, tmp_path, f"jsonl:{data}")
    assert f'line 2 of {data} has no "question" field; each jsonl line is {{"question": ..., "answers": [...]}}' in line
    # the bad-JSON message counts lines the same way
    write_lines(data, json.dumps({"question": "Who?", "answers": ["x"]}), "not json")
    assert f"line 2 of {data} is not valid JSON" in eval_error(monkeypatch, capsys, tmp_path, f"jsonl:{data}")


def test_a_jsonl_line_without_answers_names_each_field_that_would_do(tmp_path):
    data = write_lines(tmp_path / "d.jsonl", json.dumps({"question": "Who?"}))
    with pytest.raises(HopragError, match=r'line 1 of .* has no "answers" field \(or "answer", "golden_answers"\)'):
        load_dataset(f"jsonl:{data}")


@pytest.mark.parametrize(("kind", "records", "message"), [
    ("flashrag", [{"id": "1", "question": "Q?", "answer": "A"}], 'line 1 of {path} has no "golden_answers" field'),
    ("nq", [{"question": "Q?", "answer": ["A"]}, {"question": "Q?"}], 'line 2 of {path} has no "answer" field'),
    ("musique", [{"id": "1", "answer": "A"}], 'line 1 of {path} has no "question" field; each musique line is {{"id"'),
])
def test_each_jsonl_loader_names_the_line_and_the_missing_field(tmp_path, kind, records, message):
    path = write_lines(tmp_path / "d.jsonl", *(json.dumps(r) for r in records))
    with pytest.raises(HopragError) as raised:
        load_dataset(f"{kind}:{path}")
    assert message.format(path=path) in str(raised.value)


def test_a_json_list_record_is_counted_from_1_with_its_layout(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([{"_id": "1", "question": "q", "answer": "a", "context": []},
                                {"_id": "2", "question": "q", "answer": "a"}]))
    with pytest.raises(HopragError) as raised:
        load_dataset(f"2wiki:{path}")
    assert f'record 2 of the JSON list of {path} has no "context" field; each 2wiki record is {{"_id"' \
        in str(raised.value)
    path.write_text(json.dumps([{"_id": "1", "question": "q", "answer": "a", "context": [["t"]]}]))
    with pytest.raises(HopragError, match=r"record 1 of the JSON list of .* does not have the 2wiki layout "
                                          r"\(ValueError: .*\); each 2wiki record is"):
        load_dataset(f"2wiki:{path}")


def test_a_folder_given_for_a_dataset_file_says_so(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    line = eval_error(monkeypatch, capsys, tmp_path, f"jsonl:{folder}")
    assert f"{folder} is a folder; a jsonl dataset is one file" in line and "only flashrag:DIR reads a folder" in line
    write_lines(folder / "dev.jsonl", json.dumps({"question": "Q?", "answers": ["A"]}))
    line = eval_error(monkeypatch, capsys, tmp_path, f"hotpotqa:{folder}")
    assert f"e.g. hotpotqa:{folder / 'dev.jsonl'} (it holds dev.jsonl)" in line


def test_a_corpus_line_that_is_not_json_names_its_line_and_the_layout(tmp_path, monkeypatch, capsys):
    corpus = write_lines(tmp_path / "c.jsonl", "notjson")
    line = one_line_error(monkeypatch, capsys, "index", "build", "x", "--source", f"jsonl:{corpus}")
    assert f"line 1 of {corpus} is not valid JSON (Expecting value); expected one {{\"id\": ..., \"title\": ..., " \
           f"\"text\": ...}} per line" in line
    write_lines(corpus, json.dumps({"id": "1", "title": "A", "text": "a"}), '{"id": "2", "title":')
    with pytest.raises(HopragError, match=f"line 2 of {corpus} is not valid JSON"):
        list(iter_source(f"jsonl:{corpus}"))
    write_lines(corpus, json.dumps({"id": "1", "title": "A", "text": "a"}), "5")
    with pytest.raises(HopragError, match=r"line 2 of .* does not have the jsonl layout \(TypeError"):
        list(iter_source(f"jsonl:{corpus}"))


def test_an_empty_corpus_file_says_it_is_empty_and_what_a_record_is(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "empty.jsonl"
    corpus.write_text("")
    line = one_line_error(monkeypatch, capsys, "index", "build", "x", "--source", f"jsonl:{corpus}")
    assert f"yielded no documents: {corpus} is empty (no records); expected one {{\"id\"" in line
    corpus.write_text(json.dumps({"title": "A", "paragraphs": []}) + "\n")
    with pytest.raises(HopragError, match=r"yielded no documents: its 1 record held no passage text; expected one "
                                          r"MuSiQue record"):
        list(iter_source(f"musique:{corpus}"))
