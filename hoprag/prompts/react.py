"""ReAct / ReNAct reasoner prompt, in the style of the NotesWriting and ReNAct papers (Tables 6-8)."""

REACT_INSTRUCTIONS = """Solve a question answering task with interleaving Thought, Action, Observation steps. Thought reasons about the current situation. Action is exactly one of:
(1) search[entity; query]: searches Wikipedia for the entity and returns what the pages say about the query. Use search[query] when there is no single entity.
(2) finish[answer]: returns the answer and ends the task.{short_answer}
Write one Thought line and one Action line per turn, then stop and wait for the Observation.

Example:
Question: Which magazine was started first, Arthur's Magazine or First for Women?
Thought 1: I need to find when Arthur's Magazine and First for Women were started, then compare.
Action 1: search[Arthur's Magazine; When was Arthur's Magazine started?]
Observation 1: (Result 1) Arthur's Magazine - Arthur's Magazine (1844-1846) was an American literary periodical published in Philadelphia.
Thought 2: Arthur's Magazine was started in 1844. Now I need the start of First for Women.
Action 2: search[First for Women; When was First for Women started?]
Observation 2: (Result 1) First for Women - First for Women is a woman's magazine published by Bauer Media Group in the USA. The magazine was started in 1989.
Thought 3: First for Women was started in 1989, after 1844, so Arthur's Magazine was started first.
Action 3: finish[Arthur's Magazine]

Example:
Question: The director of the romantic comedy "Big Stone Gap" is based in what New York city?
Thought 1: I need the director of "Big Stone Gap", then where that director is based.
Action 1: search[Big Stone Gap (film); Who directed Big Stone Gap?]
Observation 1: (Result 1) Big Stone Gap (film) - Big Stone Gap is a 2014 American romantic comedy film directed by Adriana Trigiani.
Thought 2: The director is Adriana Trigiani. I need to find where she is based.
Action 2: search[Adriana Trigiani; Where is Adriana Trigiani based?]
Observation 2: (Result 1) Adriana Trigiani - Adriana Trigiani is an Italian American best-selling author and film director based in Greenwich Village, New York City.
Thought 3: Adriana Trigiani is based in Greenwich Village.
Action 3: finish[Greenwich Village, New York City]
"""

# `constrained_actions`: the reasoner's turn as a llama.cpp grammar (GBNF): one Thought line, then one search or
# finish whose argument holds no newline or "]". {number} is the step being written. The lengths are bounded so a
# model that would go on writing (a rejected blank line is not an end) must turn to the action within 256 tokens;
# one or more newlines may separate the lines (Qwen's tokenizer has a single token for a blank line).
REACT_GRAMMAR = r"""root ::= "Thought {number}: " line "\n"+ "Action {number}: " action
line ::= [^\n]{{1,500}}
action ::= ("search" | "finish") "[" argument "]"
argument ::= [^\n\]]{{1,200}}
"""

REACT_QUESTION = """
Question: {question}"""

# Appended to the finish action's description by the `short_answer_instruction` option (small preset).
SHORT_ANSWER = " The answer is only the few words that answer the question (the specific name, date, number, or yes/no), never a sentence."

# At the step cap T: "a final answer is synthesized based on the full history and the collected notes"
# (NotesWriting §3.2). The history is the reasoner's own chat turns; this is the last user turn.
SYNTHESIZE = """You have reached the step limit. Based on the full history above{and_notes}, give the final answer to the question: {question}{short_answer}
{notes}Answer:"""

SYNTHESIZE_NOTES = """
Collected notes:
{notes}
"""

# `plain_synthesis` (small): the answer at the cap from one user message, the history as a plain transcript. After the
# ReAct chat turns of SYNTHESIZE the 1.5B model went on in ReAct format ("Thought 7: I need to find where ...", or its
# copy of the invalid-action feedback), and that thought was the answer. The static instruction comes first.
PLAIN_SYNTHESIZE = """The search for the question below has reached its step limit. Answer the question from the search history{and_notes}: reply with the answer only, with no Thought or Action, and do not search again.{short_answer}

Question: {question}

Search history:
{history}
{notes}Answer:"""

CONCISE = """Shorten the answer to the fewest words that still answer the question (the specific name, date, number, or yes/no). Reply with the short answer only.

Question: {question}
Long answer: {answer}
Short answer:"""

# `answer_choices` (small preset): the final answer of a question that names its choices, when the draft answer names
# none of them. Static part first; the choices last, right before the reply: with the draft answer last, the 1.5B
# model copied it in 6 of 11 calls. The reply is also held to the choices by a grammar where the backend takes one.
CHOOSE = """Pick the answer to the question from its choices. The draft answer may name something about one choice (its director, author or date) rather than the choice itself: use the evidence to tell which choice it points to. Reply with the choice only.

Question: {question}
Evidence:
{evidence}
Draft answer: {answer}
Choices:
{choices}
Choice:"""

# `answer_from_notes` (small preset, ReNAct): after each step that wrote notes, the answer if the notes gathered so
# far hold it. The question comes before the notes, which only grow, so the KV-cache prefix is kept. Asked for a
# Yes/No verdict first, the 1.5B model said "No" even to "Lorenzo Monaco - Giotto"; asked for the answer or
# "unknown", it answers, and the answer must then occur in the notes (it also wrote years no note held).
NOTES_ANSWER = """Answer the question using only the notes below.{short_answer} If the notes do not say what the answer is, reply "unknown".

Question: {question}
Notes:
{notes}
Answer:"""
