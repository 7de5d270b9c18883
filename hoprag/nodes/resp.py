"""ReSP nodes: retrieve for the sub-question, dual summarizer, judge, plan, generator."""

from __future__ import annotations

import operator
import re
from typing import Annotated, Any

from typing_extensions import TypedDict

from hoprag.context import context_of
from hoprag.llm import call_llm
from hoprag.nodes.generate import first_line
from hoprag.nodes.parsing import normalize_query
from hoprag.nodes.retrieve import search
from hoprag.prompts.resp import GENERATE, GLOBAL_EVIDENCE, JUDGE, LOCAL_PATHWAY, PLAN


class ReSPState(TypedDict, total=False):
    question: str
    sub_question: str
    documents: list[dict[str, Any]]
    # The paper's two memory queues; each node appends, nothing overwrites.
    global_evidence: Annotated[list[str], operator.add]
    local_pathway: Annotated[list[dict[str, str]], operator.add]
    trajectory: Annotated[list[dict[str, Any]], operator.add]  # one entry per iteration
    judgements: Annotated[list[dict[str, str]], operator.add]  # the judge's verdict per iteration
    calls: Annotated[list[dict[str, Any]], operator.add]
    sufficient: bool
    refused: str  # a planned sub-question that was already retrieved
    answer: str
    finished_by: str


def combined_memory(state: ReSPState) -> str:
    evidence = "\n".join(state.get("global_evidence", [])) or "None"
    pathway = "\n".join(
        f"Q: {item['question']} A: {item['answer'] or 'unknown'}" for item in state.get("local_pathway", [])
    )
    return f"[Global evidence]\n{evidence}\n[Local pathway]\n{pathway or 'None'}"


def is_yes(text: str) -> bool:
    """Only a clear Yes counts; anything else is No (and the raw text is recorded)."""
    return bool(re.match(r"^\W*yes\b", text.strip(), re.IGNORECASE))


def resp_retrieve(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    sub_question = state.get("sub_question") or state["question"]
    documents = search(ctx, sub_question)
    return {"sub_question": sub_question, "documents": [d.to_dict() for d in documents]}


def summarize(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    """Dual-function summarizer: global evidence for the question; local answer for the sub-question
    (skipped in the first iteration, whose sub-question is the question itself)."""
    ctx = context_of(runtime)
    docs = "\n".join(f"{d['title']} - {d['text']}" for d in state.get("documents", []))
    text, record, _ = call_llm("summarizer", GLOBAL_EVIDENCE.format(docs=docs, question=state["question"]), ctx,
                               stop=["[DONE]"])
    evidence = text.split("[DONE]")[0].strip()
    calls = [record.to_dict()]
    iteration: dict[str, Any] = {
        "sub_question": state["sub_question"],
        "retrieved_ids": [d["id"] for d in state.get("documents", [])],
        "retrieved_titles": [d["title"] for d in state.get("documents", [])],
        "global_summary": evidence,
        "local_answer": None,
    }
    update: dict[str, Any] = {"global_evidence": [evidence], "calls": calls}
    first = not state.get("trajectory")
    if not first:
        memory = combined_memory({**state, "global_evidence": [*state.get("global_evidence", []), evidence]})
        text, record, _ = call_llm(
            "summarizer", LOCAL_PATHWAY.format(sub_question=state["sub_question"], memory=memory), ctx
        )
        calls.append(record.to_dict())
        answer = re.sub(r"^\W*yes\W*", "", text.strip(), flags=re.IGNORECASE).strip() if is_yes(text) else ""
        iteration["local_answer"] = answer
        iteration["local_raw"] = text
        update["local_pathway"] = [{"question": state["sub_question"], "answer": answer}]
    update["trajectory"] = [iteration]
    return update


def judge(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    text, record, _ = call_llm("judge", JUDGE.format(question=state["question"], memory=combined_memory(state)), ctx,
                               max_tokens=8)
    sufficient = is_yes(text)
    verdict = {"judgement": "Yes" if sufficient else "No", "judge_raw": text}
    return {"sufficient": sufficient, "calls": [record.to_dict()], "judgements": [verdict]}


def route_after_judge(state: ReSPState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    if state.get("sufficient"):
        return "generate"
    return "generate" if len(state.get("trajectory", [])) >= ctx.max_iterations else "plan"


def plan(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    text, record, _ = call_llm("reasoner", PLAN.format(memory=combined_memory(state), question=state["question"]),
                               ctx, max_tokens=64)
    sub_question = first_line(text)
    asked = {normalize_query(item["question"]) for item in state.get("local_pathway", [])}
    asked.add(normalize_query(state["question"]))
    update: dict[str, Any] = {"calls": [record.to_dict()], "sub_question": sub_question, "refused": ""}
    if not sub_question or normalize_query(sub_question) in asked:
        update["refused"] = sub_question or "(empty)"
    return update


def route_after_plan(state: ReSPState, runtime: Any = None) -> str:
    # A sub-question already in the local pathway memory is not retrieved again: answer now.
    return "generate" if state.get("refused") else "retrieve"


def generate(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    text, record, _ = call_llm("generator", GENERATE.format(memory=combined_memory(state), question=state["question"]),
                               ctx, max_tokens=48)
    finished_by = "sufficient" if state.get("sufficient") else ("repeated" if state.get("refused") else "cap")
    return {"answer": first_line(text), "finished_by": finished_by, "calls": [record.to_dict()]}
