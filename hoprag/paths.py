"""Where hoprag keeps indexes, model files and caches.

`HOPRAG_HOME` overrides everything (tests point it at a temporary folder); otherwise the platform's
user data and cache folders are used, so nothing is written into the project checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir, user_data_dir


def home() -> Path | None:
    value = os.environ.get("HOPRAG_HOME")
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    base = home()
    path = base / "data" if base else Path(user_data_dir("hoprag"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    base = home()
    path = base / "cache" if base else Path(user_cache_dir("hoprag"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    """Model weights are shared across HOPRAG_HOME sandboxes unless HOPRAG_MODELS says otherwise:
    they are large, content-addressed by sha256 and never change."""
    value = os.environ.get("HOPRAG_MODELS")
    path = Path(value).expanduser() if value else Path(user_cache_dir("hoprag")) / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def indexes_dir() -> Path:
    path = data_dir() / "indexes"
    path.mkdir(parents=True, exist_ok=True)
    return path
