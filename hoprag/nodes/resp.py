"""ReSP nodes: retrieve for the sub-question, dual summarizer, judge, plan, generator."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Annotated, Any

from typing_extensions import TypedDict

from hoprag.context import context_of, given
from hoprag.llm import call_llm, draw_seed
from hoprag.nodes.choices import keep_to_choices
from hoprag.nodes.generate import first_line
from hoprag.nodes.parsing import normalize_query, parse_plan, parse_yes_no
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
    refused: str  # a planned sub-question that repeats an earlier one and ended the loop
    answer: str
    finished_by: str


def combined_memory(state: ReSPState) -> str:
    evidence = "\n".join(state.get("global_evidence", [])) or "None"
    pathway = "\n".join(
        f"Q: {item['question']} A: {item['answer'] or 'unknown'}" for item in state.get("local_pathway", [])
    )
    return f"[Global evidence]\n{evidence}\n[Local pathway]\n{pathway or 'None'}"


def passages_text(documents: Iterable[dict[str, Any]]) -> str:
    return "\n".join(f"{d['title']} - {d['text']}" for d in documents)


def with_documents(documents: Iterable[dict[str, Any]], memory: str) -> str:
    """The memory queues behind the passages themselves (`resp_local_input='documents'`)."""
    return f"[Retrieved documents]\n{passages_text(documents)}\n{memory}"


def resp_retrieve(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    sub_question = state.get("sub_question") or state["question"]
    documents = [d.to_dict() for d in search(ctx, sub_question)]
    return {"sub_question": sub_question, "documents": documents}


def summarize(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    """Dual-function summarizer: global evidence for the question; local answer for the sub-question
    (skipped in the first iteration, whose sub-question is the question itself)."""
    ctx = context_of(runtime)
    docs = passages_text(state.get("documents", []))
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
        if ctx.resp_local_input == "documents":  # §3.1: the response is "based on the retrieved documents"
            memory = with_documents(state.get("documents", []), memory)
        text, record, _ = call_llm(
            "summarizer", LOCAL_PATHWAY.format(sub_question=state["sub_question"], memory=memory), ctx
        )
        verdict = parse_yes_no(text)
        calls.append(record.parsed(bool(verdict.problem), verdict.problem))
        answer = verdict.answer
        iteration["local_answer"] = answer
        iteration["local_raw"] = text
        update["local_pathway"] = [{"question": state["sub_question"], "answer": answer}]
    update["trajectory"] = [iteration]
    return update


def judge(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    """The Reasoner's sufficiency judgement (the paper's Reasoner judges and plans: role `reasoner`)."""
    ctx = context_of(runtime)
    text, record, _ = call_llm("reasoner", JUDGE.format(question=state["question"], memory=combined_memory(state)),
                               ctx, max_tokens=8)
    parsed = parse_yes_no(text)
    verdict = {"judgement": "Yes" if parsed.yes else "No", "judge_raw": text}
    return {"sufficient": parsed.yes, "calls": [record.parsed(bool(parsed.problem), parsed.problem)],
            "judgements": [verdict]}


def route_after_summarize(state: ReSPState, runtime: Any = None) -> str:
    """§4.1: "If the retrieval process is still in iteration after 3 attempts, the model will directly proceed to the
    final response generation": the last iteration goes to the generator without a judgement."""
    ctx = context_of(runtime)
    return "generate" if len(state.get("trajectory", [])) >= given(ctx.max_iterations, 3) else "judge"


def route_after_judge(state: ReSPState, runtime: Any = None) -> str:
    return "generate" if state.get("sufficient") else "plan"


REPLAN_TEMPERATURE = 0.7  # a greedy planner would repeat itself: the 'replan' option samples


def plan(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    """The Reasoner plans the next sub-question. A repeat of an earlier one is handled as
    `resp_on_repeat` says: retrieved anyway (paper), planned again (replan), or the end (small)."""
    ctx = context_of(runtime)
    asked = {normalize_query(item["question"]) for item in state.get("local_pathway", [])}
    asked.add(normalize_query(state["question"]))
    prompt = PLAN.format(memory=combined_memory(state), question=state["question"])
    calls: list[dict[str, Any]] = []
    attempts = 1 + (ctx.resp_replans if ctx.resp_on_repeat == "replan" else 0)
    for attempt in range(attempts):
        options = ctx if attempt == 0 else ctx.with_options(
            temperature=max(ctx.temperature or 0.0, REPLAN_TEMPERATURE), seed=draw_seed(ctx.seed, attempt))
        text, record, _ = call_llm("reasoner", prompt, options, max_tokens=64)
        sub_question, problem = parse_plan(text)  # the first line with a question, past a label-only line
        calls.append(record.parsed(bool(problem), problem))
        repeated = not sub_question or normalize_query(sub_question) in asked
        if not repeated:
            break
    update: dict[str, Any] = {"calls": calls, "sub_question": sub_question or state["question"], "refused": ""}
    if repeated and ctx.resp_on_repeat == "end":
        update["refused"] = sub_question or "(empty)"
    return update


def route_after_plan(state: ReSPState, runtime: Any = None) -> str:
    # `resp_on_repeat='end'`: a sub-question already in the local pathway memory ends the loop.
    return "generate" if state.get("refused") else "retrieve"


def generate(state: ReSPState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    reference = combined_memory(state)
    # The preset's output cap (ReSP §4.2: "the maximum output length is set to 200").
    text, record, _ = call_llm("generator", GENERATE.format(memory=reference, question=state["question"]), ctx)
    finished_by = "sufficient" if state.get("sufficient") else ("repeated" if state.get("refused") else "cap")
    answer, records = keep_to_choices(state, first_line(text), ctx)
    return {"answer": answer, "finished_by": finished_by, "calls": [record.to_dict(), *records]}
