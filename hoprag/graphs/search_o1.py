"""Search-o1: reason until a `<|begin_search_query|>...<|end_search_query|>`, Reason-in-Documents over the top documents
for it, the result appended, and on, up to MAX_TURN generations and MAX_SEARCH_LIMIT searches; the answer is the last
`\\boxed{}` of the output. The concise-answer step follows in `small`."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.reasoner import route_after_answer
from hoprag.nodes.search_o1 import (
    SearchO1State,
    answer,
    reason,
    reason_in_documents,
    route_after_documents,
    route_after_reason,
)
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(SearchO1State, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("reason", reason)
    builder.add_node("reason_in_documents", reason_in_documents)
    builder.add_node("answer", answer)
    builder.add_node("concise_answer", concise_answer, input_schema=SearchO1State)
    builder.add_edge(START, "reason")
    builder.add_conditional_edges("reason", route_after_reason, ["reason_in_documents", "reason", "answer"])
    builder.add_conditional_edges("reason_in_documents", route_after_documents, ["reason", "answer"])
    builder.add_conditional_edges("answer", route_after_answer, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "search-o1")


def counters(result: dict[str, Any]) -> dict[str, int]:
    """Search-o1's own counts of one run (summary.json averages them): reasoner generations, searches run, searches
    refused (past the limit or repeated), turns with malformed special tokens, and Reason-in-Documents replies
    without Final Information."""
    steps = result.get("trajectory") or []
    return {"rounds": sum(1 for s in steps if s.get("round")),
            "searches": sum(1 for s in steps if s.get("kind") == "search"),
            "refused_searches": sum(1 for s in steps if s.get("kind") == "refused"),
            "invalid_outputs": sum(1 for s in steps if s.get("problem")),
            "reason_in_documents_failures": sum(1 for s in steps if s.get("no_final_information"))}


graph = build()
