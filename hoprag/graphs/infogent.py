"""Infogent (direct API-driven): the Navigator searches and picks pages; the Extractor pulls what a page holds; the
Aggregator adds it to the aggregated list and feeds back to the Navigator, until the Navigator finishes or reaches
its cap (checked before each reply, as AutoGPT's loop does). The answer is written from the aggregated list; the concise-answer step follows in `small`."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.infogent import (
    InfogentState,
    aggregate,
    answer,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    extract,
    navigate,
    route_after_answer,
    route_after_extract,
    route_after_navigate,
    search_pages,
)
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(InfogentState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("navigate", navigate)
    builder.add_node("search", search_pages)
    builder.add_node("extract", extract)
    builder.add_node("aggregate", aggregate)
    builder.add_node("answer", answer)
    builder.add_node("concise_answer", concise_answer, input_schema=InfogentState)
    builder.add_edge(START, "navigate")
    builder.add_conditional_edges("navigate", route_after_navigate, ["search", "extract", "navigate", "answer"])
    builder.add_edge("search", "navigate")
    builder.add_conditional_edges("extract", route_after_extract, ["aggregate", "navigate"])
    builder.add_edge("aggregate", "navigate")
    builder.add_conditional_edges("answer", route_after_answer, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "infogent")


graph = build()
