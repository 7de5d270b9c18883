"""Search-o1 (Li et al., 2025): a reasoning model that writes `<|begin_search_query|>...<|end_search_query|>` where it
needs knowledge (generation stops at the end token); the top documents for the query go through Reason-in-Documents
(a separate call with the official prompt), whose "**Final Information**" is appended to the reasoning as
`<|begin_search_result|>...<|end_search_result|>`, and the reasoning goes on, up to MAX_SEARCH_LIMIT searches and
MAX_TURN generations. The answer is the last `\\boxed{...}` of the whole output, as the official evaluation reads it.

Everything here follows sunnynexus/Search-o1 (scripts/run_search_o1.py, scripts/evaluate.py); a turn whose special
tokens are malformed is recorded as an invalid output (the special-token failures ReaRAG's Table 2 counts) and never
raises: `paper` ends the chain there, as the official loop does, and `small` can go on (`search_o1_invalid_feedback`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from hoprag.context import Context, context_of, given
from hoprag.llm import call_llm, context_window, count_tokens, resolve_spec
from hoprag.nodes.generate import first_line
from hoprag.nodes.retrieve import search
from hoprag.prompts.search_o1 import (
    BEGIN_SEARCH_QUERY,
    BEGIN_SEARCH_RESULT,
    END_SEARCH_QUERY,
    END_SEARCH_RESULT,
    INVALID_FEEDBACK,
    LIMIT_MESSAGE,
    MULTIQA_INSTRUCTION,
    NO_INFORMATION,
    REASON_IN_DOCUMENTS,
    REPEATED_MESSAGE,
    TASK_OPENQA,
    TASK_OPENQA_QWQ,
)
from hoprag.state import RunState

MAX_SEARCH_LIMIT = 10  # run_search_o1.py for HotpotQA, 2Wiki, MuSiQue and Bamboogle (5 for NQ and TriviaQA)
MAX_DOC_LEN = 3000  # characters around the snippet; a page without the snippet gives its first 2 * MAX_DOC_LEN
MIN_ROOM = 64  # output tokens below which the reasoning no longer fits the model's window
SPECIAL_TOKENS = (BEGIN_SEARCH_QUERY, END_SEARCH_QUERY, BEGIN_SEARCH_RESULT, END_SEARCH_RESULT)
# Anything written like a special token: `<|...search...|>` with either bar missing, or `<search>`-style tags.
TOKEN_LIKE = re.compile(r"<\|?[^<>|\n]{0,40}?search[^<>|\n]{0,40}?\|?>", re.IGNORECASE)


class SearchO1State(RunState, total=False):
    output: str  # the reasoning so far: every turn, with the search results appended (the official seq['output'])
    turns: int  # reasoner generations so far (MAX_TURN bounds them)
    searches: int  # searches run (MAX_SEARCH_LIMIT bounds them)
    executed: list[str]  # queries searched, for the official "You have searched this query" message
    pending: dict[str, Any]  # the turn in flight: its text, kind, query and problem
    answer_reply: str


@dataclass
class SearchO1Turn:
    text: str  # the turn as it joins the output: cut after its first end token, the end token restored
    kind: str  # search | answer (no special token: the reasoning is done) | invalid (malformed, nothing to search)
    query: str = ""
    thought: str = ""  # the reasoning before the query
    problem: str = ""  # what was malformed; non-empty means an invalid output, even where the query was usable


def parse_search_o1_turn(text: Any, truncated: bool = False) -> SearchO1Turn:
    """One reasoner generation. Generation stops at `<|end_search_query|>` and the backend drops the stop string, so a
    last `<|begin_search_query|>` without an end is the query the stop ended, unless the output was cut at the token
    limit (`truncated`). A backend that ignores stop strings is cut after the first end token, as the stop would have.
    Malformed special tokens (a begin token with no end, an end without a begin, an empty query, two begins before an
    end, a misspelt token, a search-result token the model wrote itself) are the turn's `problem`. Never raises."""
    text = text if isinstance(text, str) else str(text or "")
    problems: list[str] = []
    end = text.find(END_SEARCH_QUERY)
    if end >= 0:
        text = text[: end + len(END_SEARCH_QUERY)]
    misspelt = [t for t in TOKEN_LIKE.findall(text) if t not in SPECIAL_TOKENS]
    if misspelt:  # a query written with a misspelt token is not searched: the official loop sees no query there
        return SearchO1Turn(text, "invalid", thought=text.strip(), problem=f"malformed special token {misspelt[0]!r}")
    if BEGIN_SEARCH_RESULT in text or END_SEARCH_RESULT in text:
        problems.append("the model wrote a search-result token itself")
    begin = text.rfind(BEGIN_SEARCH_QUERY, 0, end if end >= 0 else len(text))
    if begin < 0:
        if end >= 0:
            problems.append("an end token without a begin token")
        kind = "invalid" if problems else "answer"
        return SearchO1Turn(text, kind, thought=text.strip(), problem="; ".join(problems))
    if end < 0:
        if truncated:
            problems.append("a begin token with no end token (the output was cut at the token limit)")
            return SearchO1Turn(text, "invalid", thought=text[:begin].strip(), problem="; ".join(problems))
        end = len(text)
        text += END_SEARCH_QUERY  # the stop string the backend dropped, as the official output keeps it
    if text.count(BEGIN_SEARCH_QUERY, 0, end) > 1:
        problems.append("two begin tokens before one end token")
    query = text[begin + len(BEGIN_SEARCH_QUERY): end].strip()
    if not query:
        problems.append("an empty search query")
        return SearchO1Turn(text, "invalid", thought=text[:begin].strip(), problem="; ".join(problems))
    return SearchO1Turn(text, "search", query=" ".join(query.split()), thought=text[:begin].strip(),
                        problem="; ".join(problems))


def boxed_answer(output: Any) -> str:
    """The answer as the official evaluation reads it (evaluate.py, extract_answer mode 'qa'): the last
    `\\boxed{...}` (greedy within a line), its last `\\text{...}`, stripped of parentheses; "" where there is none."""
    output = output if isinstance(output, str) else str(output or "")
    matches = re.findall(r"\\boxed\{(.*)\}", output)
    if not matches:
        return ""
    answer = matches[-1]
    inner = re.findall(r"\\text\{(.*)\}", answer)
    if inner:
        answer = inner[-1]
    return answer.strip("()")


def unboxed_answer(turn: str) -> str:
    """`search_o1_unboxed_answer` (small): the answer of a final turn without `\\boxed{}`, after its last "answer is",
    else its last line that is not a special token."""
    turn = turn if isinstance(turn, str) else str(turn or "")
    for token in SPECIAL_TOKENS:
        turn = turn.replace(token, " ")
    said = re.split(r"\banswer is\b:?", turn, flags=re.IGNORECASE)
    if len(said) > 1 and first_line(said[-1]):
        return first_line(said[-1]).strip("*").strip()
    lines = [line.strip() for line in turn.splitlines() if line.strip()]
    return first_line(lines[-1]).strip("*").strip() if lines else ""


def final_information(reply: Any) -> str:
    """What Reason-in-Documents found (evaluate.py, extract_answer mode 'infogen'): the text after the last
    "**Final Information**" (or "**Modified Reasoning Steps**"), else "No helpful information found."."""
    reply = reply if isinstance(reply, str) else str(reply or "")
    # strip("`") is the official strip("```"): the same set of characters.
    if "\n**Final Information**" in reply:
        return reply.split("\n**Final Information**")[-1].replace("\n", "").strip("`").strip()
    if "\n**Modified Reasoning Steps**" in reply:
        return reply.split("\n**Modified Reasoning Steps**")[-1].strip("`").strip()
    return NO_INFORMATION


def previous_reasoning(output: str) -> str:
    """The Previous Reasoning Steps of Reason-in-Documents, as run_search_o1.py writes them: each line a "Step i:",
    and past five, the first, the last four and every step with a search query or result, "..." between."""
    steps = output.replace("\n\n", "\n").split("\n")
    text = "".join(f"Step {i + 1}: {step}\n\n" for i, step in enumerate(steps))
    kept = text.split("\n\n")
    if len(kept) <= 5:
        return "\n\n".join(kept).strip("\n")
    text = ""
    for i, step in enumerate(kept):
        if i == 0 or i >= len(kept) - 4 or BEGIN_SEARCH_QUERY in step or BEGIN_SEARCH_RESULT in step:
            text += step + "\n\n"
        elif text[-len("\n\n...\n\n"):] != "\n\n...\n\n":
            text += "...\n\n"
    return text.strip("\n")


def web_pages(documents: list[Any]) -> str:
    """The Searched Web Pages: "**Web Page i:**" and the page as JSON, as run_search_o1.py formats Bing's results
    (a local corpus has no URL, site, date or snippet; the context is the text's first 2 * MAX_DOC_LEN characters)."""
    pages = ""
    for i, document in enumerate(documents):
        info = {"id": i + 1, "title": document.title, "context": document.text[: MAX_DOC_LEN * 2]}
        pages += f"**Web Page {i + 1}:**\n" + json.dumps(info, ensure_ascii=False, indent=2) + "\n"
    return pages


def task_prompt(question: str, ctx: Context) -> str:
    """The one user message: the multi-hop instruction and the open-QA task prompt (QwQ's for a QwQ reasoner, as the
    official code picks it by the model path)."""
    task = TASK_OPENQA_QWQ if "qwq" in resolve_spec("reasoner", ctx).lower() else TASK_OPENQA
    limit = given(ctx.search_o1_max_searches, MAX_SEARCH_LIMIT)
    return MULTIQA_INSTRUCTION.format(max_search_limit=limit) + task.format(question=question)


def render_messages(question: str, output: str, ctx: Context) -> list[BaseMessage]:
    """The official prompt is one user turn and the model continues its own output; through a chat API the output
    so far is the assistant's turn and the model goes on after it."""
    messages: list[BaseMessage] = [HumanMessage(task_prompt(question, ctx))]
    return [*messages, AIMessage(output)] if output else messages


def reason(state: SearchO1State, runtime: Any = None) -> dict[str, Any]:
    """One generation, stopped at `<|end_search_query|>`; its turn joins the output. A search past the limit or a
    repeated query gets the official message in place of results; a malformed turn ends the chain (`paper`) or, with
    `search_o1_invalid_feedback`, gets a note saying what was wrong and the reasoning goes on."""
    ctx = context_of(runtime)
    output, turns = state.get("output", ""), state.get("turns", 0) + 1
    messages = render_messages(state["question"], output, ctx)
    spec = resolve_spec("reasoner", ctx)
    prompt_tokens = sum(count_tokens(spec, "reasoner", ctx, str(m.content)) + 8 for m in messages)
    room = context_window(spec, ctx) - prompt_tokens - 16
    if room < MIN_ROOM:  # the reasoning outgrew the window: answer from what was written
        return {"turns": turns, "pending": {"kind": "window"}, "finished_by": "window"}
    max_tokens = min(given(ctx.max_tokens, 8192), room)
    text, record, message = call_llm("reasoner", messages, ctx, stop=[END_SEARCH_QUERY], max_tokens=max_tokens)
    truncated = (message.response_metadata or {}).get("finish_reason") == "length"
    turn = parse_search_o1_turn(text, truncated)
    step: dict[str, Any] = {"kind": turn.kind, "round": turns, "thought": turn.thought, "action": "", "raw": text,
                            "problem": turn.problem}
    update: dict[str, Any] = {"turns": turns, "calls": [record.parsed(bool(turn.problem), turn.problem)]}
    output += turn.text
    if turn.kind == "search":
        step.update(query=turn.query, action=f"{BEGIN_SEARCH_QUERY}{turn.query}{END_SEARCH_QUERY}")
        limit = given(ctx.search_o1_max_searches, MAX_SEARCH_LIMIT)
        refusal = LIMIT_MESSAGE if state.get("searches", 0) >= limit else \
            REPEATED_MESSAGE if turn.query in state.get("executed", []) else ""
        if refusal:  # no search: the official message is the result, and the reasoning goes on
            output += refusal
            step.update(kind="refused", observation=refusal.strip())
            update["trajectory"] = [step]
    elif turn.kind == "invalid" and ctx.search_o1_invalid_feedback:
        note = INVALID_FEEDBACK.format(problem=turn.problem)
        output += note
        update["trajectory"] = [{**step, "observation": note.strip()}]
    elif turn.kind in ("answer", "invalid"):
        update["trajectory"] = [step]
        update["finished_by"] = "finish" if turn.kind == "answer" else "invalid"
    return {**update, "output": output, "pending": step}


def reason_in_documents(state: SearchO1State, runtime: Any = None) -> dict[str, Any]:
    """The top-k documents for the query, read by Reason-in-Documents against the reasoning so far; its Final
    Information is appended as the search result."""
    ctx = context_of(runtime)
    pending = state["pending"]
    output = state.get("output", "")
    documents = search(ctx, pending["query"])
    prompt = REASON_IN_DOCUMENTS.format(prev_reasoning=previous_reasoning(output), search_query=pending["query"],
                                        document=web_pages(documents))
    spec = resolve_spec("summarizer", ctx)
    room = context_window(spec, ctx) - count_tokens(spec, "summarizer", ctx, prompt) - 16
    text, record, _ = call_llm("summarizer", prompt, ctx, max_tokens=max(MIN_ROOM, min(given(ctx.max_tokens, 8192), room)))
    information = final_information(text)
    result = f"\n\n{BEGIN_SEARCH_RESULT}{information}{END_SEARCH_RESULT}\n\n"
    step = {**pending, "observation": information, "retrieved_ids": [d.id for d in documents],
            "retrieved_titles": [d.title for d in documents]}
    if "**Final Information**" not in text and "**Modified Reasoning Steps**" not in text:
        step["no_final_information"] = True  # a Reason-in-Documents failure: its reply had no Final Information
    return {"output": output + result, "searches": state.get("searches", 0) + 1, "pending": {**pending, "read": True},
            "executed": [*state.get("executed", []), pending["query"]], "trajectory": [step],
            "calls": [record.to_dict()]}


def answer(state: SearchO1State, runtime: Any = None) -> dict[str, Any]:
    """The last `\\boxed{}` of the whole output; without one, no answer (`paper`, as the official evaluation scores
    it) or the final turn's "answer is ..." (`search_o1_unboxed_answer`). The concise-answer step follows (small)."""
    ctx = context_of(runtime)
    output = state.get("output", "")
    pending = state.get("pending", {})
    # A search asked at the last turn (MAX_TURN) is not run: the turn is still a step of the trajectory.
    unread = [{**pending, "unread_at_cap": True}] if pending.get("kind") == "search" and not pending.get("read") else []
    found = boxed_answer(output)
    if not found and ctx.search_o1_unboxed_answer:
        found = unboxed_answer(pending.get("raw", ""))
    return {"answer": found, "finished_by": state.get("finished_by") or "cap", "answer_reply": output[-2000:],
            **({"trajectory": unread} if unread else {})}


def route_after_reason(state: SearchO1State, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    if state.get("finished_by"):
        return "answer"
    if state.get("turns", 0) >= given(ctx.max_steps, 15):  # MAX_TURN: a search asked at the last turn is not read
        return "answer"
    if state["pending"]["kind"] == "search":
        return "reason_in_documents"
    return "reason"  # a refused search or, with feedback, an invalid turn


def route_after_documents(state: SearchO1State, runtime: Any = None) -> str:
    return "answer" if state.get("turns", 0) >= given(context_of(runtime).max_steps, 15) else "reason"
