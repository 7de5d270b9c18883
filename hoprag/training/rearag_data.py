"""ReaRAG's data construction (Algorithm 1): a reasoning model writes Thought/Action chains against the RAG
engine for the questions of a train set, and a chain is kept only if it is well formed and its finish
answer has token F1 > 0 against the gold answer (the official filter).

Output: one chat conversation a line (`messages`, each turn with a `train` flag: True on the model's
thought/action turns, the only tokens the loss is computed on), the rejected chains beside it with the
reason, and a summary. A rerun skips the questions already written, so an interrupted build resumes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hoprag.context import Context
from hoprag.eval.datasets import Example, load_dataset
from hoprag.eval.metrics import best_f1
from hoprag.llm import call_llm, draw_seed
from hoprag.nodes.parsing import FunctionCall, parse_rearag_action
from hoprag.nodes.rearag import STOP, engine_answer, first_step, read_action
from hoprag.progress import progress_bar
from hoprag.prompts.rearag import DATA_EXAMPLE, DATA_RULES, DATA_USER, REARAG_SYSTEM

DATA_SYSTEM = REARAG_SYSTEM.rstrip() + "\n" + DATA_RULES + DATA_EXAMPLE
MAX_STEPS = 25  # data construction's bound (the official code's)
MAX_RETRIES = 20  # invalid steps regenerated per question
TEMPERATURE, TOP_P = 0.99, 0.85  # the official sampling
STEP_TOKENS = 256


def build_chain(example: Example, ctx: Context, seed: int) -> dict[str, Any]:
    """One question's chain, checked against the filter; `kept` and `reason` say the outcome."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": DATA_SYSTEM, "train": False},
                                      {"role": "user", "content": DATA_USER.format(question=example.question), "train": False}]
    retries, invalid_outputs, finish, numbers, rewritten = 0, 0, None, [], 0
    # small (`rearag_lenient_actions`): also read the call shapes small models write, and store such a turn in the
    # official format with its step's number, so a model trained on the chains learns the official format.
    lenient = bool(ctx.rearag_lenient_actions)

    def result(kept: bool, reason: str, finish: str | None = None, f1: float = 0.0) -> dict[str, Any]:
        return _result(example, messages, kept, reason, invalid_outputs, finish, f1, rewritten)

    sampling = ctx.with_options(temperature=TEMPERATURE, top_p=TOP_P)
    for step in range(1, MAX_STEPS + 1):
        while True:
            options = sampling.with_options(seed=draw_seed(seed, step, retries))
            chat = [(m["role"], m["content"]) for m in messages]
            text, _, _ = call_llm("reasoner", _as_messages(chat), options, stop=STOP, max_tokens=STEP_TOKENS)
            turn = first_step(text)
            call = read_action(turn, ctx)
            if not call.invalid:
                break
            invalid_outputs += 1
            retries += 1
            if retries > MAX_RETRIES:
                return result(False, "invalid: more than 20 invalid steps")
        if lenient and (call.number != step or parse_rearag_action(turn).invalid):
            turn, call.number, rewritten = official_turn(call, step), step, rewritten + 1
        numbers.append(call.number)
        messages.append({"role": "assistant", "content": turn, "train": True})
        if call.function == "finish":
            finish = call.argument
            break
        answer, _, _ = engine_answer(ctx, call.argument)
        messages.append({"role": "user", "content": f"Observation {step}: {answer}", "train": False})
    if finish is None:
        return result(False, f"no finish within {MAX_STEPS} steps")
    if numbers != list(range(1, len(numbers) + 1)):
        return result(False, f"step numbers run {numbers}, not 1, 2, 3, ...")
    f1 = best_f1(finish, example.answers)[0]
    if f1 <= 0:
        return result(False, "F1 = 0 against the gold answer", finish, f1)
    return result(True, "", finish, f1)


def official_turn(call: FunctionCall, number: int) -> str:
    """A step in the official format: `Thought N: ...` and `Action N: {'function': ..., 'parameters': {...}}`."""
    key = "query" if call.function == "search" else "answer"
    return f"Thought {number}: {call.thought}\nAction {number}: {{'function': '{call.function}', 'parameters': {{'{key}': {call.argument!r}}}}}"


def _as_messages(chat: list[tuple[str, str]]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds[role](content) for role, content in chat]


def _result(example: Example, messages: list[dict[str, Any]], kept: bool, reason: str, invalid_outputs: int,
            finish: str | None, f1: float, rewritten: int) -> dict[str, Any]:
    steps = sum(1 for m in messages if m["role"] == "assistant")
    return {"id": example.id, "question": example.question, "answers": example.answers, "messages": messages,
            "kept": kept, "reason": reason, "finish_answer": finish, "f1": round(f1, 4), "steps": steps,
            "invalid_outputs": invalid_outputs, "rewritten_turns": rewritten}


def _done_ids(*paths: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    for path in paths:
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by a kill: that question runs again
                done[record["id"]] = record
    return done


def rejected_path(out: Path) -> Path:
    return out.with_name(out.stem + ".rejected.jsonl")


def summary_path(out: Path) -> Path:
    return out.with_name(out.stem + ".summary.json")


def build_data(dataset: str, out: Path, ctx: Context, limit: int | None = None, progress: bool = True) -> dict[str, Any]:
    """Chains for the questions of `dataset` into `out` (kept) and `<out>.rejected.jsonl`; returns the summary."""
    examples = load_dataset(dataset, limit=limit)
    out.parent.mkdir(parents=True, exist_ok=True)
    rejected = rejected_path(out)
    done = _done_ids(out, rejected)
    # a question's draw seed is its position in the file, so a resumed build draws what an uninterrupted one would
    todo = [(position, e) for position, e in enumerate(examples) if e.id not in done]
    kept_so_far = sum(1 for r in done.values() if r.get("kept"))
    with progress_bar("rearag build-data", "kept {task.fields[kept]}", enabled=progress) as bar:
        task = bar.add_task("chains", total=len(examples), completed=len(examples) - len(todo), kept=kept_so_far)
        for position, example in todo:
            started = time.perf_counter()
            try:
                record = build_chain(example, ctx, seed=draw_seed(ctx.seed, position))
            except Exception as error:  # recorded, not fatal: the build goes on and a rerun retries it
                bar.console.print(f"[yellow]{example.id}: {type(error).__name__}: {error}")
                bar.advance(task)
                continue
            record["seconds"] = round(time.perf_counter() - started, 2)
            with (out if record["kept"] else rejected).open("a", encoding="utf-8") as sink:
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            done[record["id"]] = record
            kept_so_far += record["kept"]
            bar.update(task, advance=1, kept=kept_so_far)
    records = [done[e.id] for e in examples if e.id in done]
    kept = [r for r in records if r["kept"]]
    summary = {
        "dataset": dataset, "questions": len(records), "kept": len(kept),
        "kept_rate": round(100 * len(kept) / len(records), 2) if records else None,
        "invalid": sum(1 for r in records if r["reason"].startswith("invalid")),
        "f1_zero": sum(1 for r in records if r["reason"].startswith("F1 = 0")),
        "no_finish": sum(1 for r in records if r["reason"].startswith("no finish")),
        "misnumbered": sum(1 for r in records if r["reason"].startswith("step numbers")),
        "average_steps": round(sum(r["steps"] for r in records) / len(records), 2) if records else None,
        "average_steps_kept": round(sum(r["steps"] for r in kept) / len(kept), 2) if kept else None,
        "invalid_outputs": sum(r.get("invalid_outputs", 0) for r in records),
        "rewritten_turns": sum(r.get("rewritten_turns", 0) for r in records),
        "seconds_per_question": round(sum(r.get("seconds", 0) for r in records) / len(records), 2) if records else None,
        "reasoner": ctx.reasoner_llm or ctx.llm, "index": ctx.index,
    }
    summary_path(out).write_text(json.dumps(summary, indent=2))
    return summary
