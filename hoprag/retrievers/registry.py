"""Retrievers a user brings: registered names, `py:MODULE:ATTR` import paths and LangChain retrievers.

`register_retriever(name, retriever_or_factory)` makes `Context(retriever=name)` (or, as before, `index=name`)
retrieve with it. What may be registered:
- any LangChain retriever (`invoke`/`batch` returning `Document`s): hoprag reads `page_content` and the metadata
  `title` and `id` (a vector store's `as_retriever()`, a `ContextualCompressionRetriever` with a reranker, ...);
- an object with hoprag's `search(query, k) -> list[hoprag.documents.Document]`, used as it is (it decides what a
  document is, pages included);
- a factory: a callable with no arguments returning either, called once, on first use.

A served graph (`hoprag serve`, `langgraph dev`) takes its Context from remote requests, so there a retriever
value may name only what the server was started with: see `check_served_retriever`. Its operator registers
retrievers for the server's requests with `HOPRAG_RETRIEVERS=NAME=py:MODULE:ATTR,...` in the server's environment.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import threading
from typing import Any

from langchain_core.documents import Document as LCDocument

from hoprag.documents import Document
from hoprag.errors import HopragError, UnknownSpecError
from hoprag.retrievers.base import Retriever

PY_PREFIX = "py:"
URL_ENV = "HOPRAG_RETRIEVER_URL"  # the default retrieval server (`auto` retrieves from it)
ALLOWED_URLS_ENV = "HOPRAG_RETRIEVER_URLS"  # more servers a served graph's requests may name (comma-separated)
SERVED_ENV = "HOPRAG_SERVED"  # set by `hoprag serve` and langgraph.json: every run of this process is a request
# Retrievers the operator names for the whole process: `NAME=py:MODULE:ATTR,...`. A served graph's requests may pick
# them by NAME; the environment is the operator's, never a request's, so importing these modules is safe there.
RETRIEVERS_ENV = "HOPRAG_RETRIEVERS"

_REGISTERED: dict[str, Any] = {}
_MADE: dict[str, Any] = {}  # a factory's product, by name
_LOCK = threading.Lock()
_ATTR_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def register_retriever(name: str, retriever_or_factory: Any) -> str:
    """Make `name` retrieve with a LangChain retriever, an object with `search(query, k)`, or a factory of either;
    None unregisters it. Returns the name."""
    if not name or name.startswith(PY_PREFIX) or "://" in name:
        raise HopragError(f"cannot register a retriever as {name!r}: a name must not be empty, a py: path or a URL")
    with _LOCK:
        _MADE.pop(name, None)
        if retriever_or_factory is None:
            _REGISTERED.pop(name, None)
        else:
            _REGISTERED[name] = retriever_or_factory
    return name


def env_retrievers() -> dict[str, str]:
    """$HOPRAG_RETRIEVERS as {name: "py:MODULE:ATTR"}; a malformed entry is one clear error."""
    specs: dict[str, str] = {}
    for entry in re.split(r"[,\s]+", os.environ.get(RETRIEVERS_ENV, "")):
        if not entry:
            continue
        name, _, spec = entry.partition("=")
        well_formed = spec.startswith(PY_PREFIX) and _ATTR_PATH.match(spec[len(PY_PREFIX):])
        if not name or name.startswith(PY_PREFIX) or "://" in name or not well_formed:
            raise HopragError(f"${RETRIEVERS_ENV}: {entry!r} is not NAME=py:MODULE:ATTR (entries separated by commas), "
                              "e.g. my-store=py:my_app.search:retriever")
        specs[name] = spec
    return specs


def is_registered(name: str) -> bool:
    return name in _REGISTERED or name in env_retrievers()


def registered_names() -> list[str]:
    return sorted({*_REGISTERED, *env_retrievers()})


def _is_retriever(candidate: Any) -> bool:
    return not isinstance(candidate, type) and (hasattr(candidate, "search") or hasattr(candidate, "invoke"))


def _made(label: str, candidate: Any) -> Any:
    """The retriever itself, or what its factory returns."""
    if _is_retriever(candidate):
        return candidate
    if callable(candidate):
        try:
            product = candidate()
        except HopragError:
            raise
        except Exception as error:
            raise HopragError(f"the retriever factory {label} failed: {type(error).__name__}: {error}") from error
        if _is_retriever(product):
            return product
        raise HopragError(f"the retriever factory {label} returned {type(product).__name__}, not a retriever "
                          "(a LangChain retriever, or an object with search(query, k))")
    raise HopragError(f"{label} is {type(candidate).__name__}, not a retriever (a LangChain retriever, an object with "
                      "search(query, k), or a factory of one)")


def registered_retriever(name: str) -> Any:
    """The retriever registered as `name`: in code (register_retriever) first, else in $HOPRAG_RETRIEVERS (its
    module imported on first use)."""
    with _LOCK:
        if name in _REGISTERED:
            if name not in _MADE:
                _MADE[name] = _made(f"registered as {name!r}", _REGISTERED[name])
            return _MADE[name]
    return import_retriever(env_retrievers()[name])  # takes the lock itself


def import_retriever(spec: str) -> Any:
    """`py:MODULE:ATTR` (ATTR may be dotted): the retriever, or factory product, it names; imported once."""
    path = spec[len(PY_PREFIX):]
    if not _ATTR_PATH.match(path):
        raise UnknownSpecError(f"--retriever {spec}: write py:MODULE:ATTR, e.g. py:my_app.search:retriever")
    with _LOCK:
        if spec in _MADE:
            return _MADE[spec]
    module_name, _, attribute = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise HopragError(f"--retriever {spec}: cannot import {module_name} ({error}); is its folder on PYTHONPATH?"
                          ) from error
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise HopragError(f"--retriever {spec}: {module_name} has no attribute {attribute}")
        target = getattr(target, part)
    made = _made(spec, target)
    with _LOCK:
        return _MADE.setdefault(spec, made)


def from_langchain(document: LCDocument) -> Document:
    """A LangChain document as hoprag's: metadata `title` and `id` (else the document's id, else a hash of the
    text); `source` and `score` where present; the rest stays in metadata."""
    metadata = dict(document.metadata or {})
    title = metadata.pop("title", None)
    doc_id = metadata.pop("id", None) or document.id or hashlib.sha1(document.page_content.encode()).hexdigest()[:16]
    score = metadata.pop("score", None)
    return Document(id=str(doc_id), title=str(title) if title is not None else "", text=document.page_content,
                    source=str(metadata.pop("source", "") or ""),
                    score=float(score) if isinstance(score, int | float) else None, metadata=metadata)


def _as_documents(items: Any, label: str) -> list[Document]:
    documents = []
    for item in items or []:
        if isinstance(item, Document):
            documents.append(item)
        elif isinstance(item, LCDocument):
            documents.append(from_langchain(item))
        else:
            raise HopragError(f"the retriever {label} returned {type(item).__name__}, not a Document")
    return documents


def _with_k(retriever: Any, k: int) -> Any:
    """The retriever asked for k documents where it says how: a `k` field (BM25Retriever, ...) or `search_kwargs`
    (a vector store's retriever). Others return their own number, cut to k."""
    fields = getattr(type(retriever), "model_fields", {})
    try:
        if "k" in fields and getattr(retriever, "k", None) != k:
            return retriever.model_copy(update={"k": k})
        if "search_kwargs" in fields and (retriever.search_kwargs or {}).get("k") != k:
            return retriever.model_copy(update={"search_kwargs": {**(retriever.search_kwargs or {}), "k": k}})
    except Exception:  # a retriever that cannot be copied keeps its own k
        return retriever
    return retriever


class LangChainRetriever(Retriever):
    """Any LangChain retriever behind hoprag's retriever interface: `invoke` for one query, `batch` for several."""

    target: Any
    label: str = ""

    def search(self, query: str, k: int) -> list[Document]:
        if k <= 0:
            return []
        return _as_documents(_with_k(self.target, k).invoke(query), self.label)[:k]

    def search_many(self, queries: list[str], k: int) -> list[list[Document]]:
        if k <= 0 or not queries:
            return [[] for _ in queries]
        return [_as_documents(found, self.label)[:k] for found in _with_k(self.target, k).batch(list(queries))]


class SearchRetriever(Retriever):
    """An object with hoprag's `search(query, k)`, as it is (its documents are what a method reads)."""

    target: Any
    label: str = ""
    as_is: bool = True

    def search(self, query: str, k: int) -> list[Document]:
        return _as_documents(self.target.search(query, k), self.label)

    def search_many(self, queries: list[str], k: int) -> list[list[Document]]:
        if hasattr(self.target, "search_many"):
            return [_as_documents(found, self.label) for found in self.target.search_many(list(queries), k)]
        return [self.search(query, k) for query in queries]


def adapt(candidate: Any, label: str) -> Retriever:
    """hoprag's Retriever for a registered or imported retriever."""
    if isinstance(candidate, Retriever):
        return candidate
    if hasattr(candidate, "search"):
        return SearchRetriever(target=candidate, label=label)
    return LangChainRetriever(target=candidate, label=label)


# ---------------------------------------------------------------- served graphs


def allowed_urls() -> set[str]:
    """The retrieval servers this process was started with: $HOPRAG_RETRIEVER_URL and $HOPRAG_RETRIEVER_URLS."""
    values = [os.environ.get(URL_ENV, ""), *re.split(r"[,\s]+", os.environ.get(ALLOWED_URLS_ENV, ""))]
    return {v.strip().rstrip("/") for v in values if v.strip()}


def served_request() -> bool:
    """Whether the running graph serves a remote request, whose Context a client chose: a process started by
    `hoprag serve` or with langgraph.json's env (HOPRAG_SERVED=1), or a run the LangGraph API server started
    (its run config carries the server's request markers)."""
    if os.environ.get(SERVED_ENV, "").strip().lower() in ("1", "true", "yes"):
        return True
    try:
        from langgraph.config import get_config

        config = get_config()
    except (RuntimeError, ImportError):  # not inside a graph run: a library or CLI call
        return False
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    return any(key in configurable for key in SERVER_CONFIG_MARKERS) or any(
        key in metadata for key in SERVER_METADATA_MARKERS)


# Keys the LangGraph API server puts into every run's config (langgraph_api); a library call has none of them.
SERVER_CONFIG_MARKERS = ("langgraph_auth_user", "langgraph_request_id", "__request_start_time_ms__")
SERVER_METADATA_MARKERS = ("langgraph_api_url", "langgraph_host")


def check_served_retriever(value: str) -> None:
    """Refuse, in a served request, a retriever the server was not started with: a `py:` path (it would import a
    module of the client's choosing) or a URL not in $HOPRAG_RETRIEVER_URL / $HOPRAG_RETRIEVER_URLS (it would send
    requests where the client says). Registered names, indexes and the built-in kinds stay open."""
    if value.startswith(PY_PREFIX):
        raise HopragError(f"retriever {value!r} refused: a served graph does not import modules a request names; "
                          "register the retriever in the server (hoprag.retrievers.register_retriever) and use its name")
    if "://" in value and value.rstrip("/") not in allowed_urls():
        raise HopragError(f"retriever {value!r} refused: a served graph sends requests only to the retrieval servers "
                          f"it was started with (${URL_ENV}, ${ALLOWED_URLS_ENV})")



def uses_index(value: str, index: str = "") -> bool:
    """Whether the retriever value retrieves from the Context's `index` (a kind over it), so the CLI must find or
    build that index first; a URL, a py: path, a registered name, wikipedia or another index's name do not."""
    value = (value or "auto").strip()
    if value == "auto" and os.environ.get(URL_ENV):
        return is_registered(index)
    return value in ("auto", "dense", "bm25", "hybrid")


def check_retriever_value(value: str) -> None:
    """Fail early, with one line, on a retriever value that resolves to nothing (a CLI option, before any work):
    a py: path is imported now, an unknown name is refused with the values that exist."""
    from hoprag.retrievers.base import KINDS, VALUES_HELP, _is_index
    from hoprag.retrievers.http import is_url

    value = (value or "").strip()
    if value in (*KINDS, "auto", "wikipedia") or is_url(value) or is_registered(value):
        return
    if value.startswith(PY_PREFIX):
        import_retriever(value)
        return
    if "://" in value or not _is_index(value):
        raise UnknownSpecError(f"unknown retriever '{value}'; use one of: {VALUES_HELP}")
