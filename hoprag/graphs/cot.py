"""CoT baseline (closed book): the generator reasons step by step with no retrieval."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import answer_closed_book
from hoprag.state import AgentState, InputState, OutputState


def build():
    builder = StateGraph(AgentState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("generate", answer_closed_book)
    builder.add_edge(START, "generate")
    builder.add_edge("generate", END)
    return compile_method(builder, "cot")


graph = build()
