"""IRCoT and IRCoT + NotesWriting: retrieve with the last sentence, then reason one sentence, until an
<answer> or the sentence cap. With notes, the notes written from each step's documents replace the raw
paragraphs (NotesWriting Eq. 10); the note writers are ReNAct's own nodes."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.cot import CoTState, collect_notes, make_final_answer, read_answer
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.ircot import ircot_retrieve, make_ircot_reason, route_after_ircot_reason
from hoprag.nodes.reasoner import route_after_answer
from hoprag.nodes.write_notes import fan_out_cot_notes, write_cot_notes_iterative, write_note
from hoprag.state import InputState, OutputState


def add_notes(builder: StateGraph, after: str, then: str | None = None) -> None:
    """NotesWriting after a retrieval node: ReNAct's note writers, then `observe_notes`, which puts the
    retrieval's notes in place of its documents, then `then` (or the caller's own edge out of observe_notes). The
    writers' Previous Context is the notes the reasoner sees (`visible_cot_notes`)."""
    builder.add_node("write_note", write_note)
    builder.add_node("write_notes_iterative", write_cot_notes_iterative)
    builder.add_node("observe_notes", collect_notes)  # the name the shared fan-out routes to
    builder.add_conditional_edges(after, fan_out_cot_notes, ["write_note", "write_notes_iterative", "observe_notes"])
    builder.add_edge("write_note", "observe_notes")
    builder.add_edge("write_notes_iterative", "observe_notes")
    if then:
        builder.add_edge("observe_notes", then)


def build_ircot(with_notes: bool) -> StateGraph:
    builder = StateGraph(CoTState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve", ircot_retrieve)
    builder.add_node("reason", make_ircot_reason(with_notes))
    builder.add_node("final_answer", make_final_answer(with_notes))
    builder.add_node("read", read_answer)
    builder.add_node("concise_answer", concise_answer, input_schema=CoTState)
    builder.add_edge(START, "retrieve")
    if with_notes:
        add_notes(builder, "retrieve", "reason")
    else:
        builder.add_edge("retrieve", "reason")
    builder.add_conditional_edges("reason", route_after_ircot_reason, ["retrieve", "read", "final_answer", "concise_answer", END])
    builder.add_edge("final_answer", END)
    # The reader answers like standard RAG, in a sentence when the notes are few ("... is Rush"): small shortens it.
    builder.add_conditional_edges("read", route_after_answer, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return builder


def build():
    return compile_method(build_ircot(with_notes=False), "ircot")


graph = build()
