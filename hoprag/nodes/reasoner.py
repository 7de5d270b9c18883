"""The ReAct reasoner: one Thought and one Action per turn, with its history fitted to the window."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END

from hoprag.context import Context, context_of
from hoprag.llm import call_llm, context_window, count_tokens, draw_seed, resolve_spec
from hoprag.nodes.parsing import earlier_search, parse_react
from hoprag.prompts.react import (
    REACT_GRAMMAR,
    REACT_INSTRUCTIONS,
    REACT_QUESTION,
    SHORT_ANSWER,
)
from hoprag.state import AgentState

DROPPED = "[observation dropped to fit the context window]"
MESSAGE_OVERHEAD = 8  # chat-template tokens around each message


def instructions(ctx: Context) -> str:
    return REACT_INSTRUCTIONS.format(short_answer=SHORT_ANSWER if ctx.short_answer_instruction else "")


def render_messages(question: str, trajectory: list[dict[str, Any]], dropped: int = 0,
                    task: str | None = None) -> list[BaseMessage]:
    """The ReAct history as chat turns: the reasoner's Thought/Action turns are its own (assistant)
    messages and each Observation is a user message. Small chat models continue such a dialogue at
    the right step number, where one long user message made them restart at "Thought 1" and repeat
    their first search; the messages only grow at the end, so the KV-cache prefix is kept."""
    task = task if task is not None else REACT_INSTRUCTIONS.format(short_answer="")
    messages: list[BaseMessage] = [HumanMessage(task + REACT_QUESTION.format(question=question))]
    for number, step in enumerate(trajectory, 1):
        messages.append(AIMessage(f"Thought {number}: {step['thought']}\nAction {number}: {step['action']}"))
        observation = DROPPED if number <= dropped else step["observation"]
        messages.append(HumanMessage(f"Observation {number}: {observation}"))
    return messages


def cut_middle(text: str, chars: int, keep_head: int = 300) -> str:
    """`text` without `chars` characters after its first `keep_head` ones."""
    if chars <= 0 or len(text) <= keep_head:
        return text
    return text[:keep_head] + " [...] " + text[keep_head + chars:]


def _size(spec: str, role: str, ctx: Context, messages: list[BaseMessage]) -> int:
    text = "\n".join(str(m.content) for m in messages)
    return count_tokens(spec, role, ctx, text) + MESSAGE_OVERHEAD * len(messages)


def fit_prompt(question: str, trajectory: list[dict[str, Any]], ctx: Context, role: str = "reasoner",
               tail: list[BaseMessage] | None = None, max_tokens: int | None = None,
               dropped_before: int = 0, headroom: float = 0.0) -> tuple[list[BaseMessage], int]:
    """The reasoner's messages (plus `tail`), dropping the oldest observations until they fit the window.

    Returns the messages and how many observations were dropped. The newest observation is dropped
    last: without it the reasoner cannot act on its last search. The `dropped_before` observations an
    earlier step of the run dropped stay dropped, so the prompt keeps the prefix the role's KV cache
    holds. When more must go, they go until a `headroom` share of the budget is free (or all but the
    newest have gone): dropping one more at every step changes the prompt right after the question at
    every step, and the model re-reads the whole transcript each time."""
    spec = resolve_spec(role, ctx)
    budget = context_window(spec, ctx) - (max_tokens or ctx.max_tokens) - 16
    target = budget - int(budget * headroom)
    tail = tail or []
    task = instructions(ctx)
    most = max(1, len(trajectory)) - 1  # the most observations that may go
    start = min(max(0, dropped_before), most)
    fitting: tuple[list[BaseMessage], int] | None = None
    for dropped in range(start, most + 1):
        messages = render_messages(question, trajectory, dropped, task) + tail
        size = _size(spec, role, ctx, messages)
        if size > budget:
            continue
        # The kept drops if they fit; else the headroom, or as close to it as the newest observation allows.
        if dropped == start or size <= target or dropped == most:
            return messages, dropped
        fitting = (messages, dropped)
    if fitting is not None:  # dropping more only grew the prompt (observations shorter than the marker)
        return fitting
    # Still too long with every older observation dropped: cut the middle of the newest observation,
    # then of the tail (for the synthesis at the cap: the oldest notes), about 4 characters a token.
    head, last = trajectory[:-1], [dict(trajectory[-1])] if trajectory else []
    messages = render_messages(question, head + last, len(head), task)
    overflow = _size(spec, role, ctx, messages + tail) - budget
    if last and overflow > 0:
        last[0]["observation"] = cut_middle(last[0]["observation"], 4 * overflow)
        messages = render_messages(question, head + last, len(head), task)
        overflow = _size(spec, role, ctx, messages + tail) - budget
    if tail and overflow > 0:
        tail = [*tail[:-1], HumanMessage(cut_middle(str(tail[-1].content), 4 * overflow))]
    return messages + tail, len(trajectory)


RESAMPLE_TEMPERATURE = 0.7  # the papers' ReAct temperature (NotesWriting §4.2)


def _think(messages: list[BaseMessage], ctx: Context, number: int) -> tuple[str, Any, Any]:
    """One reasoner turn, step `number`: (text, usage record, parsed action)."""
    grammar = ctx.action_grammar(REACT_GRAMMAR.format(number=number))
    text, record, _ = call_llm("reasoner", messages, ctx, stop=["\nObservation", "Observation:"], grammar=grammar)
    # A reply that skips the "Thought n:" label starts inside the thought: parse_react reads the text before the
    # Action part as the thought either way.
    return text, record, parse_react(text)


T = TypeVar("T")


def resample_repeats(think: Callable[[Context], tuple[T, list[dict[str, Any]]]], query_of: Callable[[T], str | None],
                     trajectory: list[dict[str, Any]], ctx: Context, key: str = "argument",
                     ) -> tuple[T, list[dict[str, Any]], int]:
    """`think(ctx)` once, then again while its search repeats an earlier step's (`resample_repeated_queries`
    times at most): a greedy model repeats its step word for word, so each retry samples (temperature 0.7)
    with a new seed. Returns the last result, every usage record and how many retries were sampled."""
    result, records = think(ctx)
    resampled = 0
    while resampled < (ctx.resample_repeated_queries or 0):
        query = query_of(result)
        if not query or not earlier_search(trajectory, query, key=key):
            break
        resampled += 1
        result, more = think(replace(ctx, temperature=RESAMPLE_TEMPERATURE, seed=draw_seed(ctx.seed, resampled)))
        records = records + more
    return result, records, resampled


def reason(state: AgentState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    trajectory = state.get("trajectory", [])
    messages, dropped = fit_prompt(state["question"], trajectory, ctx,
                                   dropped_before=state.get("dropped_observations", 0), headroom=ctx.window_headroom)

    def think(options: Context) -> tuple[tuple[str, Any], list[dict[str, Any]]]:
        text, record, action = _think(messages, options, len(trajectory) + 1)
        return (text, action), [record.parsed(action.invalid, action.problem)]

    (text, action), records, resampled = resample_repeats(
        think, lambda turn: turn[1].argument if turn[1].kind == "search" else None, trajectory, ctx)
    step: dict[str, Any] = {
        "thought": action.thought,
        "action": f"{action.kind}[{action.argument}]" if action.kind != "invalid" else text.strip()[-300:],
        "kind": action.kind,
        "entity": action.entity,
        "query": action.query,
        "argument": action.argument,
        "problem": action.problem,
        "raw": text,
    }
    if resampled:
        step["resampled"] = resampled
    update: dict[str, Any] = {"calls": records, "pending": step,
                              "dropped_observations": max(dropped, state.get("dropped_observations", 0))}
    if action.kind == "search":
        if earlier_search(trajectory, action.argument):
            step["repeated"] = True
            update["repeated_queries"] = 1
    elif action.kind == "invalid":
        # The malformed turn is a step of its own whose observation tells the reasoner how to recover.
        step["observation"] = (
            f"Invalid action ({action.problem}). Reply with one line 'Thought: ...' and one line "
            "'Action: search[entity; query]' or 'Action: finish[answer]'."
        )
        update["trajectory"] = [step]
    elif action.kind == "finish":
        step["observation"] = action.argument
        update["trajectory"] = [step]
        update["answer"] = action.argument
        update["finished_by"] = "finish"
    return update


def after_answer(ctx: Context) -> str:
    """Where a run goes once the method has its answer: the concise-answer step, which also keeps the answer to
    the question's named choices (small), or the end."""
    return "concise_answer" if ctx.concise_answer or ctx.answer_choices else END


def route_after_answer(state: Any, runtime: Any = None) -> str:
    """The exit of a node that writes the answer (IRCoT's reader, FuRePA's vote): see `after_answer`."""
    return after_answer(context_of(runtime))


def route_after_reason(state: AgentState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    if state.get("finished_by") == "finish":
        return after_answer(ctx)
    if len(state.get("trajectory", [])) >= ctx.max_steps:
        return "synthesize"
    if state["pending"]["kind"] == "search":
        return "retrieve"
    return "reason"


def route_after_observe(state: AgentState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    return "synthesize" if len(state.get("trajectory", [])) >= ctx.max_steps else "reason"


def route_after_notes(state: AgentState, runtime: Any = None) -> str:
    """ReNAct: ask whether the notes answer the question when the step wrote any (`answer_from_notes`)."""
    trajectory = state.get("trajectory", [])
    if context_of(runtime).answer_from_notes and trajectory and any(n["relevant"] for n in trajectory[-1].get("notes", [])):
        return "answer_from_notes"
    return route_after_observe(state, runtime)


def route_after_notes_answer(state: AgentState, runtime: Any = None) -> str:
    if state.get("finished_by") == "notes":
        return after_answer(context_of(runtime))
    return route_after_observe(state, runtime)
