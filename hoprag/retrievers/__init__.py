"""Retrieval: corpus sources, on-disk indexes (Chroma + BM25, faiss), retrieval servers and any LangChain retriever,
all resolved by `make_retriever`."""

from hoprag.retrievers.embedders import DEFAULT_EMBEDDER, Embedder, make_embedder, register_embedder
from hoprag.retrievers.index import build_index, index_info, list_indexes, open_index
from hoprag.retrievers.registry import register_retriever
from hoprag.retrievers.retrievers import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    PageRetriever,
    Retriever,
    make_retriever,
)
from hoprag.retrievers.sources import iter_source

__all__ = [
    "DEFAULT_EMBEDDER",
    "BM25Retriever",
    "DenseRetriever",
    "Embedder",
    "HybridRetriever",
    "PageRetriever",
    "Retriever",
    "build_index",
    "index_info",
    "iter_source",
    "list_indexes",
    "make_embedder",
    "make_retriever",
    "register_embedder",
    "register_retriever",
    "open_index",
]
