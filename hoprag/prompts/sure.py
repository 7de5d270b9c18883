"""SuRe's prompts as FlashRAG runs them (RUC-NLPIR/FlashRAG, flashrag/pipeline/branching_pipeline.py,
SuRePipeline.load_prompts), the setting behind ReSP's Table 1 SuRe row. FlashRAG wrote the paper's prompts
(bbuing9/ICLR24_SuRe) as adjacent string literals and dropped the space at some line ends ("After readingthe
passages"); they are kept so, as the benchmark sent them. Each is the user message of a chat with no system
message (FlashRAG's PromptTemplate with an empty system prompt)."""

# Step 1: two answer candidates from the top-N passages.
SURE_CANDIDATES = (
    "Below are {N} passages related to the question at the end. After reading"
    "the passages, provide two correct candidates for the answer to the"
    "question at the end. Each answer should be in the form: (a) xx, (b)"
    "yy, and should not exceed 3 words for each candidate.\n\n"
    "{reference}"
    "Question: {question}\n"
    "Answer:"
)

# Step 2: a summary of the passages that supports one candidate (candidate-conditioned summarization).
SURE_SUMMARY = (
    "Reference:\n{reference}\n"
    "Your job is to act as a professional writer. You need to write a"
    "good-quality passage that can support the given prediction about the"
    "question only based on the information in the provided supporting passages.\n"
    "Now, let's start. After you write, please write [DONE] to indicate you"
    "are done. Do not write a prefix (e.g., 'Response:') while writing a passage.\n"
    "Question: {question}\n"
    "Prediction: {pred}\n"
    "Passage:"
)

# Step 3a: instance-wise validity of a summary for its candidate.
SURE_VERIFY = (
    "Question: {question}\n"
    "Prediction: {pred}\n"
    "Passage: {summary}\n"
    "Does the passage correctly support the prediction? Choices: [True,False].\n"
    "Answer:"
)

# Step 3b: pair-wise ranking of two summaries, asked for every ordered pair.
SURE_RANK = (
    "Question: Given the following passages, determine which one provides a"
    "more informative answer to the subsequent question.\n"
    "Passage 1: {summary1}\n"
    "Passage 2: {summary2}\n"
    "Target Question: {question}\n"
    "Your Task:\n"
    "Identify which passage (Passage 1 or Passage 2) is more relevant and"
    "informative to answer the question at hand. Choices: [Passage 1,Passage 2].\n"
    "Answer:"
)

# FlashRAG's format_ref: each passage as a title line and a text line, then a blank line.
SURE_PASSAGE = "Passage #{number} Title: {title}\nPassage #{number} Text: {text}\n\n"
