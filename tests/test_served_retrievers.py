"""A served graph (`langgraph dev`, as `hoprag serve` starts it) retrieves from the server it was started with, and
refuses a request's `py:` path (no module imported) or other URL (no request sent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import start_langgraph_dev
from .openai_stub import start_stub
from .test_http_retriever import RetrievalServer

ROOT = Path(__file__).resolve().parents[1]


def test_a_served_graph_takes_only_the_retrievers_it_was_started_with(tmp_path):
    pytest.importorskip("langgraph_api")
    from langgraph_sdk import get_sync_client

    marker = tmp_path / "imported"
    (tmp_path / "evil_served_module.py").write_text(f"open({str(marker)!r}, 'w').write('x')\nretriever = None\n")
    retrieval, other = RetrievalServer(), RetrievalServer()
    retrieval.start()
    other.start()
    stub = start_stub()
    env = dict(os.environ, OPENAI_BASE_URL=f"http://127.0.0.1:{stub.server_port}/v1", OPENAI_API_KEY="x",
               LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false",
               HOPRAG_RETRIEVER_URL=retrieval.url, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    process, url = start_langgraph_dev(env)
    try:
        client = get_sync_client(url=url)
        context = {"llm": "openai:stub", "max_steps": 4}
        # The server's own retrieval server: `auto` and its URL both answer.
        for retriever in ("auto", retrieval.url):
            result = client.runs.wait(None, "renact", input={"question": "Which band?"},
                                      context={**context, "retriever": retriever})
            assert result["answer"] == "Rush", (retriever, result)
        asked = len(retrieval.bodies)
        assert asked >= 2
        # A py: path and another URL are refused (the server shows a client the error's type, not its message):
        # no module imported, no request sent.
        for retriever in ("py:evil_served_module:retriever", other.url):
            result = client.runs.wait(None, "renact", input={"question": "Which band?"},
                                      context={**context, "retriever": retriever}, raise_error=False)
            assert result["__error__"]["error"] == "HopragError", result
        assert not marker.exists() and other.bodies == []
    finally:
        process.terminate()
        process.wait(20)
        stub.shutdown()
        retrieval.stop()
        other.stop()
