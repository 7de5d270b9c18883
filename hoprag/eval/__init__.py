"""Evaluation: dataset loaders, answer/retrieval metrics, LLM judge, runner and reports."""
