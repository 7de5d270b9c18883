"""The Wikipedia API retriever against a real HTTP server on 127.0.0.1 that answers in the MediaWiki API's
response format (search, then parse), its on-disk cache, and the one-line offline failure."""

from __future__ import annotations

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from hoprag.errors import HopragError
from hoprag.retrievers import make_retriever

from .openai_stub import send_json

PAGES = {
    "Rush (band)": (101, "<div class=\"mw-parser-output\"><p><b>Rush</b> was a Canadian rock band formed in "
                         "<a href=\"/wiki/Toronto\">Toronto</a> in 1968.</p><h2>Members</h2><ul><li>Neil Peart</li>"
                         "<li>Geddy Lee</li></ul><style>.x{color:red}</style></div>"),
    "Neil Peart": (102, "<p><b>Neil Peart</b> was inducted into the Modern Drummer Hall of Fame in 1983.</p>"),
}


class MediaWiki(BaseHTTPRequestHandler):
    requests: list[dict[str, list[str]]] = []

    def do_GET(self):  # noqa: N802
        query = parse_qs(urlparse(self.path).query)
        MediaWiki.requests.append(query)
        assert self.headers.get("User-Agent", "").startswith("hoprag/")
        if query["action"] == ["query"]:
            term = query["srsearch"][0].lower()
            hits = [t for t in PAGES if any(w in t.lower() or w in PAGES[t][1].lower() for w in term.split())]
            body = {"batchcomplete": True, "query": {"searchinfo": {"totalhits": len(hits)},
                                                     "search": [{"ns": 0, "title": t, "pageid": PAGES[t][0]} for t in hits][: int(query["srlimit"][0])]}}
        elif query["action"] == ["parse"]:
            title = query["page"][0]
            if title not in PAGES:
                body = {"error": {"code": "missingtitle", "info": "The page you specified doesn't exist."}}
            else:
                body = {"parse": {"title": title, "pageid": PAGES[title][0], "text": PAGES[title][1]}}
        else:
            body = {"error": {"code": "badvalue", "info": "Unrecognized value for parameter action"}}
        send_json(self, body)

    def log_message(self, *args):
        pass


@pytest.fixture
def mediawiki(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), MediaWiki)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/w/api.php"
    monkeypatch.setenv("HOPRAG_WIKIPEDIA_API", url)
    MediaWiki.requests = []
    yield url
    server.shutdown()


def test_whole_pages_as_markdown_and_cached(mediawiki):
    retriever = make_retriever("unused", "wikipedia", k=2)
    pages = retriever.search("rush band", 2)
    assert [p.title for p in pages] == ["Rush (band)"]
    page = pages[0]
    assert page.text.startswith("# Rush (band)\n\n**Rush** was a Canadian rock band formed in Toronto in 1968.")
    assert "## Members" in page.text and "* Neil Peart" in page.text and "color:red" not in page.text
    assert page.id == "wikipedia:101" and page.source == "wikipedia"
    asked = len(MediaWiki.requests)
    assert asked == 2  # one search, one parse
    again = make_retriever("unused", "wikipedia", k=2).search("rush band", 2)
    assert again[0].text == page.text and len(MediaWiki.requests) == asked  # served from the disk cache


def test_methods_read_wikipedia_pages(mediawiki):
    from hoprag.context import Context
    from hoprag.llm import ScriptedChatModel, register_fake
    from hoprag.run import run_question

    replies = iter(["Thought: find the drummer\nAction: search[Neil Peart; Hall of Fame]", "Thought: done\nAction: finish[1983]"])
    notes = ScriptedChatModel(lambda m: "YES#" + str(m[-1].content).split("Context: ")[1].split("\n")[0])
    ctx = Context(retriever="wikipedia", reasoner_llm=register_fake("fake:wiki-r", ScriptedChatModel(lambda m: next(replies))),
                  notes_llm=register_fake("fake:wiki-n", notes), generator_llm=register_fake("fake:wiki-g", ScriptedChatModel(["x"])))
    result = run_question("renact", "When was Neil Peart inducted?", ctx)
    assert result["answer"] == "1983" and "Neil Peart" in result["trajectory"][0]["retrieved_titles"]
    # The note writer read the whole page as Markdown.
    assert any("**Neil Peart** was inducted into the Modern Drummer Hall of Fame in 1983." in p for p in notes.prompts)


def test_offline_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HOPRAG_WIKIPEDIA_API", "http://127.0.0.1:9/w/api.php")  # nothing listens on port 9
    with pytest.raises(HopragError, match="cannot reach the Wikipedia API.*needs network access"):
        make_retriever("unused", "wikipedia", k=2).search("rush", 2)
    env = {"HOPRAG_WIKIPEDIA_API": "http://127.0.0.1:9/w/api.php", "HOPRAG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
           "HOPRAG_LLM": "openai:none"}  # a valid spec never called: the search fails first
    done = subprocess.run([sys.executable, "-m", "hoprag.cli", "ask", "Who?", "--retriever", "wikipedia", "--method", "rag"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot reach the Wikipedia API" in errors[0]
    assert done.stderr.strip().endswith("MediaWiki API mirror")  # the error is the last line, whole
