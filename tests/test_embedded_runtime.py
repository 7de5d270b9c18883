"""The embedded runtime with the real model: one shared llama.cpp context whose roles keep their own KV
caches, log-probabilities without logits_all, and reproducible prompt evaluation."""

from __future__ import annotations

import re

import pytest

from hoprag import llama_local, llm
from hoprag.context import Context
from hoprag.llm import call_llm, chat_model, token_probabilities

pytestmark = pytest.mark.slow

SPEC = "local:qwen2.5-coder-1.5b"
# About 700 tokens: many 64-token blocks, so block-aligned reuse has something to reuse.
FACTS = " ".join(f"River {i} flows through town {i * 7} and has {i * 3} bridges." for i in range(42))
QUESTION = "\nHow many bridges does river 17 have? Answer with the number only."


@pytest.fixture
def fresh_runtime(monkeypatch):
    """An empty model cache, as in a new process: nothing evaluated before the test's first call."""
    monkeypatch.setattr(llm, "_MODELS", {})
    monkeypatch.setattr(llama_local, "_RUNTIMES", {})


def test_roles_share_one_model_and_keep_their_own_kv_cache(fresh_runtime):
    ctx = Context(llm=SPEC, temperature=0.0, max_tokens=8)
    reasoner, notes = chat_model(SPEC, "reasoner", ctx), chat_model(SPEC, "notes", ctx)
    assert reasoner is not notes and reasoner.runtime is notes.runtime  # one model, one context
    _, first, _ = call_llm("reasoner", FACTS + QUESTION, ctx)
    _, other, _ = call_llm("notes", "Name the capital of France in one word.", ctx)
    _, again, _ = call_llm("reasoner", FACTS + QUESTION + " Then add one.", ctx)
    assert first.evaluated_tokens == first.input_tokens and other.evaluated_tokens == other.input_tokens
    # The notes call ran in between, yet the reasoner's prompt prefix came back from its saved cache.
    assert again.evaluated_tokens < 20 < again.input_tokens


def test_log_probabilities_come_from_the_shared_context(fresh_runtime):
    ctx = Context(llm=SPEC, temperature=0.0, max_tokens=8)
    text, record, message = call_llm("reasoner", "Name the capital of France in one word.", ctx, logprobs=True)
    tokens = token_probabilities(message)
    assert "".join(t for t, _ in tokens) == text and len(tokens) <= record.output_tokens
    assert all(0.0 < p <= 1.0 for _, p in tokens) and tokens[0][1] > 0.5


def _outputs_after(history: list[str], reproducible: bool) -> tuple[str, list[float], int]:
    """The text and token log-probabilities of FACTS + QUESTION, asked after `history` in a fresh runtime,
    and how many of its prompt tokens were evaluated rather than reused."""
    llm._MODELS.clear()
    llama_local._RUNTIMES.clear()
    ctx = Context(llm=SPEC, temperature=0.0, max_tokens=12, reproducible=reproducible)
    for prompt in history:
        call_llm("reasoner", prompt, ctx)
    text, record, message = call_llm("reasoner", FACTS + QUESTION, ctx, logprobs=True)
    return text, [logprob for _, logprob in token_probabilities(message)], record.evaluated_tokens


def test_a_reproducible_prompt_gives_the_same_output_whatever_ran_before(fresh_runtime):
    """Without the option, reusing a 600-token prefix evaluated in other batches moves the log-probabilities
    (by up to 0.04); with it they are bit-identical."""
    text, logprobs, fresh = _outputs_after([], reproducible=True)
    after_a_shared_prefix = _outputs_after([FACTS[:2400] + " What is 2 + 2?"], reproducible=True)
    after_a_longer_prompt = _outputs_after([FACTS + QUESTION + " Explain."], reproducible=True)
    assert logprobs and after_a_shared_prefix[:2] == (text, logprobs) == after_a_longer_prompt[:2]
    # Whole 64-token blocks of the shared prefix (about 550 tokens) were reused, not evaluated again.
    assert after_a_shared_prefix[2] <= fresh - 448


def test_a_grammar_makes_the_real_model_write_a_well_formed_action(fresh_runtime):
    """`constrained_actions`: the ReAct and ReaRAG grammars parse in llama.cpp, and the turns they allow parse."""
    import llama_cpp

    from hoprag.nodes import rearag
    from hoprag.nodes.furepa import plan_messages
    from hoprag.nodes.parsing import parse_furepa_plan, parse_react, parse_rearag_action
    from hoprag.nodes.reasoner import render_messages
    from hoprag.prompts.furepa import ANSWER_GRAMMAR, FIRST_GRAMMAR, LATTER_GRAMMAR
    from hoprag.prompts.react import REACT_GRAMMAR
    from hoprag.prompts.rearag import REARAG_GRAMMAR

    question = "Which band released the album Counterparts in 1993?"
    ctx = Context(llm=SPEC, temperature=0.0, max_tokens=256)
    text, _, _ = call_llm("reasoner", render_messages(question, []), ctx, grammar=REACT_GRAMMAR.format(number=1))
    action = parse_react(text)
    assert text.startswith("Thought 1: ") and action.kind in ("search", "finish") and not action.problem
    text, _, _ = call_llm("reasoner", rearag.render_messages(question, []), ctx, grammar=REARAG_GRAMMAR.format(number=1))
    call = parse_rearag_action(text)
    assert text.startswith("Thought 1: ") and call.function in ("search", "finish") and call.argument
    evidence = [{"title": "Counterparts", "text": "Counterparts is the fifteenth studio album by the Canadian rock band Rush."}]
    plan = parse_furepa_plan(call_llm("reasoner", plan_messages(question, evidence, first=False), ctx,
                                      max_tokens=160, grammar=LATTER_GRAMMAR)[0])
    assert plan.kind in ("search", "answer") and plan.value and plan.analysis
    # Every grammar of the option parses in llama.cpp (a grammar it cannot parse gives no sampler).
    llama = chat_model(SPEC, "reasoner", ctx).runtime.llama
    for grammar in (FIRST_GRAMMAR, LATTER_GRAMMAR, ANSWER_GRAMMAR, REACT_GRAMMAR.format(number=12),
                    REARAG_GRAMMAR.format(number=3)):
        sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, grammar.encode(), b"root")
        assert sampler, grammar
        llama_cpp.llama_sampler_free(sampler)
    # The model would answer "Paris": each token the grammar rejects is sampled again from the ones it allows.
    text, _, _ = call_llm("notes", "Name the capital of France in one word.", ctx, grammar='root ::= "City: " [A-Z] [a-z]+')
    assert re.fullmatch(r"City: [A-Z][a-z]+", text), text


def test_every_call_hands_the_freed_heap_back(fresh_runtime, monkeypatch):
    """Each call frees the saved KV state it restores, in whichever worker thread it runs; trimmed after
    every call, such buffers do not pile up on glibc's heaps (ReNAct's RSS climbed question after question
    without it)."""
    from hoprag import memory

    trims: list[tuple[str | None, int]] = []
    real_trim = memory.release_freed_memory

    def counted_trim() -> None:
        runtime = next(iter(llama_local._RUNTIMES.values()))
        trims.append((runtime.active_role, runtime.llama.n_tokens))  # n_tokens is 0 before a role's first call
        real_trim()

    monkeypatch.setattr(llama_local, "release_freed_memory", counted_trim)
    ctx = Context(llm=SPEC, temperature=0.0, max_tokens=4)
    for role in ("reasoner", "notes", "reasoner", "generator"):
        call_llm(role, FACTS + QUESTION, ctx)
    # Once per call, after it (its tokens are in the cache), with the caller's role live.
    assert [role for role, _ in trims] == ["reasoner", "notes", "reasoner", "generator"]
    assert all(tokens > 0 for _, tokens in trims)
