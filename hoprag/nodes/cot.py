"""What IRCoT and FLARE share: the chain-of-thought state, the few-shot prompt of the NotesWriting paper
(Figure 4) with the documents or notes of the step, the parser of one `<s>...</s>` step, the notes
that replace documents (NotesWriting Eq. 10-11), and the answer at the sentence cap or from a reader."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Annotated, Any

from typing_extensions import TypedDict

from hoprag.context import Context, context_of
from hoprag.llm import call_llm
from hoprag.nodes.generate import first_line
from hoprag.nodes.write_notes import top_segments
from hoprag.prompts.baselines import STANDARD_RAG
from hoprag.prompts.ircot import COT_EXAMPLES, COT_FINAL, COT_INSTRUCTIONS, COT_QUESTION, closed_step_tags
from hoprag.prompts.react import SHORT_ANSWER

STEP_TOKENS = 64  # one step is a short sentence; FLARE drafts 64 look-ahead tokens
STOP = ["</s>", "\nQuestion:", "DOCUMENTS:"]
EMPTY_STEP = "no <s> step and no <answer>"  # the problem recorded for a step that wrote nothing usable


class CoTState(TypedDict, total=False):
    question: str
    chain: list[str]  # the reasoning sentences so far (s_<t)
    generated: list[str]  # IRCoT as FlashRAG runs it: each thought as generated, for its previous_gen
    paragraphs: list[dict[str, Any]]  # IRCoT: collected paragraphs; FLARE: the current documents
    notes: list[str]  # with NotesWriting: the notes that stand in for the documents
    pending: dict[str, Any]  # the retrieval in flight (query) and, in FLARE, the draft it was made for
    # Retrievals so far: notes are stamped with it, so a step reads the notes of its own retrieval only (FLARE makes
    # two retrievals before its first sentence).
    retrievals: int
    documents: list[dict[str, Any]]  # documents retrieved for the step in flight
    step_notes: Annotated[list[dict[str, Any]], operator.add]
    trajectory: Annotated[list[dict[str, Any]], operator.add]
    calls: Annotated[list[dict[str, Any]], operator.add]
    answer: str
    finished_by: str


@dataclass
class CoTStep:
    sentence: str  # the step's sentence without its tags
    answer: str  # the text of <answer>...</answer>, or after "answer is" (IRCoT's stop rule, where asked for)
    problem: str = ""


_ANSWER = re.compile(r"<answer>\s*(.*?)\s*(?:</answer>|$)", re.IGNORECASE | re.DOTALL)
# "answer is X" (IRCoT's exit rule), but not a negative sentence: "The answer is not in these documents" says that
# the chain has no answer yet.
_ANSWER_IS = re.compile(r"\banswer is\b(?!:?\s*(?:not|unknown|unclear)\b):?\s*(.+?)\s*\.?\s*$", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"</?s>|</?answer>", re.IGNORECASE)


def parse_cot_step(text: str, answer_is: bool = True) -> CoTStep:
    """One generated step: the first `<s>` sentence and an `<answer>` if there is one; with `answer_is`, a sentence
    "... answer is X" answers X as well (IRCoT's exit rule). Never raises."""
    text = text if isinstance(text, str) else str(text)
    answer_match = _ANSWER.search(text)
    body = text[: answer_match.start()] if answer_match else text
    step = re.search(r"<s>(.*?)(?:</s>|<s>|$)", body, re.IGNORECASE | re.DOTALL)
    sentence = " ".join(_TAGS.sub(" ", step.group(1) if step else body).split())
    answer = " ".join(answer_match.group(1).split()) if answer_match else ""
    if answer_is and not answer and (said := _ANSWER_IS.search(sentence)) and re.search(r"\w", said.group(1)):
        answer = said.group(1).strip().strip('"')
    if not sentence and not answer:
        return CoTStep("", "", problem=EMPTY_STEP)
    return CoTStep(sentence, answer)


def paragraphs_text(paragraphs: list[dict[str, Any]], words: int) -> str:
    """`Title - text` paragraphs (the prompt's layout), each cut to `words` words."""
    def cut(text: str) -> str:
        split = re.sub(r"^#.*$", "", text, flags=re.MULTILINE).split()
        return " ".join(split[:words]) + (" ..." if len(split) > words else "")

    return "\n\n".join(f"{p['title']} - {cut(p['text'])}" for p in paragraphs)


def context_text(state: CoTState, ctx: Context, with_notes: bool) -> str:
    if with_notes:
        return "\n\n".join(state.get("notes") or []) or "No relevant information was found."
    return paragraphs_text(state.get("paragraphs") or [], ctx.paragraph_words or 350)


def cot_prompt(state: CoTState, ctx: Context, with_notes: bool, final: bool = False) -> str:
    examples = closed_step_tags(COT_EXAMPLES) if ctx.closed_step_tags else COT_EXAMPLES
    instructions = COT_INSTRUCTIONS
    if ctx.short_answer_instruction:
        instructions = instructions.rstrip() + SHORT_ANSWER.replace("The answer", " The final answer") + "\n\n"
    chain = " ".join(f"<s>{s}</s>" for s in state.get("chain") or [])
    prompt = instructions + examples + COT_QUESTION.format(
        documents=context_text(state, ctx, with_notes), question=state["question"], chain=chain)
    return prompt + (COT_FINAL if final else "")


def cot_step_cap(ctx: Context) -> int:
    """The most steps IRCoT and FLARE take: twice the sentence budget, which only steps without a sentence
    reach, and only with `stop_on_empty_step` off."""
    return 2 * (ctx.max_sentences or 10)


def stopped_on_empty_step(state: CoTState, ctx: Context) -> bool:
    """`stop_on_empty_step`: the last step wrote neither a sentence nor an answer."""
    trajectory = state.get("trajectory") or []
    return bool(ctx.stop_on_empty_step and trajectory and trajectory[-1].get("problem") == EMPTY_STEP)


def sentence_cap_reached(state: CoTState, ctx: Context) -> bool:
    """IRCoT's and FLARE's cap: the sentence budget, or `cot_step_cap` steps, or `stopped_on_empty_step`."""
    return (len(state.get("chain") or []) >= (ctx.max_sentences or 10)
            or len(state.get("trajectory") or []) >= cot_step_cap(ctx) or stopped_on_empty_step(state, ctx))


def cap_reason(state: CoTState, ctx: Context) -> str:
    """`finished_by` of a chain that ended without an <answer>."""
    return "empty_step" if stopped_on_empty_step(state, ctx) else "cap"


def generate_step(state: CoTState, ctx: Context, with_notes: bool, logprobs: bool = False,
                  answer_is: bool = False) -> tuple[CoTStep, dict[str, Any], Any]:
    """The reasoner's next step; returns the parsed step, its usage record and the raw message. `answer_is`: a
    sentence "... answer is X" ends the chain with X (IRCoT's original code does this; FLARE's does not)."""
    text, record, message = call_llm("reasoner", cot_prompt(state, ctx, with_notes), ctx, stop=STOP,
                                     max_tokens=STEP_TOKENS, logprobs=logprobs)
    step = parse_cot_step(text, answer_is=answer_is)
    return step, record.parsed(bool(step.problem), step.problem), message


def collect_notes(state: CoTState, runtime: Any = None) -> dict[str, Any]:
    """NotesWriting plugged into IRCoT / FLARE: the notes of this retrieval's documents replace them; with
    `notes_accumulate` the notes of earlier retrievals stay too. With `notes_fallback_segments`, a retrieval whose
    pages all got NO# keeps that many top BM25 segments of its pages instead (as ReNAct `small` does)."""
    ctx = context_of(runtime)
    retrieval = state.get("retrievals")
    documents = state.get("documents") or []
    order = {d["id"]: i for i, d in enumerate(documents)}
    notes = sorted((n for n in state.get("step_notes", []) if n.get("retrieval") == retrieval),
                   key=lambda n: order.get(n["doc_id"], 0))
    fresh = [f"{n['title']} - {n['note']}" for n in notes if n["relevant"]]
    pending = {**state["pending"], "notes": notes}
    if not fresh and documents and ctx.notes_fallback_segments:
        # Without it the 1.5B reasoner read "No relevant information was found." and answered with that
        # sentence (9 of 30 FLARE + notes answers on HotpotQA-hard).
        segments = top_segments(state["pending"].get("query") or state["question"], documents, ctx.notes_fallback_segments)
        fresh = [f"{title} - {text}" for title, text in segments]
    kept = [*(state.get("notes") or []), *fresh] if ctx.notes_accumulate else fresh
    return {"notes": list(dict.fromkeys(kept)), "pending": pending}


def close_cot_step(state: CoTState, sentence: str, **fields: Any) -> dict[str, Any]:
    """A trajectory entry for one reasoning step: the sentence, the retrieval it made, its notes."""
    pending = state.get("pending") or {}
    documents = state.get("documents") or []
    step = {"kind": "search" if pending.get("query") else "reason", "thought": sentence,
            "action": f"retrieve[{pending['query']}]" if pending.get("query") else "",
            "query": pending.get("query", ""), "retrieved_ids": [d["id"] for d in documents],
            "retrieved_titles": [d["title"] for d in documents], "notes": pending.get("notes", []), **fields}
    if pending.get("unrecorded_titles"):  # FLARE: step 0's pages, replaced before a sentence was written from them
        step["earlier_retrieved_titles"] = pending["unrecorded_titles"]
    chain = [*(state.get("chain") or []), sentence] if sentence else list(state.get("chain") or [])
    return {"trajectory": [step], "chain": chain, "pending": {}, "documents": []}


def answer_at_cap(state: CoTState, ctx: Context, with_notes: bool) -> dict[str, Any]:
    """No <answer> within the sentence cap: ask for it once; else the last sentence stands."""
    text, record, _ = call_llm("reasoner", cot_prompt(state, ctx, with_notes, final=True), ctx,
                               stop=["\nQuestion:", "DOCUMENTS:"], max_tokens=STEP_TOKENS)
    step = parse_cot_step(text)
    chain = state.get("chain") or [""]
    answer = step.answer or first_line(_TAGS.sub(" ", text)) or chain[-1]
    call = record.parsed(not step.answer, "" if step.answer else "no <answer> at the cap")
    return {"answer": answer, "finished_by": cap_reason(state, ctx), "calls": [call]}


def make_final_answer(with_notes: bool):
    """The node that answers at the sentence cap (IRCoT and FLARE)."""
    def final_answer(state: CoTState, runtime: Any = None) -> dict[str, Any]:
        return answer_at_cap(state, context_of(runtime), with_notes)

    return final_answer


def read_answer(state: CoTState, runtime: Any = None) -> dict[str, Any]:
    """IRCoT's reader (IRCoT QA): a separate generator call over the collected paragraphs or notes; the
    chain of thought is not passed to it. With notes it reads them, unless the writer refused every page
    of every step: then the collected paragraphs, which hold more than the fallback segments."""
    ctx = context_of(runtime)
    wrote_notes = any(n["relevant"] for n in state.get("step_notes") or [])
    documents = state["notes"] if wrote_notes and state.get("notes") else [
        f"{p['title']} - {p['text']}" for p in state.get("paragraphs") or []]
    passages = "\n".join(f"Doc {i} {d}" for i, d in enumerate(documents, 1))
    text, record, _ = call_llm("generator", STANDARD_RAG.format(documents=passages or "None", question=state["question"]),
                               ctx, max_tokens=48)
    # The reader answers whether the chain ended with an <answer> or at the sentence cap.
    return {"answer": first_line(text), "finished_by": "answer" if state.get("answer") else cap_reason(state, ctx),
            "calls": [record.to_dict()]}
