"""NotesWriting: one note-writer call per retrieved document, fanned out with `Send` (parallel) or
written one after another where each note sees the notes before it (ReNAct, iterative)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langgraph.types import Send

from hoprag.context import context_of
from hoprag.llm import call_llm
from hoprag.nodes.parsing import normalize_query, parse_note
from hoprag.nodes.retrieve import notes_query
from hoprag.prompts.notes import NOTES_PROMPT, PARTIAL_NOTES_PROMPT
from hoprag.state import AgentState

NO_NOTES = "None"
NO_NOTES_FALLBACK = "No notes were written from these pages; the passages that best match the query:\n"


def gathered_notes(trajectory: list[dict[str, Any]]) -> list[str]:
    """Notes of every finished step: O_t in the paper's Algorithm 1."""
    return [f"{n['title']} - {n['note']}" for step in trajectory for n in step.get("notes", []) if n["relevant"]]


def visible_cot_notes(state: dict[str, Any], ctx: Any) -> list[str]:
    """IRCoT / FLARE: the notes the reasoner still sees when the next retrieval's notes come in, which is the note
    writer's "Previous Context". Without `notes_accumulate` the new notes replace the earlier ones (Eq. 10-11), so
    there are none: a page retrieved again is noted again rather than refused as "already extracted"."""
    return list(state.get("notes") or []) if ctx.notes_accumulate else []


def react_previous_notes(state: dict[str, Any], ctx: Any) -> list[str]:
    """ReAct family: every earlier step's notes stay in the reasoner's history, so the writer sees them all."""
    return gathered_notes(state.get("trajectory", []))


PreviousNotes = Callable[[dict[str, Any], Any], list[str]]


def numbered_results(pages: list[tuple[str, str]]) -> str:
    """An observation in the ReNAct paper's shape: one "(Result i) title - text" line a note, page or segment."""
    return "\n".join(f"(Result {i}) {title} - {text}" for i, (title, text) in enumerate(pages, 1))


def write_one_note(
    step: int, query: str, document: dict[str, Any], previous: list[str], ctx: Any, retrieval: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    prompt = (PARTIAL_NOTES_PROMPT if ctx.partial_notes else NOTES_PROMPT).format(
        context=f"# {document['title']}\n\n{document['text']}" if not document["text"].startswith("#") else document["text"],
        previous="\n".join(previous) or NO_NOTES,
        query=query,
    )
    # Small note writers fall into "NO#NO#NO#..." loops; stopping there saves up to max_tokens per note.
    stop = ["#NO#", "\nContext:"] if ctx.note_stop_sequences else None
    text, record, _ = call_llm("notes", prompt, ctx, stop=stop)
    parsed = parse_note(text, lenient=bool(ctx.lenient_notes))
    note = {"step": step, "doc_id": document["id"], "title": document["title"], "relevant": parsed.relevant,
            "note": parsed.body, "raw": text, "problem": parsed.problem}
    if retrieval is not None:  # IRCoT / FLARE: the retrieval the note was written for (FLARE makes two in a step)
        note["retrieval"] = retrieval
    if parsed.relevant and ctx.grounded_notes and not grounded(parsed.body, document["text"]):
        # Small writers copy the previous notes into a page that does not contain them: not a note of this page.
        note.update(relevant=False, ungrounded=True)
    # An output with no verdict is invalid, even where the lenient option keeps it as a note.
    return note, record.parsed(invalid=bool(parsed.problem), problem=parsed.problem)


# Words that say nothing about whether a note came from the page.
_FUNCTION_WORDS = frozenset(
    "the a an and or of in on at to for from by with as is was were are be been has had have it its this that "
    "which who whom whose what when where not no yes also than then there their they he she his her".split())


def grounded(note: str, page: str, share: float = 0.5) -> bool:
    """Whether at least `share` of the note's content words occur in the page."""
    words = [w for w in normalize_query(note).split() if w not in _FUNCTION_WORDS]
    if not words:
        return True
    present = set(normalize_query(page).split())
    return sum(w in present for w in words) >= share * len(words)


def make_fan_out_notes(previous_notes: PreviousNotes) -> Callable[..., list[Send] | str]:
    """The conditional edge after a retrieval: one `write_note` per document, or the iterative writer. Shared by
    every method with NotesWriting (ReNAct, IRCoT, FLARE): it reads the pending query, the documents, the
    trajectory and the retrieval count, whatever the method's state; `previous_notes` gives the writer's Previous
    Context, the notes the method's reasoner sees."""
    def fan_out_notes(state: dict[str, Any], runtime: Any = None) -> list[Send] | str:
        ctx = context_of(runtime)
        documents = state.get("documents") or []
        if not documents:
            # Every graph with notes calls the node after its writers `observe_notes`, so this edge is shared.
            return "observe_notes"
        if ctx.notes_mode == "iterative":
            return "write_notes_iterative"
        previous = previous_notes(state, ctx)
        query = notes_query(state["pending"], ctx)
        step, retrieval = len(state.get("trajectory", [])), state.get("retrievals")
        return [Send("write_note", {"step": step, "retrieval": retrieval, "query": query, "document": d,
                                    "previous": previous})
                for d in documents]

    return fan_out_notes


def write_note(payload: dict[str, Any], runtime: Any = None) -> dict[str, Any]:
    note, record = write_one_note(payload["step"], payload["query"], payload["document"], payload["previous"],
                                  context_of(runtime), retrieval=payload.get("retrieval"))
    return {"step_notes": [note], "calls": [record]}


def make_write_notes_iterative(previous_notes: PreviousNotes) -> Callable[..., dict[str, Any]]:
    """ReNAct's iterative writer: each note sees the notes written before it, after `previous_notes`."""
    def write_notes_iterative(state: dict[str, Any], runtime: Any = None) -> dict[str, Any]:
        ctx = context_of(runtime)
        previous = previous_notes(state, ctx)
        step, retrieval = len(state.get("trajectory", [])), state.get("retrievals")
        notes, calls = [], []
        for document in state.get("documents") or []:
            note, record = write_one_note(step, notes_query(state["pending"], ctx), document, previous, ctx,
                                          retrieval=retrieval)
            notes.append(note)
            calls.append(record)
            if note["relevant"]:
                previous = [*previous, f"{note['title']} - {note['note']}"]
        return {"step_notes": notes, "calls": calls}

    return write_notes_iterative


fan_out_notes = make_fan_out_notes(react_previous_notes)
write_notes_iterative = make_write_notes_iterative(react_previous_notes)
fan_out_cot_notes = make_fan_out_notes(visible_cot_notes)
write_cot_notes_iterative = make_write_notes_iterative(visible_cot_notes)


def observe_notes(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """Aggregate the step's notes into its observation and close the step."""
    ctx = context_of(runtime)
    order = {d["id"]: i for i, d in enumerate(state.get("documents") or [])}
    step = len(state.get("trajectory", []))
    notes = sorted((n for n in state.get("step_notes", []) if n["step"] == step), key=lambda n: order.get(n["doc_id"], 0))
    kept = [n for n in notes if n["relevant"]]
    if kept:
        observation = numbered_results([(n["title"], n["note"]) for n in kept])
    elif not state.get("documents"):
        observation = "The search returned no documents. Try a different search term."
    elif ctx.notes_fallback_segments:
        # The writer refused every page: show the pages' best passages rather than nothing.
        segments = top_segments(state["pending"]["query"], state["documents"], ctx.notes_fallback_segments)
        observation = NO_NOTES_FALLBACK + numbered_results(segments)
    else:
        observation = "No relevant information was found. Try a different search term."
    return close_step(state, observation, notes=notes)


def observe_documents(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """ReAct baseline: the raw retrieved documents are the observation."""
    documents = state.get("documents") or []
    if not documents:
        return close_step(state, "The search returned no documents. Try a different search term.")
    observation = numbered_results([(d["title"], d["text"]) for d in documents])
    return close_step(state, observation)


SEGMENTS = 5  # ReAct + BM25: segments per observation (the ReNAct paper's Table 7 shows five)
SEGMENT_WORDS = 50


def page_segments(document: dict[str, Any], words: int = SEGMENT_WORDS) -> list[str]:
    """A page cut into segments of about `words` words along its paragraphs and sentences."""
    text = re.sub(r"^#.*$", "", document["text"], flags=re.MULTILINE)  # the page's own title heading
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n{2,}", text) if s.strip()]
    segments: list[str] = []
    current: list[str] = []
    for sentence in sentences:
        current.append(" ".join(sentence.split()))
        if sum(len(s.split()) for s in current) >= words:
            segments.append(" ".join(current))
            current = []
    if current:
        segments.append(" ".join(current))
    return segments


def top_segments(query: str, documents: list[dict[str, Any]], n: int = SEGMENTS) -> list[tuple[str, str]]:
    """The `n` segments of the retrieved pages that BM25 ranks highest for the query: (title, segment)."""
    from hoprag.retrievers.index import bm25_rank

    pool = [(d["title"], segment) for d in documents for segment in page_segments(d)]
    if len(pool) <= n:
        return pool
    ranking = bm25_rank(query, [segment for _, segment in pool])
    if ranking is None:
        return pool[:n]  # no query word is in the pages: keep reading order
    return [pool[i] for i, _ in ranking[:n]]


def observe_segments(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """ReAct + BM25: the top BM25 segments of the retrieved pages for the query are the observation."""
    documents = state.get("documents") or []
    if not documents:
        return close_step(state, "The search returned no documents. Try a different search term.")
    segments = top_segments(state["pending"]["query"], documents)
    observation = numbered_results(segments)
    return close_step(state, observation)


def close_step(state: AgentState, observation: str, notes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    pending = dict(state["pending"])
    pending["retrieved_ids"] = [d["id"] for d in state.get("documents") or []]
    pending["retrieved_titles"] = [d["title"] for d in state.get("documents") or []]
    pending["notes"] = notes or []
    pending["observation"] = observation
    return {"trajectory": [pending], "documents": []}
