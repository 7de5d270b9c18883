"""Indexes kept in a real Chroma server (`chroma run` on 127.0.0.1): build, query from another process,
resume a build killed with SIGKILL, and an eval whose server goes away."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import ChromaServerError, HopragError
from hoprag.eval.runner import run_eval
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.retrievers.embedders import register_embedder
from hoprag.retrievers.index import build_index, chroma_client, index_info, list_indexes, open_index

from .conftest import SHARED_DATA, free_port, needs_shared_data
from .test_retrievers import HashEmbedder, to_jsonl

TWOWIKI = SHARED_DATA / "2wikimultihopqa" / "2wiki_dev_82.json"
HOPRAG = [sys.executable, "-m", "hoprag.cli"]




class ChromaServer:
    """`chroma run` (the server shipped with the chromadb package) in a subprocess."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        chroma = Path(sys.executable).parent / "chroma"
        self.process = subprocess.Popen([str(chroma), "run", "--path", str(self.path), "--host", "127.0.0.1",
                                         "--port", str(self.port)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env=dict(os.environ, ANONYMIZED_TELEMETRY="False"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("chroma run did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@pytest.fixture
def chroma_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    server = ChromaServer(tmp_path / "chroma-server")
    server.start()
    monkeypatch.setenv("HOPRAG_CHROMA_URL", server.url)
    chroma_client.cache_clear()  # a client per test: each server lives on its own port
    yield server
    server.stop()
    chroma_client.cache_clear()


def twowiki_corpus(tmp_path: Path, n: int) -> tuple[Path, list[Document]]:
    from hoprag.retrievers.sources import iter_source

    docs = []
    for doc in iter_source(f"2wiki:{TWOWIKI}"):
        docs.append(doc)
        if len(docs) == n:
            break
    return to_jsonl(tmp_path / "corpus.jsonl", docs), docs


@needs_shared_data
def test_build_on_the_server_is_killed_resumed_and_queried_from_another_process(tmp_path, chroma_server):
    corpus, docs = twowiki_corpus(tmp_path, 400)
    env = dict(os.environ, HOPRAG_CHROMA_URL=chroma_server.url)
    build = [*HOPRAG, "index", "build", "wiki2", "--source", f"jsonl:{corpus}", "--embedder", "minilm",
             "--batch-size", "8"]
    first = subprocess.Popen(build, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = chroma_client(chroma_server.url)
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and first.poll() is None:
        try:
            stored = client.get_collection("hoprag-wiki2").count()
        except Exception:  # not created yet
            stored = 0
        if stored >= 40:
            break
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    assert 0 < stored < len(docs), "the build must be killed midway"
    # Killed: the server holds the build record, not a manifest; opening it says how to resume.
    assert [i["name"] for i in list_indexes()] == []
    with pytest.raises(HopragError, match="incomplete.*hoprag index build wiki2"):
        open_index("wiki2")

    done = subprocess.run(build, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    ids = client.get_collection("hoprag-wiki2").get(include=[])["ids"]
    assert len(ids) == len(set(ids)) == len({d.id for d in docs})  # every passage exactly once
    info = index_info("wiki2")
    assert info["count"] == len(ids) and info["embedder"] == "minilm" and info["chroma_url"] == chroma_server.url
    assert 0 < info["last_build"]["added"] < len(ids)  # the rerun embedded only what the kill had left

    # A second process with its own HOPRAG_HOME (nothing local): it finds the index by name on the server.
    target = docs[123]
    query = ("import json, sys\n"
             "from hoprag.retrievers.retrievers import make_retriever\n"
             "print(json.dumps({kind: [d.title for d in make_retriever('wiki2', kind, k=5).search(sys.argv[1], 5)]"
             " for kind in ('dense', 'bm25', 'hybrid')}))")
    other = subprocess.run([sys.executable, "-c", query, target.text[:200]], capture_output=True, text=True,
                           timeout=300, env=dict(env, HOPRAG_HOME=str(tmp_path / "elsewhere")))
    assert other.returncode == 0, other.stderr
    found = json.loads(other.stdout.strip().splitlines()[-1])
    assert all(target.title in titles for titles in found.values()), found


@needs_shared_data
def test_cli_lists_the_server_indexes_and_reports_an_unreachable_server(tmp_path, chroma_server):
    hasher = HashEmbedder("test-hash-server")
    register_embedder(hasher)
    corpus, _ = twowiki_corpus(tmp_path, 30)
    build_index("listed", f"jsonl:{corpus}", embedder=hasher.name, progress=False)
    shown = subprocess.run([*HOPRAG, "index", "list", "--chroma-url", chroma_server.url], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, COLUMNS="200"))
    assert shown.returncode == 0 and "listed" in shown.stdout and "30" in shown.stdout
    # Nothing listens on a fresh port: one line that says what to do, no traceback.
    down = subprocess.run([*HOPRAG, "index", "list", "--chroma-url", f"http://127.0.0.1:{free_port()}"],
                          capture_output=True, text=True, timeout=120)
    assert down.returncode != 0 and "Traceback" not in down.stderr
    assert down.stderr.strip().count("\n") == 0 and "cannot reach the Chroma server" in down.stderr
    assert "chroma run" in down.stderr
    with pytest.raises(HopragError, match="needs dense vectors"):
        build_index("lexical", f"jsonl:{corpus}", embedder="none", progress=False)


@needs_shared_data
def test_an_eval_whose_chroma_server_goes_away_stops_with_one_error_and_resumes(tmp_path, chroma_server):
    hasher = HashEmbedder("test-hash-eval")
    register_embedder(hasher)
    corpus, docs = twowiki_corpus(tmp_path, 60)
    build_index("evalidx", f"jsonl:{corpus}", embedder=hasher.name, progress=False)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Who is {docs[i].title}?",
                                               "answers": [docs[i].title]}) for i in range(4)))

    def reader(messages):  # standard RAG's generator: the first retrieved title; question 2 kills the server
        prompt = str(messages[-1].content)
        if f"Who is {docs[2].title}?" in prompt and chroma_server.process.poll() is None:
            chroma_server.stop()
        return prompt.split("(Title: ")[1].split(")")[0] if "(Title: " in prompt else "unknown"

    spec = register_fake("fake:chroma-eval", ScriptedChatModel(reader))
    ctx = Context(llm=spec, index="evalidx", retriever="dense", llm_cache=False)
    out = tmp_path / "run"
    with pytest.raises(ChromaServerError, match="cannot reach the Chroma server.*rerun the same command"):
        # Question 3 needs the index after the server went away: the run stops instead of failing it.
        run_eval("rag", f"jsonl:{questions}", out, ctx, progress=False)
    kept = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in kept] == ["q0", "q1", "q2"] and not any(r["error"] for r in kept)

    chroma_server.start()  # back on the same port and data folder
    chroma_client.cache_clear()
    summary = run_eval("rag", f"jsonl:{questions}", out, ctx, progress=False)
    assert summary["questions"] == 4 and summary["failures"] == 0
    assert len((out / "results.jsonl").read_text().splitlines()) == 4  # only q3 ran again
