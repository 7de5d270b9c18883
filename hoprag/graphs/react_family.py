"""The Thought/Action/Observation loop that ReAct, ReAct + BM25 and ReNAct share; they differ in the
observation: raw documents (ReAct), the top BM25 segments of the retrieved pages (ReAct + BM25), or notes
written per document (ReNAct, whose notes may also end the run: `answer_from_notes`)."""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.nodes.generate import answer_from_notes, concise_answer, synthesize
from hoprag.nodes.reasoner import (
    reason,
    route_after_notes,
    route_after_notes_answer,
    route_after_observe,
    route_after_reason,
)
from hoprag.nodes.retrieve import retrieve
from hoprag.nodes.write_notes import (
    fan_out_notes,
    observe_documents,
    observe_notes,
    observe_segments,
    write_note,
    write_notes_iterative,
)
from hoprag.state import AgentState, InputState, OutputState

Observation = Literal["documents", "segments", "notes"]


def build_react_family(observation: Observation) -> StateGraph:
    builder = StateGraph(AgentState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("reason", reason)
    builder.add_node("retrieve", retrieve)
    builder.add_node("synthesize", synthesize)
    builder.add_node("concise_answer", concise_answer)
    builder.add_edge(START, "reason")
    builder.add_conditional_edges("reason", route_after_reason, ["retrieve", "reason", "synthesize", "concise_answer", END])
    observe = f"observe_{observation}"
    if observation == "notes":
        builder.add_node("write_note", write_note)
        builder.add_node("write_notes_iterative", write_notes_iterative)
        builder.add_node(observe, observe_notes)
        builder.add_conditional_edges("retrieve", fan_out_notes, ["write_note", "write_notes_iterative", observe])
        builder.add_edge("write_note", observe)
        builder.add_edge("write_notes_iterative", observe)
        builder.add_node("answer_from_notes", answer_from_notes)
        builder.add_conditional_edges(observe, route_after_notes, ["answer_from_notes", "reason", "synthesize"])
        builder.add_conditional_edges("answer_from_notes", route_after_notes_answer,
                                      ["concise_answer", "reason", "synthesize", END])
    else:
        builder.add_node(observe, observe_documents if observation == "documents" else observe_segments)
        builder.add_edge("retrieve", observe)
        builder.add_conditional_edges(observe, route_after_observe, ["reason", "synthesize"])
    builder.add_edge("synthesize", END)
    builder.add_edge("concise_answer", END)
    return builder
