"""Self-Ask (Press et al., 2023) with retrieval, as FlashRAG's SelfAskPipeline runs it (the Ret-Robust setting):
the question's passages, then rounds that alternate a follow-up question (searched; its passages replace the
prompt's) and its intermediate answer, until "So the final answer is:" or the round cap."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.self_ask import (
    SelfAskState,
    answer_at_cap,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    route_after_round,
    route_after_search,
    search_follow_up,
    search_question,
    self_ask_round,
)
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(SelfAskState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("search_question", search_question)
    builder.add_node("round", self_ask_round)
    builder.add_node("search", search_follow_up)
    builder.add_node("answer_at_cap", answer_at_cap)
    builder.add_node("concise_answer", concise_answer, input_schema=SelfAskState)
    builder.add_edge(START, "search_question")
    builder.add_edge("search_question", "round")
    builder.add_conditional_edges("round", route_after_round, ["search", "round", "answer_at_cap", "concise_answer", END])
    builder.add_conditional_edges("search", route_after_search, ["round", "answer_at_cap"])
    builder.add_conditional_edges("answer_at_cap", route_after_round, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "self-ask")


graph = build()
