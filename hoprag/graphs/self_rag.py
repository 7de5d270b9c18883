"""Self-RAG (Asai et al., 2024), the official short-form inference: a retrieve decision from the [Retrieval] token's
probability, one generation per retrieved passage scored by its reflection tokens, the best one the answer."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.retrieve import question_documents
from hoprag.nodes.self_rag import (
    SelfRagState,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    decide,
    generate_per_document,
    generate_without_retrieval,
    route_after_decide,
)
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(SelfRagState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("decide", decide)
    builder.add_node("retrieve", question_documents)
    builder.add_node("generate_per_document", generate_per_document)
    builder.add_node("generate_without_retrieval", generate_without_retrieval)
    builder.add_edge(START, "decide")
    builder.add_conditional_edges("decide", route_after_decide, ["retrieve", "generate_without_retrieval"])
    builder.add_edge("retrieve", "generate_per_document")
    builder.add_edge("generate_per_document", END)
    builder.add_edge("generate_without_retrieval", END)
    return compile_method(builder, "self-rag")


graph = build()
