"""FLARE and FLARE + NotesWriting. The confidence gate is a conditional edge: a confident look-ahead
sentence is accepted, an unconfident one sends the graph to retrieve with its masked form and generate
the sentence again. With notes, the notes of the new documents replace them (NotesWriting Eq. 11)."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.graphs.ircot import add_notes
from hoprag.nodes.cot import CoTState, make_final_answer
from hoprag.nodes.flare import (
    accept,
    flare_retrieve,
    gate,
    make_draft,
    make_regenerate,
    route_after_context,
    route_after_sentence,
)
from hoprag.nodes.generate import concise_answer
from hoprag.state import InputState, OutputState


def build_flare(with_notes: bool) -> StateGraph:
    builder = StateGraph(CoTState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve", flare_retrieve)
    builder.add_node("draft", make_draft(with_notes))
    builder.add_node("accept", accept)
    builder.add_node("regenerate", make_regenerate(with_notes))
    builder.add_node("final_answer", make_final_answer(with_notes))
    builder.add_node("concise_answer", concise_answer, input_schema=CoTState)
    builder.add_edge(START, "retrieve")
    if with_notes:
        add_notes(builder, "retrieve")
    ready = "observe_notes" if with_notes else "retrieve"
    builder.add_conditional_edges(ready, route_after_context, ["draft", "regenerate"])
    builder.add_conditional_edges("draft", gate, ["accept", "retrieve"])
    for sentence in ("accept", "regenerate"):
        builder.add_conditional_edges(sentence, route_after_sentence, ["draft", "final_answer", "concise_answer", END])
    builder.add_edge("final_answer", END)
    builder.add_edge("concise_answer", END)
    return builder


def build():
    return compile_method(build_flare(with_notes=False), "flare")


graph = build()
