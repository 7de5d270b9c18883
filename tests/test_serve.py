"""The graphs served by `langgraph dev`, called through langgraph-sdk as Studio would."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import start_langgraph_dev
from .openai_stub import start_stub

ROOT = Path(__file__).resolve().parents[1]




@pytest.fixture
def served(tmp_path):
    pytest.importorskip("langgraph_api")
    from hoprag.retrievers.index import build_index

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in [
        {"id": "1", "title": "Rush", "text": "Rush is a Canadian rock band. Counterparts is its album."},
        {"id": "2", "title": "Neil Peart", "text": "Neil Peart was the drummer of Rush."},
    ]))
    build_index("served", f"jsonl:{corpus}")
    stub = start_stub()
    env = dict(os.environ, OPENAI_BASE_URL=f"http://127.0.0.1:{stub.server_port}/v1", OPENAI_API_KEY="x",
               LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false")
    process, url = start_langgraph_dev(env)
    yield url
    process.terminate()
    process.wait(20)
    stub.shutdown()


def test_served_graphs_answer_through_the_sdk(served):
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=served)
    assistants = {a["graph_id"]: a for a in client.assistants.search(limit=100)}
    assert {"renact", "react", "react-bm25", "resp", "rag", "cot", "rearag", "furepa", "ircot", "ircot-notes", "flare", "flare-notes"} <= set(assistants)
    schemas = client.assistants.get_schemas(assistants["renact"]["assistant_id"])
    context_fields = schemas["context_schema"]["properties"]
    assert "description" in context_fields["notes_llm"] and "description" in context_fields["k"]
    context = {"llm": "openai:stub", "index": "served", "retriever": "bm25", "max_steps": 4}
    result = client.runs.wait(None, "renact", input={"question": "Which band?"}, context=context)
    assert result["answer"] == "Rush"
    for method in ("rearag", "furepa", "ircot", "ircot-notes", "flare", "flare-notes"):  # FLARE's logprobs come through the stub
        result = client.runs.wait(None, method, input={"question": "Which band?"}, context=context)
        assert result["answer"] == "Rush", method
    # Every exported graph answers through the server, the baselines included (RECOMP's `paper` needs its T5
    # checkpoint, so its LLM stand-in runs; Self-RAG's reflection tokens come from the stub).
    exported = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert set(exported) <= set(assistants)
    for method in exported:
        extra = {"recomp_compressor": "llm"} if method == "recomp" else {}
        result = client.runs.wait(None, method, input={"question": "Which band?"}, context={**context, **extra})
        assert isinstance(result, dict) and isinstance(result.get("answer"), str), (method, result)
    def streamed_nodes(run_context):
        nodes = []
        for part in client.runs.stream(None, "renact", input={"question": "Which band?"}, context=run_context,
                                       stream_mode="updates"):
            if part.event == "updates":
                nodes.extend(part.data)
        return nodes

    # The preset travels with the context: small adds the concise-answer pass, paper ends at finish.
    nodes = streamed_nodes({**context, "preset": "small"})
    assert nodes[:2] == ["reason", "retrieve"] and "write_note" in nodes and nodes[-1] == "concise_answer"
    assert "concise_answer" not in streamed_nodes(context)
