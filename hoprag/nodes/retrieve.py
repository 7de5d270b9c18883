"""Retrieval node: top-k documents (pages by default) for the pending search."""

from __future__ import annotations

from typing import Any

from hoprag.context import Context, context_of
from hoprag.documents import Document
from hoprag.state import AgentState


def register_retriever(name: str, retriever: Any) -> str:
    """Serve `name` (as a Context's `retriever` or, as before, its `index`) from a LangChain retriever or an object
    with `search(query, k) -> list[Document]` (tests, custom corpora); None unregisters it.
    The same as hoprag.retrievers.register_retriever."""
    from hoprag.retrievers.registry import register_retriever as register

    return register(name, retriever)


def _retriever(ctx: Context, k: int) -> Any:
    """The run's retriever, resolved in one place (hoprag.retrievers.make_retriever); a served request's choice is
    checked against what the server was started with."""
    from hoprag.retrievers import make_retriever
    from hoprag.retrievers.registry import served_request

    return make_retriever(ctx.index, ctx.retriever, k=k, pages=bool(ctx.pages), served=served_request())


def search(ctx: Context, query: str, k: int | None = None) -> list[Document]:
    k = k or ctx.k or 5
    return _retriever(ctx, k).search(query, k)


def search_many(ctx: Context, queries: list[str], k: int | None = None) -> list[list[Document]]:
    """The top k for each query, in one request where the backend can (a retrieval server, a LangChain `batch`)."""
    k = k or ctx.k or 5
    return _retriever(ctx, k).search_many(list(queries), k) if queries else []


def search_text(pending: dict[str, Any], ctx: Context) -> str:
    """What a pending search retrieves with. A ReAct search[entity; query] retrieves with the entity (003, Step 2:
    "Based on the entity e, we retrieve the top k = 5 relevant Wikipedia articles"), or with "entity query" under
    `search_entity_and_query`; a search without an entity (and every other method's) with its query."""
    if not pending.get("entity"):
        return str(pending["query"])
    if ctx.search_entity_and_query:
        return f"{pending['entity']} {pending['query']}".strip()
    return str(pending["entity"])


def notes_query(pending: dict[str, Any], ctx: Context) -> str:
    """The query the note writer is given: the search's query s (003, Step 3), or its whole argument ("entity;
    query") under `search_entity_and_query`. Without an entity the two are the same."""
    return str(pending["argument"] if ctx.search_entity_and_query else pending["query"])


def retrieve(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    documents = search(ctx, search_text(state["pending"], ctx))
    return {"documents": [d.to_dict() for d in documents]}


def question_documents(state: Any, runtime: Any = None) -> dict[str, Any]:
    """The single-round methods' one retrieval: the top-k documents for the question itself."""
    return {"documents": [d.to_dict() for d in search(context_of(runtime), state["question"])]}


def retrieve_question(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """Single-shot retrieval (standard RAG): the question itself is the one search."""
    question = state["question"]
    pending = {"thought": "", "kind": "search", "entity": "", "query": question, "argument": question, "problem": ""}
    return {"pending": pending, **question_documents(state, runtime)}
