"""IRCoT as FlashRAG's IRCOTPipeline runs it (flashrag/pipeline/active_pipeline.py, IRCOTPipeline), verbatim.

The system prompt is IRCOT_INSTRUCTION, a blank line and IRCOT_EXAMPLE, the one-shot demonstration FlashRAG took from
IRCoT's 2WikiMultihopQA prompt file (gold_with_3_distractors_context_cot_qa_codex.txt); the user prompt is the
documents laid out by REFERENCE, then the question and "Thought:". Each call writes one thought, stopped at its first
period or newline (FlashRAG's stop=['.', '\\n']; its vLLM generator keeps the stop string in the output, its OpenAI
generator appends a period), and a thought with ANSWER_PREFIX ends the chain (flashrag/utils/pred_parse.py,
ircot_pred_parse).
"""

IRCOT_INSTRUCTION = 'You serve as an intelligent assistant, adept at facilitating users through complex, multi-hop reasoning across multiple documents. This task is illustrated through demonstrations, each consisting of a document set paired with a relevant question and its multi-hop reasoning thoughts. Your task is to generate one thought for current step, DON\'T generate the whole thoughts at once! If you reach what you believe to be the final step, start with "So the answer is:".'

# One 2WikiMultihopQA demonstration: five paragraphs, a question and its thought ending "So the answer is: no."
IRCOT_EXAMPLE = 'Wikipedia Title: Kurram Garhi\nKurram Garhi is a small village located near the city of Bannu, which is the part of Khyber Pakhtunkhwa province of Pakistan. Its population is approximately 35000. Barren hills are near this village. This village is on the border of Kurram Agency. Other nearby villages are Peppal, Surwangi and Amandi Kala.\n\nWikipedia Title: 2001–02 UEFA Champions League second group stage\nEight winners and eight runners- up from the first group stage were drawn into four groups of four teams, each containing two group winners and two runners- up. Teams from the same country or from the same first round group could not be drawn together. The top two teams in each group advanced to the quarter- finals.\n\nWikipedia Title: Satellite tournament\nA satellite tournament is either a minor tournament or event on a competitive sporting tour or one of a group of such tournaments that form a series played in the same country or region.\n\nWikipedia Title: Trojkrsti\nTrojkrsti is a village in Municipality of Prilep, Republic of Macedonia.\n\nWikipedia Title: Telephone numbers in Ascension Island\nCountry Code:+ 247< br> International Call Prefix: 00 Ascension Island does not share the same country code( +290) with the rest of St Helena.\n\nQuestion: Are both Kurram Garhi and Trojkrsti located in the same country?\nThought: Kurram Garhi is located in the country of Pakistan. Trojkrsti is located in the country of Republic of Macedonia. Thus, they are not in the same country. So the answer is: no.\n\n'

IRCOT_SYSTEM = f"{IRCOT_INSTRUCTION}\n\n{IRCOT_EXAMPLE}"  # FlashRAG's system_prompt
IRCOT_USER = "{reference}Question: {question}\nThought:"  # FlashRAG's user_prompt
REFERENCE = "Wikipedia Title: {title}\n{text}\n\n"  # FlashRAG's reference_template, one per document
THOUGHT_STOP = [".", "\n"]  # FlashRAG's generate(..., stop=['.', '\n']): one sentence per thought
ANSWER_PREFIX = "So the answer is:"  # ircot_pred_parse's FINAL_ANSWER_PREFIX; the loop's stop test too
