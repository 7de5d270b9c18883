"""ReaRAG: reason (Thought + a search/finish function call, invalid steps regenerated), the RAG engine's
answer as the observation, a step bound (no answer there, or a forced finish: `rearag_forced_finish`), and the
concise answer (the official code's answer-model prompt, run by the `generator` role)."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.rearag import (
    ReaRAGState,
    concise,
    force_finish,
    rag_engine,
    reason,
    route_after_observation,
    route_after_reason,
    unanswered,
)
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(ReaRAGState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("reason", reason)
    builder.add_node("rag_engine", rag_engine)
    builder.add_node("force_finish", force_finish)
    builder.add_node("unanswered", unanswered)
    builder.add_node("concise", concise)
    builder.add_edge(START, "reason")
    builder.add_conditional_edges("reason", route_after_reason, ["rag_engine", "force_finish", "unanswered", "concise", END])
    builder.add_conditional_edges("rag_engine", route_after_observation, ["reason", "force_finish", "unanswered"])
    builder.add_edge("unanswered", END)
    builder.add_edge("force_finish", "concise")
    builder.add_edge("concise", END)
    return compile_method(builder, "rearag")


graph = build()
