"""FuRePA: plan (n masked candidate plans) -> the plan assessor (vote, DBSCAN query filter, query scorer)
-> retrieve one new document -> plan again, until an answer vote or T iterations (then a forced answer).
A filter that leaves no query raises the temperature: the raise ends the iteration (`furepa_raise_cap` 0, the
paper), or the iteration plans again at most `furepa_raise_cap` times, then the answer is forced."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.furepa import (
    FuRePAState,
    answer,
    assess,
    force_answer,
    plan,
    retrieve,
    route_after_assess,
    route_after_retrieve,
)
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.reasoner import route_after_answer
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(FuRePAState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("plan", plan)
    builder.add_node("assess", assess)
    builder.add_node("retrieve", retrieve)
    builder.add_node("answer", answer)
    builder.add_node("force_answer", force_answer)
    builder.add_node("concise_answer", concise_answer, input_schema=FuRePAState)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "assess")
    builder.add_conditional_edges("assess", route_after_assess, ["retrieve", "plan", "answer", "force_answer"])
    builder.add_conditional_edges("retrieve", route_after_retrieve, ["plan", "force_answer"])
    for done in ("answer", "force_answer"):
        builder.add_conditional_edges(done, route_after_answer, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "furepa")


graph = build()
