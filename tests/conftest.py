from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own HOPRAG_HOME, so nothing touches the user's indexes or caches."""
    monkeypatch.setenv("HOPRAG_HOME", str(tmp_path / "hoprag-home"))
    monkeypatch.delenv("HOPRAG_LLM", raising=False)
    yield


from .openai_stub import openai_stub  # noqa: E402, F401  (fixture shared by test modules)
