"""ReSP prompts, verbatim from Table 4 of "Retrieve, Summarize, Plan" (Jiang et al.). The static
instruction comes first wherever the paper's order allows it."""

JUDGE = (
    "Judging based solely on the current known information and without allowing for inference, are you able to "
    "completely and accurately respond to the question {question}\nKnown information: {memory}\n"
    "If you can, please reply with 'Yes' directly; if you cannot and need more information, please reply with "
    "'No' directly."
)

PLAN = (
    "You serve as an intelligent assistant, adept at facilitating users through complex, multi-hop reasoning "
    "across multiple documents. Please understand the information gap between the currently known information "
    "and the target problem. Your task is to generate one thought in the form of question for next retrieval "
    "step directly. DON'T generate the whole thoughts at once!\n DON'T generate thought which has been "
    "retrieved.\n [Known information]: {memory}\n [Target question]: {question}\n [You Thought]:"
)

GLOBAL_EVIDENCE = (
    "Passages: {docs}\n Your job is to act as a professional writer. You will write a good-quality passage that "
    "can support the given prediction about the question only based on the information in the provided "
    "supporting passages. Now, let's start. After you write, please write [DONE] to indicate you are done. Do "
    "not write a prefix (e.g., 'Response:') while writing a passage.\n Question: {question}\n Passage:"
)

LOCAL_PATHWAY = (
    "Judging based solely on the current known information and without allowing for inference, are you able to "
    "respond completely and accurately to the question {sub_question}\n Known information: {memory} If yes, "
    "please reply with 'Yes', followed by an accurate response to the question {sub_question}, without "
    "restating the question; if no, please reply with 'No' directly."
)

GENERATE = (
    "Answer the question based on the given reference.\n Only give me the answer and do not output any other "
    "words.\n The following are given reference: {memory}\n Question: {question}"
)
