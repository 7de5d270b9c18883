"""hoprag: iterative retrieval-augmented multi-hop QA methods as LangGraph state machines."""

__version__ = "0.1.0"
