"""ReaRAG (Lee et al.): Thought / Action / Observation where the action is a function call, `search(query)`
or `finish(answer)`, and the observation is a RAG engine's answer to the query (top passages, then an
answer model), not the documents. After `finish` the concise answer follows: the official code asks its answer
model; here the `generator` role runs that prompt, so `--generator-llm` sets it."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END
from typing_extensions import TypedDict

from hoprag.context import Context, context_of, given
from hoprag.errors import ContextOverflowError
from hoprag.llm import call_llm, context_window, count_tokens, draw_seed, resolve_spec
from hoprag.nodes.choices import keep_to_choices
from hoprag.nodes.generate import first_line, is_short
from hoprag.nodes.parsing import FunctionCall, earlier_search, parse_rearag_action
from hoprag.nodes.reasoner import MESSAGE_OVERHEAD, resample_repeats
from hoprag.nodes.retrieve import search
from hoprag.prompts.react import CONCISE as SHARED_CONCISE
from hoprag.prompts.rearag import (
    CONCISE,
    FORCE_FINISH,
    INVALID_FEEDBACK,
    RAG_ENGINE,
    RAG_ENGINE_STRICT,
    REARAG_GRAMMAR,
    REARAG_SYSTEM,
)

STOP = ["\nObservation", "Observation:"]  # one Thought/Action a turn; the observation comes from the engine


class ReaRAGState(TypedDict, total=False):
    question: str
    trajectory: Annotated[list[dict[str, Any]], operator.add]
    calls: Annotated[list[dict[str, Any]], operator.add]
    pending: dict[str, Any]  # the step in flight: its raw turn and parsed call
    invalid_retries: Annotated[int, operator.add]
    answer: str
    finish_answer: str  # the finish argument before the concise answer
    finished_by: str


def render_messages(question: str, trajectory: list[dict[str, Any]], system: str = REARAG_SYSTEM) -> list[BaseMessage]:
    """system = the ReaRAG prompt, user = the bare question, then each step's whole turn (assistant) and
    the engine's answer as the observation turn."""
    messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(question)]
    for number, step in enumerate(trajectory, 1):
        messages.append(AIMessage(step["raw"]))
        messages.append(HumanMessage(f"Observation {number}: {step['observation']}"))
    return messages


CUT = " [...] "
# The official agent's prompt budget: model_max_length = 8192 - 2 - max_tokens (src/infer.py), whatever the model's
# window; a smaller window (a local model's n_ctx, `context_window`) lowers it.
OFFICIAL_WINDOW, WINDOW_MARGIN = 8192, 2


def _cut(text: str, tokens: int, keep: int, spec: str, role: str, ctx: Context, from_end: bool) -> str:
    """`text` (`tokens` long) cut to at most `keep` tokens, keeping its start (or its end)."""
    if keep <= 0:
        return ""
    chars = int(len(text) * keep / max(tokens, 1))
    while chars > 0:
        part = text[len(text) - chars:] if from_end else text[:chars]
        if count_tokens(spec, role, ctx, part) <= keep:
            return part
        chars = int(chars * 0.9)
    return ""


def keep_first_and_last_halves(messages: list[BaseMessage], ctx: Context, role: str, max_tokens: int | None = None,
                               ) -> tuple[list[BaseMessage], int]:
    """The official agent's fit for a prompt over its budget: keep the first and the last half of the budget and cut
    the middle (src/utils.py, `truncate`). The official code cuts the chat-templated token sequence; here the cut keeps
    message boundaries: messages wholly in the middle go, the two at the cut lose their middle side (one message
    across both cuts keeps its start and end), and `[...]` marks the cut. Returns the messages and the prompt tokens
    cut (0 when they fit). `max_tokens` defaults to the run's."""
    max_tokens = given(max_tokens, given(ctx.max_tokens, 1024))
    spec = resolve_spec(role, ctx)

    def size(message: BaseMessage) -> int:
        return count_tokens(spec, role, ctx, str(message.content)) + MESSAGE_OVERHEAD

    sizes = [size(m) for m in messages]
    budget = min(context_window(spec, ctx), OFFICIAL_WINDOW) - max_tokens - WINDOW_MARGIN
    if sum(sizes) <= budget:
        return messages, 0
    half = budget // 2 - MESSAGE_OVERHEAD  # room for the marker where the middle was
    if half <= MESSAGE_OVERHEAD:
        raise ContextOverflowError(f"the {role} prompt has {sum(sizes)} tokens and {budget} fit beside {max_tokens} "
                                   "output tokens; raise the model's window or lower max_tokens")

    def keep_end(indices: list[int], from_end: bool) -> tuple[int, str]:
        """How many whole messages fit in `half` walking from one end, and the part of the next one that does."""
        used = 0
        for count, index in enumerate(indices):
            if used + sizes[index] > half:
                room = half - used - MESSAGE_OVERHEAD
                return count, _cut(str(messages[index].content), sizes[index] - MESSAGE_OVERHEAD, room, spec, role,
                                   ctx, from_end)
            used += sizes[index]
        return len(indices), ""

    whole_head, head_part = keep_end(list(range(len(messages))), from_end=False)
    whole_tail, tail_part = keep_end(list(range(len(messages) - 1, -1, -1)), from_end=True)
    head, tail = list(messages[:whole_head]), list(messages[len(messages) - whole_tail:])
    # Whole messages keep their counted sizes; only what the cut rewrote is counted again.
    kept = sum(sizes[:whole_head]) + sum(sizes[len(messages) - whole_tail:])
    first_cut, last_cut = whole_head, len(messages) - 1 - whole_tail  # the messages each side cuts into
    if first_cut == last_cut:  # one message holds both cuts: its start and its end, one message
        middle = [messages[first_cut].model_copy(update={"content": head_part + CUT + tail_part})]
    else:
        middle = [messages[first_cut].model_copy(update={"content": head_part + CUT})] if head_part else []
        middle += [messages[last_cut].model_copy(update={"content": CUT + tail_part})] if tail_part else []
        if not middle and head:  # both cuts fell on message boundaries: still mark where the middle was
            head[-1] = head[-1].model_copy(update={"content": str(head[-1].content) + CUT})
            kept += size(head[-1]) - sizes[whole_head - 1]
    kept += sum(size(m) for m in middle)
    return head + middle + tail, max(0, sum(sizes) - kept)


def with_cut(record: dict[str, Any], cut: int) -> dict[str, Any]:
    """A call's record, with the prompt tokens the window fit cut from it (summed up by `run_question`)."""
    return {**record, "cut_tokens": cut} if cut else record


def first_step(text: str) -> str:
    """The turn up to its first action's object: a model that writes several steps keeps the first."""
    cut = text.find("\nThought", text.find("Action"))
    return (text[:cut] if cut > 0 else text).strip()


def read_action(text: str, ctx: Context) -> FunctionCall:
    """A turn's call, read with the preset's leniency (`rearag_lenient_actions`)."""
    return parse_rearag_action(text, lenient=bool(ctx.rearag_lenient_actions))


def next_step(messages: list[BaseMessage], ctx: Context, role: str, budget: int, number: int,
              ) -> tuple[FunctionCall, str, list[dict[str, Any]], int]:
    """Generate one valid step, regenerating invalid ones (a new seed each time) within `budget`.
    Returns the call, the turn text, the usage records and the retries spent."""
    records: list[dict[str, Any]] = []
    attempt_messages = list(messages)
    grammar = ctx.action_grammar(REARAG_GRAMMAR.format(number=number))
    for attempt in range(budget + 1):
        options = ctx if attempt == 0 else ctx.with_options(seed=draw_seed(ctx.seed, attempt))
        fitted, cut = keep_first_and_last_halves(attempt_messages, ctx, role)
        text, record, _ = call_llm(role, fitted, options, stop=STOP, grammar=grammar)
        call = read_action(first_step(text), ctx)
        records.append(with_cut(record.parsed(call.invalid, call.problem), cut))
        if not call.invalid:
            return call, first_step(text), records, attempt
        if ctx.rearag_invalid_feedback:  # small: the retry sees what was wrong (then the turn is rolled back)
            attempt_messages = [*messages, AIMessage(text),
                                HumanMessage(INVALID_FEEDBACK.format(problem=call.problem, number=number))]
    return call, text, records, budget  # budget + 1 outputs, every one after the first a retry


def reason(state: ReaRAGState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    trajectory = state.get("trajectory", [])
    budget = max(0, given(ctx.rearag_invalid_retries, 20) - state.get("invalid_retries", 0))
    number = len(trajectory) + 1
    messages = render_messages(state["question"], trajectory)
    spent = 0

    def think(options: Context) -> tuple[tuple[FunctionCall, str], list[dict[str, Any]]]:
        nonlocal spent
        call, text, records, retries = next_step(messages, options, "reasoner", budget - spent, number)
        spent += retries
        return (call, text), records

    (call, text), records, resampled = resample_repeats(
        think, lambda turn: turn[0].argument if turn[0].function == "search" else None, trajectory, ctx, key="query")
    step = {"kind": call.function, "thought": call.thought, "action": text.partition("Action")[2].strip(" :0123456789\n")
            if not call.invalid else "", "query": call.argument if call.function == "search" else "",
            "argument": call.argument, "raw": text, "problem": call.problem}
    if resampled:
        step["resampled"] = resampled
    update: dict[str, Any] = {"calls": records, "pending": step, "invalid_retries": spent}
    if call.invalid:  # the per-question budget is spent: the official code answers None
        update.update(answer="", finished_by="invalid", trajectory=[{**step, "observation": ""}])
    elif call.function == "finish":
        update.update(finish_answer=call.argument, trajectory=[{**step, "observation": call.argument}])
    return update


# The official code's answer model (src/infer.py): one generation config for the RAG engine and the concise answer.
ANSWER_SAMPLING = {"temperature": 0.95, "top_p": 0.7}
ANSWER_TOKENS = 1024
GREEDY_ENGINE_TOKENS, GREEDY_CONCISE_TOKENS = 128, 32  # `rearag_greedy_answers` (small)


def answer_model(ctx: Context, greedy_tokens: int) -> tuple[Context, int]:
    """The answer model's options and output cap: greedy and short (small), or the official sampling."""
    if ctx.rearag_greedy_answers:
        return ctx.with_options(temperature=0.0), greedy_tokens
    return ctx.with_options(**ANSWER_SAMPLING), ANSWER_TOKENS


def engine_answer(ctx: Context, query: str) -> tuple[str, list[Any], dict[str, Any]]:
    """The RAG engine: the top-k passages for the query, each as the official corpus (FlashRAG's wiki-18) writes its
    `contents`, a quoted title line and then the text, joined by blank lines and answered by the answer model.
    Returns the answer, the passages and the usage record."""
    documents = search(ctx, query)
    context = "\n\n".join(f'"{d.title}"\n{d.text}' if d.title else d.text for d in documents)
    template = RAG_ENGINE_STRICT if ctx.rearag_engine_prompt == "strict" else RAG_ENGINE
    options, max_tokens = answer_model(ctx, GREEDY_ENGINE_TOKENS)
    text, record, _ = call_llm("answerer", template.format(context=context, query=query), options, max_tokens=max_tokens)
    return " ".join(text.split()) or "No answer.", documents, record.to_dict()


def rag_engine(state: ReaRAGState, runtime: Any = None) -> dict[str, Any]:
    """The observation is the RAG engine's answer to the query, not the documents."""
    ctx = context_of(runtime)
    pending = state["pending"]
    if ctx.rearag_finish_on_repeat and earlier_search(state.get("trajectory", []), pending["query"], key="query"):
        # The engine would answer the same and the greedy reasoner would ask again: the forced finish comes next,
        # after the last real observation (the repeat is not a step of the chain).
        return {"finished_by": "repeated"}
    answer, documents, record = engine_answer(ctx, pending["query"])
    step = {**pending, "observation": answer, "retrieved_ids": [d.id for d in documents],
            "retrieved_titles": [d.title for d in documents]}
    return {"trajectory": [step], "calls": [record]}


NO_ANSWER = "cap_no_answer"  # the ending of a chain that reached the step bound without `finish`


def unanswered(state: ReaRAGState, runtime: Any = None) -> dict[str, Any]:
    """At the step bound without `finish` (`rearag_forced_finish` off, `paper`): no answer, as the official `run()`
    returns None there; the empty answer is scored wrong."""
    return {"answer": "", "finish_answer": "", "finished_by": NO_ANSWER}


def force_finish(state: ReaRAGState, runtime: Any = None) -> dict[str, Any]:
    """At the step bound without `finish` (`rearag_forced_finish`) or at a repeat (`rearag_finish_on_repeat`): ask for
    it once; else the last observation stands."""
    ctx = context_of(runtime)
    trajectory = state.get("trajectory", [])
    number = len(trajectory) + 1
    messages = [*render_messages(state["question"], trajectory), HumanMessage(FORCE_FINISH.format(number=number))]
    messages, cut = keep_first_and_last_halves(messages, ctx, "reasoner")
    grammar = ctx.action_grammar(REARAG_GRAMMAR.format(number=number))
    text, record, _ = call_llm("reasoner", messages, ctx, stop=STOP, grammar=grammar)
    call = read_action(first_step(text) if "Action" in text else f"Action {number}: {text}", ctx)
    answer = call.argument if call.function == "finish" else (trajectory[-1]["observation"] if trajectory else "")
    return {"finish_answer": answer, "finished_by": state.get("finished_by") or "cap",
            "calls": [with_cut(record.parsed(call.function != "finish", call.problem), cut)]}


def concise(state: ReaRAGState, runtime: Any = None) -> dict[str, Any]:
    """The concise version of the finish answer: the official answer-model prompt, run by the `generator` role."""
    ctx = context_of(runtime)
    finished_by = state.get("finished_by") or "finish"
    calls: list[dict[str, Any]] = []
    if ctx.rearag_concise_long_only and is_short(state["finish_answer"]):
        # small: the official prompt's "For yes, or no answer, only answer it short" turned a short answer such
        # as "Rush" into "Yes" with the 1.5B model; a short finish answer is kept as written.
        answer = state["finish_answer"]
    else:
        prompt = SHARED_CONCISE.format(question=state["question"], answer=state["finish_answer"]) if ctx.rearag_shared_concise \
            else CONCISE.format(question=state["question"], reference_ans=state["finish_answer"])
        options, max_tokens = answer_model(ctx, GREEDY_CONCISE_TOKENS)
        text, record, _ = call_llm("generator", prompt, options, max_tokens=max_tokens)
        answer = first_line(text) or state["finish_answer"]
        calls.append(record.to_dict())
    answer, records = keep_to_choices(state, answer, ctx)
    calls.extend(records)
    return {"answer": answer, "finished_by": finished_by, **({"calls": calls} if calls else {})}


def route_after_reason(state: ReaRAGState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    if state.get("finished_by") == "invalid":
        return END
    if state.get("finish_answer"):
        return "concise"
    if len(state.get("trajectory", [])) >= (ctx.max_steps or 15):
        return at_bound(ctx)
    return "rag_engine"


def at_bound(ctx: Context) -> str:
    """The node after the step bound without `finish`: the forced finish (`rearag_forced_finish`), or no answer."""
    return "force_finish" if ctx.rearag_forced_finish else "unanswered"


def route_after_observation(state: ReaRAGState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    if state.get("finished_by") == "repeated":  # `rearag_finish_on_repeat` asks for the finish itself
        return "force_finish"
    return at_bound(ctx) if len(state.get("trajectory", [])) >= (ctx.max_steps or 15) else "reason"
