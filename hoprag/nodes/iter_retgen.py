"""Iter-RetGen (Shao et al., 2023) as FlashRAG's IterativePipeline runs it: T rounds of retrieve-then-generate.
Round 1 retrieves with the question; round t > 1 with the question and round t-1's generation joined by a
space. Each round generates from its own retrieval only, with FlashRAG's standard RAG prompt; the last
round's generation is the answer."""

from __future__ import annotations

from typing import Any

from hoprag.context import Context, context_of, given
from hoprag.llm import call_llm
from hoprag.nodes.generate import first_line
from hoprag.nodes.retrieve import search
from hoprag.prompts.iter_retgen import ITER_RETGEN_GENERATE, NEXT_QUERY
from hoprag.state import RunState

EMPTY_GENERATION = "empty generation"  # the problem recorded for a round that generated nothing
DEFAULT_ROUNDS = 3  # FlashRAG's IterativePipeline (iter_num=3)


class IterRetGenState(RunState, total=False):
    generations: list[str]  # each round's generation, in order (y_1 .. y_t)
    pending: dict[str, Any]  # the retrieval of the round in flight: its query and round number
    documents: list[dict[str, Any]]  # the documents the round in flight retrieved


def iter_retgen_rounds(ctx: Context) -> int:
    """T: `iter_retgen_rounds`, at least one round."""
    return max(1, given(ctx.iter_retgen_rounds, DEFAULT_ROUNDS))


def iter_retgen_query(state: IterRetGenState) -> str:
    """q_1 is the question; q_t is the question, a space and y_{t-1} (FlashRAG: f"{q} {r}")."""
    generations = state.get("generations") or []
    if not generations:
        return state["question"]
    return NEXT_QUERY.format(question=state["question"], generation=generations[-1])


def iter_retgen_retrieve(state: IterRetGenState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    query = iter_retgen_query(state)
    documents = [d.to_dict() for d in search(ctx, query)]
    round_number = len(state.get("generations") or []) + 1
    return {"pending": {"kind": "search", "query": query, "argument": query, "entity": "", "round": round_number},
            "documents": documents}


def passages_text(documents: list[dict[str, Any]]) -> str:
    """The documents as hoprag's standard RAG lays them out in FlashRAG's prompt (`Doc i (Title: t) text`)."""
    return "\n".join(f"Doc {i} (Title: {d['title']}) {d['text']}" for i, d in enumerate(documents, 1))


def iter_retgen_generate(state: IterRetGenState, runtime: Any = None) -> dict[str, Any]:
    """y_t: one generator call over round t's documents; after round T it is the answer."""
    ctx = context_of(runtime)
    documents = state.get("documents") or []
    passages = passages_text(documents)
    prompt = ITER_RETGEN_GENERATE.format(documents=passages or "None", question=state["question"])
    text, record, _ = call_llm("generator", prompt, ctx)
    generation = text.strip()
    pending = state.get("pending") or {}
    step = {**pending, "thought": generation, "action": f"retrieve[{pending.get('query', '')}]",
            "retrieved_ids": [d["id"] for d in documents], "retrieved_titles": [d["title"] for d in documents],
            "observation": passages or "The search returned no documents."}
    if not generation:  # an empty y_t is a round lost: the next query is the question alone (and a space)
        step["problem"] = EMPTY_GENERATION
    generations = [*(state.get("generations") or []), generation]
    update: dict[str, Any] = {"trajectory": [step], "generations": generations, "pending": {}, "documents": [],
                              "calls": [record.parsed(not generation, EMPTY_GENERATION if not generation else "")]}
    if len(generations) >= iter_retgen_rounds(ctx):
        # FlashRAG scores the last generation whole; hoprag reads its first line, as standard RAG does.
        update.update(answer=first_line(generation), finished_by="generate")
    return update


def route_after_generate(state: IterRetGenState, runtime: Any = None) -> str:
    """Another round until T, then the answer (small: the concise-answer / answer-choices step)."""
    from hoprag.nodes.reasoner import after_answer

    ctx = context_of(runtime)
    return "retrieve" if not state.get("finished_by") else after_answer(ctx)


def counters(result: dict[str, Any]) -> dict[str, int]:
    """Iter-RetGen's own counters for `hoprag eval`: rounds run, searches made, invalid (empty) generations."""
    trajectory = result.get("trajectory") or []
    return {"rounds": sum(1 for step in trajectory if step.get("round")),
            "searches": sum(1 for step in trajectory if step.get("kind") == "search"),
            "invalid_outputs": int(result.get("invalid_outputs") or 0)}
