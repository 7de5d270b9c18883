"""The embedded runtime: llama-cpp-python in process, or `llama_cpp.server` on 127.0.0.1.

In process is the default (see BENCHMARKS.md): it returns usage and logprobs directly from
`create_chat_completion`, needs no port or child process, and gives each role its own KV cache.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from hoprag.errors import HopragError
from hoprag.llm import chat_role
from hoprag.local_models import resolve_gguf

# One generation at a time across all local instances: two llama.cpp calls sharing 2 cores are far
# slower together than one after the other (generation collapses to a few tokens/s).
_COMPUTE_LOCK = threading.Lock()


class ChatLlamaCpp(BaseChatModel):
    """A LangChain chat model over an in-process `llama_cpp.Llama`."""

    client: Any = None
    model_path: str = ""
    seed: int | None = 0
    logits_all: bool = False  # loaded with logits for every token: it can report log-probabilities

    model_config = {"arbitrary_types_allowed": True}

    @classmethod
    def load(cls, name: str, *, n_ctx: int, n_threads: int, seed: int | None, logits_all: bool = False) -> ChatLlamaCpp:
        try:
            from llama_cpp import LLAMA_DEFAULT_SEED, Llama
        except ImportError as error:
            raise HopragError(
                "the embedded runtime is not installed; run: pip install -e '.[local]' (llama-cpp-python)"
            ) from error
        path = resolve_gguf(name)
        try:
            client = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_batch=512,
                seed=LLAMA_DEFAULT_SEED if seed is None else seed,
                logits_all=logits_all,  # every token's logits: FLARE's log-probabilities, at a prompt-speed cost
                verbose=False,
            )
        except Exception as error:  # llama.cpp reports a corrupt file as a bare ValueError
            raise HopragError(f"llama.cpp could not load {path.name}: {error}") from error
        return cls(client=client, model_path=str(path), seed=seed, logits_all=logits_all)

    @property
    def _llm_type(self) -> str:
        return "hoprag-llama-cpp"

    def count_tokens(self, text: str) -> int:
        return len(self.client.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        want_logprobs = bool(kwargs.pop("logprobs", False))
        if want_logprobs and not self.logits_all:
            raise HopragError("this llama.cpp instance was loaded without logits_all; ask hoprag.llm.chat_model for "
                              "one with logprobs=True")
        asked = time.time()
        with _COMPUTE_LOCK:
            started = time.time()
            result = self.client.create_chat_completion(
                messages=[{"role": chat_role(m), "content": str(m.content)} for m in messages],
                stop=stop or [],
                max_tokens=kwargs.get("max_tokens", 256),
                temperature=kwargs.get("temperature", 0.0),
                seed=kwargs.get("seed", self.seed),
                repeat_penalty=1.0,
                logprobs=want_logprobs or None,
                top_logprobs=5 if want_logprobs else None,
            )
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        # When the model started on this call and how long the call queued behind others' calls (runs that
        # share the process, e.g. concurrent server runs), so usage records separate waiting from compute.
        metadata: dict[str, Any] = {"finish_reason": choice.get("finish_reason"), "model_name": self.model_path,
                                    "compute_started": started, "queued_seconds": round(started - asked, 4)}
        if want_logprobs and choice.get("logprobs"):
            metadata["logprobs"] = {
                "content": [
                    {"token": t["token"], "logprob": float(t["logprob"])} for t in choice["logprobs"]["content"]
                ]
            }
        message = AIMessage(
            content=choice["message"]["content"] or "",
            usage_metadata={
                "input_tokens": int(usage.get("prompt_tokens", 0)),
                "output_tokens": int(usage.get("completion_tokens", 0)),
                "total_tokens": int(usage.get("total_tokens", 0)),
            },
            response_metadata=metadata,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """Linux: the server gets SIGTERM when hoprag dies, even by SIGKILL (atexit would not run)."""
    with contextlib.suppress(Exception):
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def local_server_model(name: str, *, n_ctx: int, n_threads: int, logits_all: bool = False) -> BaseChatModel:
    """Start `llama_cpp.server` for the model on a free loopback port and return a ChatOpenAI on it."""
    from langchain_openai import ChatOpenAI

    path = resolve_gguf(name)
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(n_threads),
         # logits for every prompt token cost several times the prompt time; only FLARE needs them.
         "--logits_all", "true" if logits_all or os.environ.get("HOPRAG_LOGITS_ALL") else "false"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )
    atexit.register(lambda: (process.terminate(), process.wait(10)))
    deadline = time.time() + 120
    while time.time() < deadline:
        if process.poll() is not None:
            raise HopragError(f"llama_cpp.server exited with code {process.returncode} while loading {path.name}")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1)
            break
        time.sleep(0.5)
    else:
        process.terminate()
        raise HopragError("llama_cpp.server did not start within 120 s")
    return ChatOpenAI(
        model=path.name,
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key="local",
        stream_usage=True,
        max_retries=0,
        extra_body={"repeat_penalty": 1.0},
    )
