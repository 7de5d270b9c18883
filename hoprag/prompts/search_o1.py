"""Search-o1 prompts, verbatim from the official code (sunnynexus/Search-o1, scripts/prompts.py): the multi-hop QA
instruction (`get_multiqa_search_o1_instruction`, which run_search_o1.py gives HotpotQA, 2Wiki, MuSiQue and
Bamboogle), the open-QA task prompt (`get_task_instruction_openqa`, its QwQ and default variants) and the
Reason-in-Documents prompt (`get_webpage_to_reasonchain_instruction`). Braces are doubled for `str.format`; the
two trailing spaces after "Previous Reasoning Steps:**" and the like are original.

`INVALID_FEEDBACK` is hoprag's own (the `search_o1_invalid_feedback` adaptation of `small`), not the official code's.
"""

# The special tokens (scripts/run_search_o1.py).
BEGIN_SEARCH_QUERY = "<|begin_search_query|>"
END_SEARCH_QUERY = "<|end_search_query|>"
BEGIN_SEARCH_RESULT = "<|begin_search_result|>"
END_SEARCH_RESULT = "<|end_search_result|>"

MULTIQA_INSTRUCTION = (
    "You are a reasoning assistant with the ability to perform web searches to help you answer the user's question accurately. You have special tools:\n"
    '\n'
    '- To perform a search: write <|begin_search_query|> your query here <|end_search_query|>.\n'
    'Then, the system will search and analyze relevant web pages, then provide you with helpful information in the format <|begin_search_result|> ...search results... <|end_search_result|>.\n'
    '\n'
    'You can repeat the search process multiple times if necessary. The maximum number of search attempts is limited to {max_search_limit}.\n'
    '\n'
    'Once you have all the information you need, continue your reasoning.\n'
    '\n'
    'Example:\n'
    'Question: "Alice David is the voice of Lara Croft in a video game developed by which company?"\n'
    'Assistant thinking steps:\n'
    '- I need to find out who voices Lara Croft in the video game.\n'
    '- Then, I need to determine which company developed that video game.\n'
    '\n'
    'Assistant:\n'
    '<|begin_search_query|>Alice David Lara Croft voice<|end_search_query|>\n'
    '\n'
    '(System returns processed information from relevant web pages)\n'
    '\n'
    'Assistant thinks: The search results indicate that Alice David is the voice of Lara Croft in a specific video game. Now, I need to find out which company developed that game.\n'
    '\n'
    'Assistant:\n'
    '<|begin_search_query|>video game developed by Alice David Lara Croft<|end_search_query|>\n'
    '\n'
    '(System returns processed information from relevant web pages)\n'
    '\n'
    'Assistant continues reasoning with the new information...\n'
    '\n'
    'Remember:\n'
    '- Use <|begin_search_query|> to request a web search and end with <|end_search_query|>.\n'
    '- When done searching, continue your reasoning.\n'
    '\n'
)

# The default task prompt (`get_task_instruction_openqa(question)`), and QwQ's (`model_name='qwq'`).
TASK_OPENQA = (
    'Please answer the following question. You should think step by step to solve it.\n'
    '\n'
    'Provide your final answer in the format \\boxed{{YOUR_ANSWER}}.\n'
    '\n'
    'Question:\n'
    '{question}\n'
    '\n'
)
TASK_OPENQA_QWQ = (
    'Please answer the following question. You should provide your final answer in the format \\boxed{{YOUR_ANSWER}}.\n'
    '\n'
    'Question:\n'
    '{question}\n'
    '\n'
)

REASON_IN_DOCUMENTS = (
    '**Task Instruction:**\n'
    '\n'
    'You are tasked with reading and analyzing web pages based on the following inputs: **Previous Reasoning Steps**, **Current Search Query**, and **Searched Web Pages**. Your objective is to extract relevant and helpful information for **Current Search Query** from the **Searched Web Pages** and seamlessly integrate this information into the **Previous Reasoning Steps** to continue reasoning for the original question.\n'
    '\n'
    '**Guidelines:**\n'
    '\n'
    '1. **Analyze the Searched Web Pages:**\n'
    '- Carefully review the content of each searched web page.\n'
    '- Identify factual information that is relevant to the **Current Search Query** and can aid in the reasoning process for the original question.\n'
    '\n'
    '2. **Extract Relevant Information:**\n'
    '- Select the information from the Searched Web Pages that directly contributes to advancing the **Previous Reasoning Steps**.\n'
    '- Ensure that the extracted information is accurate and relevant.\n'
    '\n'
    '3. **Output Format:**\n'
    '- **If the web pages provide helpful information for current search query:** Present the information beginning with `**Final Information**` as shown below.\n'
    '**Final Information**\n'
    '\n'
    '[Helpful information]\n'
    '\n'
    '- **If the web pages do not provide any helpful information for current search query:** Output the following text.\n'
    '\n'
    '**Final Information**\n'
    '\n'
    'No helpful information found.\n'
    '\n'
    '**Inputs:**\n'
    '- **Previous Reasoning Steps:**  \n'
    '{prev_reasoning}\n'
    '\n'
    '- **Current Search Query:**  \n'
    '{search_query}\n'
    '\n'
    '- **Searched Web Pages:**  \n'
    '{document}\n'
    '\n'
    'Now you should analyze each web page and find helpful information based on the current search query "{search_query}" and previous reasoning steps.\n'
)

# What run_search_o1.py appends instead of a search: past MAX_SEARCH_LIMIT, and for a query searched before.
LIMIT_MESSAGE = (f"\n{BEGIN_SEARCH_RESULT}\nThe maximum search limit is exceeded. You are not allowed to search."
                 f"\n{END_SEARCH_RESULT}\n")
REPEATED_MESSAGE = (f"\n{BEGIN_SEARCH_RESULT}\nYou have searched this query. Please refer to previous results."
                    f"\n{END_SEARCH_RESULT}\n")
# What Reason-in-Documents answers when its reply has no "**Final Information**" (evaluate.py, extract_answer 'infogen').
NO_INFORMATION = "No helpful information found."

# small (`search_o1_invalid_feedback`): after a turn with malformed special tokens the reasoning goes on, told why. It
# names no \\boxed{} itself: the answer is the output's last one.
INVALID_FEEDBACK = (f"\n{BEGIN_SEARCH_RESULT}\nInvalid search ({{problem}}). To search, write "
                    f"{BEGIN_SEARCH_QUERY} your query here {END_SEARCH_QUERY}; when you know the answer, give it in "
                    "the format the question asks for.\n" f"{END_SEARCH_RESULT}\n")
