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
