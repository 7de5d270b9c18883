"""SearChain: the LLM writes a Chain-of-Query, retrieval verifies each node with a reader (top-1 passage) and sends
back the first correction or missing knowledge, and the LLM writes the chain again, until a chain is verified or the
official 5 rounds; the answer is the one its [Final Content] states. The concise-answer step follows in `small`."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import concise_answer
from hoprag.nodes.reasoner import route_after_answer
from hoprag.nodes.searchain import SearChainState, answer, chain, route_after_verify, verify
from hoprag.state import InputState, OutputState


def build():
    builder = StateGraph(SearChainState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("chain", chain)
    builder.add_node("verify", verify)
    builder.add_node("answer", answer)
    builder.add_node("concise_answer", concise_answer, input_schema=SearChainState)
    builder.add_edge(START, "chain")
    builder.add_edge("chain", "verify")
    builder.add_conditional_edges("verify", route_after_verify, ["chain", "answer"])
    builder.add_conditional_edges("answer", route_after_answer, ["concise_answer", END])
    builder.add_edge("concise_answer", END)
    return compile_method(builder, "searchain")


def counters(result: dict[str, Any]) -> dict[str, int]:
    """SearChain's own counts of one run (summary.json averages them): Chain-of-Query rounds, nodes the reader read
    (searches), corrections, missing knowledge supplied, and rounds whose output was no Chain-of-Query."""
    steps = result.get("trajectory") or []
    return {"rounds": sum(1 for s in steps if s.get("kind") == "chain"),
            "searches": sum(1 for s in steps if s.get("kind") == "search"),
            "corrections": sum(1 for s in steps if s.get("verdict") == "corrected"),
            "missing_knowledge": sum(1 for s in steps if s.get("verdict") == "missing knowledge"),
            "invalid_outputs": sum(1 for s in steps if s.get("kind") == "chain" and s.get("problem"))}


graph = build()
