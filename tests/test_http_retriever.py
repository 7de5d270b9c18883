"""Retrieval servers (FlashRAG / Search-R1 `/retrieve`): the protocol, batching, faults, and an eval that resumes
after its server was stopped. The server is a real HTTP server on 127.0.0.1 started by the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import RetrievalServerError
from hoprag.eval.runner import run_eval
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.retrievers import make_retriever
from hoprag.retrievers.http import HttpRetriever
from hoprag.run import run_question

from .conftest import free_port
from .openai_stub import start_stub

# FlashRAG's corpus layout: `contents` is "title\ntext", wiki18's titles quoted; one article split in two passages.
CORPUS = [
    {"id": "0", "contents": '"Rush (band)"\nRush is a Canadian rock band formed in Toronto.'},
    {"id": "1", "contents": '"Rush (band)"\nRush released the album Counterparts in 1993.'},
    {"id": "2", "contents": "Neil Peart\nNeil Peart was the drummer and lyricist of Rush."},
    {"id": "3", "contents": "Toronto\nToronto is the capital of Ontario."},
]


def rank(query: str) -> list[tuple[dict, float]]:
    words = set(query.lower().replace("?", "").split())
    scored = [(doc, float(len(words & set(doc["contents"].lower().replace(".", "").split())))) for doc in CORPUS]
    return sorted(scored, key=lambda pair: -pair[1])


class RetrievalHandler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        server.bodies.append(body)
        mode = server.modes.pop(0) if server.modes else server.mode
        if mode in (500, 503, 404):
            self.send_error(mode, "failing on purpose")
            return
        if mode == "not-json":
            payload = b"<html>Bad Gateway</html>"
        elif mode == "wrong-shape":
            payload = json.dumps({"results": []}).encode()
        else:
            topk = body["topk"]
            result = [[{"document": doc, "score": score} if mode == "ok" else doc for doc, score in rank(q)[:topk]]
                      for q in body["queries"]]
            payload = json.dumps({"result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


class RetrievalServer:
    """A `/retrieve` server on a fixed port that can be stopped and started again, as a real one would be."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/retrieve"
        self.bodies: list[dict] = []
        self.mode: object = "ok"
        self.modes: list[object] = []  # answers for the next requests, before `mode` again
        self.httpd: ThreadingHTTPServer | None = None

    def start(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), RetrievalHandler)
        self.httpd.daemon_threads = True
        self.httpd.bodies, self.httpd.mode, self.httpd.modes = self.bodies, self.mode, self.modes
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def set_mode(self, mode: object) -> None:
        self.mode = mode
        if self.httpd:
            self.httpd.mode = mode

    def stop(self) -> None:
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None


@pytest.fixture
def server(monkeypatch):
    monkeypatch.delenv("HOPRAG_RETRIEVER_URL", raising=False)
    running = RetrievalServer()
    running.start()
    yield running
    running.stop()


def test_several_queries_go_in_one_request_and_read_as_hoprag_documents(server):
    retriever = HttpRetriever(url=server.url)
    ranked = retriever.search_many(["Counterparts album Rush", "Neil Peart drummer"], 2)
    assert server.bodies == [{"queries": ["Counterparts album Rush", "Neil Peart drummer"], "topk": 2,
                              "return_scores": True}]
    first = ranked[0][0]
    assert isinstance(first, Document) and first.id == "1" and first.title == "Rush (band)"  # wiki18 quotes dropped
    assert first.text == "Rush released the album Counterparts in 1993." and first.score == 3.0
    assert [d.title for d in ranked[1]][0] == "Neil Peart" and len(ranked[1]) == 2
    server.set_mode("no-scores")  # servers without scores answer the documents themselves
    plain = retriever.search("Neil Peart drummer", 1)
    assert plain[0].title == "Neil Peart" and plain[0].score is None


def test_transient_failures_are_retried_and_garbage_is_one_clear_error(server):
    retriever = HttpRetriever(url=server.url, backoff=0.01)
    server.modes.extend([503, 500])  # two failures, then an answer: retried with backoff
    assert retriever.search("Toronto Ontario", 1)[0].title == "Toronto" and len(server.bodies) == 3
    server.modes.append(404)  # not a transient failure: no retry
    with pytest.raises(RetrievalServerError, match="answered HTTP 404"):
        retriever.search("Toronto", 1)
    server.set_mode("not-json")
    with pytest.raises(RetrievalServerError, match="not JSON; is it a FlashRAG / Search-R1 /retrieve endpoint"):
        retriever.search("Toronto", 1)
    server.set_mode("wrong-shape")
    with pytest.raises(RetrievalServerError, match="one list per query"):
        retriever.search("Toronto", 1)


def test_a_server_that_is_down_fails_after_bounded_retries():
    retriever = HttpRetriever(url=f"http://127.0.0.1:{free_port()}/retrieve", retries=2, backoff=0.05)
    started = time.perf_counter()
    with pytest.raises(RetrievalServerError, match=r"cannot reach the retrieval server .*3 attempts.*HOPRAG_RETRIEVER_URL"):
        retriever.search("anything", 3)
    assert time.perf_counter() - started < 5


def test_methods_read_server_passages_and_pages_the_same_way(server, monkeypatch):
    # Standard RAG reads passages; its trajectory names the retrieved titles, as for any index.
    generator = ScriptedChatModel(["Rush"])
    ctx = Context(llm=register_fake("fake:http-rag", generator), retriever=server.url, k=2)
    result = run_question("rag", "Which band released Counterparts?", ctx)
    assert result["answer"] == "Rush" and result["trajectory"][0]["retrieved_titles"] == ["Rush (band)", "Rush (band)"]
    assert "Rush released the album Counterparts in 1993." in generator.prompts[0]
    # Pages (ReNAct, ReAct): the server's passages grouped by title, the article's passages in reading order.
    pages = make_retriever("unused", server.url, k=2, pages=True).search("Rush band Counterparts Toronto", 2)
    assert pages[0].title == "Rush (band)" and pages[0].metadata["passage_ids"] == ["0", "1"]
    assert pages[0].text.startswith("# Rush (band)\n\nRush is a Canadian") and len({p.title for p in pages}) == 2
    # HOPRAG_RETRIEVER_URL: `auto` retrieves from the server the process was started with.
    monkeypatch.setenv("HOPRAG_RETRIEVER_URL", server.url)
    assert isinstance(make_retriever("demo", "auto", k=1), HttpRetriever)


def test_an_eval_whose_retrieval_server_stops_ends_with_one_error_and_a_rerun_resumes(server, tmp_path):
    questions = tmp_path / "questions.jsonl"
    asked = ["Who drummed for Rush?", "Where is Toronto?", "Which album in 1993?", "Is Rush Canadian?"]
    questions.write_text("".join(json.dumps({"id": f"q{i}", "question": q, "answers": ["Rush"],
                                             "supporting_titles": ["Rush (band)"]}) + "\n" for i, q in enumerate(asked)))

    def reader(messages):  # answers; question q1 stops the server, so q2 finds it gone
        if "Where is Toronto?" in str(messages[-1].content) and server.httpd is not None:
            server.stop()
        return "Rush"

    ctx = Context(llm=register_fake("fake:http-eval", ScriptedChatModel(reader)), retriever=server.url, k=3,
                  llm_cache=False)
    out = tmp_path / "run"
    with pytest.raises(RetrievalServerError, match="cannot reach the retrieval server.*rerun the same command"):
        run_eval("rag", f"jsonl:{questions}", out, ctx, progress=False)
    kept = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in kept] == ["q0", "q1"] and not any(r["error"] for r in kept)
    assert kept[0]["metrics"]["retrieval_recall"] == 1.0  # recall reads the server's titles as any index's

    server.start()  # back on the same port
    summary = run_eval("rag", f"jsonl:{questions}", out, ctx, progress=False)
    assert summary["questions"] == 4 and summary["failures"] == 0
    assert len((out / "results.jsonl").read_text().splitlines()) == 4  # only q2 and q3 ran again


def test_cli_reports_a_down_retrieval_server_in_one_line():
    stub = start_stub()  # the reasoner searches first: the search meets the stopped server
    try:
        url = f"http://127.0.0.1:{free_port()}/retrieve"
        result = subprocess.run(
            [sys.executable, "-m", "hoprag.cli", "ask", "Which band?", "--retriever", url, "--llm", "openai:stub"],
            capture_output=True, text=True, timeout=300,
            env=dict(os.environ, OPENAI_BASE_URL=f"http://127.0.0.1:{stub.server_port}/v1", OPENAI_API_KEY="x",
                     HOPRAG_RETRIEVER_TIMEOUT="1"))
    finally:
        stub.shutdown()
    assert result.returncode == 1 and "Traceback" not in result.stderr + result.stdout
    last = result.stderr.strip().splitlines()[-1]  # the live trace comes first, then the error's one line
    assert last.startswith("error: cannot reach the retrieval server") and "HOPRAG_RETRIEVER_URL" in last


def test_furepa_scores_its_candidate_queries_with_one_server_request(server):
    from types import SimpleNamespace

    from hoprag.nodes.furepa import assess

    ctx = Context(retriever=server.url, furepa_plan_assessor=True, furepa_eps=2.0, furepa_theta=0.6)
    candidates = [{"kind": "search", "value": q, "analysis": "", "problem": ""}
                  for q in ("Rush album Counterparts", "Neil Peart drummer", "Toronto Ontario capital")]
    best = assess({"question": "Which band?", "iteration": 0, "candidates": candidates, "executed": []},
                  SimpleNamespace(context=ctx))["best"]
    assert best["decision"] == "search" and len(best["scores"]) == 3
    assert len(server.bodies) == 1 and len(server.bodies[0]["queries"]) == 3
