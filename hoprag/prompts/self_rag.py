"""Self-RAG's short-form inference prompts (AkariAsai/self-rag, retrieval_lm/utils.py PROMPT_DICT["prompt_no_input"]
and run_short_form.py; FlashRAG's SelfRAGPipeline uses the same layout). Open-domain QA (PopQA, TriviaQA) has no
task instruction there, so the instruction is the question itself."""

# PROMPT_DICT["prompt_no_input"], the question as the instruction.
SELF_RAG_PROMPT = "### Instruction:\n{question}\n\n### Response:\n"

# run_short_form.py: each retrieved passage is appended after the retrieval token, its title and text on two lines.
SELF_RAG_PARAGRAPH = "[Retrieval]<paragraph>{title}\n{text}</paragraph>"

# run_short_form.py: the generation without retrieval continues after the no-retrieval token.
SELF_RAG_NO_RETRIEVAL = "[No Retrieval]"
