"""A minimal OpenAI-compatible chat endpoint on 127.0.0.1 for tests: it plays a ReNAct reasoner that
searches once and then finishes, and a note writer that always finds a note.

It can also answer slowly (`delay`, seconds a request, as a real model would) and misbehave on purpose
(`faults`: a function of the prompt that returns "500", "timeout", "malformed" or None) for the
fault-tolerance and load tests; every request's prompt is kept in `prompts` and its body in `bodies`."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def send_json(handler: BaseHTTPRequestHandler, payload: object) -> None:
    """Answer a test server's request with a JSON body (status 200)."""
    data = json.dumps(payload).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json; charset=utf-8")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class _OpenAIStub(BaseHTTPRequestHandler):
    """A minimal OpenAI-compatible chat endpoint: answers a search first, then finish."""

    replies = ["Thought: search it\nAction: search[Rush; Counterparts]", "Thought: found\nAction: finish[Rush]"]

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = "\n".join(m["content"] for m in body["messages"])
        server = self.server
        with server.lock:
            server.prompts.append(prompt)
            server.bodies.append(body)
        fault = server.faults(prompt) if server.faults else None
        if fault == "500":
            self.send_error(500, "internal error")
            return
        if fault == "timeout":
            time.sleep(server.hang_seconds)
            return
        if fault == "malformed":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"id": "x", "choices": [{"message": ')
            return
        if server.delay:
            time.sleep(server.delay)
        if prompt.startswith("Extract relevant information"):
            content = "YES#Counterparts is a Rush album."
        elif prompt.startswith("Your task is to solve a question answering task"):  # ReaRAG's reasoner
            searched = "Observation 1:" in prompt
            content = ("Thought 2: Rush it is.\nAction 2: {'function': 'finish', 'parameters': {'answer': 'Rush'}}" if searched
                       else "Thought 1: Search.\nAction 1: {'function': 'search', 'parameters': {'query': 'Counterparts band'}}")
        elif prompt.startswith(("If the Question is comparison type", "The Reference Answer is")):  # ReaRAG's answer model
            content = "Rush"
        elif prompt.startswith("You are given problems requiring multi-step searching"):  # FuRePA
            content = "[Search] Counterparts album band" if body["messages"][-1]["content"].startswith("To solve") else "[Analysis] It is Rush.\n[Answer] Rush"
        elif prompt.startswith("Task: Given a question"):  # IRCoT / FLARE
            content = "<s>Counterparts is an album by Rush.</s> <answer>Rush</answer>"
        else:
            content = self.replies[min(prompt.split("Which band")[-1].count("Observation "), 1)]
            numbered = re.findall(r"Which band #(\d+)\?", prompt)
            if numbered:  # the load test's runs each answer their own question, to catch crossed states
                content = content.replace("finish[Rush]", f"finish[Rush #{numbered[-1]}]")
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        if body.get("logprobs"):  # OpenAI's layout: one entry per generated token
            choice["logprobs"] = {"content": [{"token": t, "logprob": -0.01, "bytes": None, "top_logprobs": []}
                                              for t in content.split(" ")]}
        payload = {
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [choice],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
        send_json(self, payload)

    def log_message(self, *args):
        pass


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, delay: float = 0.0, faults: Callable[[str], str | None] | None = None,
                 hang_seconds: float = 3.0) -> None:
        super().__init__(("127.0.0.1", 0), _OpenAIStub)
        self.delay = delay
        self.faults = faults
        self.hang_seconds = hang_seconds
        self.prompts: list[str] = []
        self.bodies: list[dict] = []  # each request's JSON body, for the sampling parameters sent
        self.lock = threading.Lock()


def start_stub(delay: float = 0.0, faults: Callable[[str], str | None] | None = None) -> StubServer:
    server = StubServer(delay, faults)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def openai_stub(monkeypatch):
    server = start_stub()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    yield server
    server.shutdown()


