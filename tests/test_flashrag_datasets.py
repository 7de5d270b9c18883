"""FlashRAG's dataset layout: `flashrag:FILE`, `flashrag:DIR` with a split, `golden_answers` in `jsonl:`."""

from __future__ import annotations

import json

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.eval.datasets import load_dataset, resolve_dataset_spec
from hoprag.eval.metrics import score_prediction
from hoprag.eval.runner import run_eval
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever

RECORDS = [
    {"id": "test_0", "question": "Which band released Counterparts?", "golden_answers": ["Rush", "Rush (band)"],
     "metadata": {"type": "bridge", "supporting_facts": {"title": ["Counterparts", "Rush"], "sent_id": [0, 1]}}},
    {"id": "test_1", "question": "Who drummed for Rush?", "golden_answers": ["Neil Peart", "Peart"],
     "metadata": {"supporting_facts": [["Neil Peart", 0]]}},
    {"id": "test_2", "question": "Is Rush Canadian?", "golden_answers": ["yes"], "metadata": {}},
]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_flashrag_file_loads_every_golden_answer_and_its_supporting_titles(tmp_path):
    path = write_jsonl(tmp_path / "test.jsonl", RECORDS)
    examples = load_dataset(f"flashrag:{path}")
    assert [e.id for e in examples] == ["test_0", "test_1", "test_2"]
    first = examples[0]
    assert first.answers == ["Rush", "Rush (band)"] and first.dataset == "flashrag"
    assert first.supporting_titles == ["Counterparts", "Rush"] and first.type == "bridge"
    assert examples[1].supporting_titles == ["Neil Peart"] and examples[2].supporting_titles == []
    assert len(load_dataset(f"flashrag:{path}", limit=2)) == 2  # FlashRAG's "first N" is --limit N
    # Every gold answer counts: the second alias alone is an exact match, as FlashRAG scores it (max over golds).
    assert score_prediction("Peart", examples[1])["em"] == 1.0
    assert score_prediction("Rush (band)", first)["em"] == 1.0
    assert score_prediction("Geddy Lee", examples[1])["em"] == 0.0


def test_jsonl_also_reads_golden_answers(tmp_path):
    path = write_jsonl(tmp_path / "flash.jsonl", RECORDS)
    examples = load_dataset(f"jsonl:{path}")
    assert examples[1].answers == ["Neil Peart", "Peart"]


def test_a_flashrag_folder_reads_dev_by_default_else_test_or_the_split_asked_for(tmp_path):
    folder = tmp_path / "hotpotqa"
    folder.mkdir()
    write_jsonl(folder / "train.jsonl", RECORDS[:1])
    write_jsonl(folder / "test.jsonl", RECORDS[:2])
    assert resolve_dataset_spec(f"flashrag:{folder}") == f"flashrag:{folder / 'test.jsonl'}"  # no dev: test
    assert len(load_dataset(f"flashrag:{folder}")) == 2
    write_jsonl(folder / "dev.jsonl", RECORDS)
    assert len(load_dataset(f"flashrag:{folder}")) == 3  # dev where there is one
    assert len(load_dataset(f"flashrag:{folder}", split="train")) == 1
    with pytest.raises(HopragError, match="has no validation.jsonl; its splits: train, dev, test"):
        load_dataset(f"flashrag:{folder}", split="validation")


def test_bad_flashrag_input_is_one_clear_error(tmp_path):
    only_train = tmp_path / "only-train"
    only_train.mkdir()
    write_jsonl(only_train / "train.jsonl", RECORDS)
    with pytest.raises(HopragError, match="no dev.jsonl or test.jsonl.*--split train"):
        load_dataset(f"flashrag:{only_train}")
    with pytest.raises(HopragError, match="--split picks a file of a FlashRAG dataset folder"):
        load_dataset(f"flashrag:{only_train / 'train.jsonl'}", split="dev")
    broken = write_jsonl(tmp_path / "broken.jsonl", [{"id": "1", "question": "Q?", "answer": "A"}])
    with pytest.raises(HopragError, match='line 1 of .* has no "golden_answers" field'):
        load_dataset(f"flashrag:{broken}")
    with pytest.raises(HopragError, match="dataset file not found"):
        load_dataset(f"flashrag:{tmp_path / 'missing.jsonl'}")


class Passages:
    def search(self, query, k):
        return [Document(id="1", title="Rush", text="Rush released Counterparts."),
                Document(id="2", title="Neil Peart", text="Neil Peart drummed for Rush.")][:k]


def test_a_flashrag_folder_evaluates_and_resumes_as_its_split_file(tmp_path):
    folder = tmp_path / "flash"
    folder.mkdir()
    write_jsonl(folder / "dev.jsonl", RECORDS[:2])
    register_retriever("flash-passages", Passages())
    generator = ScriptedChatModel(lambda messages: "Peart" if "drummed" in str(messages[-1].content).split(
        "Question:")[-1] else "Rush (band)")
    ctx = Context(llm=register_fake("fake:flash-rag", generator), index="flash-passages", llm_cache=False)
    summary = run_eval("rag", f"flashrag:{folder}", tmp_path / "run", ctx, progress=False)
    assert summary["questions"] == 2 and summary["em"] == 100.0  # each prediction is a gold alias
    assert summary["config"]["dataset"] == f"flashrag:{folder / 'dev.jsonl'}"
    assert summary["retrieval_recall"] is not None  # gold titles from FlashRAG's metadata
    again = run_eval("rag", f"flashrag:{folder}", tmp_path / "run", ctx, progress=False)  # resumes: nothing to run
    assert again["questions"] == 2 and len(generator.prompts) == 2
