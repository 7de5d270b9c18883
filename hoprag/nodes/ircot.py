"""IRCoT (Trivedi et al.): retrieve with the last chain-of-thought sentence, collect the paragraphs (at
most 15, no duplicates), generate the next sentence from them, until an answer or 10 sentences."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hoprag.context import context_of
from hoprag.nodes.cot import CoTState, close_cot_step, generate_step, sentence_cap_reached
from hoprag.nodes.reasoner import after_answer
from hoprag.nodes.retrieve import search


def ircot_query(state: CoTState) -> str:
    """q_1 is the question; q_t is the last generated sentence (NotesWriting Eq. 3)."""
    chain = state.get("chain") or []
    return chain[-1] if chain else state["question"]


def ircot_retrieve(state: CoTState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    query = ircot_query(state)
    documents = [d.to_dict() for d in search(ctx, query)]
    collected = list(state.get("paragraphs") or [])
    seen = {p["id"] for p in collected}
    for document in documents:  # retrieved paragraphs accumulate, without duplicates, up to the cap
        if document["id"] not in seen and len(collected) < (ctx.max_paragraphs or 15):
            collected.append(document)
            seen.add(document["id"])
    pending = {"kind": "search", "query": query, "argument": query, "entity": ""}
    return {"pending": pending, "documents": documents, "paragraphs": collected,
            "retrievals": (state.get("retrievals") or 0) + 1}


def kept_retrieval(state: CoTState) -> dict[str, Any]:
    """Plain IRCoT: the step's record of what it retrieved, without the paragraphs the cap dropped, which the
    model never read (`retrieval_recall` counts the recorded titles); those are kept as `capped_titles`."""
    collected = {p["id"] for p in state.get("paragraphs") or []}
    documents = state.get("documents") or []
    kept = [d for d in documents if d["id"] in collected]
    record = {"retrieved_ids": [d["id"] for d in kept], "retrieved_titles": [d["title"] for d in kept]}
    if len(kept) < len(documents):
        record["capped_titles"] = [d["title"] for d in documents if d["id"] not in collected]
    return record


def make_ircot_reason(with_notes: bool):
    def ircot_reason(state: CoTState, runtime: Any = None) -> dict[str, Any]:
        """s_t = LM([D or O_t, x, s_<t]): one new sentence, or the answer."""
        ctx = context_of(runtime)
        # `ircot_min_sentences`: an early step opens <s>, so the model writes a sentence to retrieve with first.
        sentence_due = len(state.get("chain") or []) < (ctx.ircot_min_sentences or 0)
        # IRCoT's original code ends the chain at a sentence saying "answer is X" (`answer_is`).
        step, record, _ = generate_step(state, ctx, with_notes, open_sentence=sentence_due, answer_is=True)
        if sentence_due and step.sentence and step.answer:
            step = replace(step, answer="")  # the answer waits until the sentence's retrieval has been read
        # With notes, the note writers read every retrieved page; without, the model reads the paragraphs kept.
        update = close_cot_step(state, step.sentence, problem=step.problem, **({} if with_notes else kept_retrieval(state)))
        update["calls"] = [record]
        if step.answer:
            update.update(answer=step.answer, finished_by="answer")
        return update

    return ircot_reason


def route_after_ircot_reason(state: CoTState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    answered = bool(state.get("answer"))
    if not answered and not sentence_cap_reached(state, ctx):
        return "retrieve"
    if ctx.ircot_reader:  # the reader answers at an <answer> and at the sentence cap alike
        return "read"
    return after_answer(ctx) if answered else "final_answer"
