"""What the two kinds of index share, so neither module imports the other's: the rule for index names, the folder
an index lives in, the manifest's timestamps, and how a read-only faiss index (`hoprag index add`) is found by its
manifest. hoprag.retrievers.index (Chroma + BM25 indexes, and `open_index` for both kinds) and
hoprag.retrievers.faiss_index (the faiss kind) both import it; it imports neither."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hoprag.errors import HopragError
from hoprag.jsonfile import read_json
from hoprag.paths import indexes_dir

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
FAISS_KIND = "faiss"  # a faiss index's manifest has "kind": "faiss"


def now() -> str:
    """A manifest's `created` / `updated` time: UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def index_folder(name: str) -> Path:
    """The local folder of the index `name`; an invalid name is refused."""
    if not NAME_RE.match(name):
        raise HopragError(f"invalid index name '{name}': use letters, digits, '.', '_' and '-'")
    return indexes_dir() / name


def faiss_manifest(name: str) -> dict[str, Any] | None:
    """The manifest of the faiss index `name`, or None when `name` is no faiss index (always local files,
    also when the Chroma indexes live on a server)."""
    try:
        manifest = read_json(index_folder(name) / "manifest.json")
    except HopragError:
        return None
    return manifest if manifest and manifest.get("kind") == FAISS_KIND else None


def list_faiss_manifests() -> list[dict[str, Any]]:
    found = [read_json(p) for p in sorted(indexes_dir().glob("*/manifest.json"))]
    return [m for m in found if m and m.get("kind") == FAISS_KIND]
