"""ChatCoT: one chat in which each hop is a reasoning turn, then a call of the retrieval tool (the model writes the
sentence to retrieve with; the documents come back as user turns, one at a time, until the model keeps one), then
"Continue reasoning"; "the answer is" ends the chat, or the hop cap asks for the answer. The concise-answer step
follows in `small`."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.chatcot import (
    ChatCoTState,
    call_retriever,
    counters,  # noqa: F401  (the eval runner's per-method counters: hoprag.graphs.method_counters)
    final_answer,
    judge_evidence,
    reason,
    route_after_final,
    route_after_reason,
    route_after_tool,
)
from hoprag.nodes.generate import concise_answer
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(ChatCoTState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("reason", reason)
    builder.add_node("call_retriever", call_retriever)
    builder.add_node("judge_evidence", judge_evidence)
    builder.add_node("final_answer", final_answer)
    builder.add_node("concise_answer", concise_answer, input_schema=ChatCoTState)
    builder.add_edge(START, "reason")
    builder.add_conditional_edges("reason", route_after_reason, ["call_retriever", "concise_answer", END])
    builder.add_conditional_edges("call_retriever", route_after_tool, ["judge_evidence", "reason", "final_answer"])
    builder.add_conditional_edges("judge_evidence", route_after_tool, ["judge_evidence", "reason", "final_answer"])
    builder.add_conditional_edges("final_answer", route_after_final, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "chatcot")


graph = build()
