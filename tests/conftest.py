from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

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


class Passages:
    """A retriever that records its queries and answers k passages named after the query."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list:
        from hoprag.documents import Document

        self.queries.append(query)
        return [Document(id=f"{query}-{i}", title=f"T{i}", text=f"Passage {i} about {query}.") for i in range(k)]


class FreshDocs:
    """Two new passages per query (ids from the search's number), and every query it saw."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list:
        from hoprag.documents import Document

        self.queries.append(query)
        n = len(self.queries)
        return [Document(id=f"s{n}-d{i}", title=f"Page {n}.{i}", text=f"Passage {i} of search {n}.") for i in range(2)]


def scripted_setup(replies, name: str, **options):
    """A Context over a fresh FreshDocs index and one scripted model for every role; returns all three."""
    from hoprag.context import Context
    from hoprag.llm import ScriptedChatModel, register_fake
    from hoprag.nodes.retrieve import register_retriever

    retriever = FreshDocs()
    register_retriever(f"{name}-index", retriever)
    model = ScriptedChatModel(replies)
    return Context(index=f"{name}-index", llm=register_fake(f"fake:{name}", model), **options), retriever, model


def start_and_wait(command: list[str], port: int, env: dict[str, str], seconds: float = 90
                   ) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server process (its command already names `port`) from the repository root and wait for its `/ok`."""
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/ok", timeout=1)
            return process, url
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.5)
    process.kill()
    pytest.fail(f"{' '.join(command[2:4])} did not start within {seconds:.0f} s")


def start_langgraph_dev(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """`langgraph dev` over this repository's langgraph.json on a free port of 127.0.0.1, started and answering."""
    port = free_port()
    return start_and_wait([sys.executable, "-m", "langgraph_cli", "dev", "--config", "langgraph.json", "--no-browser",
                           "--no-reload", "--host", "127.0.0.1", "--port", str(port)], port, env)
