"""Infogent (Reddy et al., 2024), its direct API-driven variant: a Navigator (an AutoGPT agent) that `search`es and
picks a page to `extract`; the Extractor pulls up to two paragraphs from that page; the Aggregator ADDs them to (or
REPLACEs entries of) the aggregated list and feeds back to the Navigator what to look for next, as the `extract`
command's result. The Navigator goes on until it calls `finish` or reaches its cap; the answer is then written from
the aggregated list alone.

Everything follows gangiswag/infogent (direct-api-driven/run_frames.py, autogpt.py, frames_answer.py) and the AutoGPT
scaffold it runs in (langchain_experimental's AutoGPTPrompt and AutoGPTOutputParser). Google search through Serper
is replaced by the run's retriever over whole pages, as ReNAct (003, A.1) replaced it by Wikipedia search. A reply
that cannot be read is an invalid output and gets the official error text as its result, never an exception."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.utils.json import parse_json_markdown

from hoprag.context import Context, context_of, given
from hoprag.documents import Document
from hoprag.llm import call_llm, context_window, count_tokens, resolve_spec
from hoprag.nodes.reasoner import after_answer
from hoprag.nodes.retrieve import search
from hoprag.prompts.infogent import (
    AGGREGATED_COUNT,
    AGGREGATOR,
    AGGREGATOR_SYSTEM,
    AGGREGATOR_UNPARSED,
    ANSWER,
    COMMAND_RESULT,
    ERROR_RESULT,
    EXTRACTOR,
    EXTRACTOR_SYSTEM,
    MEMORY_DOCUMENT,
    MEMORY_MESSAGE,
    NAVIGATOR_GOAL,
    NOTHING_FOUND,
    TIME_MESSAGE,
    TOOL_ERROR,
    UNKNOWN_COMMAND,
    USER_INPUT,
    navigator_system,
)
from hoprag.state import RunState

NUM_ITERATIONS = 15  # run_frames.py --num_iterations (FanOutQA's run_fanoutqa.py: 10); the Navigator's cap is twice it
MAX_PAGE_TOKENS = 100_000  # extract_info_prompt cuts the website content at 100,000 tokens
EXTRACTOR_TOKENS, AGGREGATOR_TOKENS, ANSWER_TOKENS = 2000, 1000, 2000  # the official calls' max_tokens
SNIPPET_CHARS = 160  # about a Google (Serper) snippet: what the Navigator sees of each result
# AutoGPTPrompt.format_messages: the long-term memory's top 4 (VectorStoreRetriever's default k), cut while the system
# messages and memory pass 2500 tokens; the last 10 chat messages, newest first, while the prompt stays under
# send_token_limit (4196) - 1000.
MEMORY_K, MEMORY_TOKENS, HISTORY_MESSAGES, HISTORY_TOKENS = 4, 2500, 10, 4196 - 1000
TOOLS = ("search", "extract")
FINISH = "finish"
# The Aggregator's actions, as run_frames.py matches them; lenient (small): any case and spacing, E/P optional.
REPLACE_ACTION = re.compile(r"^REPLACE\(E(\d+),\s*P(\d+)\)$")
ADD_ACTION = re.compile(r"^ADD\(P(-?\d+)\)$")
LENIENT_ACTION = re.compile(r"\s*(ADD|REPLACE)\s*\(\s*(?:E?\s*(\d+)\s*,\s*)?P?\s*(\d+)\s*\)\s*\.?\s*", re.IGNORECASE)


class InfogentState(RunState, total=False):
    history: list[dict[str, str]]  # the Navigator's chat history: {"role": human | ai, "content"}
    memory: list[str]  # AutoGPT's long-term memory: "Assistant Reply: ... Result: ..." per command
    rounds: int  # Navigator replies (the cap bounds them)
    seen: dict[str, dict[str, Any]]  # url -> page, for every page a search has shown (what `extract` can read)
    search_thought: str  # the Navigator's motivation at its last search (the Extractor and Aggregator read it)
    counter: int  # the Aggregator's "Current Iteration Counter" (1, raised by every extract command)
    previous_iterations: list[dict[str, str]]  # the Aggregator's thoughts and feedback so far
    notes: list[str]  # the aggregated list (named as the other methods' evidence, which answer_choices reads)
    pending: dict[str, Any]  # the command in flight
    answer_reply: str


# ---------------------------------------------------------------------------------------------------------- parsing


def preprocess_json_input(text: str) -> str:
    """AutoGPT's repair: single backslashes doubled, escaped ones left alone."""
    return re.sub(r'(?<!\\)\\(?!["\\/bfnrt]|u[0-9a-fA-F]{4})', r"\\\\", text)


def first_json_object(text: str) -> Any:
    """The first JSON object in `text` (lenient: a reply with prose or code fences around its JSON); None if none."""
    decoder = json.JSONDecoder(strict=False)
    for match in re.finditer(r"\{", text):
        try:
            return decoder.raw_decode(text, match.start())[0]
        except ValueError:
            continue
    return None


@dataclass
class NavigatorCommand:
    name: str  # search | extract | finish | ERROR (unreadable) | any other name (an unknown command)
    args: Any = None
    argument: str = ""  # the one argument a tool runs with
    thought: str = ""  # thoughts.text, for the trace
    motivation: str | None = None  # thoughts.text + " " + thoughts.reasoning; None where it cannot be read
    result: str = ""  # what the command returns without running: the official error or unknown-command text
    problem: str = ""  # non-empty: an invalid output


def _reply_json(text: str, lenient: bool) -> tuple[Any, bool]:
    """The reply's JSON, as AutoGPTOutputParser reads it (json.loads, then with backslashes repaired), and whether
    the first json.loads read it; lenient: also inside code fences or prose. (None, False) where none is found."""
    try:
        return json.loads(text, strict=False), True
    except json.JSONDecodeError:
        pass
    try:
        return json.loads(preprocess_json_input(text), strict=False), False
    except json.JSONDecodeError:
        pass
    if lenient:
        try:
            return parse_json_markdown(text), False
        except (json.JSONDecodeError, ValueError, TypeError):
            return first_json_object(text), False
    return None, False


def parse_navigator_reply(text: Any, lenient: bool = False) -> NavigatorCommand:
    """One Navigator reply, as AutoGPTOutputParser reads it: JSON with command.name and command.args. Unreadable JSON
    or a missing command is the ERROR command with the official message; never raises. A search or extract also
    reads the reply's thoughts.text + " " + thoughts.reasoning (the official `search`/`extract` tools do): where the
    first json.loads read the reply and that fails, the official tool raises, and its error is the result."""
    text = text if isinstance(text, str) else str(text or "")
    parsed, direct = _reply_json(text, lenient)
    if parsed is None:
        return NavigatorCommand("ERROR", {"error": f"Could not parse invalid json: {text}"},
                                problem="the reply is not JSON")
    thoughts = parsed.get("thoughts") if isinstance(parsed, dict) else None
    thought = str(thoughts.get("text", "")) if isinstance(thoughts, dict) else ""
    try:
        name, args = parsed["command"]["name"], parsed["command"]["args"]
    except (KeyError, TypeError, IndexError):
        return NavigatorCommand("ERROR", {"error": f"Incomplete command args: {parsed}"}, thought=thought,
                                problem="the reply has no command name and args")
    name = str(name).strip().lower() if lenient else name
    command = NavigatorCommand(str(name), args, thought=thought)
    if name == FINISH:
        return command
    if name not in TOOLS:
        command.result = UNKNOWN_COMMAND.format(name=name)
        command.problem = f"an unknown command {str(name)[:40]!r}"
        return command
    values = list(args.values()) if isinstance(args, dict) else [args] if isinstance(args, str) else None
    if values is None or len(values) != 1:  # a one-input langchain Tool takes exactly one argument
        error = (f"Too many arguments to single-input tool {name}. Consider using StructuredTool instead. "
                 f"Args: {values if values is not None else [args]}")
        command.result = TOOL_ERROR.format(error=error, kind="ToolException", args=args)
        command.problem = f"the {name} command needs one argument"
        return command
    command.argument = str(values[0])
    try:
        command.motivation = parsed["thoughts"]["text"] + " " + parsed["thoughts"]["reasoning"]
    except Exception as error:  # noqa: BLE001  (the official tool fails on any of them)
        if direct and not lenient:  # json.loads read it, so the official tool raised: the command fails
            shown = str(error) if not isinstance(error, KeyError) else repr(error.args[0]) if error.args else ""
            command.result = TOOL_ERROR.format(error=shown, kind=type(error).__name__, args=args)
            command.problem = "the reply's thoughts have no text and reasoning"
    if not isinstance(command.motivation, str):
        command.motivation = None
    return command


def parse_extractor_reply(text: Any, lenient: bool = False) -> tuple[list[str], str, tuple[str, str] | None]:
    """The Extractor's paragraphs, as run_frames.py reads its json_mode reply: an object of two keys gives its
    "paragraphs" (a list, or one value), a list is the paragraphs, any other JSON one paragraph. A reply that is not
    JSON is itself the one paragraph (the official code passes it on). Returns (paragraphs, problem, error): `error`
    (message, exception name) where the official code raises (an object without exactly "thoughts" and "paragraphs");
    lenient (small) reads any object with "paragraphs". Never raises."""
    text = text if isinstance(text, str) else str(text or "")
    try:
        data = parse_json_markdown(text)
    except (json.JSONDecodeError, ValueError, TypeError):
        data = first_json_object(text) if lenient else None
        if data is None:
            return [text], "the reply is not JSON", None
    if isinstance(data, dict):
        if "paragraphs" not in data or (len(data) != 2 and not lenient):
            error = (("not enough values to unpack (expected 3, got 1)", "ValueError") if len(data) != 2 else
                     ("'paragraphs'", "KeyError"))
            return [], "the reply has no 'thoughts' and 'paragraphs'", error
        data = data["paragraphs"]
    paragraphs = data if isinstance(data, list) else [data]
    kept = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in paragraphs if p is not None]
    return kept, "" if len(kept) == len(paragraphs) else "a paragraph that is not text", None


@dataclass
class AggregatorReply:
    thoughts: str = ""
    actions: list[str] | None = None
    feedback: str = ""
    problem: str = ""  # non-empty: an invalid output
    parsed: bool = False  # False: the official "Aggregator failed to parse" feedback stands in


def parse_aggregator_reply(text: Any, lenient: bool = False) -> AggregatorReply:
    """The Aggregator's json_mode reply: thoughts, actions (a list of strings) and feedback. A reply that is not
    JSON, or lacks thoughts or feedback, is not parsed (the official "Aggregator failed to parse" feedback follows);
    actions that are not a list are none (lenient: one action string is a list of one). Never raises."""
    text = text if isinstance(text, str) else str(text or "")
    try:
        data = parse_json_markdown(text)
    except (json.JSONDecodeError, ValueError, TypeError):
        data = first_json_object(text) if lenient else None
    if not isinstance(data, dict) or "feedback" not in data or "thoughts" not in data:
        return AggregatorReply(problem="the reply is not JSON with thoughts and feedback")
    actions = data.get("actions")
    problem = ""
    if isinstance(actions, str) and lenient:
        actions = [actions]
    if not isinstance(actions, list):
        problem, actions = ("the actions are not a list" if actions is not None else "the reply has no actions"), []
    return AggregatorReply(str(data["thoughts"]), [str(a) for a in actions], str(data["feedback"]), problem, True)


def apply_actions(actions: list[str], aggregated: list[str], provided: list[str], lenient: bool = False,
                  limit: int = 0) -> tuple[list[str], list[str], list[str]]:
    """The aggregated list after the Aggregator's ADD(Pi) and REPLACE(Ej, Pi) actions, as run_frames.py applies them;
    an action that does not match, or names no passage, is skipped. `limit` > 0 refuses an ADD past that many
    entries. Returns (the list, actions applied, actions skipped)."""
    aggregated = list(aggregated)
    applied: list[str] = []
    skipped: list[str] = []
    for action in actions:
        kind, existing, passage = "", 0, 0
        if lenient and (match := LENIENT_ACTION.fullmatch(action)):
            kind, existing, passage = match.group(1).upper(), int(match.group(2) or 0), int(match.group(3))
        elif "REPLACE" in action and (match := REPLACE_ACTION.match(action)):
            kind, existing, passage = "REPLACE", int(match.group(1)), int(match.group(2))
        elif "ADD" in action and (match := ADD_ACTION.match(action)):
            kind, passage = "ADD", int(match.group(1))
        if kind == "REPLACE" and 1 <= existing <= len(aggregated) and 1 <= passage <= len(provided):
            aggregated[existing - 1] = provided[passage - 1]
        elif kind == "ADD" and 1 <= passage <= len(provided) and not (limit and len(aggregated) >= limit):
            aggregated.append(provided[passage - 1])
        else:
            skipped.append(action)
            continue
        applied.append(action)
    return aggregated, applied, skipped


# ---------------------------------------------------------------------------------------------------------- prompts


def page_url(document: Document) -> str:
    """What the Navigator passes to `extract`: the page's URL where the retriever gives one (Wikipedia), else its id."""
    return str(document.metadata.get("url") or document.id)


def snippet(document: Document) -> str:
    """A short snippet of the page, as a search result shows it: its first characters after the title heading."""
    text = re.sub(r"^#[^\n]*\n", "", document.text.lstrip(), count=1)
    return " ".join(text.split())[:SNIPPET_CHARS]


def relevant_memory(memory: list[str], history: list[dict[str, str]]) -> list[str]:
    """The long-term memory documents most like the last 10 chat messages: BM25 stands in for the official
    embedding retriever (OpenAI embeddings, all-mpnet-base-v2 in ReNAct's runs), top 4."""
    if len(memory) <= 1:
        return list(memory)
    from hoprag.retrievers.index import bm25_rank

    query = "\n".join(m["content"] for m in history[-HISTORY_MESSAGES:])
    ranking = bm25_rank(query, memory) if query.strip() else None
    order = [i for i, _ in ranking] if ranking else list(range(len(memory) - 1, -1, -1))
    return [memory[i] for i in order[:MEMORY_K]]


def navigator_messages(state: InfogentState, ctx: Context) -> list[BaseMessage]:
    """AutoGPTPrompt.format_messages: the system prompt with the goal, the time, the relevant memory (cut to 2500
    tokens with the system messages), as many of the last 10 chat messages as fit 3196 tokens, and the user input."""
    spec = resolve_spec("reasoner", ctx)

    def tokens(text: str) -> int:
        return count_tokens(spec, "reasoner", ctx, text)

    base = navigator_system(NAVIGATOR_GOAL.format(task=state["question"]))
    clock = TIME_MESSAGE.format(time=time.strftime("%c"))
    used = tokens(base) + tokens(clock)
    history = state.get("history", [])
    memory = relevant_memory(state.get("memory", []), history)
    while memory and used + sum(tokens(m) for m in memory) > MEMORY_TOKENS:
        memory = memory[:-1]
    memory_message = MEMORY_MESSAGE.format(memory=memory)
    used += tokens(memory_message)
    kept: list[BaseMessage] = []
    for message in history[-HISTORY_MESSAGES:][::-1]:
        size = tokens(message["content"])
        if used + size > HISTORY_TOKENS:
            break
        kept.insert(0, (HumanMessage if message["role"] == "human" else AIMessage)(message["content"]))
        used += size
    return [SystemMessage(base), SystemMessage(clock), SystemMessage(memory_message), *kept, HumanMessage(USER_INPUT)]


def fit_page(content: str, prompt: str, system: str, role: str, ctx: Context, max_tokens: int) -> str:
    """The page cut to the official 100,000 tokens and to what the role's window leaves beside the prompt."""
    spec = resolve_spec(role, ctx)
    room = min(MAX_PAGE_TOKENS, context_window(spec, ctx) - count_tokens(spec, role, ctx, prompt + system)
               - max_tokens - 64)
    for _ in range(4):
        size = count_tokens(spec, role, ctx, content)
        if size <= room:
            break
        content = content[: max(0, int(len(content) * room / size) - 16)]
    return content


def aggregator_prompt(state: InfogentState, provided: list[str], ctx: Context) -> str:
    aggregated = state.get("notes", [])
    aggregated_list = "".join(f"ID: E{i + 1} Text: {text}\n\n" for i, text in enumerate(aggregated)) or "None"
    provided_list = "".join(f"ID: P{i + 1} Text: {text}\n\n" for i, text in enumerate(provided))
    previous = "".join(f"Iteration {i + 1}: Thoughts - {it['thoughts']}\nFeedback - {it['feedback']}\n\n"
                       for i, it in enumerate(state.get("previous_iterations", [])))
    return AGGREGATOR.format(num_iterations=given(ctx.infogent_iterations, NUM_ITERATIONS),
                             counter=state.get("counter", 1), user_task=state["question"],
                             previous_iterations=previous, navigator_motivation=state.get("search_thought", "Not Available"),
                             aggregated_list=aggregated_list, provided_list=provided_list)


def answer_prompt(question: str, passages: list[str]) -> str:
    context = "".join(f"{i + 1}) {p.strip()}\n" for i, p in enumerate(passages))
    return ANSWER.format(context=context, question=question)


# ---------------------------------------------------------------------------------------------------------- nodes


def tool_result(name: str, observation: Any) -> str:
    """What agent.py appends after a tool ran (or raised, its error the observation)."""
    return COMMAND_RESULT.format(name=name, observation=observation)


def close_command(state: InfogentState, pending: dict[str, Any], result: str, **step: Any) -> dict[str, Any]:
    """A command's result joins the chat history and the long-term memory (agent.py), and its round the trajectory."""
    return {"history": [*state.get("history", []), {"role": "ai", "content": result}],
            "memory": [*state.get("memory", []), MEMORY_DOCUMENT.format(reply=pending["raw"], result=result)],
            "trajectory": [{**{k: v for k, v in pending.items() if k not in ("raw", "args")}, **step,
                            "observation": result}], "pending": {}}


def navigate(state: InfogentState, runtime: Any = None) -> dict[str, Any]:
    """One Navigator reply: a search, an extract, finish, or a reply that fails with the official error text."""
    ctx = context_of(runtime)
    if state.get("rounds", 0) >= given(ctx.max_steps, 2 * NUM_ITERATIONS):  # agent.py's loop: no reply past the cap
        return {"finished_by": "cap", "pending": {}}
    rounds = state.get("rounds", 0) + 1
    text, record, _ = call_llm("reasoner", navigator_messages(state, ctx), ctx)
    command = parse_navigator_reply(text, lenient=bool(ctx.infogent_lenient_json))
    history = [*state.get("history", []), {"role": "human", "content": USER_INPUT}, {"role": "ai", "content": text}]
    action = f"{command.name}({command.argument or json.dumps(command.args, default=str)})"
    pending: dict[str, Any] = {"kind": command.name if command.name in (*TOOLS, FINISH) else "invalid",
                               "round": rounds, "thought": command.thought, "action": action, "raw": text,
                               "problem": command.problem}
    update: dict[str, Any] = {"rounds": rounds, "history": history,
                              "calls": [record.parsed(bool(command.problem), command.problem)]}
    if command.name == FINISH:
        response = command.args.get("response") if isinstance(command.args, dict) else None
        observation = str(response) if response is not None else "Finished but with error at final step"
        step = {k: v for k, v in pending.items() if k != "raw"}
        return {**update, "trajectory": [{**step, "observation": observation}], "finished_by": "finish", "pending": {}}
    if command.result or command.name == "ERROR":
        result = (tool_result(command.name, command.result) if command.name in TOOLS else
                  command.result or ERROR_RESULT.format(args=command.args))
        return {**update, **close_command({**state, "history": history}, pending, result)}
    pending["args"] = command.args
    if command.name == "search":
        pending["query"] = command.argument
        if command.motivation is not None:
            update["search_thought"] = command.motivation
    else:
        pending["url"] = command.argument
    return {**update, "pending": pending}


def search_pages(state: InfogentState, runtime: Any = None) -> dict[str, Any]:
    """The `search` command: the top k pages for the query, shown as the official tool shows Google's results
    (title, url, snippet); the pages are kept for `extract`."""
    ctx = context_of(runtime)
    pending = state["pending"]
    documents = search(ctx, pending["query"]) if pending["query"].strip() else []
    results = [{"title": d.title, "url": page_url(d), "snippet": snippet(d)} for d in documents]
    seen = {**state.get("seen", {}), **{page_url(d): d.to_dict() for d in documents}}
    result = tool_result("search", results)
    return {**close_command(state, pending, result, retrieved_ids=[d.id for d in documents],
                            retrieved_titles=[d.title for d in documents]), "seen": seen}


def find_page(seen: dict[str, dict[str, Any]], url: str, lenient: bool) -> dict[str, Any] | None:
    """The page a search showed at `url`; lenient (small): also by its title or id, or the URL without its scheme."""
    if url in seen or not lenient:
        return seen.get(url)
    key = url.strip().strip("\"'<>").rstrip("/").lower()
    for address, page in seen.items():
        names = {address.lower(), address.lower().split("://")[-1], str(page.get("title", "")).lower(),
                 str(page.get("id", "")).lower()}
        if key in names or key.split("://")[-1] in names:
            return page
    return None


def extract(state: InfogentState, runtime: Any = None) -> dict[str, Any]:
    """The `extract` command's first half: the Extractor reads the page (one the searches showed; any other URL reads
    as a page with no content, as a failed download does) and returns up to two paragraphs. With paragraphs the
    Aggregator follows; without, the command returns the official "Did not find any relevant information"."""
    ctx = context_of(runtime)
    pending = state["pending"]
    lenient = bool(ctx.infogent_lenient_json)
    counter = state.get("counter", 1) + 1
    page = find_page(state.get("seen", {}), pending["url"], lenient)
    content = page["text"] if page else ""
    step: dict[str, Any] = {"page": page["title"] if page else "", "retrieved_ids": [page["id"]] if page else [],
                            "retrieved_titles": [page["title"]] if page else []}
    if not page:
        step["unknown_page"] = True
    update: dict[str, Any] = {"counter": counter}
    paragraphs: list[str] = []
    if content.strip():
        greedy = replace(ctx, temperature=0.0)  # the official Extractor decodes greedily
        max_tokens = min(EXTRACTOR_TOKENS, given(ctx.max_tokens, EXTRACTOR_TOKENS))
        prompt = EXTRACTOR.format(data="", search_motivation=state.get("search_thought", "Not Available"))
        data = fit_page(content, prompt, EXTRACTOR_SYSTEM, "notes", greedy, max_tokens)
        prompt = EXTRACTOR.format(data=data, search_motivation=state.get("search_thought", "Not Available"))
        text, record, _ = call_llm("notes", prompt, greedy, system=EXTRACTOR_SYSTEM, max_tokens=max_tokens)
        paragraphs, problem, error = parse_extractor_reply(text, lenient)
        update["calls"] = [record.parsed(bool(problem), problem)]
        step.update(extracted=paragraphs, **({"extractor_problem": problem} if problem else {}))
        if error:  # the official tool raised: its error is the command's result
            raised = TOOL_ERROR.format(error=error[0], kind=error[1], args=pending.get("args"))
            return {**update, **close_command(state, pending, tool_result("extract", raised), **step)}
    if paragraphs:
        return {**update, "pending": {**pending, **step}}
    result = NOTHING_FOUND + AGGREGATED_COUNT.format(count=len(state.get("notes", [])))
    return {**update, **close_command(state, pending, tool_result("extract", result), **step)}


def aggregate(state: InfogentState, runtime: Any = None) -> dict[str, Any]:
    """The `extract` command's second half: the Aggregator adds the Extractor's paragraphs to the aggregated list (or
    replaces entries with them) and writes the feedback that is the command's result."""
    ctx = context_of(runtime)
    lenient = bool(ctx.infogent_lenient_json)
    pending = state["pending"]
    provided = list(pending.get("extracted") or [])
    max_tokens = min(AGGREGATOR_TOKENS, given(ctx.max_tokens, AGGREGATOR_TOKENS))
    text, record, _ = call_llm("summarizer", aggregator_prompt(state, provided, ctx), ctx, system=AGGREGATOR_SYSTEM,
                               max_tokens=max_tokens)
    reply = parse_aggregator_reply(text, lenient)
    aggregated = list(state.get("notes", []))
    update: dict[str, Any] = {}
    step: dict[str, Any] = {}
    if not reply.parsed:
        result = AGGREGATOR_UNPARSED
    else:
        aggregated, applied, skipped = apply_actions(reply.actions or [], aggregated, provided, lenient,
                                                     given(ctx.infogent_max_aggregated, 0))
        if skipped and not reply.problem:
            reply.problem = f"actions that were not applied: {', '.join(skipped)[:200]}"
        update["previous_iterations"] = [*state.get("previous_iterations", []),
                                         {"thoughts": reply.thoughts, "feedback": reply.feedback}]
        step.update(aggregator_actions=applied, feedback=reply.feedback, aggregated=len(aggregated))
        result = reply.feedback + AGGREGATED_COUNT.format(count=len(aggregated))
    if reply.problem:
        step["aggregator_problem"] = reply.problem
    return {**update, **close_command(state, pending, tool_result("extract", result), **step), "notes": aggregated,
            "calls": [record.parsed(bool(reply.problem), reply.problem)]}


def answer(state: InfogentState, runtime: Any = None) -> dict[str, Any]:
    """The answer from the aggregated list alone (frames_answer.py `get_search_prompt`), greedy."""
    ctx = context_of(runtime)
    greedy = replace(ctx, temperature=0.0)
    max_tokens = min(ANSWER_TOKENS, given(ctx.max_tokens, ANSWER_TOKENS))
    text, record, _ = call_llm("generator", answer_prompt(state["question"], state.get("notes", [])), greedy,
                               max_tokens=max_tokens)
    return {"answer": text.strip(), "answer_reply": text, "finished_by": state.get("finished_by") or "cap",
            "calls": [record.to_dict()]}


# ---------------------------------------------------------------------------------------------------------- routes


def route_after_navigate(state: InfogentState, runtime: Any = None) -> str:
    """finish or the cap: the answer; a search or extract: its command; a reply that failed: the Navigator again."""
    kind = (state.get("pending") or {}).get("kind")
    if state.get("finished_by"):
        return "answer"
    return kind if kind in TOOLS else "navigate"


def route_after_extract(state: InfogentState, runtime: Any = None) -> str:
    return "aggregate" if (state.get("pending") or {}).get("extracted") else "navigate"


def route_after_answer(state: InfogentState, runtime: Any = None) -> str:
    return after_answer(context_of(runtime))


def counters(result: dict[str, Any]) -> dict[str, int]:
    """Infogent's own counts of one run (summary.json averages them): Navigator rounds, searches, pages read by the
    Extractor, Aggregator feedback rounds, and invalid outputs of the three agents."""
    steps = result.get("trajectory") or []
    return {"rounds": sum(1 for s in steps if s.get("round")),
            "searches": sum(1 for s in steps if s.get("kind") == "search"),
            "pages_read": sum(1 for s in steps if s.get("kind") == "extract" and "extracted" in s),
            "feedback_rounds": sum(1 for s in steps if "feedback" in s),
            "invalid_outputs": sum(bool(s.get("problem")) + bool(s.get("extractor_problem"))
                                   + bool(s.get("aggregator_problem")) for s in steps)}
