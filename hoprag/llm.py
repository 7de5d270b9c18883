"""The one provider layer every LLM call goes through.

`chat_model(spec, role, ctx)` turns a spec string into a LangChain chat model; `call_llm` runs a call
with bounded retries, turns transport failures into clear errors, and returns the text together with
a usage record (role, model, tokens in/out, seconds) that the graphs add to their state.

Specs:
- `local:<name>` / `local:<file.gguf>`: llama-cpp-python in process (the embedded default);
- `local-server:<name>`: the same model behind `llama_cpp.server` on 127.0.0.1, driven by ChatOpenAI;
- `openai:<model>`: ChatOpenAI; honours OPENAI_API_KEY and OPENAI_BASE_URL (vLLM, Ollama, ...);
- `fake:<name>`: a scripted model registered with `register_fake` (tests).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseLLM
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from hoprag.context import ROLES, Context
from hoprag.errors import (
    ContextOverflowError,
    EndpointError,
    EndpointUnavailableError,
    HopragError,
    NoLogprobsError,
    NoPlainCompletionError,
    UnknownSpecError,
)
from hoprag.llm_cache import cache_key, chat_role, is_cacheable, response_cache
from hoprag.local_models import DEFAULT_LOCAL_MODEL

DEFAULT_SPEC = f"local:{DEFAULT_LOCAL_MODEL}"
DEFAULT_REMOTE_WINDOW = 32768


def resolve_spec(role: str, ctx: Context) -> str:
    """Role spec, then HOPRAG_<ROLE>_LLM, then the shared spec, then HOPRAG_LLM, then the default."""
    return spec_and_source(role, ctx)[0]


def spec_and_source(role: str, ctx: Context) -> tuple[str, str]:
    """A role's model spec (resolve_spec's) and where it came from: `--ROLE-llm`, `$HOPRAG_ROLE_LLM`, `--llm`,
    `$HOPRAG_LLM` or the default."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role}")
    env = f"HOPRAG_{role.upper()}_LLM"
    for spec, source in ((getattr(ctx, f"{role}_llm", None), f"--{role}-llm"), (os.environ.get(env), f"${env}"),
                         (ctx.llm, "--llm"), (os.environ.get("HOPRAG_LLM"), "$HOPRAG_LLM")):
        if spec:
            return spec, source
    return DEFAULT_SPEC, "the default"


# --------------------------------------------------------------------------- usage records


@dataclass
class LLMCall:
    role: str
    model: str
    input_tokens: int
    output_tokens: int
    seconds: float
    cached: bool = False  # served from the on-disk response cache (tokens are those of the original call)
    # The embedded model only: seconds spent waiting for the process-wide model lock (inside `seconds`),
    # and the wall-clock time the model started on the call.
    queued_seconds: float = 0.0
    compute_started: float | None = None
    # The embedded model only: prompt tokens the model evaluated, the rest reused from the role's KV cache.
    evaluated_tokens: int | None = None
    # The reply's text: kept out of the usage record (state and records carry every call's), and written only
    # beside an invalid output, so a run's invalid replies can be read and not only counted.
    reply: str = field(default="", repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        del record["reply"]
        return record

    def parsed(self, invalid: bool, problem: str = "") -> dict[str, Any]:
        """The record of a call whose output a parser read: `invalid` outputs feed the invalid-output
        rate of `hoprag eval`; `problem` says what the parser found (also for warnings); an invalid
        output keeps its reply."""
        return {**self.to_dict(), "parsed": True, "invalid": invalid, "problem": problem,
                **({"reply": self.reply} if invalid else {})}


def summarize_usage(calls: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per-role totals: calls, input and output tokens, seconds."""
    totals: dict[str, dict[str, float]] = {}
    for call in calls:
        row = totals.setdefault(
            call["role"], {"calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0, "seconds": 0.0}
        )
        if call.get("evaluated_tokens") is not None and not call.get("cached"):
            # The embedded model: prompt tokens it evaluated, of the prompt tokens of the calls that say so.
            row["evaluated_tokens"] = row.get("evaluated_tokens", 0) + call["evaluated_tokens"]
            row["evaluated_of"] = row.get("evaluated_of", 0) + call["input_tokens"]
        if call.get("cached"):
            # Served from the response cache, so no model time: the LLM floor leaves these tokens out.
            row["cached_input_tokens"] = row.get("cached_input_tokens", 0) + call["input_tokens"]
            row["cached_output_tokens"] = row.get("cached_output_tokens", 0) + call["output_tokens"]
        row["calls"] += 1
        row["cached_calls"] += int(bool(call.get("cached")))
        row["input_tokens"] += call["input_tokens"]
        row["output_tokens"] += call["output_tokens"]
        row["seconds"] = round(row["seconds"] + call["seconds"], 3)
        if call.get("queued_seconds"):  # waiting for the embedded model's lock, inside `seconds`
            row["queued_seconds"] = round(row.get("queued_seconds", 0.0) + call["queued_seconds"], 3)
    return totals


# --------------------------------------------------------------------------- scripted fakes

Script = Sequence[str] | Callable[[list[BaseMessage]], str]


class ScriptedChatModel(BaseChatModel):
    """A fake chat model for tests: answers from a list (in order) or a function of the messages.

    It fills `usage_metadata` (whitespace tokens) like a real endpoint, can sleep to simulate latency,
    and keeps every prompt it saw so tests can assert what a node sent.
    """

    script: Any
    delay: float = 0.0
    prompts: list[str] = field(default_factory=list)
    grammars: list[str | None] = field(default_factory=list)  # the grammar each call asked for (None: none)
    _lock: Any = None

    model_config = {"arbitrary_types_allowed": True}

    def __init__(self, script: Script, delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(script=script, delay=delay, prompts=[], grammars=[], **kwargs)
        self._lock = threading.Lock()

    @property
    def _llm_type(self) -> str:
        return "hoprag-scripted"

    def _next(self, messages: list[BaseMessage]) -> str:
        with self._lock:
            self.prompts.append("\n".join(str(m.content) for m in messages))
            if callable(self.script):
                return self.script(messages)
            index = len(self.prompts) - 1
            if index >= len(self.script):
                raise RuntimeError(f"scripted model ran out of responses after {len(self.script)} calls")
            return self.script[index]

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        if self.delay:
            time.sleep(self.delay)
        self.grammars.append(kwargs.get("grammar"))
        reply: Any = self._next(messages)
        metadata: dict[str, Any] = {}
        if isinstance(reply, tuple):  # (text, [(token, probability), ...]): a model that reports logprobs
            reply, tokens = reply
            import math

            # An entry that is already a dict is an OpenAI-style one (with its `top_logprobs`), passed as it is.
            metadata["logprobs"] = {"content": [entry if isinstance(entry, dict) else
                                                {"token": entry[0], "logprob": math.log(max(entry[1], 1e-12))}
                                                for entry in tokens]}
        text = str(reply)
        prompt_tokens = sum(len(str(m.content).split()) for m in messages)
        message = AIMessage(
            content=text,
            response_metadata=metadata,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": len(text.split()),
                "total_tokens": prompt_tokens + len(text.split()),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


_FAKES: dict[str, BaseChatModel] = {}


def register_fake(spec: str, model: BaseChatModel) -> str:
    """Make `spec` (for example 'fake:finish') resolve to `model`; returns the spec."""
    if not spec.startswith("fake:"):
        spec = f"fake:{spec}"
    _FAKES[spec] = model
    return spec


# --------------------------------------------------------------------------- model construction

_MODELS: dict[tuple[Any, ...], Any] = {}  # chat models, and the completion clients of raw-text calls
_MODELS_LOCK = threading.Lock()


def _local_threads() -> int:
    return int(os.environ.get("HOPRAG_THREADS", "0")) or max(1, os.cpu_count() or 1)


def _local_n_ctx() -> int:
    return int(os.environ.get("HOPRAG_N_CTX", "8192"))


def check_model_spec(spec: str) -> None:
    """A model spec's form, checked before a run starts and without loading anything: its kind, a registered fake,
    an embedded model's known name or existing .gguf file."""
    kind, _, name = spec.partition(":")
    if kind == "fake":
        if spec not in _FAKES:
            raise UnknownSpecError(f"unknown fake model '{spec}'; register it with hoprag.llm.register_fake")
        return
    if kind not in ("local", "local-server", "openai") or not name:
        raise UnknownSpecError(
            f"unknown model spec '{spec}'; use local:<name|file.gguf>, local-server:<name>, openai:<model> or fake:<name>"
        )
    if kind in ("local", "local-server"):  # the embedded model, in process or as its own llama.cpp server
        from hoprag.local_models import KNOWN_MODELS

        if name.endswith(".gguf") or "/" in name:
            if not Path(name).expanduser().is_file():
                raise HopragError(f"GGUF file not found: {name}")
        elif name not in KNOWN_MODELS:
            raise UnknownSpecError(f"unknown local model '{name}'; known: {', '.join(KNOWN_MODELS)} or a path to a "
                                   ".gguf file")


def chat_model(spec: str, role: str, ctx: Context, logprobs: bool = False) -> BaseChatModel:
    """A cached chat model for a spec and role. Local roles of one model file share one llama.cpp
    context, each with its own saved KV cache, so alternating roles do not re-read every prompt."""
    kind, _, name = spec.partition(":")
    if kind == "fake":
        check_model_spec(spec)
        return _FAKES[spec]
    # A local model that must report token log-probabilities (FLARE) computes logits for every token,
    # which costs prompt speed: it is an instance (or server) of its own.
    # The seed is not part of the key: every call sends its own, so calls that vary the seed (sampled
    # candidates, retries) share one instance instead of loading the model again.
    # An OpenAI-compatible client is bound to its endpoint and timeout when made: both are part of its key.
    endpoint = (os.environ.get("OPENAI_BASE_URL"), os.environ.get("HOPRAG_TIMEOUT")) if kind == "openai" else None
    # Local roles share one llama.cpp context per model file (hoprag.llama_local.LocalRuntime), which also
    # reports log-probabilities, so only the server needs a logits instance of its own.
    key = (spec, role if kind == "local" else "", logprobs and kind == "local-server", endpoint)
    with _MODELS_LOCK:
        if key in _MODELS:
            return _MODELS[key]
        check_model_spec(spec)  # a model made for the first time: its spec is checked once, before anything loads
        if kind == "local":
            from hoprag.llama_local import ChatLlamaCpp

            model: BaseChatModel = ChatLlamaCpp.load(name, role=role, n_ctx=_local_n_ctx(), n_threads=_local_threads(),
                                                     seed=ctx.seed)
        elif kind == "local-server":
            from hoprag.llama_local import local_server_model

            model = local_server_model(name, n_ctx=_local_n_ctx(), n_threads=_local_threads(), logits_all=logprobs)
        else:
            from langchain_openai import ChatOpenAI

            model = ChatOpenAI(
                model=name,
                api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
                base_url=os.environ.get("OPENAI_BASE_URL") or None,
                stream_usage=True,
                max_retries=0,  # call_llm owns the retry policy
                timeout=float(os.environ.get("HOPRAG_TIMEOUT", "120")),
            )
        _MODELS[key] = model
        return model


def completion_model(spec: str, ctx: Context) -> BaseLLM:
    """A cached plain-text completion client (/v1/completions) for raw-text calls: on the OpenAI-compatible endpoint
    (bound to it and its timeout, as the chat client is), or on the llama.cpp server the spec's chat client runs on."""
    kind, _, name = spec.partition(":")
    endpoint = (os.environ.get("OPENAI_BASE_URL"), os.environ.get("HOPRAG_TIMEOUT")) if kind == "openai" else None
    key = (spec, "completions", False, endpoint)
    if kind == "local-server":
        chat = chat_model(spec, "", ctx)  # starts the server, or finds it started
        name, base_url, api_key = chat.model_name, chat.openai_api_base, "local"  # type: ignore[attr-defined]
    else:
        base_url, api_key = os.environ.get("OPENAI_BASE_URL") or None, os.environ.get("OPENAI_API_KEY") or "not-needed"
    with _MODELS_LOCK:
        if key not in _MODELS:
            from langchain_openai import OpenAI

            _MODELS[key] = OpenAI(model=name, api_key=api_key, base_url=base_url, max_retries=0,
                                  timeout=float(os.environ.get("HOPRAG_TIMEOUT", "120")))
        return _MODELS[key]


def _complete(model: BaseLLM, prompt: str, kwargs: dict[str, Any]) -> AIMessage:
    """One raw-text completion as the message a chat call returns: the text, its token usage and finish reason."""
    result = model.generate([prompt], **kwargs)
    generation = result.generations[0][0]
    usage = (result.llm_output or {}).get("token_usage") or {}
    return AIMessage(content=generation.text, response_metadata=dict(generation.generation_info or {}),
                     usage_metadata={"input_tokens": int(usage.get("prompt_tokens", 0)),
                                     "output_tokens": int(usage.get("completion_tokens", 0)),
                                     "total_tokens": int(usage.get("total_tokens", 0))})


def context_window(spec: str, ctx: Context) -> int:
    if ctx.context_window:
        return ctx.context_window
    if spec.startswith("local"):
        return _local_n_ctx()
    return DEFAULT_REMOTE_WINDOW


def count_tokens(spec: str, role: str, ctx: Context, text: str) -> int:
    """Exact for local models (their own tokenizer); a conservative estimate elsewhere, since
    tiktoken downloads its vocabulary and fails offline."""
    if spec.startswith("local:"):
        model = chat_model(spec, role, ctx)
        return model.count_tokens(text)  # type: ignore[attr-defined]
    return len(text) // 3 + 1


def token_codec(spec: str, role: str, ctx: Context, *, bos: bool = False
                ) -> tuple[Callable[[str], list[Any]], Callable[[list[Any]], str]]:
    """Encode and decode text as the role's model reads it, for cutting a prompt at a token count: a local model's
    own tokenizer (special tokens read as such, none written back; a llama.cpp server's model file loaded as its
    vocabulary alone), with the BOS the model adds counted where `bos` (a Hugging Face tokenizer's `encode`);
    an endpoint's estimated as 4-character pieces, about an English BPE token (an overestimate would cut prompts
    the model's tokenizer leaves whole)."""
    kind, _, name = spec.partition(":")
    if kind in ("local", "local-server"):
        llama = chat_model(spec, role, ctx).client if kind == "local" else _vocabulary(name)  # type: ignore[attr-defined]
        add_bos = bos and bool(llama._model.add_bos_token())
        return (lambda text: llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True),
                lambda tokens: llama.detokenize(tokens, special=False).decode("utf-8", errors="replace"))
    return (lambda text: [text[i:i + 4] for i in range(0, len(text), 4)], "".join)


@functools.lru_cache(maxsize=4)
def _vocabulary(name: str) -> Any:
    """A model file's tokenizer without its weights (llama.cpp's vocab_only)."""
    from llama_cpp import Llama

    from hoprag.local_models import resolve_gguf

    return Llama(model_path=str(resolve_gguf(name)), vocab_only=True, verbose=False)


# --------------------------------------------------------------------------- the call


def _as_messages(prompt: str | Sequence[BaseMessage], system: str | None) -> list[BaseMessage]:
    if isinstance(prompt, str):
        messages: list[BaseMessage] = [HumanMessage(prompt)]
    else:
        messages = list(prompt)
    if system:
        messages.insert(0, SystemMessage(system))
    return messages


def _is_overflow(error: Exception) -> bool:
    text = str(error).lower()
    return "context length" in text or "context window" in text or "exceed context" in text or "maximum context" in text


def draw_seed(seed: int | None, *draw: int) -> int:
    """The seed of one of a call's several draws (FuRePA's candidate plans, a regenerated or resampled step),
    `draw` its indices: the run's seed mixed with them. The run's seed plus the draw's index would give draw i + 1
    of seed s the seed of draw i of seed s + 1, so the runs of `--seeds 3` (seeds s, s + 1, s + 2) would share
    most of their draws and understate the spread over seeds."""
    return seed_of(json.dumps(["draw", seed or 0, *draw]))


def call_seed(seed: int, messages: list[tuple[str, str]]) -> int:
    """The seed a sampled call sends: the run's seed mixed with the call's messages. One fixed seed on every
    call replays the same random draws at each step, which pushes a step whose prompt differs from the last
    only by an observation towards the last step's action. Derived per prompt, sampling stays reproducible
    (same run seed and prompt, same draws) and is independent across steps, as the papers' unseeded API
    sampling is."""
    return seed_of(json.dumps([seed, messages], ensure_ascii=False))


def seed_of(payload: str) -> int:
    """A non-negative 31-bit seed (what llama.cpp and OpenAI endpoints accept) hashed from `payload`."""
    return int.from_bytes(hashlib.sha256(payload.encode("utf-8")).digest()[:4], "big") & 0x7FFFFFFF


def call_llm(
    role: str,
    prompt: str | Sequence[BaseMessage],
    ctx: Context,
    *,
    system: str | None = None,
    stop: list[str] | None = None,
    max_tokens: int | None = None,
    logprobs: bool = False,
    grammar: str | None = None,
    top_logprobs: int = 0,
    continue_reply: bool = False,
    raw_text: bool = False,
    extra_body: dict[str, Any] | None = None,
) -> tuple[str, LLMCall, AIMessage]:
    """Run one LLM call for a role. Returns (text, usage record, raw message).

    `grammar` (GBNF) constrains the output where the backend supports it: the embedded model and a
    llama.cpp server. OpenAI-compatible endpoints get the prompt alone.
    `top_logprobs` > 0: each generated position also reports its that many most likely tokens with their
    log-probabilities (`top_token_logprobs`); an endpoint's `top_logprobs`, the embedded model's full vocabulary.
    `continue_reply`: the prompt's last message is the assistant's reply so far, continued rather than answered
    (the embedded model; vLLM's `continue_final_message`). `raw_text`: the prompt (a string) is sent as plain text,
    without the chat template, and continued (the embedded model's and the llama.cpp server's raw completion, an
    endpoint's /v1/completions), as FlashRAG's vLLM and HF generators send a prompt built with enable_chat=False.
    `extra_body`: endpoint-specific request fields."""
    logprobs = logprobs or top_logprobs > 0
    if ctx.temperature is None or ctx.max_tokens is None:  # a Context used outside a graph: apply its preset
        from hoprag.context import graph_method

        ctx = ctx.resolved(graph_method())
    spec = resolve_spec(role, ctx)
    if raw_text and (logprobs or grammar or continue_reply or system or not isinstance(prompt, str)):
        raise HopragError("a raw-text call takes one plain-text prompt, without log-probabilities, a grammar or a system prompt")
    model = completion_model(spec, ctx) if raw_text and spec.startswith(("openai:", "local-server:")) else \
        chat_model(spec, role, ctx, logprobs=logprobs)
    messages = _as_messages(prompt, system)
    kwargs: dict[str, Any] = {"temperature": ctx.temperature, "max_tokens": max_tokens or ctx.max_tokens}
    sampled = bool(ctx.temperature)
    if ctx.top_p is not None and sampled:
        kwargs["top_p"] = ctx.top_p
    # The papers sampled through APIs that keep the whole distribution; llama.cpp (embedded or its server) truncates
    # to top_k 40 / min_p 0.05 by default. Unset is off, as for every adaptation: `small` turns it on.
    untruncated = sampled and spec.startswith(("local:", "local-server:")) and not ctx.truncated_sampling
    if untruncated:
        kwargs.update(top_k=0, min_p=0.0, top_p=kwargs.get("top_p", 1.0))
    if stop:
        kwargs["stop"] = stop
    if logprobs:
        kwargs["logprobs"] = True
        if spec.startswith(("local-server:", "openai:")):
            kwargs["top_logprobs"] = top_logprobs or 1  # llama_cpp.server returns logprobs only when top_logprobs is set
        elif top_logprobs and spec.startswith("local:"):
            kwargs["top_logprobs"] = top_logprobs
    if continue_reply:
        if spec.startswith("local-server:"):
            raise HopragError(f"{spec} cannot continue a reply (llama_cpp.server has no continue_final_message); use "
                              f"local:{spec.partition(':')[2]} or an OpenAI-compatible endpoint such as vLLM")
        if spec.startswith("local:"):
            kwargs["continue_reply"] = True
        elif spec.startswith("openai:"):
            extra_body = {**(extra_body or {}), "continue_final_message": True, "add_generation_prompt": False}
    if raw_text and spec.startswith("local:"):
        kwargs["raw_text"] = True
    # A raw-text prompt is not a chat: its cache key says so, so a chat call with the same words is not served for it.
    chat = [("text" if raw_text else chat_role(m), str(m.content)) for m in messages]
    seed = call_seed(ctx.seed, chat) if ctx.seed is not None and sampled else ctx.seed
    if spec.startswith(("local", "openai")) and seed is not None:
        kwargs["seed"] = seed
    if spec.startswith("local:") and ctx.reproducible:
        kwargs["reproducible"] = True
    if grammar and spec.startswith(("local:", "fake:")):
        kwargs["grammar"] = grammar
    cache, key = None, ""
    if ctx.llm_cache and is_cacheable(ctx.temperature, ctx.seed):
        cache = response_cache()
        # The sent seed is in the key, so responses sampled under the earlier one-seed-for-every-call scheme are
        # not served for the per-call seeds; greedy calls send the run's seed, as before.
        key = cache_key(spec, chat, {**kwargs, "seed": seed, **({"grammar": grammar} if grammar else {})})
        hit = cache.get(key)
        if hit is not None:
            message = AIMessage(content=hit["text"], response_metadata=hit.get("metadata") or {})
            record = LLMCall(role, spec, hit["input_tokens"], hit["output_tokens"], 0.0, cached=True, reply=hit["text"])
            return hit["text"], record, message
    if spec.startswith("local-server:"):
        # ChatOpenAI sends max_completion_tokens, which llama_cpp.server ignores: it would then generate
        # until the context is full. Send the llama.cpp names directly.
        kwargs["extra_body"] = {"max_tokens": kwargs["max_tokens"], "repeat_penalty": 1.0,
                                **({"grammar": grammar} if grammar else {}),
                                **({"top_k": kwargs.pop("top_k"), "min_p": kwargs.pop("min_p")} if untruncated else {})}
    if extra_body and spec.startswith(("local-server:", "openai:")):
        kwargs["extra_body"] = {**kwargs.get("extra_body", {}), **extra_body}
    if spec.startswith("fake:"):
        kwargs = {**({"stop": stop} if stop else {}), **({"grammar": grammar} if grammar else {})}
    attempts = max(1, ctx.max_retries + 1)
    last_error: Exception | None = None
    for attempt in range(attempts):
        started = time.perf_counter()
        try:
            message = _complete(model, str(prompt), kwargs) if isinstance(model, BaseLLM) else model.invoke(messages, **kwargs)
        except HopragError:
            raise
        except Exception as error:  # transport and server errors: retried, then reported clearly
            if _is_overflow(error):
                raise ContextOverflowError(f"prompt of role {role} exceeds the context window of {spec}") from error
            last_error = error
            if attempt + 1 < attempts:
                time.sleep(min(4.0, 0.5 * 2**attempt))
            continue
        seconds = time.perf_counter() - started
        _ANSWERED.add(_endpoint_key(spec))
        usage = getattr(message, "usage_metadata", None) or {}
        text = message.content if isinstance(message.content, str) else str(message.content)
        record = LLMCall(
            role=role,
            model=spec,
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
            seconds=round(seconds, 4),
            queued_seconds=float(message.response_metadata.get("queued_seconds") or 0.0),
            compute_started=message.response_metadata.get("compute_started"),
            evaluated_tokens=message.response_metadata.get("evaluated_tokens"),
            reply=text,
        )
        # An empty reply has no tokens to score (the 1.5B model sometimes stops at once); only text
        # without log-probabilities means the backend cannot serve FLARE's gate.
        if logprobs and text.strip() and not token_probabilities(message):
            raise NoLogprobsError(
                f"{spec} returned no token log-probabilities for role {role}; FLARE's confidence gate needs them. "
                "Use local:<model> or local-server:<model> (hoprag loads them with logits), or an OpenAI-compatible "
                "endpoint that supports logprobs (vLLM does)")
        if cache is not None:
            metadata = {"logprobs": message.response_metadata["logprobs"]} if message.response_metadata.get("logprobs") else {}
            cache.put(key, {"text": text, "input_tokens": record.input_tokens, "output_tokens": record.output_tokens,
                            "seconds": record.seconds, "metadata": metadata})
        return text, record, message
    raise _describe_failure(spec, role, attempts, last_error, raw_text)


def token_probabilities(message: AIMessage) -> list[tuple[str, float]]:
    """(token, probability) of each generated token, from an OpenAI-style `logprobs` response field."""
    import math

    content = ((message.response_metadata or {}).get("logprobs") or {}).get("content") or []
    return [(str(t.get("token", "")), math.exp(float(t["logprob"]))) for t in content if t.get("logprob") is not None]


def top_token_logprobs(message: AIMessage) -> list[tuple[str, dict[str, float]]]:
    """Per generated position, the generated token and its position's most likely tokens with their
    log-probabilities (the `top_logprobs` of an OpenAI-style `logprobs` field, the generated token included).
    Entries that do not parse are skipped; the same text twice (tokens that decode alike) keeps the larger."""
    import math

    logprobs = (message.response_metadata or {}).get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    positions: list[tuple[str, dict[str, float]]] = []
    for entry in content if isinstance(content, list) else []:
        if not isinstance(entry, dict):
            continue
        alternatives = entry.get("top_logprobs")
        position: dict[str, float] = {}
        for candidate in [*(alternatives if isinstance(alternatives, list) else []), entry]:
            try:
                token, logprob = str(candidate["token"]), float(candidate["logprob"])
            except (KeyError, TypeError, ValueError):
                continue
            if not math.isnan(logprob):
                position[token] = max(min(logprob, 0.0), position.get(token, -math.inf))
        positions.append((str(entry.get("token", "")), position))
    return positions




# The endpoints that have answered in this process: one that stops answering later (a server restarting) fails
# only the questions in flight, as any failing call does; one that never answered stops the run.
_ANSWERED: set[str] = set()


def _endpoint_key(spec: str) -> str:
    return f"{spec}@{os.environ.get('OPENAI_BASE_URL', '')}" if spec.startswith("openai:") else spec


def _describe_failure(spec: str, role: str, attempts: int, error: Exception | None,
                      raw_text: bool = False) -> HopragError:
    name = type(error).__name__ if error else "error"
    if raw_text and name in ("NotFoundError", "BadRequestError"):  # OpenAI's chat models have no /v1/completions
        return NoPlainCompletionError(
            f"the endpoint of {spec} refused a plain-text completion (/v1/completions: {name}), which this call needs; "
            "use an endpoint that serves it (vLLM, llama.cpp) or, for IRCoT, --option ircot_style=flashrag-chat")
    if "Timeout" in name:  # one slow call (a long generation): this question fails, the run goes on
        return EndpointError(f"LLM call for role {role} ({spec}) timed out {attempts} time(s); raise HOPRAG_TIMEOUT "
                             f"(seconds) if the endpoint is slow")
    if "Connection" in name or name == "ConnectError":
        if spec.startswith("local-server:"):
            where, check = "the llama.cpp server hoprag started for it", "see its log; a rerun starts it again"
        else:
            where = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
            check = "check OPENAI_BASE_URL and that the server is running"
        text = f"cannot reach the endpoint of {spec} at {where} after {attempts} attempt(s); {check}"
        # never answered: every question would fail the same way; answered before: this question fails, as any
        # failing call does, and the run goes on (a server restarting)
        return EndpointError(text) if _endpoint_key(spec) in _ANSWERED else EndpointUnavailableError(text)
    if name == "AuthenticationError":
        return EndpointUnavailableError(f"the endpoint of {spec} rejected the API key; set OPENAI_API_KEY")
    if name == "NotFoundError":
        return EndpointUnavailableError(f"the endpoint does not serve model '{spec.partition(':')[2]}'; check the model name")
    return EndpointError(f"LLM call for role {role} ({spec}) failed after {attempts} attempt(s): {name}: {error}")


def auto_preset(ctx: Any) -> tuple[str, str]:
    """`--preset auto`: `small` where a method role runs on an embedded model (`local:...`, the default model
    included), `paper` for every other model; returns the preset and why, e.g. ("small", "embedded model local:x")."""
    from hoprag.context import METHOD_ROLES

    specs = dict.fromkeys(resolve_spec(role, ctx) for role in METHOD_ROLES)
    embedded = [spec for spec in specs if spec.startswith("local:")]
    if embedded:
        return "small", f"embedded model {', '.join(embedded)}"
    return "paper", f"model {', '.join(specs)}, not an embedded one"
