from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# The evaluation data lives in ../shared/data beside the checkout (CI has it; a user's fresh clone does not): tests
# that read it skip, saying why, instead of failing.
needs_shared_data = pytest.mark.skipif(not SHARED_DATA.is_dir(),
                                       reason="../shared/data (the evaluation data) is not beside the checkout")
SHARED_PAPERS = Path(__file__).resolve().parents[2] / "shared" / "papers"
# The seed papers as text (../shared/papers): the transcription tests of hoprag/reproduce/tables read them.
needs_shared_papers = pytest.mark.skipif(not SHARED_PAPERS.is_dir(),
                                         reason="../shared/papers (the seed papers as text) is not beside the checkout")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own HOPRAG_HOME, so nothing touches the user's indexes or caches."""
    monkeypatch.setenv("HOPRAG_HOME", str(tmp_path / "hoprag-home"))
    monkeypatch.delenv("HOPRAG_LLM", raising=False)
    monkeypatch.delenv("HOPRAG_CHROMA_URL", raising=False)
    yield


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on, for the servers the tests start."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fake_roles(prefix: str, models: dict) -> dict[str, str]:
    """Register one scripted model per role; the Context options that select them ({role}_llm)."""
    from hoprag.llm import register_fake

    return {f"{role}_llm": register_fake(f"fake:{prefix}-{role}", model) for role, model in models.items()}


from .openai_stub import openai_stub  # noqa: E402, F401  (fixture shared by test modules)
