"""A minimal OpenAI-compatible chat (and plain-text completions) endpoint on 127.0.0.1 for tests: it plays a ReNAct reasoner that
searches once and then finishes, and a note writer that always finds a note.

It can also answer slowly (`delay`, seconds a request, as a real model would) and misbehave on purpose
(`faults`: a function of the prompt that returns "500", "404", "timeout", "malformed" or None) for the
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
        completion = "prompt" in body  # /v1/completions: one plain-text prompt, continued
        if completion:
            prompt = body["prompt"] if isinstance(body["prompt"], str) else body["prompt"][0]
        else:
            prompt = "\n".join(m["content"] for m in body["messages"])
        server = self.server
        with server.lock:
            server.prompts.append(prompt)
            server.bodies.append(body)
        fault = server.faults(prompt) if server.faults else None
        if fault == "500":
            self.send_error(500, "internal error")
            return
        if fault == "404":  # as OpenAI answers /v1/completions for a chat model
            self.send_error(404, "This is a chat model and not supported in the v1/completions endpoint")
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
        scripted = server.script(body) if server.script else None  # (content, OpenAI logprobs entries) or None
        tokens = None
        if scripted is not None:
            content, tokens = scripted
        elif prompt.startswith("### Instruction:") or ("Document(Title: " in prompt and body.get("top_logprobs")):
            content, tokens = _self_rag_or_replug(body, prompt)
        elif prompt.startswith("Extract relevant information"):
            content = "YES#Counterparts is a Rush album."
        elif prompt.startswith("Your task is to solve a question answering task"):  # ReaRAG's reasoner
            searched = "Observation 1:" in prompt
            content = ("Thought 2: Rush it is.\nAction 2: {'function': 'finish', 'parameters': {'answer': 'Rush'}}" if searched
                       else "Thought 1: Search.\nAction 1: {'function': 'search', 'parameters': {'query': 'Counterparts band'}}")
        elif prompt.startswith(("If the Question is comparison type", "The Reference Answer is")):  # ReaRAG's answer model
            content = "Rush"
        elif prompt.startswith("You are given problems requiring multi-step searching"):  # FuRePA
            content = "[Search] Counterparts album band" if body["messages"][-1]["content"].startswith("To solve") else "[Analysis] It is Rush.\n[Answer] Rush"
        elif prompt.startswith("You serve as an intelligent assistant"):  # FlashRAG's IRCoT
            content = " So the answer is: Rush"
        elif prompt.startswith("Task: Given a question"):  # IRCoT / FLARE
            content = "<s>Counterparts is an album by Rush.</s> <answer>Rush</answer>"
        else:
            content = self.replies[min(prompt.split("Which band")[-1].count("Observation "), 1)]
            numbered = re.findall(r"Which band #(\d+)\?", prompt)
            if numbered:  # the load test's runs each answer their own question, to catch crossed states
                content = content.replace("finish[Rush]", f"finish[Rush #{numbered[-1]}]")
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        if body.get("logprobs") and tokens is not None:
            choice["logprobs"] = {"content": tokens}
        elif body.get("logprobs"):  # OpenAI's layout: one entry per generated token
            choice["logprobs"] = {"content": [{"token": t, "logprob": -0.01, "bytes": None, "top_logprobs": []}
                                              for t in content.split(" ")]}
        if completion:
            choice = {"index": 0, "text": content, "finish_reason": "stop", "logprobs": None}
        payload = {
            "id": "x", "object": "text_completion" if completion else "chat.completion", "created": 0,
            "model": body["model"], "choices": [choice],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
        send_json(self, payload)

    def log_message(self, *args):
        pass


def token_entry(token: str, logprob: float, top: dict[str, float] | None = None) -> dict:
    """One generated token in OpenAI's logprobs layout, with its position's top log-probabilities."""
    return {"token": token, "logprob": logprob, "bytes": None,
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in (top or {token: logprob}).items()]}


def _self_rag_or_replug(body: dict, prompt: str) -> tuple[str, list[dict]]:
    """A Self-RAG checkpoint's reflection tokens (prompts in its "### Instruction:" layout), or REPLUG's one-token
    steps (a document's prompt, continued with the reply so far): "Rush", then the end (no token)."""
    if not prompt.startswith("### Instruction:"):
        if body["messages"][-1]["role"] == "assistant":
            return "", []
        return "Rush", [token_entry("Rush", -0.1, {"Rush": -0.1, "Yes": -2.5})]
    if prompt.endswith("### Response:\n"):  # the retrieve decision's generation
        return "[Retrieval]<paragraph>", [token_entry("[Retrieval]", -0.2, {"[Retrieval]": -0.2, "[No Retrieval]": -1.8}),
                                          token_entry("<paragraph>", -0.01)]
    if prompt.endswith("[No Retrieval]"):
        return "Rush[Utility:4]", [token_entry("Rush", -0.1), token_entry("[Utility:4]", -0.3)]
    return "[Relevant]Rush[Fully supported][Utility:5]", [
        token_entry("[Relevant]", -0.1, {"[Relevant]": -0.1, "[Irrelevant]": -2.4}), token_entry("Rush", -0.05),
        token_entry("[Fully supported]", -0.2, {"[Fully supported]": -0.2, "[Partially supported]": -1.9,
                                                 "[No support / Contradictory]": -3.0}),
        token_entry("[Utility:5]", -0.3, {f"[Utility:{i}]": -0.3 if i == 5 else -2.0 - i / 10 for i in range(1, 6)})]


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
        # A test's own replies: a function of the request body that returns (content, logprobs entries) or None.
        self.script: Callable[[dict], tuple[str, list[dict]] | None] | None = None
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


