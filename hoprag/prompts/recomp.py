"""RECOMP (Xu et al., ICLR 2024) as FlashRAG runs it (RUC-NLPIR/FlashRAG: flashrag/refiner/refiner.py,
AbstractiveRecompRefiner and ExtractiveRefiner; examples/methods/run_exp.py, `recomp`), the setting behind ReSP's
Table 1 row. The compressor's output takes the place of the documents in FlashRAG's standard RAG prompt
(SequentialPipeline: `get_string(question=q, formatted_reference=refine_result)`)."""

from hoprag.prompts.baselines import STANDARD_RAG

# The T5 abstractive compressors' input, as the official training script (carriex/recomp,
# train_hf_summarization_model.py) and FlashRAG's AbstractiveRecompRefiner write it; `{documents}` is the documents'
# texts (without titles) joined by newlines.
COMPRESSOR_INPUT = "Question: {question}\n Document: {documents}\n Summary: "

# The LLM compressor (`recomp_compressor=llm`): the prompts the RECOMP paper sent to GPT-3.5-turbo to make the
# abstractive compressors' training summaries (Appendix, Table 8), words verbatim; the line breaks are hoprag's.
# NQ and TQA (the nq/tqa checkpoints):
LLM_COMPRESS_SUMMARY = (
    "Compress the information in the retrieved documents into a 2-sentence summary that could be used to answer "
    "the question:\nQuestion: {question}\nRetrieved documents: {documents}\nCompressed documents:"
)
# HotpotQA (the hotpotqa checkpoint, which FlashRAG also runs on 2WikiMultihopQA):
LLM_COMPRESS_REASONING = (
    "Source documents: {documents}\nQuestion: {question}\nGenerate a reasoning chain to answer the question:"
)

# The generator reads the compressor's output where standard RAG reads the documents.
RECOMP_GENERATE = STANDARD_RAG
