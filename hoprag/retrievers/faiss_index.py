"""A prebuilt faiss index (FlashRAG's e5 indexes) as a read-only hoprag index, and its compact IVF-PQ form.

`hoprag index add NAME --faiss FILE --corpus CORPUS.jsonl --embedder E` writes indexes_dir()/NAME/manifest.json
(kind "faiss", the two files' paths, the embedder) and the corpus's offset table beside it; nothing is
re-embedded. `open_index(NAME)` then returns a FaissIndex: the same interface as a Chroma index (a
`collection.query` for the dense retriever, `get`, `by_title` for pages), so no method or retriever code
knows the backend. Row i of the faiss index is line i of the corpus, as FlashRAG builds them.

`hoprag index compact NAME --to NEW` reads the vectors back from a Flat index in bounded chunks and builds
an IVF-PQ index (about m bytes a vector instead of 4 * dim), so a 21M-passage corpus fits in a few GB. PQ codes
alone lose the fine ranking among near neighbours, so by default the compact index re-ranks its top k x
refine candidates with exact scores of their vectors, read row by row from the source's Flat file on disk
(`FlatRows`): a few hundred KB of disk reads a query, never the 64 GB file in memory.
"""

from __future__ import annotations

import math
import os
import shutil
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.jsonfile import read_json as _read_json
from hoprag.jsonfile import write_json as _write_json
from hoprag.retrievers.corpus import TABLE_FILES, OffsetCorpus, build_table
from hoprag.retrievers.embedders import Embedder, make_embedder
from hoprag.retrievers.manifests import FAISS_KIND as KIND
from hoprag.retrievers.manifests import faiss_manifest, list_faiss_manifests  # noqa: F401 (re-exported)
from hoprag.retrievers.manifests import index_folder as _folder
from hoprag.retrievers.manifests import now as _now

INDEX_FILE = "index.faiss"  # where `compact` writes its index, inside the new index's folder
DEFAULT_REFINE = 40  # re-rank k x 40 IVF-PQ candidates exactly: near Flat's recall@5 for 200 row reads a query
# faiss's on-disk IndexFlat: fourcc, d (int32), ntotal (int64), two unused int64, is_trained (1 byte),
# metric (int32), then the vectors as a length-prefixed (uint64, in floats) float32 array.
FLAT_FOURCCS = {b"IxFI": 0, b"IxF2": 1}  # inner product, L2 (faiss.METRIC_INNER_PRODUCT, METRIC_L2)
FLAT_HEADER = 45


def load_faiss() -> Any:
    try:
        import faiss
    except ImportError as error:
        raise HopragError("faiss indexes need faiss: pip install 'hoprag[faiss]' (faiss-cpu), or faiss-gpu "
                          "where there is a GPU") from error
    return faiss


def read_faiss(path: Path, mmap: bool = True) -> Any:
    """Memory-map where faiss can: a Flat index's vectors then live in the page cache, which the kernel can
    evict, instead of the heap (opening wiki18's 64 GB Flat index costs seconds, not 64 GB of memory)."""
    faiss = load_faiss()
    if not path.is_file():
        raise HopragError(f"faiss index file not found: {path}")
    # IO_FLAG_MMAP_IFC maps a Flat index's vectors; IO_FLAG_MMAP maps other kinds where faiss supports it.
    flags = [getattr(faiss, f) | faiss.IO_FLAG_READ_ONLY for f in ("IO_FLAG_MMAP_IFC", "IO_FLAG_MMAP")
             if hasattr(faiss, f)] if mmap else []
    for flag in flags:
        try:
            return faiss.read_index(str(path), flag)
        except RuntimeError:  # index types without mmap support are read whole
            pass
    try:
        return faiss.read_index(str(path))
    except RuntimeError as error:
        raise HopragError(f"{path} is not a faiss index ({str(error).splitlines()[0][:200]})") from None


def _metric(index: Any) -> str:
    return "ip" if index.metric_type == load_faiss().METRIC_INNER_PRODUCT else "l2"


def _check(name: str, index: Any, rows: int, embedder_dim: int | None, embedder: str) -> None:
    if embedder_dim is not None and index.d != embedder_dim:
        raise HopragError(f"index {name}: the faiss index has {index.d}-d vectors but embedder {embedder} gives "
                          f"{embedder_dim}-d ones; pass the embedder the index was built with (--embedder)")
    if rows < index.ntotal:
        raise HopragError(f"index {name}: the corpus has {rows} passages but the faiss index {index.ntotal} vectors; "
                          f"row i of the index is line i of the corpus, so pass the corpus it was built from")


def add_faiss_index(name: str, faiss_file: str | Path, corpus: str | Path, embedder: str,
                    on_progress: Callable[[int, int], None] | None = None, nprobe: int | None = None,
                    extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Register a prebuilt faiss index + its FlashRAG corpus as the read-only index `name`; returns its manifest.

    Building the offset table reads the corpus once (resumable); every other step reads only headers.
    """
    folder = _folder(name)
    faiss_path, corpus_path = Path(faiss_file).expanduser().resolve(), Path(corpus).expanduser().resolve()
    for label, path in (("faiss index", faiss_path), ("corpus", corpus_path)):
        if not path.is_file():
            raise HopragError(f"{label} file not found: {path}")
    existing = _read_json(folder / "manifest.json") or _read_json(folder / "build.json")
    if existing and existing.get("kind") != KIND:
        raise HopragError(f"index {name} already exists (built from {existing.get('source')}); choose another name")
    index = read_faiss(faiss_path)
    dim = make_embedder(embedder).dim  # an unknown or unloadable embedder fails before the corpus is read
    _check(name, index, index.ntotal, dim, embedder)  # the dimension, before the long corpus pass
    folder.mkdir(parents=True, exist_ok=True)
    rows = build_table(corpus_path, folder, on_progress=on_progress)
    _check(name, index, rows, dim, embedder)
    created = (existing or {}).get("created") or _now()
    manifest = {"name": name, "kind": KIND, "source": f"faiss:{faiss_path}", "sources": [f"faiss:{faiss_path}"],
                "faiss": str(faiss_path), "corpus": str(corpus_path), "embedder": embedder, "dim": int(index.d),
                "count": int(index.ntotal), "corpus_rows": rows, "metric": _metric(index),
                "index_type": type(load_faiss().downcast_index(index)).__name__, "bm25": False,
                "created": created, "updated": _now(), **({"nprobe": nprobe} if nprobe else {}), **(extra or {})}
    _write_json(folder / "manifest.json", manifest)
    return manifest


class FlatRows:
    """Chosen rows of a faiss Flat index file, read straight from disk: one `pread` per row, with readahead
    off, so a query's re-ranking reads its candidates' rows and nothing else (no index in memory, no
    page-in of neighbouring rows). Only faiss's plain IndexFlatIP / IndexFlatL2 layout is read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise HopragError(f"faiss Flat file not found: {path}")
        with path.open("rb") as stream:
            head = stream.read(FLAT_HEADER)
        if len(head) < FLAT_HEADER or head[:4] not in FLAT_FOURCCS:
            raise HopragError(f"{path} is no faiss Flat index (IndexFlatIP or IndexFlatL2), so its rows cannot be "
                              f"read for re-ranking")
        (self.d,) = struct.unpack_from("<i", head, 4)
        (self.ntotal,) = struct.unpack_from("<q", head, 8)
        (metric,) = struct.unpack_from("<i", head, 33)
        (floats,) = struct.unpack_from("<Q", head, 37)
        if metric != FLAT_FOURCCS[head[:4]] or floats != self.d * self.ntotal or \
                path.stat().st_size != FLAT_HEADER + 4 * floats:
            raise HopragError(f"{path}: unexpected faiss Flat layout (d {self.d}, {self.ntotal} vectors, "
                              f"{path.stat().st_size} bytes), so its rows cannot be read for re-ranking")
        self.metric = "ip" if metric == 0 else "l2"
        self.row_bytes = 4 * self.d
        self.fd = os.open(path, os.O_RDONLY)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_RANDOM)

    def rows(self, ids: np.ndarray) -> np.ndarray:
        out = np.empty((len(ids), self.d), dtype=np.float32)
        for i, row in enumerate(ids):
            out[i] = np.frombuffer(os.pread(self.fd, self.row_bytes, FLAT_HEADER + self.row_bytes * int(row)),
                                   dtype=np.float32)
        return out

    def __del__(self) -> None:
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)


class RefinedIndex:
    """An IVF-PQ index whose top k x factor candidates are re-ranked by exact scores against their Flat rows.

    Answers `search(vectors, k)` as a faiss index does (scores, rows; -1 where fewer were found)."""

    def __init__(self, compact: Any, flat: FlatRows, factor: int) -> None:
        self.compact, self.flat, self.factor = compact, flat, factor
        self.d, self.ntotal, self.metric_type = compact.d, compact.ntotal, compact.metric_type

    def search(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        _, candidates = self.compact.search(vectors, k * self.factor)
        ip = self.flat.metric == "ip"
        scores = np.full((len(vectors), k), -np.inf if ip else np.inf, dtype=np.float32)
        rows = np.full((len(vectors), k), -1, dtype=np.int64)
        for i, (query, found) in enumerate(zip(vectors, candidates, strict=True)):
            found = np.sort(found[found >= 0])  # sorted: the disk reads go forward through the file
            exact = self.flat.rows(found)
            # Higher is better for both: inner product, or the negated squared L2 distance faiss reports.
            score = exact @ query if ip else -((exact - query) ** 2).sum(axis=1)
            best = np.argsort(-score, kind="stable")[:k]
            rows[i, :len(best)] = found[best]
            scores[i, :len(best)] = score[best] if ip else -score[best]
        return scores, rows


class _LocalPlace:
    """What retrievers read of an index's place: a faiss index is local files, never a Chroma server."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name, self.folder, self.url, self.label = name, folder, None, str(folder)

    @property
    def remote(self) -> bool:
        return False


class _FaissCollection:
    """Answers the dense retriever's `collection.query` as Chroma does: ids, documents, metadatas, distances."""

    def __init__(self, opened: FaissIndex) -> None:
        self.opened = opened

    def query(self, query_embeddings: list[list[float]], n_results: int, include: list[str] | None = None
              ) -> dict[str, list[list[Any]]]:
        opened = self.opened
        vectors = np.asarray(query_embeddings, dtype=np.float32)
        scores, rows = opened.searcher.search(vectors, n_results)
        out: dict[str, list[list[Any]]] = {"ids": [], "documents": [], "metadatas": [], "distances": []}
        for score_row, id_row in zip(scores, rows, strict=True):
            documents = [opened.corpus.document(int(r), float(s)) for s, r in zip(score_row, id_row, strict=True)
                         if r >= 0]
            out["ids"].append([d.id for d in documents])
            out["documents"].append([d.text for d in documents])
            out["metadatas"].append([{"title": d.title, "source": d.source, **d.metadata} for d in documents])
            # The retriever reports 1 - distance: inner product comes back as itself, L2 as 1 - distance.
            out["distances"].append([1.0 - float(d.score or 0.0) if opened.metric == "ip" else float(d.score or 0.0)
                                     for d in documents])
        return out


class FaissIndex:
    """An opened faiss index + corpus, with the interface of a Chroma index (hoprag.retrievers.index.Index): dense
    only, no BM25."""

    def __init__(self, name: str, manifest: dict[str, Any]) -> None:
        self.name = name
        self.folder = _folder(name)
        self.place = _LocalPlace(name, self.folder)
        self.manifest = manifest
        self.embedder_name = manifest["embedder"]
        self.dense, self.has_bm25, self.bm25, self.bm25_ids = True, False, None, []
        self.client = None
        self.metric = manifest.get("metric", "ip")
        self.faiss_index = read_faiss(Path(manifest["faiss"]))
        if manifest.get("nprobe"):
            set_nprobe(self.faiss_index, int(manifest["nprobe"]))
        self.corpus = OffsetCorpus(Path(manifest["corpus"]), self.folder, source=f"{KIND}:{name}")
        _check(name, self.faiss_index, self.corpus.rows, None, self.embedder_name)
        self.searcher: Any = self.faiss_index
        if manifest.get("refine_factor"):
            self.searcher = RefinedIndex(self.faiss_index, _refine_rows(name, manifest), int(manifest["refine_factor"]))
        self.collection = _FaissCollection(self)
        self.lock = threading.Lock()

    def get(self, ids: list[str]) -> list[Document]:
        # FlashRAG's ids are the row numbers; an id that is not is looked for no further.
        out = []
        for doc_id in ids:
            if doc_id.isdigit() and int(doc_id) < self.corpus.rows:
                document = self.corpus.document(int(doc_id))
                if document.id == doc_id:
                    out.append(document)
        return out

    def by_title(self, title: str) -> list[Document]:
        return self.corpus.by_title(title)

    @property
    def embedder(self) -> Embedder:
        return make_embedder(self.embedder_name)


def _refine_rows(name: str, manifest: dict[str, Any]) -> FlatRows:
    path = Path(manifest["refine_flat"])
    if not path.is_file():
        raise HopragError(f"index {name} re-ranks with the Flat file {path}, which is missing; without it register "
                          f"the pure IVF-PQ form: hoprag index add NEW --faiss {manifest['faiss']} --corpus "
                          f"{manifest['corpus']} --embedder {manifest['embedder']} --nprobe {manifest.get('nprobe')}")
    rows = FlatRows(path)
    if (rows.d, rows.ntotal) != (manifest["dim"], manifest["count"]):
        raise HopragError(f"index {name}: its Flat file {path} has {rows.ntotal} {rows.d}-d vectors, the index "
                          f"{manifest['count']} {manifest['dim']}-d ones")
    return rows


def set_nprobe(index: Any, nprobe: int) -> None:
    faiss = load_faiss()
    space = faiss.ParameterSpace()
    space.set_index_parameter(index, "nprobe", nprobe)
    quantizer = faiss.downcast_index(faiss.extract_index_ivf(index).quantizer)
    if hasattr(quantizer, "hnsw"):  # the HNSW coarse quantizer must look at least as wide as nprobe
        quantizer.hnsw.efSearch = max(2 * nprobe, 64)


def default_nlist(count: int) -> int:
    """About 4 sqrt(n) lists, as a power of two (faiss's guideline for IVF sizes)."""
    return max(16, min(65536, 2 ** round(math.log2(4 * math.sqrt(max(count, 1))))))


def _factory(nlist: int, m: int) -> str:
    # From 4096 lists on, assigning each added vector by brute force over all centroids dominates the
    # build (21M x 16k x 768 multiply-adds); an HNSW coarse quantizer makes it logarithmic.
    return f"IVF{nlist}_HNSW32,PQ{m}" if nlist >= 4096 else f"IVF{nlist},PQ{m}"


def build_compact(flat: Any, nlist: int, m: int, train_size: int, chunk: int = 65536,
                  log: Callable[[str], None] = lambda _: None, rng: np.random.Generator | None = None) -> Any:
    """IVF-PQ over the vectors of `flat` (any index that reconstructs): trained on a random sample, filled in
    chunks, so memory holds the sample, one chunk and the codes, never all the vectors."""
    faiss = load_faiss()
    count, dim = int(flat.ntotal), int(flat.d)
    rng = rng or np.random.default_rng(0)
    sample = np.sort(rng.choice(count, size=min(train_size, count), replace=False))
    log(f"training {_factory(nlist, m)} on {len(sample)} of {count} vectors")
    training = np.concatenate([flat.reconstruct_batch(sample[i:i + chunk]) for i in range(0, len(sample), chunk)])
    compact = faiss.index_factory(dim, _factory(nlist, m), flat.metric_type)
    # The factory turns on polysemous training (reordering PQ codes for Hamming-distance filtering), which
    # only polysemous search uses and which costs several times the PQ training itself.
    faiss.downcast_index(faiss.extract_index_ivf(compact)).do_polysemous_training = False
    compact.train(training)
    del training
    for start in range(0, count, chunk):
        compact.add(flat.reconstruct_n(start, min(chunk, count - start)))
        log(f"added {min(start + chunk, count)} / {count}")
    return compact


def compact_index(name: str, to: str, nlist: int | None = None, m: int = 64, train_size: int | None = None,
                  nprobe: int | None = None, queries: list[str] | None = None, sample_queries: int = 200,
                  chunk: int = 65536, log: Callable[[str], None] = lambda _: None,
                  refine: int = DEFAULT_REFINE) -> dict[str, Any]:
    """Build the IVF-PQ form of the faiss index `name` as the index `to`; with `refine` > 0 it re-ranks its
    top k x refine candidates exactly from the source's Flat file (which must stay in place), with 0 it is
    pure IVF-PQ. The manifest has `recall_at_5_pq` and `recall_at_5_refined`: the overlap of each form's top 5
    with the source index's top 5 over `queries` (default: the titles of `sample_queries` corpus passages, as
    queries), and `recall_at_5`, the registered form's. Memory: one chunk of vectors plus the training sample."""
    faiss = load_faiss()
    registered = faiss_manifest(name)
    if registered is None:
        raise HopragError(f"index {name} is no faiss index; compact works on indexes registered with hoprag index add")
    source = FaissIndex(name, registered)
    flat = source.faiss_index
    count, dim = int(flat.ntotal), int(flat.d)
    if m < 1 or dim % m:
        raise HopragError(f"--m must divide the vectors' dimension {dim}, got {m}")
    nlist = nlist or default_nlist(count)
    train_size = min(count, train_size or min(max(32 * nlist, 10_000), 500_000))
    if nlist < 1 or nlist > train_size:
        raise HopragError(f"--nlist must be between 1 and the training sample ({train_size}), got {nlist}")
    nprobe = nprobe or max(8, nlist // 64)
    if refine < 0:
        raise HopragError(f"--refine must be 0 (pure IVF-PQ) or a candidate factor of at least 1, got {refine}")
    flat_file = Path(source.manifest["faiss"])
    try:
        rows = FlatRows(flat_file)  # checked before the long build, and used for the recall of both forms
    except HopragError as error:
        if refine:
            raise HopragError(f"{error}; pass --refine 0 for the pure IVF-PQ form") from None
        rows = None
    target = _folder(to)
    if (target / "manifest.json").exists() or (target / "build.json").exists():
        raise HopragError(f"index {to} already exists; choose another name")
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    compact = build_compact(flat, nlist, m, train_size, chunk, log, rng)
    target.mkdir(parents=True, exist_ok=True)
    tmp = target / (INDEX_FILE + ".tmp")
    faiss.write_index(compact, str(tmp))
    os.replace(tmp, target / INDEX_FILE)
    for file in TABLE_FILES:  # the corpus is the same: share its table (a hard link where the disk allows)
        (target / file).unlink(missing_ok=True)
        try:
            os.link(source.folder / file, target / file)
        except OSError:
            shutil.copy2(source.folder / file, target / file)
    seconds = time.perf_counter() - started
    set_nprobe(compact, nprobe)
    vectors = _recall_queries(source, queries, sample_queries, rng)
    recall: dict[str, Any] = {"recall_at_5_pq": recall_at_k(flat, compact, vectors, 5)}
    if rows is not None:
        recall["recall_at_5_refined"] = recall_at_k(flat, RefinedIndex(compact, rows, refine or DEFAULT_REFINE),
                                                    vectors, 5)
    recall["recall_at_5"] = recall["recall_at_5_refined" if refine else "recall_at_5_pq"]
    form = {"refine_flat": str(flat_file), "refine_factor": refine} if refine else {}
    return add_faiss_index(to, target / INDEX_FILE, source.manifest["corpus"], source.embedder_name, nprobe=nprobe,
                           extra={"compacted_from": name, **recall, **form, "nlist": nlist, "m": m,
                                  "train_size": train_size, "build_seconds": round(seconds, 1)})


def _recall_queries(source: FaissIndex, queries: list[str] | None, sample: int, rng: np.random.Generator
                    ) -> np.ndarray:
    if not queries:
        rows = rng.choice(source.corpus.rows, size=min(sample, source.corpus.rows), replace=False)
        queries = [d.title or d.text[:100] for d in (source.corpus.document(int(r)) for r in rows)]
    return np.asarray(source.embedder.embed_queries(queries), dtype=np.float32)


def recall_at_k(reference: Any, candidate: Any, vectors: np.ndarray, k: int) -> float:
    """Mean overlap of the candidate's top k with the reference's top k."""
    _, truth = reference.search(vectors, k)
    _, got = candidate.search(vectors, k)
    hits = [len(set(t[t >= 0]) & set(g[g >= 0])) / k for t, g in zip(truth, got, strict=True)]
    return round(float(np.mean(hits)), 4)
