"""SearChain prompts, verbatim from the official code (xsc1234/Search-in-the-Chain, SearChain_w_IR.py), whitespace
and all: the Chain-of-Query prompt (the first user message; the question is filled in twice, as there; its
example's "So the answer is Arthur’s Magazi" is cut short there too) and the two feedback prompts that follow a
round the verification answered (a correction of a [Query] answer, or the missing knowledge of an [Unsolved Query];
the second has a full-width colon). The feedback's three fields are the verification's message split at <SEP>,
labels included ("[Query]:...", "[Answer]:...", "[Reference]:..."), as there.

`LLM_READER` is hoprag's own: the paper's reader is DPR (`searchain_reader="dpr"`); the LLM reader stands in for it.
"""

CHAIN_OF_QUERY = (
    'Construct a global reasoning chain for this complex [Question] : " {question} " You should generate a query to the search engine based on\n'
    '                        what you already know at each step of the reasoning chain, starting with [Query].\n'
    '                        If you know the answer for [Query], generate it starting with [Answer].\n'
    '                        You can try to generate the final answer for the [Question] by referring to the [Query]-[Answer] pairs, starting with [Final\n'
    '                        Content].\n'
    "                        If you don't know the answer, generate a query to search engine based on what you already know and do not know, starting with\n"
    '                        [Unsolved Query].\n'
    '                        For example:\n'
    '                        [Question]: "Where do greyhound buses that are in the birthplace of Spirit If...\'s performer leave from? "\n'
    '                        [Query 1]: Who is the performer of Spirit If... ?\n'
    "                        If you don't know the answer:\n"
    '                        [Unsolved Query]: Who is the performer of Spirit If... ?\n'
    '                        If you know the answer:\n'
    '                        [Answer 1]: The performer of Spirit If... is Kevin Drew.\n'
    '                        [Query 2]: Where was Kevin Drew born?\n'
    "                        If you don't know the answer:\n"
    '                        [Unsolved Query]: Where was Kevin Drew born?\n'
    '                        If you know the answer:\n'
    '                        [Answer 2]: Toronto.\n'
    '                        [Query 3]: Where do greyhound buses in Toronto leave from?\n'
    "                        If you don't know the answer:\n"
    '                        [Unsolved Query]: Where do greyhound buses in Toronto leave from?\n'
    '                        If you know the answer:\n'
    '                        [Answer 3]: Toronto Coach Terminal.\n'
    '                        [Final Content]: The performer of Spirit If... is Kevin Drew [1]. Kevin Drew was born in Toronto [2]. Greyhound buses in\n'
    '                        Toronto leave from Toronto\n'
    '                        Coach Terminal [3]. So the final answer is Toronto Coach Terminal.\n'
    '                        \n'
    '                        [Question]:"Which magazine was started first Arthur’s Magazine or First for Women?"\n'
    '                        [Query 1]: When was Arthur’s Magazine started?\n'
    '                        [Answer 1]: 1844.\n'
    '                        [Query 2]: When was First for Women started?\n'
    '                        [Answer 2]: 1989\n'
    '                        [Final Content]: Arthur’s Magazine started in 1844 [1]. First for Women started in 1989 [2]. So Arthur’s Magazine was started\n'
    '                        first. So the answer is Arthur’s Magazi\n'
    '                        [Question]: {question}\n'
    '                    '
)

# After a [Query] the verification corrected.
CORRECTION = (
    '\n'
    '                    According to this Reference, the answer for "{query}" should be "{answer}",  \n'
    '                    you can change your answer based on the Reference and continue constructing the reasoning chain to give the final answer for [Question]:{question}\n'
    '                    Reference: {reference}\n'
    '                    '
)

# After an [Unsolved Query] the verification answered.
COMPLETION = (
    '\n'
    '                    According to this Reference, the answer for "{query}" should be "{answer}",  \n'
    '                    you can give your answer based on the Reference and continue constructing the reasoning chain to give the final answer for [Question]：{question}\n'
    '                    Reference: {reference}\n'
    '                    '
)

# The verification's message (Server/server.py), split at <SEP> into the feedback's fields.
CORRECTION_MESSAGE = "[Query]:{query}<SEP>[Answer]:{answer}<SEP>[Reference]:{reference}<SEP>"
COMPLETION_MESSAGE = "[Unsolved Query]:{query}<SEP>[Answer]:{answer}<SEP>[Reference]:{reference}<SEP>"

# The passage layout of the official index (ColBERT/process_hotpotqa_wiki.py).
PASSAGE = "Title: {title} Text: {text}"

# hoprag's LLM reader (`searchain_reader="llm"`): a span from the passage that answers the query, or that it does not.
LLM_READER = ("Read the passage and answer the query with the shortest span of the passage that answers it. If the "
              "passage does not answer the query, write only: unanswerable.\n\nPassage: {passage}\n\nQuery: {query}\n"
              "Answer:")
UNANSWERABLE = "unanswerable"
