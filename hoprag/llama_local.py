"""The embedded runtime: llama-cpp-python in process, or `llama_cpp.server` on 127.0.0.1.

In process is the default: it returns usage and logprobs directly, needs no port
or child process, and keeps one KV cache per role on one shared context, and a few saved KV states to
resume prompts that alternate (`LocalRuntime`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from hoprag.errors import HopragError
from hoprag.llm_cache import chat_role
from hoprag.local_models import resolve_gguf
from hoprag.memory import release_freed_memory

# One generation at a time across all local instances: two llama.cpp calls sharing 2 cores are far
# slower together than one after the other (generation collapses to a few tokens/s).
_COMPUTE_LOCK = threading.Lock()


FULL_BATCH = 512  # tokens per llama.cpp batch by default
# Tokens per batch in reproducible runs, the unit of KV reuse there: at 512 the note writer's ~300-token
# static prefix was never reused; smaller batches cost some prompt speed.
REPRODUCIBLE_BLOCK = 64


def _llama_class() -> type:
    """`llama_cpp.Llama` with what the embedded runtime adds (defined on first use: the import is optional)."""
    try:
        import llama_cpp
        import numpy as np
        from llama_cpp import Llama
        from llama_cpp._internals import LlamaTokenDataArray
    except ImportError as error:
        raise HopragError(
            "the embedded runtime is not installed; run: pip install -e '.[local]' (llama-cpp-python)"
        ) from error

    class HopragLlama(Llama):  # type: ignore[misc]
        """Four additions to llama.cpp's generation loop:

        - `block_aligned`: evaluate prompts in `REPRODUCIBLE_BLOCK`-token batches aligned to their start,
          and reuse the KV cache only in whole blocks that were evaluated as one aligned batch. llama.cpp's
          arithmetic for a token depends on the batch it was evaluated in, so this makes a prompt's output
          independent of what ran before it (reproducible runs).
        - `token_logprobs`: when a list, each sampled token's log-probability under the model is appended
          to it, read from the logits of the last position. No `logits_all` (a score row for every prompt
          token), which made FLARE's calls several times slower.
        - `prompt_start`: how many prompt tokens the last call reused from the KV cache.
        - `before_prompt`: called with a prompt's tokens before its KV-cache prefix is matched (the runtime's
          saved states, `LocalRuntime.resume_longest_prefix`); `save_sequence` and `load_sequence` copy the
          cache to and from host memory.
        - a `grammar` is checked, not applied to every candidate: llama-cpp-python runs the grammar over the
          whole vocabulary (151k tokens for Qwen) before each token, which made a constrained ReAct turn of the
          1.5B model 5x slower (1.4 s a token more). As llama.cpp's own common sampler does, the token is sampled
          without the grammar and only a token the grammar rejects is sampled again from the candidates it allows.
        """

        block_aligned = False
        aligned_until = 0  # every n_batch block below this was evaluated as one aligned batch
        token_logprobs: list[tuple[int, float]] | None = None
        # REPLUG and Self-RAG: when > 0, each sampled position's this many most likely tokens (of the whole
        # vocabulary) and their log-probabilities are appended to `token_top_logprobs`.
        top_k_logprobs = 0
        token_top_logprobs: list[list[tuple[int, float]]] | None = None
        prompt_start: int | None = None
        grammar_check: Any = None  # the native grammar sampler of the generation in progress
        before_prompt: Any = None  # Callable[[list[int]], None]: set by the runtime that owns this model

        def generate(self, tokens: Any, **kwargs: Any) -> Any:
            grammar = kwargs.pop("grammar", None)
            tokens = list(tokens)
            self.prompt_start = None
            block = REPRODUCIBLE_BLOCK if self.block_aligned else FULL_BATCH
            if block != self.n_batch:  # blocks of another size were never evaluated as this size's batches
                self.n_batch = block
                self.aligned_until = 0
            if self.before_prompt is not None:
                self.before_prompt(tokens)
            if self.block_aligned and self.n_tokens:
                shared = min(self.n_tokens, len(tokens))
                differ = np.flatnonzero(self._input_ids[:shared] != np.asarray(tokens[:shared]))
                common = int(differ[0]) if differ.size else shared
                keep = min(common, self.aligned_until, len(tokens) - 1) // self.n_batch * self.n_batch
                if keep < self.n_tokens:
                    self._ctx.kv_cache_seq_rm(-1, keep, -1)
                    self.n_tokens = keep
                    self._requires_eval = True
            generation = super().generate(tokens, **kwargs)
            return generation if grammar is None else self._checked(generation, grammar)

        def _checked(self, generation: Any, grammar: Any) -> Any:
            check = llama_cpp.llama_sampler_init_grammar(self._model.vocab, grammar._grammar.encode("utf-8"),
                                                         grammar._root.encode("utf-8"))
            if not check:
                raise HopragError(f"llama.cpp could not parse the grammar:\n{grammar._grammar}")
            self.grammar_check = check
            try:
                return (yield from generation)
            finally:
                self.grammar_check = None
                llama_cpp.llama_sampler_free(check)

        def _allowed(self, token: int, idx: int | None) -> int:
            """`token` if the grammar accepts it next, else the token sampled from the candidates it allows;
            the grammar then advances past it."""
            check = self.grammar_check
            one = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
            single = llama_cpp.llama_token_data_array(data=one, size=1, selected=-1, sorted=False)
            llama_cpp.llama_sampler_apply(check, ctypes.byref(single))
            if one[0].logit == float("-inf"):
                row = idx - self.n_tokens if idx is not None else -1
                logits = np.ctypeslib.as_array(self._ctx.get_logits_ith(row), shape=(self._n_vocab,))
                candidates = LlamaTokenDataArray(n_vocab=self._n_vocab)
                candidates.copy_logits(logits)
                llama_cpp.llama_sampler_apply(check, ctypes.byref(candidates.candidates))
                if self._sampler is not None:  # the generation's own chain (temperature, top-k/p, greedy or dist)
                    llama_cpp.llama_sampler_apply(self._sampler.sampler, ctypes.byref(candidates.candidates))
                    token = int(candidates.candidates_data.id[candidates.candidates.selected])
                else:
                    token = int(candidates.candidates_data.id[int(np.argmax(candidates.candidates_data.logit))])
            llama_cpp.llama_sampler_accept(check, token)
            return token

        def eval(self, tokens: Any) -> None:
            start = self.n_tokens
            if self.prompt_start is None:
                self.prompt_start = start
            super().eval(tokens)
            block = self.n_batch
            if start % block == 0 and start <= self.aligned_until:
                self.aligned_until = (start + len(tokens)) // block * block
            else:
                self.aligned_until = min(self.aligned_until, start // block * block)

        def reset(self) -> None:
            super().reset()
            self.aligned_until = 0

        def save_sequence(self) -> SavedSequence:
            """A copy of the KV cache (sequence 0's cells) and of what it holds."""
            context = self._ctx.ctx
            size = int(llama_cpp.llama_state_seq_get_size(context, 0))
            buffer = (ctypes.c_uint8 * size)()
            written = int(llama_cpp.llama_state_seq_get_data(context, buffer, size, 0))
            return SavedSequence(buffer, written, self.input_ids[: self.n_tokens].copy(), self.aligned_until,
                                 self.n_batch)

        def load_sequence(self, saved: SavedSequence) -> bool:
            """Replace the KV cache with a saved copy; False (the cache is then empty) where llama.cpp refuses it."""
            self._ctx.kv_cache_seq_rm(-1, 0, -1)
            if saved.size == 0 or llama_cpp.llama_state_seq_set_data(self._ctx.ctx, saved.kv, saved.size, 0) != saved.size:
                self.reset()
                return False
            n_tokens = len(saved.input_ids)
            self.input_ids[:n_tokens] = saved.input_ids
            self.n_tokens = n_tokens
            # Alignment is counted in blocks of the batch size it was evaluated in.
            self.aligned_until = saved.aligned_until if saved.n_batch == self.n_batch else 0
            self._requires_eval = True  # the next call evaluates at least one token before it samples
            return True

        def sample(self, *args: Any, idx: int | None = None, **kwargs: Any) -> int:
            token = super().sample(*args, idx=idx, **kwargs)
            if self.grammar_check is not None:
                token = self._allowed(int(token), idx)
            if self.token_logprobs is not None:
                row = idx - self.n_tokens if idx is not None else -1
                logits = np.ctypeslib.as_array(self._ctx.get_logits_ith(row), shape=(self._n_vocab,))
                top = float(logits.max())
                log_total = top + float(np.log(np.exp(logits - top, dtype=np.float64).sum()))
                self.token_logprobs.append((int(token), float(logits[token]) - log_total))
                if self.top_k_logprobs > 0 and self.token_top_logprobs is not None:
                    k = min(self.top_k_logprobs, self._n_vocab)
                    best = np.argpartition(logits, -k)[-k:]
                    best = best[np.argsort(-logits[best])]
                    self.token_top_logprobs.append([(int(i), float(logits[i]) - log_total) for i in best])
            return int(token)

    return HopragLlama


@dataclass
class SavedSequence:
    """A copy of the KV cache (llama.cpp sequence state), the tokens it holds, how far it is block-aligned, and the
    batch size the alignment is counted in."""

    kv: Any
    size: int
    input_ids: Any
    aligned_until: int
    n_batch: int


KV_STATES = 8  # saved KV states kept by default (HOPRAG_KV_STATES; 0 turns them off)
KV_STATES_MB = 256  # their memory cap by default (HOPRAG_KV_STATES_MB)
# A state is saved only when a prompt would drop at least this many of the live cache's tokens, and loaded
# only when it saves evaluating at least this many: fewer cost little to evaluate again.
KV_STATE_MIN_TOKENS = 16


def _env_count(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        raise HopragError(f"{name} must be a whole number of 0 or more, not {value!r}")
    return count


class LocalRuntime:
    """One llama.cpp model and context per model file, shared by every role.

    llama.cpp reuses the KV cache only for the prefix a prompt shares with the previous call on the same
    context, and the roles alternate (reasoner, note writer, reasoner, ...). Each role therefore keeps its
    own KV cache: when another role calls, the active role's sequence state is saved (a copy of the
    cache cells it uses, about 29 KB a token for the 1.5B model) and the caller's is restored. One
    context instead of one per role keeps one set of compute buffers and one mapping of the weights:
    ReSP held 6.4-8.4 GB resident with an instance per role.

    Within a role, methods alternate between prompts that share a head and differ in the middle (REPLUG's
    prompt per document, a candidate or passage per prompt in SuRe, Self-RAG and FuRePA, ReNAct's note
    writers), so each call would evaluate most of its prompt again. The runtime therefore also keeps a few
    saved KV states (least recently used first out, `kv_states` of them within `kv_states_bytes`): before a
    prompt is evaluated, the live cache is saved if the prompt would drop part of it, and a saved state that
    shares a longer prefix with the prompt is loaded. The model then evaluates only the rest, as it would
    after that state's own call.
    """

    def __init__(self, llama: Any, *, kv_states: int | None = None, kv_states_bytes: int | None = None) -> None:
        self.llama = llama
        self.active_role: str | None = None
        self.saved: dict[str, SavedSequence] = {}
        self.kv_states: OrderedDict[bytes, SavedSequence] = OrderedDict()
        self.max_kv_states = _env_count("HOPRAG_KV_STATES", KV_STATES) if kv_states is None else kv_states
        self.max_kv_state_bytes = (_env_count("HOPRAG_KV_STATES_MB", KV_STATES_MB) << 20
                                   if kv_states_bytes is None else kv_states_bytes)
        self.kv_state_loads = 0  # how often a saved state was loaded: observability for tests and benchmarks
        # With logits for every position (logits_all), a loaded state would leave the earlier positions' scores
        # stale; a recurrent model's state cannot be cut back to a prefix.
        exact = not (getattr(llama, "_logits_all", False) or getattr(llama, "_is_recurrent", False)
                     or getattr(llama, "_is_hybrid", False))
        if self.max_kv_states > 0 and self.max_kv_state_bytes > 0 and exact:
            llama.before_prompt = self.resume_longest_prefix

    def activate(self, role: str) -> None:
        """Make `role`'s KV cache the live one. Call with the compute lock held."""
        if role == self.active_role:
            return
        if self.active_role is not None:
            self.saved[self.active_role] = self.llama.save_sequence()
        state = self.saved.pop(role, None)
        if state is None or not self.llama.load_sequence(state):
            self.llama.reset()
        self.active_role = role

    def _reusable(self, held: Any, aligned_until: int, n_batch: int, prompt: Any) -> int:
        """How many of `prompt`'s tokens a cache holding `held` lets the model skip, as its generate loop
        reuses them: the common prefix, short of the prompt's last token (evaluated to get the next token's
        scores), and in reproducible runs only whole blocks evaluated as aligned batches of the current size."""
        shared = min(len(held), len(prompt) - 1)
        if shared <= 0:
            return 0
        differ = np.flatnonzero(held[:shared] != prompt[:shared])
        common = int(differ[0]) if differ.size else shared
        if self.llama.block_aligned:
            block = self.llama.n_batch
            return min(common, aligned_until) // block * block if n_batch == block else 0
        return common

    def resume_longest_prefix(self, tokens: list[int]) -> None:
        """Before the model evaluates `tokens`: keep the live cache if the prompt would drop part of it, and
        load the saved state that lets it skip the most tokens. Runs inside the model's generate, with the
        compute lock held (the lock guards the saved states too)."""
        llama = self.llama
        prompt = np.asarray(tokens, dtype=llama.input_ids.dtype)
        live_tokens = llama.input_ids[: llama.n_tokens]
        live = self._reusable(live_tokens, llama.aligned_until, llama.n_batch, prompt)
        best_key, best = None, live
        for key, saved in self.kv_states.items():
            reusable = self._reusable(saved.input_ids, saved.aligned_until, saved.n_batch, prompt)
            if reusable > best:
                best_key, best = key, reusable
        chosen = self.kv_states[best_key] if best_key is not None and best - live >= KV_STATE_MIN_TOKENS else None
        if llama.n_tokens - live >= KV_STATE_MIN_TOKENS:
            self._keep(live_tokens)
        if chosen is None:
            return
        if llama.load_sequence(chosen):
            self.kv_state_loads += 1
            if best_key in self.kv_states:
                self.kv_states.move_to_end(best_key)
        else:  # llama.cpp refused it (the cache is now empty): the prompt is evaluated whole
            self.kv_states.pop(best_key, None)

    def _keep(self, live_tokens: Any) -> None:
        """Save the live cache as the most recently used state, unless a saved state already serves every prompt
        it would (holds these tokens or more, as aligned); a saved state it serves better goes."""
        llama = self.llama
        key, count = live_tokens.tobytes(), len(live_tokens)

        def holds(longer: Any, shorter: Any) -> bool:
            return len(longer) >= len(shorter) and bool(np.array_equal(longer[: len(shorter)], shorter))

        for other_key, saved in list(self.kv_states.items()):
            if saved.n_batch != llama.n_batch:
                continue
            # Alignment matters only to reproducible runs, which reuse only whole aligned blocks.
            aligned = not llama.block_aligned or saved.aligned_until >= min(llama.aligned_until, count)
            if holds(saved.input_ids, live_tokens) and aligned:
                self.kv_states.move_to_end(other_key)
                return
            if holds(live_tokens, saved.input_ids) and (not llama.block_aligned
                                                        or saved.aligned_until <= llama.aligned_until):
                del self.kv_states[other_key]
        saved = llama.save_sequence()
        if saved.size == 0 or saved.size > self.max_kv_state_bytes:
            return
        self.kv_states[key] = saved
        while (len(self.kv_states) > self.max_kv_states
               or sum(s.size for s in self.kv_states.values()) > self.max_kv_state_bytes):
            self.kv_states.popitem(last=False)


_RUNTIMES: dict[tuple[str, int, int], LocalRuntime] = {}


def local_runtime(name: str, *, n_ctx: int, n_threads: int) -> LocalRuntime:
    """The shared runtime of a model file (loaded on first use). Call with hoprag.llm's model lock held."""
    path = resolve_gguf(name)
    key = (str(path), n_ctx, n_threads)
    if key not in _RUNTIMES:
        llama_class = _llama_class()
        try:
            # n_threads_batch too: llama.cpp's default takes every core for prompt processing, and its
            # threads spin while they wait, so two runs at HOPRAG_THREADS=1 on two cores would contend.
            llama = llama_class(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                                n_batch=FULL_BATCH, verbose=False)
        except Exception as error:  # llama.cpp reports a corrupt file as a bare ValueError
            raise HopragError(f"llama.cpp could not load {path.name}: {error}") from error
        _RUNTIMES[key] = LocalRuntime(llama)
    return _RUNTIMES[key]


class ChatLlamaCpp(BaseChatModel):
    """A LangChain chat model for one role over the shared in-process runtime of a model file."""

    runtime: Any = None
    role: str = ""
    model_path: str = ""
    seed: int | None = 0

    model_config = {"arbitrary_types_allowed": True}

    @classmethod
    def load(cls, name: str, *, role: str, n_ctx: int, n_threads: int, seed: int | None) -> ChatLlamaCpp:
        runtime = local_runtime(name, n_ctx=n_ctx, n_threads=n_threads)
        return cls(runtime=runtime, role=role, model_path=str(runtime.llama.model_path), seed=seed)

    @property
    def client(self) -> Any:
        return self.runtime.llama

    @property
    def _llm_type(self) -> str:
        return "hoprag-llama-cpp"

    def count_tokens(self, text: str) -> int:
        return len(self.client.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        from llama_cpp import LLAMA_DEFAULT_SEED

        want_logprobs = bool(kwargs.pop("logprobs", False))
        top_k = int(kwargs.pop("top_logprobs", 0) or 0)
        continue_reply = bool(kwargs.pop("continue_reply", False))
        raw_text = bool(kwargs.pop("raw_text", False))
        seed = kwargs.get("seed", self.seed)
        asked = time.time()
        with _COMPUTE_LOCK:
            started = time.time()
            self.runtime.activate(self.role)
            llama = self.client
            llama.block_aligned = bool(kwargs.get("reproducible", False))
            llama.token_logprobs = [] if want_logprobs else None
            llama.top_k_logprobs, llama.token_top_logprobs = top_k, ([] if top_k else None)
            sampling = dict(
                stop=stop or [],
                max_tokens=kwargs.get("max_tokens", 256),
                temperature=kwargs.get("temperature", 0.0),
                # Each left out keeps llama-cpp-python's default (top_p 0.95, top_k 40, min_p 0.05).
                **{name: kwargs[name] for name in ("top_p", "top_k", "min_p") if name in kwargs},
                seed=LLAMA_DEFAULT_SEED if seed is None else seed,
                repeat_penalty=1.0,
                **({"grammar": _grammar(kwargs["grammar"])} if kwargs.get("grammar") else {}),
            )
            chat = [{"role": chat_role(m), "content": str(m.content)} for m in messages]
            try:
                if continue_reply or raw_text:
                    # REPLUG continues the last (assistant) message; a raw-text call continues its one plain-text
                    # prompt, without the chat template (FlashRAG's IRCoT on a local model).
                    prompt = self._raw_prompt(chat[-1]["content"]) if raw_text else self._continuation(chat)
                    completion = llama.create_completion(prompt=prompt, **sampling)
                    result = {**completion, "choices": [{"message": {"content": completion["choices"][0]["text"]},
                                                         "finish_reason": completion["choices"][0]["finish_reason"]}]}
                else:
                    result = llama.create_chat_completion(messages=chat, **sampling)
                sampled, reused = llama.token_logprobs or [], llama.prompt_start
                alternatives = llama.token_top_logprobs or []
            finally:
                llama.token_logprobs = None
                llama.top_k_logprobs, llama.token_top_logprobs = 0, None
                # A call frees the saved KV state it restored (its role's own, from that role's last call) and
                # logits copies, buffers of varying size made in varying worker threads, which glibc keeps on
                # each thread's heap; handed back, they no longer pile up call after call (ReNAct's RSS
                # climbed about 28 MB a question). Under the compute lock, so the
                # trim (about a millisecond) never runs beside another call's generation.
                release_freed_memory()
        choice = result["choices"][0]
        text = choice["message"]["content"] or ""
        usage = result.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens", 0))
        # When the model started on this call and how long the call queued behind others' calls (runs that
        # share the process, e.g. concurrent server runs), so usage records separate waiting from compute;
        # how many prompt tokens the model evaluated rather than reused from the role's KV cache.
        metadata: dict[str, Any] = {"finish_reason": choice.get("finish_reason"), "model_name": self.model_path,
                                    "compute_started": started, "queued_seconds": round(started - asked, 4),
                                    "evaluated_tokens": input_tokens - reused if reused is not None else 0}
        if want_logprobs:
            metadata["logprobs"] = {"content": self._text_logprobs(text, sampled, alternatives if top_k else None)}
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": input_tokens,
                "output_tokens": int(usage.get("completion_tokens", 0)),
                "total_tokens": int(usage.get("total_tokens", 0)),
            },
            response_metadata=metadata,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _text_logprobs(self, text: str, sampled: list[tuple[int, float]],
                       alternatives: list[list[tuple[int, float]]] | None = None) -> list[dict[str, Any]]:
        """The sampled tokens that make up `text`, OpenAI-style; tokens past it (a stop sequence, the end
        token) are dropped. With `alternatives` (each position's top tokens) every entry carries its
        `top_logprobs`, and the token that ended the text is kept too, so a next-token distribution whose most
        likely token is the end (it decodes to "") is still reported."""
        wanted, covered, content, ended = len(text.encode("utf-8")), 0, [], False
        for position, (token, logprob) in enumerate(sampled):
            if covered >= wanted:
                if alternatives is None or ended:
                    break
                ended = True  # the one token past the text (the end token, a stop sequence's first) is kept
            piece = self.client.detokenize([token])
            covered += len(piece)
            entry: dict[str, Any] = {"token": piece.decode("utf-8", errors="ignore"), "logprob": logprob}
            if alternatives is not None and position < len(alternatives):
                entry["top_logprobs"] = [{"token": self.client.detokenize([i]).decode("utf-8", errors="ignore"),
                                          "logprob": lp} for i, lp in alternatives[position]]
            content.append(entry)
        return content

    def _raw_prompt(self, text: str) -> list[int]:
        """The tokens of a plain-text prompt as a Hugging Face tokenizer encodes it for vLLM: a BOS only where the
        model's tokenizer adds one, and special-token text read as the special tokens."""
        llama = self.client
        return llama.tokenize(text.encode("utf-8"), add_bos=llama._model.add_bos_token(), special=True)

    def _continuation(self, chat: list[dict[str, str]]) -> list[int]:
        """The prompt tokens of `chat` whose last (assistant) message is continued: the model's chat template over
        the messages before it, with the generation prompt, then the reply so far."""
        llama = self.client
        if not llama.metadata.get("tokenizer.chat_template"):
            raise HopragError(f"{self.model_path} has no chat template, so a reply cannot be continued")
        formatted = chat_formatter(llama)(messages=chat[:-1])
        return llama.tokenize((formatted.prompt + chat[-1]["content"]).encode("utf-8"),
                              add_bos=not formatted.added_special, special=True)


def chat_formatter(llama: Any, add_generation_prompt: bool = True) -> Any:
    """The model file's own chat template (its GGUF metadata) as llama.cpp's Jinja2 formatter, with the model's EOS
    and BOS texts; `formatter(messages=...).prompt` is the templated text."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    eos, bos = llama.token_eos(), llama.token_bos()
    return Jinja2ChatFormatter(template=llama.metadata["tokenizer.chat_template"],
                               eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
                               bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
                               add_generation_prompt=add_generation_prompt)


@functools.lru_cache(maxsize=64)
def _grammar(text: str) -> Any:
    """A llama.cpp grammar from GBNF text (llama.cpp checks it against the vocabulary when sampling starts)."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)


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
         "--n_threads_batch", str(n_threads),
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
