"""A retrieval server as a hoprag retriever: the `/retrieve` protocol FlashRAG and Search-R1 serve.

Request: ``POST {"queries": [...], "topk": k, "return_scores": true}``. Answer: ``{"result": [[{"document": {"id":
..., "contents": "title\\ntext"}, "score": ...}, ...], ...]}``, one ranked list per query; a list item may also be the
document itself (servers that return no scores). Several queries go in one request (`search_many`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

from hoprag.documents import Document
from hoprag.errors import RetrievalServerError
from hoprag.retrievers.base import Retriever

SOURCE = "retrieval-server"
RETRYABLE_STATUS = {408, 429, 500, 502, 503, 504}


def is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


def split_contents(contents: str) -> tuple[str, str]:
    """FlashRAG's `contents` as (title, text): the title is the first line. wiki18's titles are quoted
    (`"Aaron"`); the quotes are dropped so titles compare with the datasets' gold titles."""
    title, _, text = contents.partition("\n")
    title = title.strip()
    if len(title) >= 2 and title[0] == title[-1] == '"':
        title = title[1:-1].strip()
    return title, text.strip()


def _document(item: Any, url: str) -> Document:
    """One result item: {"document": {...}, "score": s} or the document itself."""
    if not isinstance(item, dict):
        raise ValueError(f"a result item is {type(item).__name__}, not an object")
    document = item["document"] if isinstance(item.get("document"), dict) else item
    score = item.get("score")
    if "contents" in document:
        if not isinstance(document["contents"], str):
            raise ValueError("a document's contents is not text")
        title, text = split_contents(document["contents"])
    elif isinstance(document.get("text"), str):  # servers that keep the title apart
        title, text = str(document.get("title") or ""), document["text"]
    else:
        raise ValueError("a document has neither 'contents' nor 'text'")
    doc_id = document.get("id", document.get("doc_id"))
    if doc_id is None:  # ids make trajectories and FuRePA's evidence set comparable; derive one from the text
        doc_id = hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:16]
    extra = {k: v for k, v in document.items() if k not in ("id", "doc_id", "contents", "title", "text")}
    return Document(id=str(doc_id), title=title, text=text, source=SOURCE,
                    score=float(score) if isinstance(score, int | float) else None, metadata=extra)


def parse_answer(data: Any, queries: int, url: str) -> list[list[Document]]:
    """The ranked documents per query of a `/retrieve` answer; RetrievalServerError for anything else."""
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, list) or len(result) != queries or not all(isinstance(r, list) for r in result):
        shown = json.dumps(data)[:120]
        raise RetrievalServerError(
            f"the retrieval server at {url} answered {shown}, not {{\"result\": [...]}} with one list per query "
            f"({queries}); is it a FlashRAG / Search-R1 /retrieve endpoint?")
    try:
        return [[_document(item, url) for item in ranked] for ranked in result]
    except (ValueError, KeyError, TypeError) as error:
        raise RetrievalServerError(f"the retrieval server at {url} answered a result hoprag cannot read ({error}); "
                                   "expected items {\"document\": {\"id\", \"contents\"}, \"score\"}") from error


class HttpRetriever(Retriever):
    """Top-k passages from a retrieval server; transient failures are retried with exponential backoff."""

    url: str
    timeout: float | None = None  # seconds per request; None: $HOPRAG_RETRIEVER_TIMEOUT, else 30
    retries: int = 3  # attempts after the first, for refused connections, timeouts and 5xx/429 answers
    backoff: float = 0.5  # seconds before the first retry; doubled for each next one

    def search(self, query: str, k: int) -> list[Document]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int) -> list[list[Document]]:
        if not queries:
            return []
        if k <= 0:
            return [[] for _ in queries]
        body = json.dumps({"queries": list(queries), "topk": k, "return_scores": True}).encode("utf-8")
        data = self._post(body)
        ranked = parse_answer(data, len(queries), self.url)
        return [documents[:k] for documents in ranked]

    def _post(self, body: bytes) -> Any:
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
        timeout = self.timeout or float(os.environ.get("HOPRAG_RETRIEVER_TIMEOUT") or 30)
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    raw = response.read()
            except urllib.error.HTTPError as error:
                problem = f"HTTP {error.code}"
                if error.code in RETRYABLE_STATUS:
                    continue
                raise RetrievalServerError(f"the retrieval server at {self.url} answered {problem}; check the URL "
                                           "(FlashRAG and Search-R1 serve POST /retrieve)") from error
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as error:
                reason = getattr(error, "reason", error)
                problem = type(reason).__name__ if isinstance(reason, BaseException) else str(reason)
                continue
            try:
                return json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                raise RetrievalServerError(f"the retrieval server at {self.url} answered {raw[:80]!r}, not JSON; "
                                           "is it a FlashRAG / Search-R1 /retrieve endpoint?") from error
        raise RetrievalServerError(f"cannot reach the retrieval server at {self.url} ({problem}, {self.retries + 1} "
                                   "attempts); start it, or give another --retriever / HOPRAG_RETRIEVER_URL")
