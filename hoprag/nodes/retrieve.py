"""Retrieval node: top-k documents (pages by default) for the pending search."""

from __future__ import annotations

import threading
from typing import Any

from hoprag.context import Context, context_of
from hoprag.documents import Document
from hoprag.state import AgentState

_CUSTOM: dict[str, Any] = {}
_LOCK = threading.Lock()


def register_retriever(name: str, retriever: Any) -> str:
    """Serve `name` from an object with `search(query, k) -> list[Document]` (tests, custom corpora);
    None serves `name` from its hoprag index again."""
    with _LOCK:
        if retriever is None:
            _CUSTOM.pop(name, None)
        else:
            _CUSTOM[name] = retriever
    return name


def search(ctx: Context, query: str, k: int | None = None) -> list[Document]:
    if ctx.index in _CUSTOM:
        return list(_CUSTOM[ctx.index].search(query, k or ctx.k))
    from hoprag.retrievers import make_retriever

    retriever = make_retriever(ctx.index, ctx.retriever, k=k or ctx.k, pages=ctx.pages)
    return retriever.search(query, k or ctx.k)


def retrieve(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    pending = state["pending"]
    text = f"{pending['entity']} {pending['query']}".strip() if pending.get("entity") else pending["query"]
    documents = search(ctx, text)
    return {"documents": [d.to_dict() for d in documents]}


def retrieve_question(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """Single-shot retrieval (standard RAG): the question itself is the one search."""
    ctx = context_of(runtime)
    question = state["question"]
    pending = {"thought": "", "kind": "search", "entity": "", "query": question, "argument": question, "problem": ""}
    return {"pending": pending, "documents": [d.to_dict() for d in search(ctx, question)]}
