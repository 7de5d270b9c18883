"""REPLUG (Shi et al., 2024), as FlashRAG runs it: each retrieved document prepended separately, and the answer
generated token by token from the next-token distributions ensembled with weights from the retrieval scores."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.replug import (
    ReplugState,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    replug_generate,
    route_after_generate,
)
from hoprag.nodes.retrieve import question_documents
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(ReplugState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve", question_documents)
    builder.add_node("ensemble_generate", replug_generate)
    builder.add_node("concise_answer", concise_answer, input_schema=ReplugState)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "ensemble_generate")
    builder.add_conditional_edges("ensemble_generate", route_after_generate, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "replug")


graph = build()
