"""SuRe (Kim et al., ICLR 2024), as FlashRAG runs it: candidates, a candidate-conditioned summary each, validity and
pair-wise ranking of the summaries, then the best-scored candidate is the answer."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.reasoner import route_after_answer
from hoprag.nodes.retrieve import question_documents
from hoprag.nodes.sure import (
    SuReState,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    route_after_candidates,
    sure_candidates,
    sure_rank,
    sure_summarize,
    sure_verify,
)
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(SuReState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve", question_documents)
    builder.add_node("candidates", sure_candidates)
    builder.add_node("summarize", sure_summarize)
    builder.add_node("verify", sure_verify)
    builder.add_node("rank", sure_rank)
    builder.add_node("concise_answer", concise_answer, input_schema=SuReState)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "candidates")
    builder.add_conditional_edges("candidates", route_after_candidates, ["summarize", "concise_answer", END])
    builder.add_edge("summarize", "verify")
    builder.add_edge("verify", "rank")
    builder.add_conditional_edges("rank", route_after_answer, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "sure")


graph = build()
