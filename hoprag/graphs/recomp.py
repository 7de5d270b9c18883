"""RECOMP (Xu et al., ICLR 2024) as FlashRAG runs it: retrieve the top-k documents, compress them (a released T5
abstractive compressor, the extractive sentence selector, or an LLM stand-in), and answer from the compressed text."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.recomp import (
    RecompState,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    recomp_compress,
    recomp_generate,
    route_after_generate,
)
from hoprag.nodes.retrieve import question_documents
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(RecompState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve", question_documents)
    builder.add_node("compress", recomp_compress)
    builder.add_node("generate", recomp_generate)
    builder.add_node("concise_answer", concise_answer, input_schema=RecompState)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "compress")
    builder.add_edge("compress", "generate")
    builder.add_conditional_edges("generate", route_after_generate, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "recomp")


graph = build()
