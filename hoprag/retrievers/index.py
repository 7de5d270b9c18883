"""On-disk indexes: a Chroma collection (dense) plus a bm25s index, described by manifest.json.

Layout of indexes_dir()/NAME: manifest.json (written when a build completes), build.json (the
embedder and source of a build in progress, so an interrupted build resumes with the same embedder),
chroma/ (PersistentClient) and bm25/ (bm25s retriever + the passage ids in its row order).

An index built with embedder `none` has BM25 alone: its passages live in docs.sqlite instead of
Chroma. It builds in seconds (the demo index starts so), and a later build of the same index with a
real embedder adds the dense vectors; the index stays usable with BM25 while they are embedded.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

# Chroma reads this at import time; we never want telemetry calls from an offline tool.
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from rich.progress import (  # noqa: E402
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text  # noqa: E402

from hoprag.documents import Document  # noqa: E402
from hoprag.errors import HopragError, UnknownSpecError  # noqa: E402
from hoprag.paths import indexes_dir  # noqa: E402
from hoprag.retrievers.embedders import DEFAULT_EMBEDDER, Embedder, make_embedder  # noqa: E402
from hoprag.retrievers.sources import iter_source  # noqa: E402

COLLECTION = "passages"
HNSW = {"hnsw": {"space": "cosine", "ef_search": 200, "ef_construction": 200}}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@functools.cache  # one EmbeddingFunction class per process
def _chroma() -> Any:
    import chromadb
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class HopragEmbeddingFunction(EmbeddingFunction[Documents]):
        """Chroma must never fall back to its default embedder (it downloads an ONNX model)."""

        def __init__(self, embedder_name: str) -> None:
            self.embedder_name = embedder_name

        def __call__(self, input: Documents) -> Embeddings:
            return make_embedder(self.embedder_name).embed_passages(list(input))  # type: ignore[return-value]

        def embed_query(self, input: Documents) -> Embeddings:
            return make_embedder(self.embedder_name).embed_queries(list(input))  # type: ignore[return-value]

        @staticmethod
        def name() -> str:
            return "hoprag"

        def get_config(self) -> dict[str, Any]:
            return {"embedder": self.embedder_name}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> HopragEmbeddingFunction:
            return HopragEmbeddingFunction(str(config.get("embedder", DEFAULT_EMBEDDER)))

        def default_space(self) -> Any:
            return "cosine"

    return chromadb, HopragEmbeddingFunction


def index_dir(name: str) -> Path:
    if not _NAME_RE.match(name):
        raise HopragError(f"invalid index name '{name}': use letters, digits, '.', '_' and '-'")
    return indexes_dir() / name


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _write_json(path: Path, data: dict[str, Any]) -> None:
    # Write-then-rename so an interrupted write never leaves half a manifest.
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} passages/s" if speed else "- passages/s", style="cyan")


def _batches(documents: Iterator[Document], size: int) -> Iterator[list[Document]]:
    while batch := list(islice(documents, size)):
        yield batch


BM25_ONLY = "none"  # the embedder name of an index without dense vectors


class DocStore:
    """The passages of a BM25-only index in SQLite: id, title, text, source, other metadata."""

    def __init__(self, path: Path) -> None:
        import sqlite3

        self.connection = sqlite3.connect(str(path), check_same_thread=False)
        self.connection.execute("CREATE TABLE IF NOT EXISTS passages (id TEXT PRIMARY KEY, title TEXT, text TEXT, "
                                "metadata TEXT)")
        self.connection.execute("CREATE INDEX IF NOT EXISTS by_title ON passages (title)")
        self.lock = threading.Lock()

    def present(self, ids: list[str]) -> set[str]:
        marks = ",".join("?" * len(ids))
        with self.lock:
            return {row[0] for row in self.connection.execute(f"SELECT id FROM passages WHERE id IN ({marks})", ids)}

    def add(self, documents: list[Document]) -> None:
        rows = [(d.id, d.title, d.text, json.dumps({"source": d.source})) for d in documents]
        with self.lock, self.connection:  # one transaction a batch: a kill loses at most the batch
            self.connection.executemany("INSERT OR IGNORE INTO passages VALUES (?, ?, ?, ?)", rows)

    def _rows(self, query: str, args: list[Any]) -> list[Document]:
        with self.lock:
            rows = self.connection.execute(query, args).fetchall()
        return [_to_document(i, text, {"title": title, **json.loads(meta)}) for i, title, text, meta in rows]

    def get(self, ids: list[str]) -> list[Document]:
        return self._rows(f"SELECT id, title, text, metadata FROM passages WHERE id IN ({','.join('?' * len(ids))})",
                          list(ids))

    def by_title(self, title: str) -> list[Document]:
        return self._rows("SELECT id, title, text, metadata FROM passages WHERE title = ?", [title])

    def count(self) -> int:
        with self.lock:
            return int(self.connection.execute("SELECT COUNT(*) FROM passages").fetchone()[0])

    def rows(self, batch: int = 2000) -> Iterator[tuple[str, str, dict[str, Any]]]:
        offset = 0
        while documents := self._rows("SELECT id, title, text, metadata FROM passages ORDER BY rowid LIMIT ? OFFSET ?",
                                      [batch, offset]):
            yield from ((d.id, d.text, {"title": d.title, "source": d.source}) for d in documents)
            offset += len(documents)


def open_collection(folder: Path, embedder: str, create: bool = False) -> Any:
    chromadb, ef_class = _chroma()
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(folder / "chroma"),
                                       settings=Settings(anonymized_telemetry=False))
    ef = ef_class(embedder)
    if create:
        return client, client.get_or_create_collection(COLLECTION, embedding_function=ef, configuration=HNSW)
    return client, client.get_collection(COLLECTION, embedding_function=ef)


def build_index(name: str, source: str, embedder: str | None = None, batch_size: int = 256,
                progress: bool = True) -> dict[str, Any]:
    """Build or resume the index `name` from `source`; returns its manifest.

    `embedder` defaults to the one an existing (or interrupted) index was built with, else
    DEFAULT_EMBEDDER. Passages already in the index are skipped, so reruns are cheap and interrupted
    builds resume where they stopped.
    """
    folder = index_dir(name)
    # A build in progress (build.json) decides the embedder; else the finished index's manifest.
    previous = _read_json(folder / "build.json") or _read_json(folder / "manifest.json")
    finished = _read_json(folder / "manifest.json")
    upgrading = bool(previous and previous.get("embedder") == BM25_ONLY and embedder not in (None, BM25_ONLY))
    if previous and embedder and previous.get("embedder") != embedder and not upgrading:
        raise HopragError(f"index {name} was built with embedder {previous['embedder']}; cannot add "
                          f"passages embedded with {embedder} (use another index name)")
    embedder_name = embedder or (previous or {}).get("embedder") or DEFAULT_EMBEDDER
    # Validate everything (source, embedder) before anything is written, so a typo leaves no debris.
    # The counting pass also gives the progress bar its total and ETA; embedding dominates the time.
    total = sum(1 for _ in iter_source(source))
    dense = embedder_name != BM25_ONLY
    model: Embedder | None = make_embedder(embedder_name) if dense else None
    folder.mkdir(parents=True, exist_ok=True)
    created = (previous or {}).get("created") or _now()
    _write_json(folder / "build.json", {"name": name, "source": source, "embedder": embedder_name,
                                        "dim": model.dim if model else 0, "created": created})

    if dense:
        client, store = open_collection(folder, embedder_name, create=True)
        batch_size = max(1, min(batch_size, client.get_max_batch_size()))
    else:
        store = DocStore(folder / "docs.sqlite")
    added = 0
    started = time.perf_counter()
    columns = (TextColumn(f"[bold]index {name}"), BarColumn(), MofNCompleteColumn(), _RateColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, disable=not progress, transient=False) as bar:
        task = bar.add_task("embed", total=total)
        for batch in _batches(iter_source(source), batch_size):
            ids = [d.id for d in batch]
            present = set(store.get(ids=ids, include=[])["ids"]) if dense else store.present(ids)
            todo = [d for d in batch if d.id not in present]
            if todo and model is not None:
                store.add(
                    ids=[d.id for d in todo],
                    documents=[d.text for d in todo],
                    embeddings=model.embed_passages([d.as_passage() for d in todo]),  # type: ignore[arg-type]
                    metadatas=[{"title": d.title, "source": d.source} for d in todo],
                )
            elif todo:
                store.add(todo)
            added += len(todo)
            bar.advance(task, len(batch))
    seconds = time.perf_counter() - started
    count = store.count()
    _build_bm25(folder, _iter_collection(store) if dense else store.rows())
    manifest = {"name": name, "source": source, "embedder": embedder_name, "dim": model.dim if model else 0,
                "count": count, "created": created, "updated": _now(),
                "last_build": {"added": added, "seconds": round(seconds, 2),
                               "passages_per_s": round(added / seconds, 2) if added and seconds else None}}
    if not added and previous and previous.get("last_build"):
        manifest["last_build"] = previous["last_build"]  # a no-op rerun keeps the real build's timing
    old_sources = (previous or {}).get("sources") or ([previous["source"]] if previous and "source" in previous
                                                       else [])
    if upgrading and finished:
        old_sources = finished.get("sources") or old_sources
    manifest["sources"] = list(dict.fromkeys([*old_sources, source]))
    _write_json(folder / "manifest.json", manifest)
    (folder / "build.json").unlink(missing_ok=True)
    if dense:
        (folder / "docs.sqlite").unlink(missing_ok=True)  # an upgraded BM25-only index keeps Chroma's copy
    _forget(str(folder))  # a process that had it open must reload the new BM25 and count
    return manifest


def bm25_tokenizer() -> Any:
    import bm25s
    import Stemmer

    return bm25s.tokenization.Tokenizer(stemmer=Stemmer.Stemmer("english"), stopwords="en")


def _iter_collection(collection: Any, batch: int = 2000) -> Iterator[tuple[str, str, dict[str, Any]]]:
    offset = 0
    while True:
        got = collection.get(include=["documents", "metadatas"], limit=batch, offset=offset)
        if not got["ids"]:
            return
        yield from zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        offset += len(got["ids"])


def _build_bm25(folder: Path, rows: Iterator[tuple[str, str, dict[str, Any]]]) -> None:
    """BM25 over title + text, read back from the store in batches so it covers resumed builds too."""
    import bm25s

    tokenizer = bm25_tokenizer()
    ids: list[str] = []
    token_ids: list[list[int]] = []
    texts: list[str] = []
    for doc_id, text, metadata in rows:
        ids.append(doc_id)
        texts.append(f"{(metadata or {}).get('title', '')} {text}")
        if len(texts) >= 2000:  # tokenize in chunks: token ids are small, raw texts need not pile up
            token_ids.extend(tokenizer.tokenize(texts, update_vocab=True, show_progress=False))
            texts = []
    if texts:
        token_ids.extend(tokenizer.tokenize(texts, update_vocab=True, show_progress=False))
    retriever = bm25s.BM25()
    retriever.index(tokenizer.to_tokenized_tuple(token_ids), show_progress=False)
    target = folder / "bm25"
    retriever.save(str(target))
    tokenizer.save_vocab(str(target))
    tokenizer.save_stopwords(str(target))
    (target / "ids.json").write_text(json.dumps(ids), encoding="utf-8")


def list_indexes() -> list[dict[str, Any]]:
    """Manifests of the completed indexes (an interrupted build is listed once it finishes)."""
    found = []
    for manifest_file in sorted(indexes_dir().glob("*/manifest.json")):
        manifest = _read_json(manifest_file)
        if manifest:
            found.append(manifest)
    return found


def _missing(name: str) -> UnknownSpecError:
    known = ", ".join(i["name"] for i in list_indexes()) or "none yet"
    return UnknownSpecError(f"no index named '{name}' (known: {known}); build it with: "
                            f"hoprag index build {name} --source SOURCE")


def index_info(name: str) -> dict[str, Any]:
    manifest = _read_json(index_dir(name) / "manifest.json")
    if manifest is None:
        raise _missing(name)
    return {**manifest, "path": str(index_dir(name))}


class Index:
    """An opened index: the Chroma collection, the BM25 retriever and its id order."""

    def __init__(self, name: str, folder: Path, manifest: dict[str, Any]) -> None:
        import bm25s

        self.name = name
        self.folder = folder
        self.manifest = manifest
        self.embedder_name: str = manifest["embedder"]
        self.dense = self.embedder_name != BM25_ONLY
        if self.dense:
            self.client, self.collection = open_collection(folder, self.embedder_name)
        else:
            self.client, self.collection, self.docs = None, None, DocStore(folder / "docs.sqlite")
        self.bm25 = bm25s.BM25.load(str(folder / "bm25"))
        self.bm25_ids: list[str] = json.loads((folder / "bm25" / "ids.json").read_text(encoding="utf-8"))
        self.lock = threading.Lock()  # Chroma's client is shared; bm25s retrieval is not re-entrant safe

    @property
    def embedder(self) -> Embedder:
        return make_embedder(self.embedder_name)

    def get(self, ids: list[str]) -> list[Document]:
        if not ids:
            return []
        if not self.dense:
            by_id = {d.id: d for d in self.docs.get(ids)}
            return [by_id[i] for i in ids if i in by_id]
        got = self.collection.get(ids=ids, include=["documents", "metadatas"])
        by_id = {i: _to_document(i, t, m) for i, t, m in zip(got["ids"], got["documents"], got["metadatas"],
                                                              strict=True)}
        return [by_id[i] for i in ids if i in by_id]

    def by_title(self, title: str) -> list[Document]:
        if not self.dense:
            return self.docs.by_title(title)
        got = self.collection.get(where={"title": title}, include=["documents", "metadatas"])
        return [_to_document(i, t, m) for i, t, m in zip(got["ids"], got["documents"], got["metadatas"],
                                                          strict=True)]


def _to_document(doc_id: str, text: str | None, metadata: dict[str, Any] | None, score: float | None = None
                 ) -> Document:
    metadata = dict(metadata or {})
    title = str(metadata.pop("title", ""))
    source = str(metadata.pop("source", ""))
    return Document(id=doc_id, title=title, text=text or "", source=source, score=score, metadata=metadata)


_OPEN: dict[str, tuple[str, Index]] = {}
_OPEN_LOCK = threading.Lock()


def _forget(name: str) -> None:
    with _OPEN_LOCK:
        _OPEN.pop(name, None)


def open_index(name: str) -> Index:
    """The process-wide opened index `name` (cached per HOPRAG_HOME location and manifest update)."""
    folder = index_dir(name)
    manifest = _read_json(folder / "manifest.json")
    if manifest is None:
        if (folder / "build.json").exists():
            raise HopragError(f"index '{name}' is incomplete (an interrupted build); resume it with: "
                              f"hoprag index build {name} --source SOURCE")
        raise _missing(name)
    key = f"{folder}|{manifest.get('updated')}"
    with _OPEN_LOCK:
        cached = _OPEN.get(str(folder))
        if cached and cached[0] == key:
            return cached[1]
        index = Index(name, folder, manifest)
        _OPEN[str(folder)] = (key, index)
        return index
