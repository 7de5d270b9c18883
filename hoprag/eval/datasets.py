"""Benchmark loaders: one :class:`Example` layout for every multi-hop QA dataset.

A dataset spec is ``KIND:PATH`` (optionally ``KIND:PATH#FILTER`` for FRAMES reasoning types).
Kinds: hotpotqa (original or Hugging Face layout, auto-detected), 2wiki, musique, fanoutqa, frames,
nq, jsonl (generic ``{question, answers}`` / ``{question, answer}`` / ``{question, golden_answers}``), flashrag
(FlashRAG's ``{id, question, golden_answers, metadata}`` lines; ``flashrag:DIR`` reads DIR/SPLIT.jsonl).
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from hoprag.errors import HopragError

KINDS = ("hotpotqa", "2wiki", "musique", "fanoutqa", "frames", "nq", "jsonl", "flashrag")
# A FlashRAG dataset folder holds one JSONL file per split; with no --split, dev where there is one, else test.
FLASHRAG_SPLITS = ("train", "dev", "test")
FLASHRAG_DEFAULT_SPLITS = ("dev", "test")
_ALIASES = {"hotpot": "hotpotqa", "2wikimultihopqa": "2wiki", "2wikimqa": "2wiki", "fanout": "fanoutqa",
            "nq_open": "nq", "nq-open": "nq"}
# 2WikiMultihopQA question types and their hop counts (used when a record has no evidences).
_2WIKI_HOPS = {"comparison": 2, "compositional": 2, "inference": 2, "bridge_comparison": 4}


@dataclass
class Example:
    """One benchmark question with its gold answers (answer + aliases) and gold paragraphs."""

    id: str
    question: str
    answers: list[str]
    supporting_titles: list[str] = field(default_factory=list)
    paragraphs: list[dict[str, Any]] = field(default_factory=list)  # {title, text, is_supporting}
    hops: int | None = None
    type: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    dataset: str = ""  # the loader kind, e.g. "hotpotqa" or "fanoutqa"


def dataset_file_hash(path: str | Path) -> str:
    """First 16 hex digits of the sha256 of a file's content."""
    digest = hashlib.sha256()
    try:
        with Path(path).open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as error:
        raise HopragError(f"cannot read dataset file {path}: {error.strerror or error}") from error
    return digest.hexdigest()[:16]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(str(i) for i in items if str(i).strip()))


def _question_id(question: str) -> str:
    return hashlib.sha1(question.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------- file readers


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise HopragError(f"{path} is not valid JSON (line {error.lineno}: {error.msg}); "
                          "check the file or the dataset kind") from error
    except UnicodeDecodeError as error:
        raise HopragError(f"{path} is not UTF-8 text; check the file or the dataset kind") from error


def _read_json_list(path: Path) -> list[dict[str, Any]]:
    data = _read_json(path)
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise HopragError(f"{path} must hold a JSON list of question records")
    return data


def _read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Each object of a JSONL file with its line number (from 1)."""
    records: list[tuple[int, dict[str, Any]]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise HopragError(f"{path} is not UTF-8 text; check the file or the dataset kind") from error
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise HopragError(f"line {number} of {path} is not valid JSON ({error.msg}); "
                              "expected one JSON object per line (JSONL)") from error
        if not isinstance(record, dict):
            raise HopragError(f"line {number} of {path} is not a JSON object; expected one object per line")
        records.append((number, record))
    return records


# ---------------------------------------------------------------- per-dataset converters


def _hotpot(record: dict[str, Any], index: int) -> Example:
    context = record["context"]
    facts = record.get("supporting_facts") or []
    if isinstance(context, dict):  # Hugging Face `hotpot_qa` layout
        pairs = list(zip(context["title"], context["sentences"], strict=True))
        sup_titles = list((facts or {}).get("title", [])) if isinstance(facts, dict) else []
    else:  # original layout
        pairs = [(title, sentences) for title, sentences in context]
        sup_titles = [fact[0] for fact in facts]
    supporting = _unique(sup_titles)
    paragraphs = [{"title": title, "text": "".join(sentences).strip(), "is_supporting": title in supporting}
                  for title, sentences in pairs]
    question = record["question"]
    rid = record.get("_id") or record.get("id") or _question_id(question)
    return Example(id=str(rid), question=question, answers=[str(record["answer"])],
                   supporting_titles=supporting, paragraphs=paragraphs, hops=2, type=record.get("type"),
                   raw=record)


def _2wiki(record: dict[str, Any], index: int) -> Example:
    supporting = _unique(fact[0] for fact in record.get("supporting_facts") or [])
    paragraphs = [{"title": title, "text": " ".join(s.strip() for s in sentences).strip(),
                   "is_supporting": title in supporting} for title, sentences in record["context"]]
    qtype = record.get("type")
    evidences = record.get("evidences") or []
    hops = len(evidences) if evidences else _2WIKI_HOPS.get(str(qtype))
    answers = [str(record["answer"])]
    for alias in record.get("answer_aliases") or []:  # absent in the official release; kept if present
        answers.append(str(alias))
    return Example(id=str(record["_id"]), question=record["question"], answers=_unique(answers) or answers,
                   supporting_titles=supporting, paragraphs=paragraphs, hops=hops, type=qtype, raw=record)


def _musique(record: dict[str, Any], index: int) -> Example:
    paragraphs = [{"title": p["title"], "text": p["paragraph_text"], "is_supporting": bool(p.get("is_supporting"))}
                  for p in record.get("paragraphs") or []]
    supporting = _unique(p["title"] for p in paragraphs if p["is_supporting"])
    decomposition = record.get("question_decomposition") or []
    rid = str(record["id"])
    answers = [str(record["answer"])] + [str(a) for a in record.get("answer_aliases") or []]
    hops = len(decomposition) or None
    qtype = rid.split("__")[0] if "__" in rid else None  # e.g. "2hop", "3hop1"
    return Example(id=rid, question=record["question"], answers=_unique(answers) or answers,
                   supporting_titles=supporting, paragraphs=paragraphs, hops=hops, type=qtype, raw=record)


def fanout_gold_strings(answer: Any) -> list[str]:
    """FanOutQA gold strings: a str, each list item, or every key and value of a dict (as its evaluator)."""
    if isinstance(answer, dict):
        return fanout_gold_strings(list(answer.keys())) + fanout_gold_strings(list(answer.values()))
    if isinstance(answer, list | tuple):
        return [s for item in answer for s in fanout_gold_strings(item)]
    if answer is None:
        return []
    return [str(answer)]


def _fanout_titles(decomposition: list[dict[str, Any]]) -> list[str]:
    titles: list[str] = []
    for step in decomposition or []:
        evidence = step.get("evidence") or {}
        if isinstance(evidence, dict) and evidence.get("title"):
            titles.append(evidence["title"])
        titles.extend(_fanout_titles(step.get("decomposition") or []))
    return titles


def _fanout(record: dict[str, Any], index: int) -> Example:
    decomposition = record.get("decomposition") or []
    categories = record.get("categories") or []
    return Example(id=str(record["id"]), question=record["question"],
                   answers=fanout_gold_strings(record["answer"]),
                   supporting_titles=_unique(_fanout_titles(decomposition)), paragraphs=[],
                   hops=len(decomposition) or None, type=", ".join(categories) or None, raw=record)


def _wiki_title(url: str) -> str:
    path = urlparse(url.strip()).path
    if "/wiki/" not in path:
        return ""
    return unquote(path.split("/wiki/", 1)[1]).replace("_", " ")


def _frames(record: dict[str, Any], index: int) -> Example:
    links = [v for k, v in record.items() if k and k.startswith("wikipedia_link") and v]
    titles: list[str] = []
    for value in links:
        titles.extend(_wiki_title(u) for u in str(value).split())
    rid = record.get("ID") or record.get("") or index
    return Example(id=f"frames-{str(rid).strip()}", question=record["Prompt"].strip(),
                   answers=[record["Answer"].strip()], supporting_titles=_unique(titles), paragraphs=[],
                   hops=None, type=(record.get("reasoning_types") or "").strip() or None, raw=record)


def _nq(record: dict[str, Any], index: int) -> Example:
    answers = record["answer"]
    answers = [answers] if isinstance(answers, str) else [str(a) for a in answers]
    return Example(id=str(record.get("id", f"nq-{index}")), question=record["question"], answers=answers,
                   hops=1, raw=record)


def _generic(record: dict[str, Any], index: int) -> Example:
    gold = next((record[key] for key in ("answers", "golden_answers") if key in record), None)
    gold = record["answer"] if gold is None else gold
    answers = [gold] if isinstance(gold, str) else [str(a) for a in gold]
    supporting = record.get("supporting_titles") or []
    paragraphs = record.get("paragraphs") or []
    hops = record.get("hops")
    return Example(id=str(record.get("id") or record.get("_id") or f"q-{index}"), question=record["question"],
                   answers=answers, supporting_titles=list(supporting), paragraphs=list(paragraphs),
                   hops=int(hops) if hops is not None else None, type=record.get("type"), raw=record)


def _flashrag_supporting_titles(metadata: dict[str, Any]) -> list[str]:
    """Gold titles where FlashRAG kept the source dataset's supporting facts in `metadata` (HotpotQA, 2Wiki:
    {"title": [...], "sent_id": [...]} or [[title, sent_id], ...]); MuSiQue keeps its paragraphs."""
    facts = metadata.get("supporting_facts")
    if isinstance(facts, dict):
        return _unique(facts.get("title") or [])
    if isinstance(facts, list):
        return _unique(f[0] for f in facts if isinstance(f, list | tuple) and f)
    paragraphs = metadata.get("paragraphs")
    if isinstance(paragraphs, list):
        return _unique(p.get("title", "") for p in paragraphs if isinstance(p, dict) and p.get("is_supporting"))
    return []


def _flashrag(record: dict[str, Any], index: int) -> Example:
    """One line of a FlashRAG dataset file. Every golden answer is a gold answer (FlashRAG's metrics take the
    best over them)."""
    gold = record["golden_answers"]
    answers = [gold] if isinstance(gold, str) else [str(a) for a in gold]
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    qtype = metadata.get("type")
    return Example(id=str(record.get("id") if record.get("id") is not None else f"q-{index}"),
                   question=str(record["question"]), answers=answers,
                   supporting_titles=_flashrag_supporting_titles(metadata),
                   type=str(qtype) if qtype is not None else None, raw=record)


# ---------------------------------------------------------------- entry point


def resolve_dataset_spec(spec: str, split: str | None = None) -> str:
    """`flashrag:DIR` (a FlashRAG dataset folder) as the spec of its split's file, `flashrag:DIR/SPLIT.jsonl`: `split`,
    else dev where the folder has it, else test. Any other spec comes back unchanged; `split` is refused for it."""
    kind, sep, location = spec.partition(":")
    kind = kind.strip().lower()
    path = Path(location).expanduser()
    if kind != "flashrag" or not sep or not path.is_dir():
        if split is not None:
            raise HopragError(f"--split picks a file of a FlashRAG dataset folder (flashrag:DIR); {spec!r} is not one")
        return spec
    present = [s for s in FLASHRAG_SPLITS if (path / f"{s}.jsonl").is_file()]
    if split is not None:
        if split not in present:
            raise HopragError(f"{path} has no {split}.jsonl; its splits: {', '.join(present) or 'none'}")
        chosen = split
    else:
        chosen = next((s for s in FLASHRAG_DEFAULT_SPLITS if s in present), "")
        if not chosen:
            raise HopragError(f"{path} holds no dev.jsonl or test.jsonl (a FlashRAG dataset folder); give --split "
                              f"{' or '.join(present) if present else 'with a folder that has SPLIT.jsonl files'}")
    return f"flashrag:{path / f'{chosen}.jsonl'}"


def _read_frames(path: Path) -> list[dict[str, Any]]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
    except (UnicodeDecodeError, csv.Error) as error:
        raise HopragError(f"{path} is not a readable FRAMES TSV file: {error}") from error
    if not rows or not {"Prompt", "Answer"} <= set(rows[0]):
        raise HopragError(f"{path} is not a FRAMES TSV file: it needs tab-separated columns Prompt and Answer "
                          "(and reasoning_types)")
    return rows


# What a record of each kind must have (each entry: a field, or fields any one of which will do), and its layout,
# so that a record without one is named by its line with the field it lacks and the layout expected.
REQUIRED_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "hotpotqa": (("question",), ("answer",), ("context",)),
    "2wiki": (("_id",), ("question",), ("answer",), ("context",)),
    "musique": (("id",), ("question",), ("answer",)),
    "fanoutqa": (("id",), ("question",), ("answer",)),
    "frames": (("Prompt",), ("Answer",)),
    "nq": (("question",), ("answer",)),
    "jsonl": (("question",), ("answers", "answer", "golden_answers")),
    "flashrag": (("question",), ("golden_answers",)),
}
LAYOUTS = {
    "hotpotqa": '{"_id": ..., "question": ..., "answer": ..., "context": [["title", ["sentence", ...]], ...], '
                '"supporting_facts": [["title", sentence_index], ...]} (or the Hugging Face hotpot_qa layout)',
    "2wiki": '{"_id": ..., "question": ..., "answer": ..., "type": ..., "context": [["title", ["sentence", ...]], ...], '
             '"supporting_facts": [["title", sentence_index], ...]}',
    "musique": '{"id": ..., "question": ..., "answer": ..., "paragraphs": [{"title": ..., "paragraph_text": ..., '
               '"is_supporting": ...}, ...]}',
    "fanoutqa": '{"id": ..., "question": ..., "answer": ..., "decomposition": [...]}',
    "frames": "a row with Prompt and Answer columns (and reasoning_types)",
    "nq": '{"question": ..., "answer": [...]}',
    "jsonl": '{"question": ..., "answers": [...]} ("answer" or "golden_answers" also name the gold answers)',
    "flashrag": '{"id": ..., "question": ..., "golden_answers": [...], "metadata": {...}}',
}


def _missing_field(record: dict[str, Any], kind: str) -> str | None:
    """The first field `kind` needs that `record` lacks, as the message names it; None where it has them all."""
    for choices in REQUIRED_FIELDS[kind]:
        if not any(name in record for name in choices):
            others = ", ".join(f'"{name}"' for name in choices[1:])
            return f'"{choices[0]}" field' + (f" (or {others})" if others else "")
    return None


_CONVERTERS: dict[str, Callable[[dict[str, Any], int], Example]] = {
    "2wiki": _2wiki, "musique": _musique, "fanoutqa": _fanout, "frames": _frames, "nq": _nq, "jsonl": _generic,
    "flashrag": _flashrag,
}


def load_dataset(spec: str, limit: int | None = None, *, reasoning_type: str | None = None,
                 split: str | None = None) -> list[Example]:
    """Load ``KIND:PATH`` (FRAMES also ``frames:PATH#Reasoning type``) into a list of :class:`Example`.

    ``limit`` keeps the first N questions (after filtering; FlashRAG's "first 1000" is ``limit=1000``);
    ``reasoning_type`` keeps the FRAMES rows whose ``reasoning_types`` contain that string; ``split`` picks
    the file of a ``flashrag:DIR`` folder. Raises :class:`HopragError` on an unknown kind, a missing file or a
    malformed file.
    """
    spec = resolve_dataset_spec(spec, split)
    kind, sep, location = spec.partition(":")
    kind = _ALIASES.get(kind.strip().lower(), kind.strip().lower())
    if not sep or not location:
        raise HopragError(f"dataset spec {spec!r} must look like KIND:PATH, with KIND one of {', '.join(KINDS)} "
                          "(e.g. hotpotqa:data/hotpot_dev_distractor_v1.json)")
    if kind not in KINDS:
        raise HopragError(f"unknown dataset kind {kind!r} in {spec!r}; use one of {', '.join(KINDS)}")
    location, _, filter_text = location.partition("#")
    if filter_text and kind != "frames":
        raise HopragError(f"a '#filter' is only supported for frames datasets, not {kind!r} ({spec!r})")
    reasoning_filter = reasoning_type or filter_text.strip() or None
    if limit is not None and limit < 0:
        raise HopragError(f"limit must be zero or positive, got {limit}")
    path = Path(location).expanduser()
    if path.is_dir():  # flashrag:DIR was resolved to its split's file above
        inside = sorted(p.name for p in path.iterdir() if p.suffix in (".json", ".jsonl", ".tsv"))[:3]
        example = f"{kind}:{path / inside[0]}" if inside else f"{kind}:{path / 'FILE'}"
        holds = f" (it holds {', '.join(inside)})" if inside else ""
        raise HopragError(f"{path} is a folder; a {kind} dataset is one file, e.g. {example}{holds}; only "
                          "flashrag:DIR reads a folder (a FlashRAG dataset folder of SPLIT.jsonl files)")
    if not path.is_file():
        raise HopragError(f"dataset file not found: {path} (from spec {spec!r}); check the path")

    # each record with where it is, counted from 1 as the bad-JSON messages count lines
    if kind == "frames":
        placed = [(f"row {number} (after the header)", row) for number, row in enumerate(_read_frames(path), 1)]
        if reasoning_filter:
            wanted = reasoning_filter.casefold()
            placed = [(where, r) for where, r in placed if wanted in (r.get("reasoning_types") or "").casefold()]
        unit = "row"
    elif kind in ("musique", "nq", "flashrag") or (kind == "jsonl" and path.suffix != ".json"):
        placed = [(f"line {number}", record) for number, record in _read_jsonl(path)]
        unit = "line"
    else:
        placed = [(f"record {number} of the JSON list", r) for number, r in enumerate(_read_json_list(path), 1)]
        unit = "record"

    converter = _hotpot if kind == "hotpotqa" else _CONVERTERS[kind]
    examples: list[Example] = []
    for index, (where, record) in enumerate(placed):
        if limit is not None and len(examples) >= limit:
            break
        missing = _missing_field(record, kind)
        if missing is not None:
            raise HopragError(f"{where} of {path} has no {missing}; each {kind} {unit} is {LAYOUTS[kind]}")
        try:
            example = converter(record, index)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            raise HopragError(f"{where} of {path} does not have the {kind} layout ({type(error).__name__}: {error}); "
                              f"each {kind} {unit} is {LAYOUTS[kind]}; check the dataset kind in {spec!r}") from error
        example.dataset = kind
        examples.append(example)
    return examples
