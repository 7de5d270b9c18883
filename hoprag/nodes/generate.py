"""Final-answer nodes: synthesis at the iteration cap, and a concise-answer pass.

Small models often `finish` with a whole sentence, which scores F1 near zero against short gold
answers, so long answers are shortened by the generator role."""

from __future__ import annotations

from typing import Any

from hoprag.context import context_of
from hoprag.llm import call_llm
from hoprag.nodes.write_notes import close_step, gathered_notes
from hoprag.prompts.baselines import COT, STANDARD_RAG
from hoprag.prompts.react import CONCISE, SYNTHESIZE
from hoprag.state import AgentState

CONCISE_WORDS = 8


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    answer = lines[0] if lines else ""
    for prefix in ("Answer:", "Short answer:", "Final answer:"):
        if answer.lower().startswith(prefix.lower()):
            answer = answer[len(prefix):].strip()
    return answer.strip().strip('"').rstrip(".")


def synthesize(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """At the cap T: answer from the question, the history and all notes (or raw observations)."""
    ctx = context_of(runtime)
    trajectory = state.get("trajectory", [])
    notes = gathered_notes(trajectory) or [
        s["observation"][:1500] for s in trajectory if s.get("kind") == "search"
    ]
    thoughts = [s["thought"] for s in trajectory if s.get("thought")]
    evidence = "\n".join(notes[-30:] + ["Reasoning so far: " + " ".join(thoughts[-5:])])
    text, record, _ = call_llm("generator", SYNTHESIZE.format(notes=evidence, question=state["question"]), ctx,
                               max_tokens=48)
    return {"answer": first_line(text), "finished_by": "cap", "calls": [record.to_dict()]}


def concise_answer(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    answer = state.get("answer", "")
    if len(answer.split()) <= CONCISE_WORDS:
        return {}
    ctx = context_of(runtime)
    text, record, _ = call_llm("generator", CONCISE.format(question=state["question"], answer=answer), ctx,
                               max_tokens=32)
    short = first_line(text)
    return {"answer": short or answer, "calls": [record.to_dict()]}


def answer_from_documents(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """Standard RAG: one generator call over the retrieved documents; the retrieval is the one step."""
    ctx = context_of(runtime)
    documents = state.get("documents") or []
    passages = "\n".join(f"Doc {i} (Title: {d['title']}) {d['text']}" for i, d in enumerate(documents, 1))
    prompt = STANDARD_RAG.format(documents=passages or "None", question=state["question"])
    text, record, _ = call_llm("generator", prompt, ctx, max_tokens=48)
    update = close_step(state, passages or "The search returned no documents.")
    return {**update, "answer": first_line(text), "finished_by": "generate", "calls": [record.to_dict()]}


def answer_closed_book(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    """CoT without retrieval: reason step by step, then read the answer after "So the answer is:"."""
    ctx = context_of(runtime)
    text, record, _ = call_llm("generator", COT.format(question=state["question"]), ctx)
    reasoning, marker, tail = text.rpartition("answer is")
    answer = first_line(tail.lstrip(": ")) if marker else first_line(text.strip().splitlines()[-1] if text.strip() else "")
    step = {"kind": "reason", "thought": (reasoning if marker else text).strip(), "action": f"finish[{answer}]"}
    return {"answer": answer, "finished_by": "finish", "trajectory": [step], "calls": [record.to_dict()]}
