"""Iter-RetGen (Shao et al., 2023), as FlashRAG runs it: T rounds of retrieve-then-generate, each round retrieving
with the question and the previous round's generation; the last generation is the answer."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.iter_retgen import (
    IterRetGenState,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    iter_retgen_generate,
    iter_retgen_retrieve,
    route_after_generate,
)
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(IterRetGenState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve", iter_retgen_retrieve)
    builder.add_node("generate", iter_retgen_generate)
    builder.add_node("concise_answer", concise_answer, input_schema=IterRetGenState)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "generate")
    builder.add_conditional_edges("generate", route_after_generate, ["retrieve", "concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "iter-retgen")


graph = build()
