"""The embedded runtime's saved KV states: prompts that alternate (REPLUG's prompt per document) load the state
that shares the longest prefix with them and evaluate only the rest, with the outputs of a run without them."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import HumanMessage

from hoprag.errors import HopragError
from hoprag.llama_local import ChatLlamaCpp, LocalRuntime, SavedSequence

BYTES_PER_TOKEN = 100
HEAD = "Answer the question from the document below. " * 3  # a prefix every prompt shares (~140 tokens)
DOCUMENTS = [f"Document {i}: " + f"fact {i} is about river {i * 7} and town {i * 11}. " * 6 for i in range(4)]


class ScriptedLlama:
    """Stands in for the embedded model (HopragLlama): characters are tokens. Each cached position holds a value
    chained from the one before it and its token, as a position's keys depend on everything before it, and the next
    token and its log-probability come from the last value, so a wrongly loaded cache changes the output. Prefix
    reuse is llama-cpp-python's: the common prefix with the cache, short of the prompt's last token."""

    model_path = "scripted.gguf"
    block_aligned = False
    n_batch = 512
    token_logprobs: list[tuple[int, float]] | None = None
    top_k_logprobs = 0
    token_top_logprobs: Any = None
    prompt_start: int | None = None
    before_prompt: Any = None
    _logits_all = False

    def __init__(self) -> None:
        self.input_ids = np.zeros(8192, dtype=np.intc)
        self.n_tokens = 0
        self.aligned_until = 0
        self.values: list[int] = []  # the "KV cache": one value per cached position
        self.evaluated: list[int] = []  # how many prompt tokens each call evaluated
        self.loaded: list[str] = []  # the text of each state loaded

    def reset(self) -> None:
        self.n_tokens, self.values, self.aligned_until = 0, [], 0

    def save_sequence(self) -> SavedSequence:
        return SavedSequence(list(self.values), BYTES_PER_TOKEN * self.n_tokens,
                             self.input_ids[: self.n_tokens].copy(), self.aligned_until, self.n_batch)

    def load_sequence(self, saved: SavedSequence) -> bool:
        self.values = list(saved.kv)
        self.n_tokens = len(saved.input_ids)
        self.input_ids[: self.n_tokens] = saved.input_ids
        self.loaded.append("".join(map(chr, saved.input_ids)))
        return True

    def _eval(self, tokens: list[int]) -> None:
        for token in tokens:
            self.values.append(((self.values[-1] if self.values else 1) * 31 + token) % 1_000_003)
            self.input_ids[self.n_tokens] = token
            self.n_tokens += 1

    def create_chat_completion(self, messages: list[dict[str, str]], max_tokens: int, **_: Any) -> dict[str, Any]:
        tokens = [ord(c) for c in "".join(f"<{m['role']}>{m['content']}" for m in messages)]
        if self.before_prompt is not None:
            self.before_prompt(tokens)
        common = 0
        while common < min(self.n_tokens, len(tokens) - 1) and self.input_ids[common] == tokens[common]:
            common += 1
        self.n_tokens, self.prompt_start = common, common
        del self.values[common:]
        self._eval(tokens[common:])
        self.evaluated.append(len(tokens) - common)
        output = []
        for position in range(max_tokens):
            value = self.values[-1]
            output.append(ord("a") + value % 26)
            if self.token_logprobs is not None:
                self.token_logprobs.append((output[-1], -(value % 997) / 997))
            if position < max_tokens - 1:  # as llama.cpp: the last sampled token is not evaluated
                self._eval(output[-1:])
        return {"choices": [{"message": {"content": "".join(map(chr, output))}, "finish_reason": "length"}],
                "usage": {"prompt_tokens": len(tokens), "completion_tokens": len(output),
                          "total_tokens": len(tokens) + len(output)}}

    def detokenize(self, tokens: list[int]) -> bytes:
        return "".join(map(chr, tokens)).encode()


def _generator(kv_states: int, kv_states_bytes: int = 1 << 30) -> tuple[ChatLlamaCpp, ScriptedLlama, LocalRuntime]:
    llama = ScriptedLlama()
    runtime = LocalRuntime(llama, kv_states=kv_states, kv_states_bytes=kv_states_bytes)
    return ChatLlamaCpp(runtime=runtime, role="generator", model_path=llama.model_path), llama, runtime


def _ask(model: ChatLlamaCpp, document: str, max_tokens: int = 3, reply: str = "") -> tuple[str, list[float], int]:
    """The output, its log-probabilities and how many prompt tokens were evaluated; `reply` follows the question
    (REPLUG's answer so far)."""
    message = model.invoke([HumanMessage(_user(document) + reply)], max_tokens=max_tokens, logprobs=True)
    logprobs = [entry["logprob"] for entry in message.response_metadata["logprobs"]["content"]]
    return str(message.content), logprobs, message.response_metadata["evaluated_tokens"]


def _user(document: str) -> str:
    return HEAD + document + "Question?"


def _shared(first: str, second: str) -> int:
    return len(os.path.commonprefix([_user(first), _user(second)]))


def test_alternating_prompts_load_their_own_state_and_evaluate_only_the_rest():
    model, llama, runtime = _generator(kv_states=8)
    a, b = DOCUMENTS[0], DOCUMENTS[1]
    first_a, first_b, again_a = _ask(model, a), _ask(model, b), _ask(model, a + "More.")
    assert first_a[2] == len("<user>" + _user(a)) and first_b[2] == len(_user(b)) - _shared(a, b)
    # A's state (its prompt and the 2 tokens generated after it) came back: only A's new tail was evaluated.
    assert runtime.kv_state_loads == 1 and llama.loaded[-1].startswith("<user>" + HEAD + a + "Question?")
    assert again_a[2] == len("More.Question?")
    # Without saved states B's prompt replaced A's, so A's is evaluated again but for the shared head; the
    # outputs and log-probabilities are the same.
    plain, plain_llama, plain_runtime = _generator(kv_states=0)
    assert plain_llama.before_prompt is None
    plain_runs = [_ask(plain, a), _ask(plain, b), _ask(plain, a + "More.")]
    assert [run[:2] for run in plain_runs] == [first_a[:2], first_b[:2], again_a[:2]]
    assert plain_runs[2][2] == len(_user(a + "More.")) - _shared(a + "More.", b) > again_a[2]
    assert plain_runtime.kv_state_loads == 0 and not plain_runtime.kv_states


def test_replug_like_rounds_evaluate_each_document_once():
    """REPLUG: each round asks every document's prompt extended by the chosen token, for one token. After the
    first round every call evaluates only that token, and the outputs match a run without saved states."""
    model, llama, runtime = _generator(kv_states=8)
    plain, plain_llama, _ = _generator(kv_states=0)
    for reply in ("", "x", "xy", "xyz"):
        outputs = [_ask(model, d, max_tokens=1, reply=reply) for d in DOCUMENTS]
        assert outputs == [_ask(plain, d, max_tokens=1, reply=reply)[:2] + (o[2],)
                           for d, o in zip(DOCUMENTS, outputs, strict=True)]
    assert llama.evaluated[len(DOCUMENTS):] == [1] * 3 * len(DOCUMENTS)
    assert min(plain_llama.evaluated[len(DOCUMENTS):]) > len(DOCUMENTS[0]) - len("Document ")
    # A state whose tokens are a prefix of a newer one's is dropped: one state per document at most.
    assert len(runtime.kv_states) <= len(DOCUMENTS)


def test_the_states_are_least_recently_used_first_out_and_bounded():
    model, llama, runtime = _generator(kv_states=2)
    for document in DOCUMENTS:
        _ask(model, document)
    # The live cache holds the last prompt; the two before it are saved, the oldest went.
    held = ["".join(map(chr, s.input_ids)) for s in runtime.kv_states.values()]
    assert len(held) == 2 and DOCUMENTS[1] in held[0] and DOCUMENTS[2] in held[1]
    assert _ask(model, DOCUMENTS[0])[2] == len(_user(DOCUMENTS[0])) - _shared(DOCUMENTS[0], DOCUMENTS[3])  # evicted
    assert _ask(model, DOCUMENTS[2])[2] == 1  # still saved: loaded, only the prompt's last token evaluated
    # A memory cap of two states' bytes keeps two of the eight allowed.
    largest = BYTES_PER_TOKEN * (len("<user>" + _user(DOCUMENTS[-1])) + 2)
    model, llama, runtime = _generator(kv_states=8, kv_states_bytes=2 * largest + BYTES_PER_TOKEN)
    for document in DOCUMENTS:
        _ask(model, document)
    assert len(runtime.kv_states) == 2 and sum(s.size for s in runtime.kv_states.values()) <= 2 * largest


def test_saved_states_are_off_where_they_would_not_be_exact(monkeypatch):
    llama = ScriptedLlama()
    llama._logits_all = True  # scores kept for every position would be stale after a load
    LocalRuntime(llama, kv_states=8)
    assert llama.before_prompt is None
    monkeypatch.setenv("HOPRAG_KV_STATES", "0")
    llama = ScriptedLlama()
    assert LocalRuntime(llama).max_kv_states == 0 and llama.before_prompt is None
    monkeypatch.setenv("HOPRAG_KV_STATES", "many")
    with pytest.raises(HopragError, match="HOPRAG_KV_STATES must be a whole number"):
        LocalRuntime(ScriptedLlama())


def test_a_reproducible_run_loads_only_whole_blocks_evaluated_as_aligned_batches():
    llama = ScriptedLlama()
    runtime = LocalRuntime(llama, kv_states=8)
    llama.block_aligned, llama.n_batch = True, 64
    prompt = np.arange(300, dtype=np.intc)
    held = np.concatenate([prompt[:150], [9999]])
    # 150 shared tokens, of which the first 128 (two 64-token blocks) were evaluated as aligned batches.
    assert runtime._reusable(held, 128, 64, prompt) == 128
    assert runtime._reusable(held, 100, 64, prompt) == 64
    assert runtime._reusable(held, 128, 512, prompt) == 0  # aligned in blocks of another size
    llama.block_aligned, llama.n_batch = False, 512
    assert runtime._reusable(held, 0, 64, prompt) == 150  # outside reproducible runs any shared prefix is reused
