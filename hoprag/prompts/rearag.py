"""ReaRAG prompts, verbatim from the official code (THU-KEG/ReaRAG; the paper's appendix is missing from our
copy; the official code gives them). The typo "reasoining" is original.

The data-construction prompt is not quoted there, only described (the reasoner prompt extended with
rules and one in-context example, the Yuma Library District / Tucson chain): `DATA_RULES` and
`DATA_EXAMPLE` are hoprag's rendering of that description, not the official text.
"""

REARAG_SYSTEM = 'Your task is to solve a question answering task. To improve your solving accuracy, please conduct reasoning process interleaving Thought, Action, Observation steps. Thought can reason about the current situation, and Action are in the form of function, there are two types:\n\n# Available functions:\n(1) search\n{\n    "name": "search",\n    "description": "It can help you find useful information through the internet or local knowledge base. You can use this tool to access external knowledge",\n    "parameters": {\n        "type": "object",\n        "properties": {\n            "query": {\n                "description": "what you want to search"\n            }\n        },\n        "required": [\n            "query"\n        ]\n    }\n}\n\n(2) finish\n{\n    "name": "finish",\n    "description": "You can use this function to make a conclusion from the reasoning process and give the final answer. The reasoining process is completed after this `finish` function is called",\n    "parameters": {\n        "type": "object",\n        "properties": {\n            "answer": {\n                "description": "the final answer"\n            }\n        },\n        "required": [\n            "answer"\n        ]\n    }\n}\n\nPlease follow the format strictly.\n'

# The RAG engine's answer prompt (the one the released training data was built with).
RAG_ENGINE = 'If the Question is comparison type, do not refer the given Context, else, answer the Question based on the given Contexts.\n\nContext: {context}\n\nQuestion: {query}\n\nAnswer:\n'

# A later revision of the official code uses this one instead (option rearag_engine_prompt="strict").
RAG_ENGINE_STRICT = ("#Context\n{context}\n\n#Instruction\nAnswer the query based on the given Context. **Do not "
                     "provide answer from your own knowledge!!**.\nQuery: {query}\nResponse:")

# The answer model shortens the finish answer (April 2025 revision, closest to the paper).
CONCISE = "The Reference Answer is the final answer to the question. It's the final deterministic answer, your task is to give concise version of it. Only give me the short answer and do not output any other words.\n[Question]\n{question}\n[Reference answer]\n{reference_ans}\n\nOnly give me the short answer and do not output any other words. For yes, or no answer, only answer it short. Give the shortest answer possible.\n"

# At the step bound without a finish: hoprag asks for it once (the official code returns None there).
FORCE_FINISH = ("You have reached the maximum number of steps. Give your final answer now as Action {number}: "
                "{{'function': 'finish', 'parameters': {{'answer': '...'}}}}")

# An invalid step (the official code rolls it back and samples again; this note is not sent to the
# model in `paper`, only with the `rearag_invalid_feedback` option of `small`).
INVALID_FEEDBACK = ("Your last output had no valid action ({problem}). Write 'Thought {number}: ...' and then "
                    "'Action {number}: ' with one dict: {{'function': 'search', 'parameters': {{'query': '...'}}}} or "
                    "{{'function': 'finish', 'parameters': {{'answer': '...'}}}}.")

# `constrained_actions`: the reasoner's turn as a llama.cpp grammar (GBNF), in the official call shape. The
# parameter is a double-quoted string, so a query with an apostrophe ("Arthur's Magazine") stays one literal.
REARAG_GRAMMAR = r"""root ::= "Thought {number}: " line "\n"+ "Action {number}: " call
line ::= [^\n]{{1,500}}
call ::= "{{'function': 'search', 'parameters': {{'query': " text "}}}}" | "{{'function': 'finish', 'parameters': {{'answer': " text "}}}}"
text ::= "\"" [^"\\\n]{{1,200}} "\""
"""

DATA_RULES = """
Rules:
1. Number your steps: Thought 1, Action 1, then Observation 1 comes back; Thought 2, Action 2, and so on.
2. In each step write one Thought, then one Action, and stop: the Observation is returned to you.
3. Reflect on earlier steps when needed, for example: "Wait! Maybe I made some mistakes! I need to rethink from scratch."
4. Use only the information in the observations (the context), not your own knowledge.
5. End with the finish function once the observations answer the question.
"""

DATA_EXAMPLE = """
Example:
Question: What was the wettest year in the second largest city in the state where Yuma Library District is located?
Thought 1: I need to find the state where the Yuma Library District is located.
Action 1: {'function': 'search', 'parameters': {'query': 'In which state is the Yuma Library District located?'}}
Observation 1: The Yuma Library District is located in Yuma County, Arizona.
Thought 2: The state is Arizona. Next I need the second largest city in Arizona.
Action 2: {'function': 'search', 'parameters': {'query': 'What is the second largest city in Arizona?'}}
Observation 2: Tucson is the second largest city in Arizona.
Thought 3: The city is Tucson. Now I need the wettest year in Tucson.
Action 3: {'function': 'search', 'parameters': {'query': 'What was the wettest year in Tucson?'}}
Observation 3: The wettest year on record in Tucson was 1905.
Thought 4: Wait! Maybe I made some mistakes! Let me confirm that 1905 is the wettest year in Tucson's records.
Action 4: {'function': 'search', 'parameters': {'query': 'Tucson annual precipitation record wettest year'}}
Observation 4: Tucson's wettest calendar year was 1905, with 24.17 inches of rain.
Thought 5: Both observations agree that the wettest year in Tucson was 1905.
Action 5: {'function': 'search', 'parameters': {'query': 'Is Tucson the second largest city in Arizona?'}}
Observation 5: Yes, Tucson is Arizona's second-largest city after Phoenix.
Thought 6: Everything is confirmed. The answer is 1905.
Action 6: {'function': 'finish', 'parameters': {'answer': '1905'}}
"""

DATA_USER = "Question: {question}\n\nReasoning process with function call:"
