"""Self-Ask (Press et al., 2023) with retrieval, as FlashRAG's SelfAskPipeline runs it for Ret-Robust
(flashrag/pipeline/active_pipeline.py, SelfAskPipeline.run_item): the question's top-k passages head the
prompt; each round the model continues the transcript "Follow up: ... / Intermediate answer: ..." up to the
next label, alternating between the two; a follow-up question is searched, and its passages replace the
prompt's, so the model writes the intermediate answer from them. "So the final answer is: X" ends the chain;
after `self_ask_max_rounds` rounds without it FlashRAG's answer is empty."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any

from typing_extensions import TypedDict

from hoprag.context import Context, context_of, given
from hoprag.llm import call_llm
from hoprag.nodes.generate import first_line
from hoprag.nodes.retrieve import search
from hoprag.prompts.self_ask import (
    ANSWER_AT_CAP,
    CONTEXT_LINE,
    FINAL_ANSWER,
    FOLLOW_UP,
    FOLLOW_UPS_NEEDED,
    INTERMEDIATE_ANSWER,
    QUESTION_BLOCK,
    SELF_ASK_MULTI_HOP,
    STOPS,
)

DEFAULT_ROUNDS = 5  # FlashRAG's Ret-Robust setting: SelfAskPipeline(config, max_iter=5, single_hop=False)
# What a parser found wrong with a round's output (an invalid output; the chain goes on with what it has).
EMPTY_ROUND = "empty round"
NO_FOLLOW_UP = "no follow-up question and no final answer"
NO_INTERMEDIATE_ANSWER = "no intermediate answer and no final answer"
EMPTY_FOLLOW_UP = "empty follow-up question"
NO_ANSWER_AT_CAP = "no answer at the round cap"


class SelfAskState(TypedDict, total=False):
    question: str
    transcript: str  # the follow-ups and answers so far (FlashRAG's `res`), continued by every round
    expecting: str  # the label the round in flight stops at: INTERMEDIATE_ANSWER, or FOLLOW_UP after a follow-up
    rounds: int  # generation rounds so far
    documents: list[dict[str, Any]]  # the passages in the prompt: the question's, then the last follow-up's
    pending: dict[str, Any]  # the round whose follow-up is being searched
    trajectory: Annotated[list[dict[str, Any]], operator.add]
    calls: Annotated[list[dict[str, Any]], operator.add]
    answer: str
    finished_by: str  # finish | cap | empty


@dataclass
class SelfAskRound:
    appended: str  # what the round adds to the transcript
    follow_up: str  # the follow-up question to search ("" when none)
    intermediate_answer: str
    final_answer: str  # the text after "So the final answer is:" ("" when none)
    problem: str = ""


def cut_at_stops(text: str, stops: list[str]) -> str:
    """`text` up to its first stop sequence, as a backend that honours `stop` returns it (a fake or an endpoint that
    ignores stops would otherwise run on into the next round's label)."""
    cut = len(text)
    for stop in stops:
        found = text.find(stop)
        if found >= 0:
            cut = min(cut, found)
    return text[:cut]


def _after_label(line: str, label: str) -> str:
    return line.split(label)[-1].strip()


def parse_round(text: Any, expecting: str) -> SelfAskRound:
    """One round's output, read as FlashRAG's run_item reads it: the text up to the stop (the label the round was to
    stop at, "Context:" or "#") is appended to the transcript; the first line holding "Follow up:" names the question
    to search; a line holding "So the final answer is:" with text after it ends the chain. Never raises: any string
    (empty, truncated, unicode, labels in odd places) gives a round, with `problem` set when it is unusable."""
    text = text if isinstance(text, str) else str(text)
    appended = cut_at_stops(text, [*STOPS, expecting])
    lines = appended.splitlines()
    follow_ups = [line for line in lines if FOLLOW_UP in line]
    follow_up = _after_label(follow_ups[0], FOLLOW_UP) if follow_ups else ""
    answers = [line for line in lines if INTERMEDIATE_ANSWER in line]
    intermediate = _after_label(answers[0], INTERMEDIATE_ANSWER) if answers else ""
    finals = [answer for line in lines if FINAL_ANSWER in line and (answer := _after_label(line, FINAL_ANSWER))]
    final = finals[0] if finals else ""
    problem = ""
    if not appended.strip():
        problem = EMPTY_ROUND
    elif follow_ups and not follow_up and not final:
        problem = EMPTY_FOLLOW_UP
    elif expecting == INTERMEDIATE_ANSWER and not follow_up and not final:
        problem = NO_FOLLOW_UP  # the model was to ask a follow-up or answer
    elif expecting == FOLLOW_UP and not answers and not final:
        problem = NO_INTERMEDIATE_ANSWER  # the model was to answer the follow-up it asked
    return SelfAskRound(appended, follow_up, intermediate, final, problem)


def next_transcript(transcript: str, appended: str) -> str:
    """FlashRAG: `res += gen_out ...`, then one trailing newline dropped ("make sure the result does not end in a
    new line")."""
    updated = transcript + appended
    return updated[:-1] if updated.endswith("\n") else updated


def contexts_text(documents: list[dict[str, Any]], ctx: Context) -> str:
    """FlashRAG's Self-Ask references: `Context{i}: {text}` lines, the passage text without its title; with
    `self_ask_context_titles` (small) `Context{i}: {title}: {text}`, the few-shot examples' own layout."""
    return "".join(CONTEXT_LINE.format(number=i, text=f"{d['title']}: {d['text']}" if ctx.self_ask_context_titles
                                       else d["text"]) for i, d in enumerate(documents, 1))


def round_prompt(state: SelfAskState, ctx: Context) -> str:
    """P_INS, a newline, the current passages, the question, "Are follow up questions needed here: Yes." and the
    transcript (run_item's input_prompt)."""
    return (SELF_ASK_MULTI_HOP + "\n" + contexts_text(state.get("documents") or [], ctx)
            + QUESTION_BLOCK.format(question=state["question"], follow_ups=FOLLOW_UPS_NEEDED)
            + (state.get("transcript") or ""))


def self_ask_max_rounds(ctx: Context) -> int:
    return max(1, given(ctx.self_ask_max_rounds, DEFAULT_ROUNDS))


def retrieval_record(documents: list[dict[str, Any]], ctx: Context) -> dict[str, Any]:
    return {"retrieved_ids": [d["id"] for d in documents], "retrieved_titles": [d["title"] for d in documents],
            "observation": contexts_text(documents, ctx) or "The search returned no documents."}


def search_question(state: SelfAskState, runtime: Any = None) -> dict[str, Any]:
    """The question's own top k: the passages of the first round's prompt."""
    ctx = context_of(runtime)
    question = state["question"]
    documents = [d.to_dict() for d in search(ctx, question)]
    step = {"kind": "search", "round": 0, "query": question, "action": f"retrieve[{question}]",
            **retrieval_record(documents, ctx)}
    return {"documents": documents, "trajectory": [step], "transcript": "", "expecting": INTERMEDIATE_ANSWER,
            "rounds": 0}


def self_ask_round(state: SelfAskState, runtime: Any = None) -> dict[str, Any]:
    """One round: the model continues the transcript up to the next label; a follow-up goes to the search, a final
    answer ends the chain, and an unusable output is recorded as invalid while the chain goes on (as FlashRAG's
    loop does) until the round cap."""
    ctx = context_of(runtime)
    expecting = state.get("expecting") or INTERMEDIATE_ANSWER
    text, record, _ = call_llm("reasoner", round_prompt(state, ctx), ctx, stop=[*STOPS, expecting])
    parsed = parse_round(text, expecting)
    transcript = next_transcript(state.get("transcript") or "", parsed.appended)
    number = (state.get("rounds") or 0) + 1
    step: dict[str, Any] = {"kind": "reason", "round": number, "thought": parsed.appended.strip()}
    if parsed.intermediate_answer:
        step["intermediate_answer"] = parsed.intermediate_answer
    if parsed.problem:
        step["problem"] = parsed.problem
    update: dict[str, Any] = {"transcript": transcript, "rounds": number,
                              "expecting": FOLLOW_UP if expecting == INTERMEDIATE_ANSWER else INTERMEDIATE_ANSWER,
                              "calls": [record.parsed(bool(parsed.problem), parsed.problem)]}
    if parsed.final_answer:
        step["action"] = f"finish[{parsed.final_answer}]"
        return {**update, "trajectory": [step], "answer": parsed.final_answer, "finished_by": "finish"}
    if not transcript:  # FlashRAG's early exit: nothing written at all, no answer
        return {**update, "trajectory": [step], "answer": "", "finished_by": "empty"}
    if parsed.follow_up:
        step.update(kind="search", follow_up=parsed.follow_up, query=parsed.follow_up,
                    action=f"retrieve[{parsed.follow_up}]")
        return {**update, "pending": step}
    return {**update, "trajectory": [step]}


def search_follow_up(state: SelfAskState, runtime: Any = None) -> dict[str, Any]:
    """The follow-up's top k replace the prompt's passages; the round's step is closed with them."""
    ctx = context_of(runtime)
    pending = dict(state.get("pending") or {})
    documents = [d.to_dict() for d in search(ctx, pending["query"])]
    return {"documents": documents, "pending": {}, "trajectory": [{**pending, **retrieval_record(documents, ctx)}]}


def answer_at_cap(state: SelfAskState, runtime: Any = None) -> dict[str, Any]:
    """The round cap without a final answer. paper: FlashRAG's answer, empty (its parser finds no "So the final
    answer is:" line). `self_ask_answer_at_cap` (small): the transcript continues once with that line."""
    ctx = context_of(runtime)
    if not ctx.self_ask_answer_at_cap:
        return {"answer": "", "finished_by": "cap"}
    prompt = round_prompt(state, ctx) + ANSWER_AT_CAP
    text, record, _ = call_llm("reasoner", prompt, ctx, stop=[*STOPS, "\n" + FOLLOW_UP, "\n" + INTERMEDIATE_ANSWER])
    answer = first_line(cut_at_stops(text, STOPS))
    return {"answer": answer, "finished_by": "cap", "answer_reply": text,
            "calls": [record.parsed(not answer, "" if answer else NO_ANSWER_AT_CAP)]}


def route_after_round(state: SelfAskState, runtime: Any = None) -> str:
    from hoprag.nodes.reasoner import after_answer

    ctx = context_of(runtime)
    if state.get("finished_by"):
        return after_answer(ctx)
    if (state.get("pending") or {}).get("query"):
        return "search"
    return "answer_at_cap" if (state.get("rounds") or 0) >= self_ask_max_rounds(ctx) else "round"


def route_after_search(state: SelfAskState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    return "answer_at_cap" if (state.get("rounds") or 0) >= self_ask_max_rounds(ctx) else "round"


def counters(result: dict[str, Any]) -> dict[str, int]:
    """Self-Ask's own counters for `hoprag eval`: generation rounds, searches (the question's and each follow-up's),
    follow-up questions and invalid outputs."""
    trajectory = result.get("trajectory") or []
    return {"rounds": sum(1 for step in trajectory if (step.get("round") or 0) > 0),
            "searches": sum(1 for step in trajectory if step.get("kind") == "search"),
            "follow_ups": sum(1 for step in trajectory if step.get("follow_up")),
            "invalid_outputs": int(result.get("invalid_outputs") or 0)}
