"""Standard RAG baseline: retrieve the top-k documents for the question, answer in one call."""

from langgraph.graph import END, START, StateGraph

from hoprag.context import Context
from hoprag.graphs import compile_method
from hoprag.nodes.generate import answer_from_documents
from hoprag.nodes.retrieve import retrieve_question
from hoprag.state import AgentState, InputState, OutputState


def build():
    builder = StateGraph(AgentState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("retrieve", retrieve_question)
    builder.add_node("generate", answer_from_documents)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "generate")
    builder.add_edge("generate", END)
    return compile_method(builder, "rag")


graph = build()
