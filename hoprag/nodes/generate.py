"""Final-answer nodes: synthesis at the iteration cap, and a concise-answer pass.

Small models often `finish` with a whole sentence, which scores F1 near zero against short gold
answers, so long answers are shortened by the generator role."""

from __future__ import annotations

from typing import Any

from hoprag.context import context_of
from hoprag.llm import call_llm
from hoprag.nodes.write_notes import gathered_notes
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
