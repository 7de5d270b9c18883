"""REPLUG as FlashRAG runs it (RUC-NLPIR/FlashRAG, flashrag/pipeline/branching_pipeline.py, REPLUGPipeline;
examples/methods/run_exp.py, `replug`), the setting behind ReSP's Table 1 row (31.2 / 21.1 F1). Each retrieved
document gets a prompt of its own: FlashRAG's standard RAG prompt (its PromptTemplate default, the prompt hoprag's
`rag` uses) with that one document as the reference, formatted by REPLUGPipeline.format_reference."""

from hoprag.prompts.baselines import STANDARD_RAG

# One document's prompt; REPLUG ensembles the next-token distributions of these prompts.
REPLUG_GENERATE = STANDARD_RAG

# FlashRAG's REPLUGPipeline.format_reference: `f"Document(Title: {title}): {text}"`.
REPLUG_DOCUMENT = "Document(Title: {title}): {text}"
