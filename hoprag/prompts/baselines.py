"""Single-shot baselines. Standard RAG and the closed-book direct answer use FlashRAG's prompts (the
ReSP paper's baselines come from FlashRAG); CoT ends with IRCoT's "So the answer is:" convention."""

STANDARD_RAG = (
    "Answer the question based on the given document. Only give me the answer and do not output any other "
    "words.\nThe following are given documents.\n\n{documents}\n\nQuestion: {question}"
)

# FlashRAG's standard prompt as its code sends it (flashrag/prompt/base_prompt.py, PromptTemplate.base_system_prompt
# and base_user_prompt): a system and a user message. The system prompt's strings are concatenated without a space, so
# "document.Only" is verbatim; its documents are PromptTemplate.format_reference's lines (FLASHRAG_REFERENCE each).
FLASHRAG_SYSTEM = (
    "Answer the question based on the given document."
    "Only give me the answer and do not output any other words."
    "\nThe following are given documents.\n\n{reference}"
)
FLASHRAG_USER = "Question: {question}"
FLASHRAG_REFERENCE = "Doc {number}(Title: {title}) {text}\n"

COT = (
    "Answer the following question from your own knowledge. Think step by step in a few sentences, then end "
    "with one line of the form \"So the answer is: <answer>\"{short_answer}.\n\nQuestion: {question}"
)
# The `short_answer_instruction` option (small preset).
COT_SHORT_ANSWER = ", where the answer is only the few words that answer the question (the specific name, date, number, or yes/no), never a sentence"
