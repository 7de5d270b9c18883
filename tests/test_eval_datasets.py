"""Dataset loaders on the real files in shared/data, plus bad-input errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hoprag.errors import HopragError
from hoprag.eval.datasets import Example, dataset_file_hash, fanout_gold_strings, load_dataset

from .conftest import SHARED_DATA as DATA
from .conftest import needs_shared_data

COUNTS = [
    ("hotpotqa", "hotpotqa/hotpot_dev_distractor_hard_100.json", 100),
    ("hotpotqa", "hotpotqa/hotpot_dev_distractor_first100_hf.json", 100),
    ("hotpotqa", "hotpotqa/hotpot_train_100.json", 100),
    ("musique", "musique/musique_ans_dev_100.jsonl", 100),
    ("musique", "musique/musique_ans_train_100.jsonl", 100),
    ("2wiki", "2wikimultihopqa/2wiki_dev_82.json", 82),
    ("fanoutqa", "fanoutqa/fanout-final-dev.json", 310),
    ("frames", "frames/test.tsv", 824),
    ("frames", "frames/test.tsv#Multiple constraints", 549),
    ("nq", "nq_open/NQ-open.dev.jsonl", 3610),
]


@needs_shared_data
@pytest.mark.parametrize(("kind", "rel", "count"), COUNTS)
def test_counts_match_readme(kind: str, rel: str, count: int) -> None:
    examples = load_dataset(f"{kind}:{DATA / rel}")
    assert len(examples) == count
    assert len({e.id for e in examples}) == count
    for e in examples:
        assert isinstance(e, Example) and e.dataset == kind
        assert e.question.strip() and e.answers and all(isinstance(a, str) for a in e.answers)


@needs_shared_data
def test_frames_reasoning_type_keyword_and_limit() -> None:
    spec = f"frames:{DATA / 'frames/test.tsv'}"
    assert len(load_dataset(spec, reasoning_type="Multiple constraints")) == 549
    limited = load_dataset(spec + "#Multiple constraints", limit=5)
    assert len(limited) == 5 and all("Multiple constraints" in (e.type or "") for e in limited)
    first = load_dataset(spec, limit=1)[0]
    assert first.answers == ["Jane Ballou"]
    assert "James Buchanan" in first.supporting_titles


@needs_shared_data
def test_hotpot_original_layout() -> None:
    e = load_dataset(f"hotpotqa:{DATA / 'hotpotqa/hotpot_dev_distractor_hard_100.json'}", limit=1)[0]
    assert e.id == "5a7f6fd75542992e7d278cfa"
    assert e.answers == ["Rush"]
    assert e.supporting_titles == ["Nobody's Hero", "Neil Peart"]
    assert e.hops == 2 and e.type == "bridge"
    assert len(e.paragraphs) == 10
    assert {p["title"] for p in e.paragraphs if p["is_supporting"]} == {"Nobody's Hero", "Neil Peart"}
    assert all(p["text"] for p in e.paragraphs)


@needs_shared_data
def test_hotpot_hf_layout() -> None:
    e = load_dataset(f"hotpotqa:{DATA / 'hotpotqa/hotpot_dev_distractor_first100_hf.json'}", limit=1)[0]
    assert e.question == "Were Scott Derrickson and Ed Wood of the same nationality?"
    assert e.answers == ["yes"] and e.type == "comparison"
    assert e.supporting_titles == ["Scott Derrickson", "Ed Wood"]
    assert len(e.paragraphs) == 10
    assert sum(p["is_supporting"] for p in e.paragraphs) == 2


@needs_shared_data
def test_musique() -> None:
    examples = load_dataset(f"musique:{DATA / 'musique/musique_ans_train_100.jsonl'}")
    e = examples[0]
    assert e.answers == ["G. Stanley Hall", "Stanley Hall"]  # answer + answer_aliases
    assert e.hops == 2 and len(e.paragraphs) == 20
    assert e.supporting_titles == [p["title"] for p in e.paragraphs if p["is_supporting"]]
    assert {x.hops for x in examples} <= {2, 3, 4}
    assert all(x.hops == len(x.raw["question_decomposition"]) for x in examples)


@needs_shared_data
def test_2wiki_hops() -> None:
    examples = load_dataset(f"2wiki:{DATA / '2wikimultihopqa/2wiki_dev_82.json'}")
    e = examples[0]
    assert e.type == "bridge_comparison" and e.answers == ["Free Guy"]
    assert e.hops == 4 and e.supporting_titles == ["Forbidden Ground", "Free Guy", "Pál Gábor", "Shawn Levy"]
    assert all(x.hops and x.hops >= 2 for x in examples)


@needs_shared_data
def test_fanoutqa() -> None:
    examples = load_dataset(f"fanoutqa:{DATA / 'fanoutqa/fanout-final-dev.json'}")
    e = examples[0]
    assert e.answers[:5] == ["Pat Burrell", "Mark Mulder", "Corey Patterson", "Jeff Austin", "JD Drew"]
    assert "Right" in e.answers and "Left" in e.answers
    assert e.hops == len(e.raw["decomposition"])
    assert "Pat Burrell" in e.supporting_titles
    assert all(x.hops for x in examples)


def test_fanout_gold_strings() -> None:
    assert fanout_gold_strings("Paris") == ["Paris"]
    assert fanout_gold_strings(["a", "b"]) == ["a", "b"]
    assert fanout_gold_strings({"x": 1, "y": "z"}) == ["x", "y", "1", "z"]
    assert fanout_gold_strings(12) == ["12"]


@needs_shared_data
def test_nq() -> None:
    e = load_dataset(f"nq:{DATA / 'nq_open/NQ-open.dev.jsonl'}", limit=1)[0]
    assert e.question == "when was the last time anyone was on the moon"
    assert e.answers == ["14 December 1972 UTC", "December 1972"] and e.hops == 1


@needs_shared_data
def test_dataset_file_hash() -> None:
    path = DATA / "2wikimultihopqa/2wiki_dev_82.json"
    digest = dataset_file_hash(path)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    assert len(digest) == 16


def test_generic_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps({"question": "Q1", "answers": ["a", "b"]}) + "\n\n"
                    + json.dumps({"id": "x", "question": "Q2", "answer": "c", "hops": 3}) + "\n")
    examples = load_dataset(f"jsonl:{path}")
    assert [e.answers for e in examples] == [["a", "b"], ["c"]]
    assert examples[1].id == "x" and examples[1].hops == 3
    assert len(load_dataset(f"jsonl:{path}", limit=1)) == 1


@pytest.mark.parametrize("spec", ["nonsense:x.json", "hotpotqa", "hotpotqa:", "squad:file.json"])
def test_bad_spec(spec: str) -> None:
    with pytest.raises(HopragError, match="KIND:PATH|unknown dataset kind"):
        load_dataset(spec)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(HopragError, match="not found"):
        load_dataset(f"hotpotqa:{tmp_path / 'nope.json'}")


def test_malformed_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("[{\"question\": ")
    with pytest.raises(HopragError, match="not valid JSON"):
        load_dataset(f"hotpotqa:{broken}")
    bad_jsonl = tmp_path / "bad.jsonl"
    bad_jsonl.write_text('{"question": "q", "answer": ["a"]}\nnot json\n')
    with pytest.raises(HopragError, match="line 2"):
        load_dataset(f"nq:{bad_jsonl}")
    wrong_layout = tmp_path / "wrong.json"
    wrong_layout.write_text(json.dumps([{"question": "q", "answer": "a"}]))
    with pytest.raises(HopragError, match='record 1 of the JSON list of .* has no "_id" field; each 2wiki record is'):
        load_dataset(f"2wiki:{wrong_layout}")
    not_list = tmp_path / "obj.json"
    not_list.write_text(json.dumps({"a": 1}))
    with pytest.raises(HopragError, match="JSON list"):
        load_dataset(f"fanoutqa:{not_list}")
    tsv = tmp_path / "x.tsv"
    tsv.write_text("a\tb\n1\t2\n")
    with pytest.raises(HopragError, match="Prompt and Answer"):
        load_dataset(f"frames:{tsv}")
    with pytest.raises(HopragError, match="only supported for frames"):
        load_dataset(f"nq:{bad_jsonl}#x")
    with pytest.raises(HopragError, match="cannot read"):
        dataset_file_hash(tmp_path / "nope")
