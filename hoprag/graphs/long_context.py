"""Long-context reading, ReaRAG's "in-context" baseline: the question's whole corpus in the prompt, cut to the
generator's window, answered in one call."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.long_context import (
    LongContextInput,
    LongContextState,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    long_context_read,
)
from hoprag.nodes.reasoner import route_after_answer
from hoprag.state import OutputState


def build():
    builder = StateGraph(LongContextState, context_schema=Context, input_schema=LongContextInput,
                         output_schema=OutputState)
    builder.add_node("read", long_context_read)
    builder.add_node("concise_answer", concise_answer, input_schema=LongContextState)
    builder.add_edge(START, "read")
    builder.add_conditional_edges("read", route_after_answer, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "long-context")


graph = build()
