"""ChatCoT (Chen et al., 2023) for multi-hop QA, as its official HotpotQA code runs it (RUCAIBox/ChatCoT,
hotpotqa/solve_turbo_chatcot.py, `chat_and_reasoning`): one chat, opened by the system message, four few-shot
conversations and a "Do you understand?" exchange, then "Problem: {question}". Each hop is a reasoning turn (the
sub-problem, or "... the answer is X", which ends the chat); then the retrieval tool: the user asks which sentence
to retrieve with, the model writes it, and the top-k documents come back as user turns, one at a time, "Evidence:
... Is this evidence useful?", until the model's reply does not start with "No" (a rejected document and its "No"
leave the chat); then "Continue reasoning". After the hop cap the last "Continue reasoning" becomes "Base on the
context, what is the answer?" and the whole reply is the answer.

A turn the parser finds malformed (empty, an answer marker with no answer, a judgment that is neither yes nor no) is
an invalid output and never raises; the chat goes on as the official loop does."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from typing_extensions import TypedDict

from hoprag.context import Context, context_of, given
from hoprag.llm import call_llm, context_window, count_tokens, resolve_spec
from hoprag.nodes.retrieve import search
from hoprag.prompts.chatcot import (
    ANSWER_MARKER,
    ASSISTANT_BEGIN,
    CONTINUE_REASONING,
    DEMOS,
    EVIDENCE,
    FINAL_GET_ANSWER,
    PROBLEM,
    REPLY_CUTS,
    SYSTEM,
    USE_RETRIEVER,
    USER_BEGIN,
)

MAX_HOP = 5  # chat_and_reasoning(data, max_hop=5)
ANSWER_PATTERN = re.compile(re.escape(ANSWER_MARKER), re.IGNORECASE)
# Turns a model writes for the user: a reasoning turn that holds one has made up its own tool call or evidence.
USER_TURNS = re.compile(r"(^|\n)\s*(Evidence:|Is this evidence useful\?|To solve this sub-problem, which sentence|"
                        r"Continue reasoning)", re.IGNORECASE)
NO_EVIDENCE = "No evidence was judged useful."
NO_QUERY = "No retrieval: the retrieval sentence was empty."


class ChatCoTState(TypedDict, total=False):
    question: str
    chat: list[dict[str, str]]  # the turns after the fixed prefix, {"role", "content"}: the question's turn first
    hops: int  # reasoning turns so far (the official max_hop bounds them)
    pending: dict[str, Any]  # the tool call in flight: its query, documents, the next one to show, the judgments
    trajectory: Annotated[list[dict[str, Any]], operator.add]
    calls: Annotated[list[dict[str, Any]], operator.add]
    answer: str
    finished_by: str  # finish | cap
    answer_reply: str


@dataclass
class ChatCoTTurn:
    text: str  # the reply as it joins the chat: cut before "Problem: " / "Q: " and stripped, as call_chat_completion
    kind: str  # reason | answer | query | useful | not_useful | final
    answer: str = ""  # the answer a reasoning turn or the final turn gives
    problem: str = ""  # what is malformed; non-empty means an invalid output (the chat still goes on)


ASKED = ("reason", "query", "evidence", "final")


def clean_reply(text: Any) -> str:
    """call_chat_completion's cleaning: the reply stripped, cut before the model's own next "Problem: " or "Q: "."""
    text = (text if isinstance(text, str) else str(text or "")).strip()
    for cut in REPLY_CUTS:
        if cut in text:
            text = text.split(cut)[0].strip()
    return text


def answer_after_marker(text: str) -> str | None:
    """The text after the last "the answer is" (any case), as the official `split('the answer is')[-1].strip()`
    reads it but keeping the case; None where the turn holds no marker."""
    parts = ANSWER_PATTERN.split(text)
    return parts[-1].strip() if len(parts) > 1 else None


def parse_chatcot_turn(text: Any, asked: str) -> ChatCoTTurn:
    """One reply of the chat, read as the official loop reads it for the turn it `asked` for (reason, query,
    evidence, final). Never raises: any value gives a turn, with `problem` set where the reply is malformed.

    - reason: "the answer is" ends the chat with the text after it; anything else is the sub-problem.
    - query: the reply is the retrieval sentence.
    - evidence: a reply starting with "no" (any case) rejects the document; any other keeps it (an empty reply too).
    - final: the whole reply is the answer."""
    if asked not in ASKED:
        raise ValueError(f"asked must be one of {ASKED}, not {asked!r}")  # a programming error, not model output
    text = clean_reply(text)
    problems: list[str] = []
    if not text:
        problems.append({"reason": "an empty reasoning turn", "query": "an empty retrieval sentence",
                         "evidence": "an empty evidence judgment", "final": "an empty answer"}[asked])
    if asked == "reason":
        if USER_TURNS.search(text):
            problems.append("the turn writes the user's turn itself")
        answer = answer_after_marker(text)
        if answer is not None:
            if not answer:
                problems.append(f"'{ANSWER_MARKER}' with no answer after it")
            return ChatCoTTurn(text, "answer", answer=answer, problem="; ".join(problems))
        return ChatCoTTurn(text, "reason", problem="; ".join(problems))
    if asked == "query":
        if answer_after_marker(text) is not None:
            problems.append("an answer where a retrieval sentence was asked")
        return ChatCoTTurn(text, "query", problem="; ".join(problems))
    if asked == "evidence":
        if text.lower().startswith("no"):
            return ChatCoTTurn(text, "not_useful", problem="; ".join(problems))
        if text and not text.lower().startswith("yes"):
            problems.append("a judgment that is neither yes nor no")
        return ChatCoTTurn(text, "useful", problem="; ".join(problems))
    return ChatCoTTurn(text, "final", answer=text, problem="; ".join(problems))


def prefix_messages() -> list[BaseMessage]:
    """The system message, the four demos and the "Do you understand?" exchange, as the official code joins them."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for demo in DEMOS:
        messages += [as_message(role, content) for role, content in demo]
    return [*messages, HumanMessage(USER_BEGIN), AIMessage(ASSISTANT_BEGIN)]


def as_message(role: str, content: str) -> BaseMessage:
    return AIMessage(content) if role == "assistant" else HumanMessage(content)


def chat_messages(chat: list[dict[str, str]], ctx: Context, max_tokens: int) -> list[BaseMessage]:
    """The prefix and the chat so far. Where they outgrow the model's window, the two oldest messages after the
    system message go, again and again, as the official code does on the API's InvalidRequestError
    (`messages = [bootstrap] + messages[3:]`)."""
    messages = prefix_messages() + [as_message(turn["role"], turn["content"]) for turn in chat]
    spec = resolve_spec("reasoner", ctx)
    room = context_window(spec, ctx) - max_tokens - 16
    sizes = [count_tokens(spec, "reasoner", ctx, str(m.content)) + 8 for m in messages]
    while sum(sizes) > room and len(messages) > 3:
        messages, sizes = messages[:1] + messages[3:], sizes[:1] + sizes[3:]
    return messages


def chat_turn(chat: list[dict[str, str]], asked: str, ctx: Context) -> tuple[ChatCoTTurn, dict[str, Any]]:
    """One reply of the reasoner to the chat so far, parsed; and its call record."""
    max_tokens = given(ctx.max_tokens, 128)
    text, record, _ = call_llm("reasoner", chat_messages(chat, ctx, max_tokens), ctx, max_tokens=max_tokens)
    turn = parse_chatcot_turn(text, asked)
    return turn, record.parsed(bool(turn.problem), turn.problem)


def user(content: str) -> dict[str, str]:
    return {"role": "user", "content": content}


def assistant(content: str) -> dict[str, str]:
    return {"role": "assistant", "content": content}


def max_hops(ctx: Context) -> int:
    return max(1, given(ctx.max_iterations, MAX_HOP))


def reason(state: ChatCoTState, runtime: Any = None) -> dict[str, Any]:
    """A reasoning turn (the official "Step 1: decompose sub-problem"): the next sub-problem, or the answer."""
    ctx = context_of(runtime)
    chat = list(state.get("chat") or [user(PROBLEM.format(question=state["question"]))])
    hop = (state.get("hops") or 0) + 1
    turn, call = chat_turn(chat, "reason", ctx)
    chat.append(assistant(turn.text))
    step: dict[str, Any] = {"kind": "reason", "round": hop, "thought": turn.text,
                            **({"problem": turn.problem} if turn.problem else {})}
    update: dict[str, Any] = {"chat": chat, "hops": hop, "calls": [call]}
    if turn.kind == "answer":
        step.update(kind="answer", action=f"finish[{turn.answer}]")
        return {**update, "trajectory": [step], "answer": turn.answer, "finished_by": "finish",
                "answer_reply": turn.text}
    return {**update, "trajectory": [step]}


def call_retriever(state: ChatCoTState, runtime: Any = None) -> dict[str, Any]:
    """The tool call ("Step 2: Use tool"): the model writes the sentence to retrieve with, and its top k wait to be shown
    one at a time. An empty sentence retrieves nothing."""
    ctx = context_of(runtime)
    chat = [*(state.get("chat") or []), user(USE_RETRIEVER)]
    turn, call = chat_turn(chat, "query", ctx)
    chat.append(assistant(turn.text))
    query = " ".join(turn.text.split())
    # k is the official `min(5, len(score))`: the documents a tool call may show (5 in both presets)
    documents = [d.to_dict() for d in search(ctx, query)] if query else []
    pending = {"kind": "search", "round": state.get("hops") or 0, "query": query, "action": f"retrieve[{query}]",
               "documents": documents, "shown": 0, "judgments": [],
               **({"problem": turn.problem} if turn.problem else {})}
    update: dict[str, Any] = {"chat": chat, "calls": [call]}
    if not documents:  # nothing to show: the chat goes on
        return {**update, **close_tool_call(pending, chat, NO_QUERY if not query else NO_EVIDENCE)}
    return {**update, "pending": pending}


def judge_evidence(state: ChatCoTState, runtime: Any = None) -> dict[str, Any]:
    """One document back into the chat as a user turn, "Evidence: ... Is this evidence useful?". A reply starting with
    "No" takes the document and the reply out of the chat and the next document is shown; any other keeps both and
    ends the tool call. After the last document the chat goes on without evidence."""
    ctx = context_of(runtime)
    pending = dict(state["pending"])
    documents, shown = pending["documents"], pending["shown"]
    document = documents[shown]
    evidence = user(EVIDENCE.format(evidence=document["text"]))
    chat = [*(state.get("chat") or []), evidence]
    turn, call = chat_turn(chat, "evidence", ctx)
    judgment = {"id": document["id"], "title": document["title"], "useful": turn.kind == "useful", "reply": turn.text,
                **({"problem": turn.problem} if turn.problem else {})}
    pending.update(shown=shown + 1, judgments=[*pending["judgments"], judgment])
    if turn.problem:
        pending["problem"] = "; ".join(p for p in (pending.get("problem"), turn.problem) if p)
    update: dict[str, Any] = {"calls": [call]}
    if turn.kind == "useful":
        chat.append(assistant(turn.text))
        return {**update, **close_tool_call(pending, chat, f"{evidence['content']}\n{turn.text}")}
    chat = chat[:-1]  # the official `messages[:-2]`: the rejected evidence and its "No" leave the chat
    if shown + 1 >= len(documents):
        return {**update, **close_tool_call(pending, chat, NO_EVIDENCE)}
    return {**update, "chat": chat, "pending": pending}


def close_tool_call(pending: dict[str, Any], chat: list[dict[str, str]], observation: str) -> dict[str, Any]:
    """The tool call's step in the trajectory (the documents shown, what was kept) and "Continue reasoning"."""
    documents = pending.get("documents") or []
    step = {k: v for k, v in pending.items() if k not in ("documents", "shown")}
    step.update(observation=observation, retrieved_ids=[d["id"] for d in documents],
                retrieved_titles=[d["title"] for d in documents])
    return {"chat": [*chat, user(CONTINUE_REASONING)], "pending": {}, "trajectory": [step]}


def final_answer(state: ChatCoTState, runtime: Any = None) -> dict[str, Any]:
    """The hop cap without an answer: the last "Continue reasoning" becomes "Base on the context, what is the
    answer?" and the whole reply is the answer, as the official code takes it."""
    ctx = context_of(runtime)
    chat = list(state.get("chat") or [])
    if chat and chat[-1] == user(CONTINUE_REASONING):
        chat = chat[:-1]
    chat.append(user(FINAL_GET_ANSWER))
    turn, call = chat_turn(chat, "final", ctx)
    step = {"kind": "answer", "round": state.get("hops") or 0, "at_cap": True, "thought": turn.text,
            "action": f"finish[{turn.answer}]", **({"problem": turn.problem} if turn.problem else {})}
    return {"chat": [*chat, assistant(turn.text)], "answer": turn.answer, "finished_by": "cap",
            "answer_reply": turn.text, "calls": [call], "trajectory": [step]}


def route_after_reason(state: ChatCoTState, runtime: Any = None) -> str:
    from hoprag.nodes.reasoner import after_answer

    return after_answer(context_of(runtime)) if state.get("finished_by") else "call_retriever"


def route_after_tool(state: ChatCoTState, runtime: Any = None) -> str:
    """Another document to show, or the next hop, or the answer at the hop cap."""
    if (state.get("pending") or {}).get("documents"):
        return "judge_evidence"
    return "final_answer" if (state.get("hops") or 0) >= max_hops(context_of(runtime)) else "reason"


def route_after_final(state: ChatCoTState, runtime: Any = None) -> str:
    from hoprag.nodes.reasoner import after_answer

    return after_answer(context_of(runtime))


def counters(result: dict[str, Any]) -> dict[str, int]:
    """ChatCoT's own counters for `hoprag eval`: reasoning turns (hops), tool calls (retrieval sentences), evidence
    turns (documents shown), documents kept as useful, and invalid outputs."""
    trajectory = result.get("trajectory") or []
    judgments = [j for step in trajectory for j in step.get("judgments") or []]
    return {"rounds": sum(1 for step in trajectory if step.get("kind") in ("reason", "answer") and not step.get("at_cap")),
            "tool_calls": sum(1 for step in trajectory if step.get("kind") == "search"),
            "evidence_turns": len(judgments),
            "useful_evidence": sum(1 for j in judgments if j["useful"]),
            "invalid_outputs": int(result.get("invalid_outputs") or 0)}
