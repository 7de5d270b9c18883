"""Iter-RetGen as FlashRAG runs it (RUC-NLPIR/FlashRAG, flashrag/pipeline/active_pipeline.py, IterativePipeline;
examples/methods/run_exp.py, `iterretgen`), the setting behind ReSP's Table 1 row (38.3 / 21.6 F1). Each round is
FlashRAG's standard RAG generation (its PromptTemplate default, the prompt hoprag's `rag` uses) over the round's
own retrieval; FlashRAG gives the pipeline no prompt of its own."""

from hoprag.prompts.baselines import STANDARD_RAG

# Round t's generation prompt: the question over the documents retrieved in round t (not the earlier rounds').
ITER_RETGEN_GENERATE = STANDARD_RAG

# Round t > 1 retrieves with the question and round t-1's generation, joined by one space:
# `input_query = [f"{q} {r}" for q, r in zip(questions, past_generation_result)]`.
NEXT_QUERY = "{question} {generation}"
