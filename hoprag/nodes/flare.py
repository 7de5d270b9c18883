"""FLARE (Jiang et al.), as the original code runs it (reference/methods.md): step 0 retrieves with the
question; then each look-ahead sentence is drafted with token probabilities. If any token is below θ,
the graph retrieves with the masked sentence (tokens below β removed), the new documents replace the
context and the sentence is generated again (the draft is discarded); otherwise the draft is kept. The chain ends
at an <answer>, at 10 sentences or at 256 kept tokens; a sentence "... answer is X" does not end it (that is
IRCoT's exit rule, not FLARE's).

The NotesWriting paper's Eq. 4 reads as retrieving when the confidence is *above* θ, while its text and
the original FLARE retrieve on low confidence; `paper` follows the original (docs/methods/flare.md)."""

from __future__ import annotations

import re
from typing import Any

from hoprag.context import context_of, given
from hoprag.llm import token_probabilities
from hoprag.nodes.cot import CoTState, close_cot_step, generate_step, sentence_cap_reached
from hoprag.nodes.reasoner import after_answer
from hoprag.nodes.retrieve import search

# Step markup, also when a low-probability "<" was masked out of it ("answer>").
_MARKUP = re.compile(r"</?(?:s|answer)>|</?(?:s|answer)\b|\b(?:s|answer)>", re.IGNORECASE)
TOKEN_BUDGET = 256  # FLARE stops after 256 generated tokens of kept text (a discarded draft does not count)


def masked_query(tokens: list[tuple[str, float]], beta: float) -> str:
    """The draft without its tokens of probability below β, and without the step markup."""
    kept = "".join(token for token, probability in tokens if probability >= beta)
    return " ".join(_MARKUP.sub(" ", kept).split())


def flare_retrieve(state: CoTState, runtime: Any = None) -> dict[str, Any]:
    """Step 0 retrieves with the question; later, with the masked draft that the gate sent here."""
    ctx = context_of(runtime)
    previous = state.get("pending") or {}
    draft = previous.get("draft")
    query = draft["masked_query"] if draft else state["question"]
    documents = [d.to_dict() for d in search(ctx, query)]
    # The new documents replace the context (FLARE does not carry earlier ones forward). Step 0's retrieval with the
    # question has no sentence of its own when its first draft is gated to retrieve again: its pages are kept for the
    # record (`retrieval_recall`), not for the model.
    unrecorded = [d["title"] for d in state.get("documents") or []] if draft and previous.get("query") else []
    pending = {"kind": "search", "query": query, "argument": query, "entity": "", "draft": draft,
               "unrecorded_titles": [*previous.get("unrecorded_titles", []), *unrecorded]}
    # Each retrieval gets its own number: its notes replace the context, even the notes of the question's retrieval in
    # the same step (NotesWriting Eq. 11).
    return {"pending": pending, "documents": documents, "paragraphs": documents,
            "retrievals": (state.get("retrievals") or 0) + 1}


def make_draft(with_notes: bool):
    def draft(state: CoTState, runtime: Any = None) -> dict[str, Any]:
        """A look-ahead step with its token probabilities; the gate (a conditional edge) judges it."""
        ctx = context_of(runtime)
        step, record, message = generate_step(state, ctx, with_notes, logprobs=True)
        tokens = token_probabilities(message)
        lowest = min((p for _, p in tokens), default=1.0)
        gate = {"retrieve": lowest < given(ctx.flare_theta, 0.8), "min_probability": round(lowest, 4),
                "masked_query": masked_query(tokens, given(ctx.flare_beta, 0.4)) or state["question"],
                "low_tokens": [t for t, p in tokens if p < given(ctx.flare_theta, 0.8)][:12]}
        draft_step = {"sentence": step.sentence, "answer": step.answer, "problem": step.problem,
                      "tokens": len(tokens), "output_tokens": record["output_tokens"], **gate}
        # Step 0's retrieval (the question) stays pending: the first kept sentence records it.
        return {"pending": {**(state.get("pending") or {}), "draft": draft_step}, "calls": [record]}

    return draft


def gate(state: CoTState, runtime: Any = None) -> str:
    """FLARE's confidence gate: a confident draft is kept, an unconfident one triggers retrieval."""
    return "retrieve" if state["pending"]["draft"]["retrieve"] else "accept"


def accept(state: CoTState, runtime: Any = None) -> dict[str, Any]:
    """Keep a confident draft as the next sentence (no retrieval)."""
    draft = state["pending"]["draft"]
    update = close_cot_step(state, draft["sentence"], problem=draft["problem"], gate=_gate_record(draft, retrieved=False),
                            kept_tokens=draft["output_tokens"])
    if draft["answer"]:
        update.update(answer=draft["answer"], finished_by="answer")
    return update


def make_regenerate(with_notes: bool):
    def regenerate(state: CoTState, runtime: Any = None) -> dict[str, Any]:
        """After retrieval: the sentence again, from the new documents (or their notes); kept as is."""
        ctx = context_of(runtime)
        draft = state["pending"]["draft"]
        step, record, _ = generate_step(state, ctx, with_notes)
        update = close_cot_step(state, step.sentence, problem=step.problem,
                                gate=_gate_record(draft, retrieved=True), kept_tokens=record["output_tokens"])
        update["calls"] = [record]
        if step.answer:
            update.update(answer=step.answer, finished_by="answer")
        return update

    return regenerate


def _gate_record(draft: dict[str, Any], retrieved: bool) -> dict[str, Any]:
    return {"retrieved": retrieved, "draft": draft["sentence"] or draft["answer"], "min_probability": draft["min_probability"],
            "masked_query": draft["masked_query"] if retrieved else "", "low_tokens": draft["low_tokens"]}


def route_after_context(state: CoTState, runtime: Any = None) -> str:
    """Step 0's documents lead to the first draft; a gated retrieval leads to regenerating the draft."""
    return "regenerate" if (state.get("pending") or {}).get("draft") else "draft"


def route_after_sentence(state: CoTState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    if state.get("answer"):
        return after_answer(ctx)
    if sentence_cap_reached(state, ctx) or kept_tokens(state) >= TOKEN_BUDGET:
        return "final_answer"
    return "draft"


def kept_tokens(state: CoTState) -> int:
    """Tokens of the text FLARE kept: the accepted drafts and the regenerated sentences, as the original code counts
    its 256-token budget; a draft discarded for retrieval does not count."""
    return sum(step.get("kept_tokens", 0) for step in state.get("trajectory") or [])
