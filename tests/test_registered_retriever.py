"""Any LangChain retriever: `register_retriever`, `Context(retriever=name)`, `py:MODULE:ATTR` on the CLI; and, for
served graphs, which retriever values a remote request may choose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

from hoprag.context import Context
from hoprag.errors import HopragError, UnknownSpecError
from hoprag.graphs import load_method
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.retrievers import make_retriever, register_retriever
from hoprag.retrievers.registry import LangChainRetriever, served_request

from .openai_stub import start_stub

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [("Rush", "Rush is a Canadian rock band."), ("Rush", "Rush released Counterparts in 1993."),
         ("Neil Peart", "Neil Peart was the drummer of Rush."), ("Toronto", "Toronto is in Ontario.")]


def vector_store(texts=TEXTS) -> InMemoryVectorStore:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([LCDocument(page_content=text, metadata={"title": title, "id": f"p{i}"})
                         for i, (title, text) in enumerate(texts)])
    return store


@pytest.fixture(autouse=True)
def _no_server_url(monkeypatch):
    monkeypatch.delenv("HOPRAG_RETRIEVER_URL", raising=False)
    monkeypatch.delenv("HOPRAG_RETRIEVER_URLS", raising=False)
    monkeypatch.delenv("HOPRAG_SERVED", raising=False)


def test_a_vector_store_retriever_answers_through_graph_invoke_for_passages_and_pages():
    register_retriever("lc-store", vector_store().as_retriever())
    # Standard RAG reads passages: every document's page_content reaches the prompt, titles from metadata.
    generator = ScriptedChatModel(["Rush"])
    ctx = Context(llm=register_fake("fake:lc-rag", generator), retriever="lc-store", k=4)
    graph, _ = load_method("rag")
    final = graph.invoke({"question": "Which band released Counterparts?"}, context=ctx)
    assert final["answer"] == "Rush"
    step = final["trajectory"][0]
    assert sorted(step["retrieved_ids"]) == ["p0", "p1", "p2", "p3"]
    assert set(step["retrieved_titles"]) == {"Rush", "Neil Peart", "Toronto"}
    assert "Rush released Counterparts in 1993." in generator.prompts[0]
    # ReNAct reads pages: the store's passages grouped by their metadata title, one note per page.
    reasoner = ScriptedChatModel(["Thought: look\nAction: search[Rush; album]", "Thought: done\nAction: finish[Rush]"])
    notes = ScriptedChatModel(lambda messages: "YES#noted")
    ctx = Context(reasoner_llm=register_fake("fake:lc-reasoner", reasoner), notes_llm=register_fake("fake:lc-notes", notes),
                  generator_llm=register_fake("fake:lc-gen", ScriptedChatModel(["Rush"])), retriever="lc-store", k=3)
    graph, _ = load_method("renact")
    final = graph.invoke({"question": "Which band released Counterparts?"}, context=ctx)
    assert final["answer"] == "Rush"
    titles = final["trajectory"][0]["retrieved_titles"]
    assert sorted(titles) == ["Neil Peart", "Rush", "Toronto"]  # 3 pages from 4 passages
    rush_page = next(p for p in notes.prompts if "# Rush\n" in p)
    assert "Rush is a Canadian rock band." in rush_page and "Rush released Counterparts in 1993." in rush_page


def test_k_reaches_the_retriever_and_a_factory_is_called_once():
    calls = []

    def factory():
        calls.append(1)
        return vector_store().as_retriever()

    register_retriever("lc-factory", factory)
    assert len(make_retriever("demo", "lc-factory", k=2).search("Rush", 2)) == 2  # search_kwargs k set per search
    assert len(make_retriever("demo", "lc-factory", k=4).search("Rush", 4)) == 4
    batched = make_retriever("demo", "lc-factory", k=1).search_many(["Rush", "Toronto"], 1)  # LangChain's batch
    assert [len(found) for found in batched] == [1, 1]
    assert calls == [1]
    with pytest.raises(HopragError, match="returned int, not a retriever"):
        register_retriever("lc-bad", lambda: 3)
        make_retriever("demo", "lc-bad", k=1)


def test_a_document_without_a_title_is_a_clear_error_only_where_pages_are_grouped():
    register_retriever("lc-untitled", vector_store([("", "A passage without a title.")]).as_retriever())
    passages = make_retriever("demo", "lc-untitled", k=1).search("passage", 1)
    assert passages[0].text == "A passage without a title." and passages[0].title == ""
    with pytest.raises(HopragError, match="without a title.*metadata\\['title'\\], or set pages=false"):
        make_retriever("demo", "lc-untitled", k=1, pages=True).search("passage", 1)


def write_module(folder: Path, name: str, body: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(body))


STORE_MODULE = """
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([Document(page_content="Rush released Counterparts.", metadata={"title": "Rush"}),
                         Document(page_content="Neil Peart drummed for Rush.", metadata={"title": "Neil Peart"})])
    retriever = store.as_retriever()
"""


def test_a_py_path_names_a_retriever_in_a_module(tmp_path, monkeypatch):
    write_module(tmp_path, "my_store_module", STORE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    retriever = make_retriever("demo", "py:my_store_module:retriever", k=2)
    assert isinstance(retriever, LangChainRetriever)
    assert {d.title for d in retriever.search("Rush", 2)} == {"Rush", "Neil Peart"}
    with pytest.raises(HopragError, match="cannot import no_such_module .*PYTHONPATH"):
        make_retriever("demo", "py:no_such_module:retriever")
    with pytest.raises(HopragError, match="has no attribute missing"):
        make_retriever("demo", "py:my_store_module:missing")
    with pytest.raises(UnknownSpecError, match="unknown retriever kind 'nonsense'.*py:MODULE:ATTR"):
        make_retriever("demo", "nonsense")


def test_hoprag_eval_on_the_cli_with_a_py_retriever(tmp_path):
    write_module(tmp_path, "cli_store_module", STORE_MODULE)
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "q0", "question": "Which band?", "golden_answers": ["Rush"]}) + "\n")
    stub = start_stub()  # a ReNAct reasoner that searches once, then finishes with Rush
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]), OPENAI_API_KEY="x",
               OPENAI_BASE_URL=f"http://127.0.0.1:{stub.server_port}/v1")
    def hoprag_eval(retriever: str, out: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hoprag.cli", "eval", "--method", "renact", "--dataset",
                               f"jsonl:{questions}", "--retriever", retriever, "--llm", "openai:stub", "--no-llm-cache",
                               "--out", str(tmp_path / out)], capture_output=True, text=True, env=env, timeout=300)

    try:
        result = hoprag_eval("py:cli_store_module:retriever", "run")
        missing = hoprag_eval("py:absent_module:retriever", "run2")
    finally:
        stub.shutdown()
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["questions"] == 1 and summary["em"] == 100.0
    assert summary["config"]["retriever"] == "py:cli_store_module:retriever"
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text())
    assert set(record["trajectory"][0]["retrieved_titles"]) == {"Rush", "Neil Peart"}
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().count("\n") == 0 and "cannot import absent_module" in missing.stderr


# ---------------------------------------------------------------- served graphs


def test_a_served_request_may_not_import_a_module_or_send_to_another_url(tmp_path, monkeypatch):
    marker = tmp_path / "imported"
    write_module(tmp_path, "evil_module", f"""
        open({str(marker)!r}, "w").write("imported")
        retriever = None
    """)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(HopragError, match="refused: a served graph does not import modules"):
        make_retriever("demo", "py:evil_module:retriever", served=True)
    assert not marker.exists() and "evil_module" not in sys.modules
    stub = start_stub()  # any request sent to it would be recorded
    other = f"http://127.0.0.1:{stub.server_port}/retrieve"
    try:
        with pytest.raises(HopragError, match="refused: a served graph sends requests only to the retrieval servers"):
            make_retriever("demo", other, served=True).search("q", 1)
        assert stub.bodies == []
        # The servers it was started with, registered names and the built-in kinds stay open.
        monkeypatch.setenv("HOPRAG_RETRIEVER_URLS", f"http://127.0.0.1:1/retrieve, {other}")
        assert make_retriever("demo", other + "/", served=True).url == other + "/"
        register_retriever("served-store", vector_store().as_retriever())
        assert make_retriever("demo", "served-store", k=1, served=True).search("Rush", 1)
    finally:
        stub.shutdown()


def test_a_run_under_hoprag_serve_is_a_served_request(monkeypatch):
    """`hoprag serve` starts the server with HOPRAG_SERVED=1: graph runs there refuse a py: path; a run started
    by the LangGraph API server is told apart by its config's request markers."""
    assert not served_request()
    generator = ScriptedChatModel(["Rush"])
    ctx = Context(llm=register_fake("fake:served-rag", generator), retriever="py:os:path")
    graph, _ = load_method("rag")
    monkeypatch.setenv("HOPRAG_SERVED", "1")
    with pytest.raises(HopragError, match="refused: a served graph does not import modules"):
        graph.invoke({"question": "Which band?"}, context=ctx)
    monkeypatch.delenv("HOPRAG_SERVED")
    with pytest.raises(HopragError, match="refused"):
        graph.invoke({"question": "Which band?"}, context=ctx,
                     config={"configurable": {"langgraph_request_id": "r1"}})
    with pytest.raises(HopragError, match="os:path.* not a retriever"):  # a library call may import: not refused
        graph.invoke({"question": "Which band?"}, context=ctx)
