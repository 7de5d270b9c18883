"""Self-RAG (Asai et al., ICLR 2024), the short-form inference of its official code (retrieval_lm/run_short_form.py,
call_model_rerank_w_scores_batch): the model first generates from the bare prompt, and the probability of the
[Retrieval] token at its first position, normalised over [Retrieval] and [No Retrieval], decides retrieval against a
threshold. With retrieval, one generation per retrieved passage, each scored by its reflection tokens' probabilities
(ISREL, ISSUP, ISUSE, weighted 1.0 / 1.0 / 0.5) and the best one is the answer; without, one generation after
[No Retrieval]. Reflection tokens are stripped from the answer.

Only a Self-RAG checkpoint has these tokens: the embedded models are refused by name, any other model once its first
output shows none of them."""

from __future__ import annotations

import math
import re
from typing import Any

from langchain_core.messages import AIMessage

from hoprag.context import Context, context_of, given
from hoprag.errors import NoLogprobsError, RunUnavailableError
from hoprag.llm import call_llm, resolve_spec, top_token_logprobs
from hoprag.prompts.self_rag import SELF_RAG_NO_RETRIEVAL, SELF_RAG_PARAGRAPH, SELF_RAG_PROMPT
from hoprag.state import RunState

RETRIEVE_TOKENS = ("[Retrieval]", "[No Retrieval]")
RELEVANCE_TOKENS = ("[Relevant]", "[Irrelevant]")
SUPPORT_TOKENS = ("[Fully supported]", "[Partially supported]", "[No support / Contradictory]")
UTILITY_TOKENS = tuple(f"[Utility:{i}]" for i in range(1, 6))
# run_short_form.py's control_tokens (utils.py), removed from the answer, with "[Continue to Use Evidence]".
CONTROL_TOKENS = (*SUPPORT_TOKENS, *RETRIEVE_TOKENS, *RELEVANCE_TOKENS, "<paragraph>", "</paragraph>",
                  *UTILITY_TOKENS, "[Continue to Use Evidence]")
REFLECTION_TOKENS = frozenset(RETRIEVE_TOKENS + RELEVANCE_TOKENS + SUPPORT_TOKENS + UTILITY_TOKENS
                              + ("[Continue to Use Evidence]",))
# The official weights of ISREL, ISSUP and ISUSE (run_short_form.py: w_rel=1.0, w_sup=1.0, w_use=0.5).
W_REL, W_SUP, W_USE = 1.0, 1.0, 0.5
UTILITY_VALUES = (-1.0, -0.5, 0.0, 0.5, 1.0)  # [Utility:1] .. [Utility:5]
MISSING_LOGPROB = -100.0  # a token absent from a position's top log-probabilities (the official code's value)
DEFAULT_THRESHOLD = 0.2
DEFAULT_TOP_LOGPROBS = 20


class NotSelfRagModelError(RunUnavailableError):
    """The generator is not a Self-RAG checkpoint, so the reflection tokens Self-RAG reads do not exist."""


class SelfRagState(RunState, total=False):
    retrieve: bool  # the retrieve decision
    documents: list[dict[str, Any]]


Positions = list[tuple[str, dict[str, float]]]  # per generated token: the token and its top log-probabilities


def not_self_rag(spec: str, why: str) -> NotSelfRagModelError:
    return NotSelfRagModelError(
        f"self-rag needs a Self-RAG checkpoint (e.g. selfrag/selfrag_llama2_7b served by vLLM, --llm openai:<model>); "
        f"{spec} {why}, so Self-RAG's reflection tokens do not exist there")


def refuse_embedded(spec: str) -> None:
    """The embedded models are known by name: none is a Self-RAG checkpoint (a local GGUF named *selfrag* may be)."""
    kind, _, name = spec.partition(":")
    if kind in ("local", "local-server") and "selfrag" not in re.sub(r"[^a-z]", "", name.lower()):
        raise not_self_rag(spec, "is not one (an embedded model)")


def shows_reflection_tokens(text: str, positions: Positions) -> bool:
    """Whether an output shows any reflection token, in its text or among its positions' likely tokens."""
    return any(token in text for token in REFLECTION_TOKENS) or any(
        token.strip() in REFLECTION_TOKENS for generated, top in positions for token in (generated, *top))


def probability(top: dict[str, float], token: str) -> float:
    """exp of the token's log-probability at a position, exp(-100) where it is not among the top ones."""
    for candidate, logprob in top.items():
        if candidate.strip() == token:
            return math.exp(max(logprob, MISSING_LOGPROB))
    return math.exp(MISSING_LOGPROB)


def retrieve_probability(positions: Positions) -> float:
    """p([Retrieval]) / (p([Retrieval]) + p([No Retrieval])) at the first generated position (the paper's
    normalised probability; FlashRAG's judge_retrieve). No position: both are exp(-100), so 0.5."""
    top = positions[0][1] if positions else {}
    retrieval, no_retrieval = probability(top, "[Retrieval]"), probability(top, "[No Retrieval]")
    return retrieval / (retrieval + no_retrieval)


def first_position(positions: Positions, tokens: tuple[str, ...]) -> dict[str, float] | None:
    """The top log-probabilities of the first position that generated one of `tokens`."""
    return next((top for generated, top in positions if generated.strip() in tokens), None)


def critique_scores(positions: Positions) -> dict[str, float]:
    """The official scores of one generation: ISREL = p([Relevant]) normalised over the two relevance tokens at the first
    position; ISSUP = p(Fully) + 0.5 p(Partially), normalised over the three support tokens, at the first position
    that generated one (0 if none); ISUSE = sum of (-1, -0.5, 0, 0.5, 1) weighted by the five utility tokens'
    normalised probabilities at the first position that generated one (0 if none); final = 1.0 ISREL + 1.0 ISSUP +
    0.5 ISUSE."""
    first = positions[0][1] if positions else {}
    relevance = [probability(first, t) for t in RELEVANCE_TOKENS]
    isrel = relevance[0] / sum(relevance)
    support_top = first_position(positions, SUPPORT_TOKENS)
    issup = 0.0
    if support_top is not None:
        support = [probability(support_top, t) for t in SUPPORT_TOKENS]
        issup = support[0] / sum(support) + 0.5 * support[1] / sum(support)
    utility_top = first_position(positions, UTILITY_TOKENS)
    isuse = 0.0
    if utility_top is not None:
        utility = [probability(utility_top, t) for t in UTILITY_TOKENS]
        isuse = sum(value * p / sum(utility) for value, p in zip(UTILITY_VALUES, utility, strict=True))
    return {"relevance": isrel, "support": issup, "utility": isuse,
            "final": W_REL * isrel + W_SUP * issup + W_USE * isuse}


def strip_reflection(text: str) -> str:
    """The answer of a generation: run_short_form.py's postprocess (control tokens, </s>, line breaks and
    <|endoftext|> removed, then one leading '#' or ':'), stripped."""
    for token in (*CONTROL_TOKENS, "</s>", "\n", "<|endoftext|>"):
        text = text.replace(token, "")
    text = text.strip()
    if text[:1] in ("#", ":"):
        text = text[1:].strip()
    return text


def self_rag_call(prompt: str, ctx: Context, top_k: int) -> tuple[str, dict[str, Any], AIMessage]:
    """One Self-RAG generation with its positions' top log-probabilities; the reflection tokens are special tokens,
    so a vLLM endpoint is asked to keep them in the text (`skip_special_tokens`, as the official code sets)."""
    try:
        text, record, message = call_llm("generator", prompt, ctx, top_logprobs=top_k,
                                         extra_body={"skip_special_tokens": False})
    except NoLogprobsError as error:
        raise NoLogprobsError(
            f"{resolve_spec('generator', ctx)} returned no token log-probabilities; Self-RAG reads its reflection "
            "tokens' probabilities, so serve the checkpoint behind an endpoint with logprobs (vLLM)") from error
    return text, record.to_dict(), message


def decide(state: SelfRagState, runtime: Any = None) -> dict[str, Any]:
    """The first generation, from the bare prompt: its first position's [Retrieval] probability decides retrieval."""
    ctx = context_of(runtime)
    spec = resolve_spec("generator", ctx)
    refuse_embedded(spec)
    top_k = max(1, given(ctx.top_logprobs, DEFAULT_TOP_LOGPROBS))
    text, record, message = self_rag_call(SELF_RAG_PROMPT.format(question=state["question"]), ctx, top_k)
    positions = top_token_logprobs(message)
    if not shows_reflection_tokens(text, positions):
        raise not_self_rag(spec, "showed none of them in its output or its top log-probabilities")
    threshold = given(ctx.self_rag_threshold, DEFAULT_THRESHOLD)
    ratio = retrieve_probability(positions)
    retrieve = ratio > threshold
    verdict = "retrieve" if retrieve else "no retrieval"
    step = {"kind": "decide", "thought": text.strip(), "retrieve_probability": round(ratio, 6), "threshold": threshold,
            "retrieve": retrieve, "top_logprobs": top_k, "action": verdict,
            "observation": f"p([Retrieval]) normalised = {ratio:.3f} {'>' if retrieve else '<='} {threshold}: {verdict}"}
    return {"retrieve": retrieve, "trajectory": [step], "calls": [record]}


def route_after_decide(state: SelfRagState, runtime: Any = None) -> str:
    return "retrieve" if state.get("retrieve") else "generate_without_retrieval"


def generate_per_document(state: SelfRagState, runtime: Any = None) -> dict[str, Any]:
    """One generation per passage ("[Retrieval]<paragraph>title\\ntext</paragraph>" after the prompt), each scored
    by `critique_scores`; the best-scoring one (the first of equals) is the answer."""
    ctx = context_of(runtime)
    top_k = max(1, given(ctx.top_logprobs, DEFAULT_TOP_LOGPROBS))
    prompt = SELF_RAG_PROMPT.format(question=state["question"])
    steps, calls, best = [], [], None
    for document in state.get("documents") or []:
        paragraph = SELF_RAG_PARAGRAPH.format(title=document["title"], text=document["text"])
        text, record, message = self_rag_call(prompt + paragraph, ctx, top_k)
        scores = critique_scores(top_token_logprobs(message))
        answer = strip_reflection(text)
        calls.append({**record, "parsed": True, "invalid": not answer, "problem": "" if answer else "empty answer",
                      **({"reply": text} if not answer else {})})
        step = {"kind": "search", "query": state["question"], "action": f"generate[{document['title']}]",
                "thought": text.strip(), "answer": answer, "retrieved_ids": [document["id"]],
                "retrieved_titles": [document["title"]], "scores": {k: round(v, 6) for k, v in scores.items()},
                "observation": (f"ISREL {scores['relevance']:.3f}, ISSUP {scores['support']:.3f}, ISUSE "
                                f"{scores['utility']:.3f}: score {scores['final']:.3f}")}
        steps.append(step)
        if best is None or scores["final"] > best[0]:
            best = (scores["final"], answer, len(steps) - 1)
    if best is None:  # nothing retrieved: the official code would have no path to pick; answer as without retrieval
        return generate_without_retrieval(state, runtime)
    steps[best[2]]["selected"] = True
    return {"trajectory": steps, "calls": calls, "answer": best[1], "finished_by": "generate"}


def generate_without_retrieval(state: SelfRagState, runtime: Any = None) -> dict[str, Any]:
    """The generation after [No Retrieval], whose text (reflection tokens stripped) is the answer."""
    ctx = context_of(runtime)
    prompt = SELF_RAG_PROMPT.format(question=state["question"]) + SELF_RAG_NO_RETRIEVAL
    text, record, _ = call_llm("generator", prompt, ctx, extra_body={"skip_special_tokens": False})
    answer = strip_reflection(text)
    step = {"kind": "generate", "action": "generate[no retrieval]", "thought": text.strip(), "answer": answer,
            "observation": "[No Retrieval]"}
    return {"trajectory": [step], "answer": answer, "finished_by": "generate",
            "calls": [record.parsed(not answer, "" if answer else "empty answer")]}


def counters(result: dict[str, Any]) -> dict[str, int]:
    """Self-RAG's own counters for `hoprag eval`: whether it retrieved, generations scored, invalid (empty) answers."""
    trajectory = result.get("trajectory") or []
    decision = next((s for s in trajectory if s.get("kind") == "decide"), {})
    return {"retrieved": int(bool(decision.get("retrieve"))),
            "scored_generations": sum(1 for s in trajectory if s.get("scores")),
            "invalid_outputs": int(result.get("invalid_outputs") or 0)}
