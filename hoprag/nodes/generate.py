"""Final-answer nodes: synthesis at the iteration cap, a concise-answer pass (small preset: small models
often `finish` with a whole sentence, which scores F1 near zero against short gold answers), and
the single-shot baselines' generators."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import HumanMessage

from hoprag.answers import normalize_answer
from hoprag.context import context_of
from hoprag.llm import call_llm, context_window, count_tokens, resolve_spec
from hoprag.nodes.choices import keep_to_choices
from hoprag.nodes.parsing import parse_react
from hoprag.nodes.reasoner import DROPPED, cut_middle, fit_prompt
from hoprag.nodes.write_notes import close_step, gathered_notes, grounded
from hoprag.prompts.baselines import (
    COT,
    COT_SHORT_ANSWER,
    FLASHRAG_REFERENCE,
    FLASHRAG_SYSTEM,
    FLASHRAG_USER,
    STANDARD_RAG,
)
from hoprag.prompts.react import (
    CONCISE,
    NOTES_ANSWER,
    PLAIN_SYNTHESIZE,
    SHORT_ANSWER,
    SYNTHESIZE,
    SYNTHESIZE_NOTES,
)
from hoprag.state import AgentState

CONCISE_WORDS = 8
SYNTHESIS_TOKENS = 48  # the cap's answer: a few words, or a sentence the concise step shortens


ANSWER_LABELS = ("Answer:", "Short answer:", "Final answer:")
LOWER_ANSWER_LABELS = tuple(label.lower() for label in ANSWER_LABELS)
# A line that is only a header, as the synthesis prompt's own "Collected notes:" echoed back.
BARE_HEADER = re.compile(r"\s*[A-Za-z][\w ]{0,30}:\s*$")


def first_line(text: str) -> str:
    """The first line of a reply that holds an answer, without an "Answer:" label (a label alone on its
    line, as in "Answer:\nCharlie Murphy", is skipped)."""
    for line in text.strip().splitlines():
        answer = line.strip()
        for prefix in ANSWER_LABELS:
            if answer.lower().startswith(prefix.lower()):
                answer = answer[len(prefix):].strip()
        answer = answer.strip().strip('"').rstrip(".")
        if answer:
            return answer
    return ""


def synthesize(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """At the cap T: "a final answer is synthesized based on the full history and the collected notes"
    (NotesWriting §3.2). The history is the reasoner's chat turns, fitted to the generator's window by
    dropping the oldest observations first (then the oldest notes), so a long run never overflows."""
    ctx = context_of(runtime)
    trajectory = state.get("trajectory", [])
    notes = gathered_notes(trajectory)
    if ctx.plain_synthesis:
        return plain_synthesis(state, ctx, notes)
    request = SYNTHESIZE.format(
        and_notes=" and the collected notes" if notes else "",
        question=state["question"],
        short_answer=SHORT_ANSWER if ctx.short_answer_instruction else "",
        notes=SYNTHESIZE_NOTES.format(notes="\n".join(notes)) if notes else "",
    )
    messages, _ = fit_prompt(state["question"], trajectory, ctx, role="generator", tail=[HumanMessage(request)],
                             max_tokens=SYNTHESIS_TOKENS)
    text, record, _ = call_llm("generator", messages, ctx, max_tokens=SYNTHESIS_TOKENS)
    return {"answer": synthesized_answer(text), "answer_reply": text, "finished_by": "cap", "calls": [record.to_dict()]}


def history_transcript(trajectory: list[dict[str, Any]], dropped: int = 0) -> str:
    """The run as plain text for `plain_synthesis`: each step's thought, its search and what it found. An invalid
    step keeps its thought (it may state the answer, "John Knox died in 1572.") but not the parser's feedback,
    which the model would copy; the first `dropped` observations are replaced by a marker."""
    lines: list[str] = []
    for number, step in enumerate(trajectory, 1):
        lines.append(f"Step {number}: {step.get('thought', '')}".rstrip())
        if step.get("kind") == "search":
            lines.append(f"Searched: {step.get('argument', '')}")
            lines.append(f"Found: {DROPPED if number <= dropped else step.get('observation', '')}")
    return "\n".join(lines)


def plain_synthesis(state: AgentState, ctx: Any, notes: list[str]) -> dict[str, Any]:
    """`plain_synthesis` (small): the cap's answer from one user message holding the question, the history as a
    transcript and the notes, fitted to the generator's window as the chat synthesis is: the oldest observations go
    first, then the middle of the history (keeping the newest observation's start), then of the notes."""
    trajectory = state.get("trajectory", [])
    spec = resolve_spec("generator", ctx)
    budget = context_window(spec, ctx) - SYNTHESIS_TOKENS - 16

    def prompt_with(history: str, notes_text: str) -> str:
        return PLAIN_SYNTHESIZE.format(
            and_notes=" and the collected notes" if notes else "", question=state["question"],
            short_answer=SHORT_ANSWER if ctx.short_answer_instruction else "", history=history,
            notes=SYNTHESIZE_NOTES.format(notes=notes_text) if notes else "")

    def overflow(history: str, notes_text: str) -> int:
        return count_tokens(spec, "generator", ctx, prompt_with(history, notes_text)) - budget

    notes_text = "\n".join(notes)
    for dropped in range(max(1, len(trajectory))):
        history = history_transcript(trajectory, dropped)
        if overflow(history, notes_text) <= 0:
            break
    if (over := overflow(history, notes_text)) > 0:
        history = cut_middle(history, 4 * over)
    if (over := overflow(history, notes_text)) > 0:
        notes_text = cut_middle(notes_text, 4 * over)
    text, record, _ = call_llm("generator", prompt_with(history, notes_text), ctx, max_tokens=SYNTHESIS_TOKENS)
    return {"answer": synthesized_answer(text), "answer_reply": text, "finished_by": "cap", "calls": [record.to_dict()]}


def synthesized_answer(text: str) -> str:
    """The answer in a synthesis reply. After a ReAct history the model may go on in its format
    ("Thought 7: ... Action 7: finish[X]"): the finish argument is the answer, a bare Thought line
    loses its label, and an echoed "Observation 6: ..." line is not an answer. A reply that echoes the
    prompt's "Collected notes:" header (ReNAct `paper` on MuSiQue answered with it) is read past the
    header: a labelled "Answer: X" line wins, else the first line after it."""
    action = parse_react(text)
    if action.kind == "finish":
        return action.argument
    lines = [line for line in text.strip().splitlines()
             if not re.match(r"\s*Observation\s*\d*\s*:", line, re.IGNORECASE) and not BARE_HEADER.match(line)]
    labelled = next((answer for line in lines if line.strip().lower().startswith(LOWER_ANSWER_LABELS)
                     and (answer := first_line(line))), "")
    return labelled or first_line(re.sub(r"^\s*(Thought|Action)\s*\d*\s*:\s*", "", "\n".join(lines).strip(), flags=re.IGNORECASE))


def is_short(answer: str) -> bool:
    """An answer short enough to keep as written: the concise-answer steps leave it alone."""
    return len(answer.split()) <= CONCISE_WORDS


def concise_answer(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """The last step after a method's answer (small): shorten an answer of more than 8 words (`concise_answer`), then
    keep it to the question's named choices (`answer_choices`)."""
    ctx = context_of(runtime)
    answer = state.get("answer", "")
    calls: list[dict[str, Any]] = []
    if ctx.concise_answer and not is_short(answer):
        text, record, _ = call_llm("generator", CONCISE.format(question=state["question"], answer=answer), ctx,
                                   max_tokens=32)
        answer = first_line(text) or answer
        calls.append(record.to_dict())
    answer, records = keep_to_choices(state, answer, ctx)
    calls.extend(records)
    return {"answer": answer, "calls": calls} if calls else {}


# A question that asks for a number or a date: an early answer without a digit is an intermediate hop (the
# README's question "What is the population of the city where Anne Frank ... hid" was answered "Amsterdam").
ASKS_FOR_NUMBER = re.compile(r"\b(how many|how much|how old|how long|how far|what year|which year|what age|population|"
                             r"number of|when)\b", re.IGNORECASE)


def answer_from_notes(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """`answer_from_notes` (small preset, ReNAct): the answer, if the notes gathered so far hold it. It ends the
    run only when every content word of it occurs in the notes and not every one in the question; "unknown", a
    yes/no, an answer the notes do not contain, one that only repeats the question ("Force India" for "...
    sold and renamed Force India?"), or one without a digit to a question for a number or date lets the
    reasoner go on."""
    ctx = context_of(runtime)
    notes = "\n".join(gathered_notes(state.get("trajectory", [])))
    prompt = NOTES_ANSWER.format(question=state["question"], notes=notes,
                                 short_answer=SHORT_ANSWER if ctx.short_answer_instruction else "")
    text, record, _ = call_llm("generator", prompt, ctx, max_tokens=32)
    answer = first_line(text)
    if (not answer or normalize_answer(answer) in {"unknown", "yes", "no"} or not grounded(answer, notes, share=1.0)
            or grounded(answer, state["question"], share=1.0)
            or (ASKS_FOR_NUMBER.search(state["question"]) and not re.search(r"\d", answer))):
        return {"calls": [record.to_dict()]}
    return {"answer": answer, "finished_by": "notes", "calls": [record.to_dict()]}


def answer_from_documents(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """Standard RAG: one generator call over the retrieved documents; the retrieval is the one step."""
    ctx = context_of(runtime)
    documents = state.get("documents") or []
    if ctx.rag_prompt == "flashrag":  # FlashRAG's SequentialPipeline: its system and user prompts, its output cap
        passages = "".join(FLASHRAG_REFERENCE.format(number=i, title=d["title"], text=d["text"])
                           for i, d in enumerate(documents, 1))
        text, record, _ = call_llm("generator", FLASHRAG_USER.format(question=state["question"]), ctx,
                                   system=FLASHRAG_SYSTEM.format(reference=passages))
        draft = text.strip()  # FlashRAG scores the whole reply (normalized), not its first line
    else:
        passages = "\n".join(f"Doc {i} (Title: {d['title']}) {d['text']}" for i, d in enumerate(documents, 1))
        prompt = STANDARD_RAG.format(documents=passages or "None", question=state["question"])
        text, record, _ = call_llm("generator", prompt, ctx, max_tokens=48)
        draft = first_line(text)
    update = close_step(state, passages or "The search returned no documents.")
    answer, records = keep_to_choices(state, draft, ctx, passages)
    return {**update, "answer": answer, "finished_by": "generate", "calls": [record.to_dict(), *records]}


def answer_closed_book(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """CoT without retrieval: reason step by step, then read the answer after "So the answer is:"."""
    ctx = context_of(runtime)
    prompt = COT.format(question=state["question"], short_answer=COT_SHORT_ANSWER if ctx.short_answer_instruction else "")
    text, record, _ = call_llm("generator", prompt, ctx)
    reasoning, marker, tail = text.rpartition("answer is")
    answer = first_line(tail.lstrip(": ")) if marker else first_line(text.strip().splitlines()[-1] if text.strip() else "")
    step = {"kind": "reason", "thought": (reasoning if marker else text).strip(), "action": f"finish[{answer}]"}
    # Closed book, the model's own reasoning is the only evidence the choice call can read.
    answer, records = keep_to_choices(state, answer, ctx, step["thought"])
    return {"answer": answer, "finished_by": "finish", "trajectory": [step], "calls": [record.to_dict(), *records]}
