"""Long-context reading, ReaRAG's "in-context" baseline (002, Table 1: "the corpus is directly appended to the
language model's context"). The paper's copy has no prompt for it and the official code (THU-KEG/ReaRAG) no script;
hoprag asks with the official code's RAG-engine prompt in its later revision, the one that answers only from the
given context (hoprag.prompts.rearag.RAG_ENGINE_STRICT), with the whole corpus as the context."""

from hoprag.prompts.rearag import RAG_ENGINE_STRICT

LONG_CONTEXT = RAG_ENGINE_STRICT

# Each paragraph as the official corpus writes a passage's `contents` (a quoted title line, then the text), the
# paragraphs joined by blank lines, as the RAG engine joins its passages (hoprag.nodes.rearag.engine_answer).
PARAGRAPH = '"{title}"\n{text}'
PARAGRAPH_SEPARATOR = "\n\n"
