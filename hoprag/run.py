"""Run one method on one question: the shared entry point of `hoprag ask` and `hoprag eval`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hoprag.context import Context
from hoprag.errors import HopragError
from hoprag.graphs import READS_OWN_CORPUS, load_method, method_context
from hoprag.llm import summarize_usage
from hoprag.nodes.cot import cot_step_cap


def run_question(
    method: str,
    question: str,
    ctx: Context,
    on_update: Callable[[str, dict[str, Any]], None] | None = None,
    paragraphs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Answer `question`; `on_update(node, update)` sees every node's output as it happens. `paragraphs`, the
    question's own corpus (a dataset record's), goes to the methods that read it (`READS_OWN_CORPUS`)."""
    if not question or not question.strip():
        raise HopragError("the question is empty; pass the question text, e.g. hoprag ask \"Who ...?\"")
    graph, _ = load_method(method)
    ctx = method_context(method, ctx)
    # Each step runs a few nodes (reason, retrieve, notes, observe; FLARE up to six), so give LangGraph
    # room beyond our own cap; our cap, not the recursion limit, is what ends a run. The cap is the
    # method's own: IRCoT's and FLARE's steps, ReSP's and FuRePA's iterations, the others' steps.
    cap = max(ctx.max_steps or 0, cot_step_cap(ctx), ctx.max_iterations or 0)
    config = {"recursion_limit": 6 * cap + 20, "max_concurrency": ctx.max_concurrency}
    started = time.perf_counter()
    final: dict[str, Any] = {}
    # Tokens and seconds per step: the LLM calls made since the previous step closed belong to the step
    # that closes next (its reasoning, retrieval and notes); calls after the last step are the answer's.
    step_usage: list[dict[str, Any]] = []
    open_calls: list[dict[str, Any]] = []
    inputs: dict[str, Any] = {"question": question.strip()}
    if paragraphs and method in READS_OWN_CORPUS:
        inputs["paragraphs"] = [{"title": p.get("title", ""), "text": p.get("text", "")} for p in paragraphs]
    for chunk in graph.stream(inputs, config=config, context=ctx, stream_mode=["updates", "values"]):
        mode, payload = chunk
        if mode == "values":
            final = payload
            continue
        for node, update in payload.items():
            if not update:
                continue
            open_calls.extend(update.get("calls") or [])
            for _ in update.get("trajectory") or []:
                step_usage.append(_usage_of(open_calls))
                open_calls = []
            if on_update is not None:
                on_update(node, update)
    seconds = time.perf_counter() - started
    # ReSP keeps the judge's verdicts apart (append-only queues); show them with their iteration.
    trajectory = [dict(step, **verdict) for step, verdict in zip(final.get("trajectory", []), final.get("judgements", []), strict=False)]
    trajectory += final.get("trajectory", [])[len(trajectory):]
    trajectory = [dict(step, usage=usage) for step, usage in zip(trajectory, step_usage, strict=False)] + trajectory[len(step_usage):]
    calls = final.get("calls", [])
    return {
        "question": question.strip(),
        "method": method,
        "answer": final.get("answer", ""),
        "finished_by": final.get("finished_by", ""),
        "answer_reply": final.get("answer_reply", ""),
        "steps": sum(1 for s in trajectory if s.get("kind") == "search" or "sub_question" in s),
        "turns": len(trajectory),
        "repeated_queries": final.get("repeated_queries", 0),
        "dropped_observations": final.get("dropped_observations", 0),
        # Over-long prompts whose middle was cut (ReaRAG keeps a prompt's first and last halves, as its code does):
        # how many calls, and the most tokens cut from one (each later step cuts the same middle again).
        "cut_calls": sum(1 for c in calls if c.get("cut_tokens")),
        "cut_tokens": max((c.get("cut_tokens", 0) for c in calls), default=0),
        "trajectory": trajectory,
        "usage": summarize_usage(calls),
        "answer_usage": _usage_of(open_calls),
        "llm_calls": len(calls),
        # Outputs a parser read, and those it could not use (no action, no verdict, an empty plan).
        "parsed_outputs": sum(1 for c in calls if c.get("parsed")),
        "invalid_outputs": sum(1 for c in calls if c.get("invalid")),
        # What each invalid output said, for reading why a parser refused it (the count alone says not why).
        "invalid_replies": [{"role": c["role"], "problem": c.get("problem", ""), "reply": c.get("reply", "")}
                            for c in calls if c.get("invalid")],
        "seconds": round(seconds, 3),
    }


def _usage_of(calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"calls": len(calls), "input_tokens": sum(c["input_tokens"] for c in calls),
            "output_tokens": sum(c["output_tokens"] for c in calls),
            "seconds": round(sum(c["seconds"] for c in calls), 3)}
