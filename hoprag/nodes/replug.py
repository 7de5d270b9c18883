"""REPLUG (Shi et al., NAACL 2024) as FlashRAG's REPLUGPipeline runs it: retrieve the top-k documents once, prepend
each to the question in a prompt of its own, and generate token by token from the ensemble of the k next-token
distributions, weighted by the documents' retrieval scores. The generator is called once per document per token;
each call asks for one token and the position's top log-probabilities (`call_llm(top_logprobs=...)`), continuing
the answer so far as the assistant's reply."""

from __future__ import annotations

import math
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from hoprag.context import context_of, given
from hoprag.errors import HopragError, NoLogprobsError
from hoprag.llm import call_llm, resolve_spec, top_token_logprobs
from hoprag.nodes.generate import first_line
from hoprag.prompts.replug import REPLUG_DOCUMENT, REPLUG_GENERATE
from hoprag.state import RunState

END_TOKEN = ""  # the end of the reply: the end token decodes to "", and an endpoint reports none for it
DEFAULT_TOP_LOGPROBS = 20
LOWEST_LOGPROB = -1e4  # an impossible token's log-probability in the log-linear mix
NO_DISTRIBUTION = "no next-token distribution"  # the problem of a step whose documents reported none


class ReplugState(RunState, total=False):
    documents: list[dict[str, Any]]  # the retrieved documents, each with its retrieval score


def document_weights(scores: list[float | None], weighting: str) -> tuple[list[float], str]:
    """Each document's ensemble weight and where the weights came from. flashrag: the scores over their sum (FlashRAG's
    REPLUGLogitsProcessor); softmax: exp(s_i) / sum_j exp(s_j) (REPLUG's Eq. 1). Scores that are missing, not finite,
    or (flashrag) not all positive give equal weights, said so in the second value."""
    n = len(scores)
    if not n:
        return [], "no documents"
    values = [float(s) for s in scores if isinstance(s, (int, float)) and math.isfinite(float(s))]
    if len(values) < n:
        return [1.0 / n] * n, "equal (a document has no retrieval score)"
    if weighting == "softmax":
        top = max(values)
        exps = [math.exp(v - top) for v in values]
        return [e / sum(exps) for e in exps], "softmax of the retrieval scores"
    if min(values) <= 0:
        return [1.0 / n] * n, "equal (a retrieval score is not positive, so scores over their sum are not weights)"
    return [v / sum(values) for v in values], "retrieval scores over their sum"


def ensemble(distributions: list[dict[str, float]], weights: list[float], weighting: str) -> dict[str, float]:
    """The ensemble's score of every token some document reported. softmax: sum_d w_d p_d(y), a token outside a
    document's top-k counting 0 there. flashrag: sum_d w_d log p_d(y) (FlashRAG mixes logits, which differ from
    log-probabilities by a per-document constant, so the argmax is the same), a token outside a document's top-k
    taking that document's lowest reported log-probability, the most it can have."""
    tokens = list(dict.fromkeys(token for distribution in distributions for token in distribution))
    scores: dict[str, float] = {}
    for token in tokens:
        total = 0.0
        for distribution, weight in zip(distributions, weights, strict=True):
            if weighting == "softmax":
                total += weight * math.exp(distribution.get(token, -math.inf))
            else:  # bounded below, so a weight of 0 times an impossible token stays 0 (not nan)
                floor = min(distribution.values()) if distribution else 0.0
                total += weight * max(distribution.get(token, floor), LOWEST_LOGPROB)
        scores[token] = total
    return scores


def next_token_distribution(message: AIMessage) -> dict[str, float]:
    """The first generated position's top log-probabilities; a reply that generated nothing ended at once, which an
    endpoint reports with no tokens: its distribution is the end token alone."""
    positions = top_token_logprobs(message)
    if positions and positions[0][1]:
        return positions[0][1]
    return {END_TOKEN: 0.0}


def replug_messages(prompt: str, reply: str) -> str | list[BaseMessage]:
    return [HumanMessage(prompt), AIMessage(reply)] if reply else prompt


def replug_generate(state: ReplugState, runtime: Any = None) -> dict[str, Any]:
    """The answer, one token at a time: each document's prompt (continued with the answer so far) gives a next-token
    distribution, the weighted ensemble picks the token (greedy: its argmax), until the end token, a line break
    after some text, or `max_tokens`."""
    ctx = context_of(runtime)
    documents = state.get("documents") or []
    weighting = given(ctx.replug_weighting, "flashrag")
    top_k = max(1, given(ctx.top_logprobs, DEFAULT_TOP_LOGPROBS))
    weights, weights_from = document_weights([d.get("score") for d in documents], weighting)
    prompts = [REPLUG_GENERATE.format(documents=REPLUG_DOCUMENT.format(title=d["title"], text=d["text"]),
                                      question=state["question"]) for d in documents]
    if not prompts:  # nothing retrieved: REPLUG's ensemble of one prompt without a document
        prompts, weights = [REPLUG_GENERATE.format(documents="None", question=state["question"])], [1.0]
    reply, chosen, records = "", [], []
    for _ in range(max(1, ctx.max_tokens or 32)):
        distributions = []
        for prompt in prompts:
            try:
                _, record, message = call_llm("generator", replug_messages(prompt, reply), ctx, max_tokens=1,
                                              top_logprobs=top_k, continue_reply=bool(reply))
            except NoLogprobsError as error:
                raise NoLogprobsError(
                    f"{resolve_spec('generator', ctx)} returned no token log-probabilities; REPLUG ensembles next-token "
                    "distributions, so it needs them: use local:<model> or an OpenAI-compatible endpoint that serves "
                    "top_logprobs (vLLM)") from error
            records.append(record.to_dict())
            distributions.append(next_token_distribution(message))
        scores = ensemble(distributions, weights, weighting)
        token = max(scores, key=lambda t: scores[t])
        chosen.append({"token": token, "score": round(scores[token], 6), "candidates": len(scores)})
        if token == END_TOKEN or (reply.strip() and "\n" in token):
            break
        reply += token
    generation = reply.strip()
    passages = "\n".join(REPLUG_DOCUMENT.format(title=d["title"], text=d["text"]) for d in documents)
    step = {"kind": "search", "query": state["question"], "action": f"retrieve[{state['question']}]", "round": 1,
            "thought": generation, "retrieved_ids": [d["id"] for d in documents],
            "retrieved_titles": [d["title"] for d in documents],
            "observation": passages or "The search returned no documents.",
            "weights": [round(w, 6) for w in weights], "weights_from": weights_from, "weighting": weighting,
            "top_logprobs": top_k, "tokens": chosen, "generator_calls": len(records)}
    if not generation:
        step["problem"] = "empty generation"
    if not records:
        raise HopragError("REPLUG made no generator call")  # unreachable: max_tokens >= 1 and one prompt at least
    # The generation's validity is recorded on its last call (the others are single ensemble steps).
    records[-1] = {**records[-1], "parsed": True, "invalid": not generation,
                   "problem": "empty generation" if not generation else ""}
    # FlashRAG reads the first line of the generation (run_exp.py's pred_process_fun).
    return {"trajectory": [step], "calls": records, "answer": first_line(generation), "finished_by": "generate"}


def route_after_generate(state: ReplugState, runtime: Any = None) -> str:
    from hoprag.nodes.reasoner import after_answer

    return after_answer(context_of(runtime))


def counters(result: dict[str, Any]) -> dict[str, int]:
    """REPLUG's own counters for `hoprag eval`: documents ensembled, tokens generated by the ensemble, generator calls
    (documents x tokens), invalid (empty) generations."""
    step = next((s for s in result.get("trajectory") or [] if s.get("tokens") is not None), {})
    return {"documents": len(step.get("retrieved_ids") or []), "ensemble_tokens": len(step.get("tokens") or []),
            "generator_calls": int(step.get("generator_calls") or 0),
            "invalid_outputs": int(result.get("invalid_outputs") or 0)}
