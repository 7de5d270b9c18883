"""ReSP (Retrieve, Summarize, Plan): a judge/plan reasoner, a retriever, a dual summarizer filling the
global-evidence and local-pathway memory queues, a generator, and an iteration cap (the last iteration goes to the
generator without a judgement)."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.resp import (
    ReSPState,
    generate,
    judge,
    plan,
    resp_retrieve,
    route_after_judge,
    route_after_plan,
    route_after_summarize,
    summarize,
)
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(ReSPState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve", resp_retrieve)
    builder.add_node("summarize", summarize)
    builder.add_node("judge", judge)
    builder.add_node("plan", plan)
    builder.add_node("generate", generate)
    # Iteration 1: the sub-question is the question itself, so the reasoner's plan is bypassed.
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "summarize")
    builder.add_conditional_edges("summarize", route_after_summarize, ["judge", "generate"])
    builder.add_conditional_edges("judge", route_after_judge, ["generate", "plan"])
    builder.add_conditional_edges("plan", route_after_plan, ["retrieve", "generate"])
    builder.add_edge("generate", END)
    return compile_method(builder, "resp")


graph = build()
