"""On-disk cache of LLM responses, keyed by model spec, messages and sampling parameters.

An evaluation rerun (a new output folder, a resumed question, another metric) then costs no model
time. SQLite in WAL mode, so concurrent questions and processes can share one file; a write is one
committed row, so a kill loses at most the call in flight.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from hoprag.errors import HopragError
from hoprag.paths import cache_dir


def cache_key(spec: str, messages: list[tuple[str, str]], params: dict[str, Any]) -> str:
    payload = json.dumps({"spec": spec, "messages": messages, "params": params}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def is_cacheable(temperature: float, seed: int | None) -> bool:
    """Greedy responses are deterministic; sampled ones only repeat under a fixed seed."""
    return temperature == 0 or seed is not None


class ResponseCache:
    """`get(key)` / `put(key, entry)` over one SQLite table; safe across threads and processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, entry TEXT NOT NULL)")
            self._db.commit()
        except sqlite3.DatabaseError as error:
            raise HopragError(f"the LLM response cache {path} is unreadable ({error}); delete it to start afresh") from error
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT entry FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses (key, entry) VALUES (?, ?)", (key, json.dumps(entry)))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


_CACHES: dict[Path, ResponseCache] = {}
_CACHES_LOCK = threading.Lock()


def response_cache() -> ResponseCache:
    """The cache file named by HOPRAG_LLM_CACHE (for example a fresh one per benchmark run, so no run
    is served calls that another made), else the one of the current HOPRAG_HOME."""
    override = os.environ.get("HOPRAG_LLM_CACHE")
    path = Path(override).expanduser().resolve() if override else cache_dir() / "llm_responses.sqlite"
    with _CACHES_LOCK:
        if path not in _CACHES:
            _CACHES[path] = ResponseCache(path)
        return _CACHES[path]


def chat_role(message: Any) -> str:
    """The OpenAI-style role of a LangChain message (system, user, assistant): the in-process model and the cache key
    both read messages this way."""
    return {"system": "system", "human": "user", "ai": "assistant"}.get(message.type, message.type)
