"""The NotesWriting prompt (NotesWriting paper, Appendix A.6, Figure 5; ReNAct paper, Figure 3)."""

NOTES_PROMPT = """Extract relevant information which is not previously extracted from the Wikipedia page provided in markdown format relevant to the given query. You will be provided with the Wikipedia page, query, and the previously extracted content. Do not miss any information. Do not add irrelevant information or anything outside of the provided sources. Provide the answer in the format: <YES/NO>#<Relevant context>.
Here are the rules:
- If you don't know how to answer the query - start your answer with NO#
- If the text is not related to the query - start your answer with NO#
- If the content is already extracted - start your answer with NO#
- If you can extract relevant information - start your answer with YES#
Example answers:
- YES#Western philosophy originated in Ancient Greece in the 6th century BCE with the pre-Socratics.
- NO#No relevant context.
Context: {context}
Previous Context: {previous}
Query: {query}"""


# `partial_notes` (small preset): Figure 5 without its first rule. With it, the 1.5B writer answers NO# for a
# page that holds part of the answer ("Lorenzo Monaco ... influenced by Giotto" for "Who influenced Lorenzo
# Monaco?"): it reads "don't know how to answer the query" as "this page alone does not answer the question".
ANSWER_RULE = "- If you don't know how to answer the query - start your answer with NO#\n"
PARTIAL_NOTES_PROMPT = NOTES_PROMPT.replace(ANSWER_RULE, "")
