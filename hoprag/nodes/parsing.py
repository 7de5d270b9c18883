"""Defensive parsers of LLM output. A malformed output becomes data the method can react to: every
parser returns what it could read plus a `problem` string, and none of them raises."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_ACTION_START = re.compile(r"\b(search|finish)\s*\[", re.IGNORECASE)
_THOUGHT_LABEL = re.compile(r"Thought(?:\s*\d+)?\s*:\s*", re.IGNORECASE)
_ACTION_LABEL = re.compile(r"\bAction(?:\s*\d+)?\s*:", re.IGNORECASE)
# Without an "Action:" label, an action is one that begins its own line (after list or markdown marks); a line
# that begins "Thought" is the thought, whatever it names.
_ACTION_LINE = re.compile(r"^[ \t>*`_-]*(?=(?:search|finish)\s*\[)", re.IGNORECASE | re.MULTILINE)


@dataclass
class Action:
    thought: str
    kind: str  # search | finish | invalid
    argument: str = ""
    entity: str = ""
    query: str = ""
    problem: str = ""  # why the action is invalid, or a warning (several actions)

    @property
    def invalid(self) -> bool:
        return self.kind == "invalid"


def _bracketed(text: str, start: int) -> tuple[str, int] | None:
    """The argument of an action whose `[` ends at `start`: up to the matching `]`, so answers that
    contain brackets ("finish[Dune [novel]]") stay whole. An unbalanced argument ends at the last `]`
    of its line; None when there is none."""
    line_end = text.find("\n", start)
    depth = 1
    for position in range(start, len(text)):
        char = text[position]
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                rest = text[position + 1: line_end if line_end >= 0 else len(text)]
                if "]" in rest and not _ACTION_START.search(rest):
                    break  # a stray "]" inside the argument: it ends at the line's last "]"
                return text[start:position], position + 1
        elif char == "\n" and depth > 0:
            break
    line = text[start: line_end if line_end >= 0 else len(text)]
    if "]" not in line:
        return None
    cut = line.rindex("]")
    return line[:cut], start + cut + 1


def _actions(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    position = 0
    while match := _ACTION_START.search(text, position):
        bracketed = _bracketed(text, match.end())
        if bracketed is None:
            position = match.end()
            continue
        argument, position = bracketed
        found.append((match.group(1).lower(), argument))
    return found


def _split_turn(text: str) -> tuple[str, str]:
    """(thought, action part) of a reasoner turn: the action part starts at the first "Action N:" label or, with
    none, at the first line that begins with search[ or finish[; "" when there is neither."""
    label = _ACTION_LABEL.search(text)
    if label:
        return text[:label.start()], text[label.end():]
    line = _ACTION_LINE.search(text)
    return (text[:line.start()], text[line.start():]) if line else (text, "")


def parse_react(text: str) -> Action:
    """Read `Thought:` and the first `search[...]` / `finish[...]` of a reasoner turn. Actions are read from
    the Action part only: "Thought: I could search[X] ..." names a search, it does not run one."""
    text = text if isinstance(text, str) else str(text)
    thought_part, action_part = _split_turn(text)
    label = _THOUGHT_LABEL.search(thought_part)
    thought = (thought_part[label.end():] if label else thought_part).strip()
    actions = _actions(action_part)
    if not actions:
        inside = " (an action inside the Thought is not run)" if _actions(thought_part) else ""
        return Action(thought, "invalid", problem=f"no valid Action found{inside}")
    kind, argument = actions[0][0], " ".join(actions[0][1].split())
    warning = f"{len(actions)} actions in one turn; only the first was executed" if len(actions) > 1 else ""
    if kind == "finish":
        if not argument:
            return Action(thought, "invalid", problem="finish[] needs an answer")
        return Action(thought, "finish", argument, problem=warning)
    entity, _, query = argument.partition(";")
    entity, query = entity.strip(), query.strip()
    if not query:
        entity, query = "", entity
    if not query:
        return Action(thought, "invalid", problem="search[] needs a query")
    return Action(thought, "search", argument, entity=entity, query=query, problem=warning)


@dataclass
class Note:
    relevant: bool
    body: str
    problem: str = ""  # set when the output carries no YES/NO verdict


# A verdict is the whole word YES or NO ("Norway ..." and "Yesterday ..." are not verdicts).
_VERDICT = re.compile(r"^[\W_]*(YES|NO)(?![A-Za-z0-9])[^\w#]*#?\s*", re.IGNORECASE)
# Unprefixed outputs that say the page does not help are refusals, not notes.
_REFUSAL = re.compile(
    r"\b(does not|doesn't|do not|don't|did not|cannot|can't|can not|is not|isn't|no)\b[^.]{0,40}"
    r"\b(mention|contain|provide|relevant|related|information|include|say|discuss|answer|specify)",
    re.IGNORECASE,
)


def parse_note(text: str, lenient: bool = False) -> Note:
    """`YES#notes` -> relevant; `NO#...` -> not relevant. An output with no verdict is a problem; it
    is dropped, unless `lenient` (small note writers often skip the prefix yet extract the right
    sentence), where it counts as a note when it is not a refusal."""
    stripped = (text if isinstance(text, str) else str(text)).strip()
    match = _VERDICT.match(stripped)
    if match:
        body = stripped[match.end():].strip()
        return Note(match.group(1).upper() == "YES" and bool(body), body)
    if not stripped:
        return Note(False, "", problem="empty note")
    if lenient and not _REFUSAL.search(stripped):
        return Note(True, stripped, problem="no YES/NO verdict; kept as a note")
    return Note(False, stripped, problem="no YES/NO verdict")


@dataclass
class Verdict:
    yes: bool
    answer: str  # what follows the Yes (ReSP's local pathway), else ""
    problem: str = ""


_YES_NO = re.compile(r"^[\W_]*(yes|no)(?![A-Za-z0-9])[\W_]*", re.IGNORECASE)


def parse_yes_no(text: str) -> Verdict:
    """A Yes/No reply (ReSP's judge and local-pathway summarizer). Only a clear Yes counts; a reply
    with neither word first is a problem and reads as No."""
    stripped = (text if isinstance(text, str) else str(text)).strip()
    match = _YES_NO.match(stripped)
    if not match:
        return Verdict(False, "", problem="no Yes/No verdict")
    yes = match.group(1).lower() == "yes"
    return Verdict(yes, stripped[match.end():].strip() if yes else "")


_PLAN_PREFIX = re.compile(r"^\s*(?:\[?(?:you|your)?\s*thought\]?|sub-?question|question|next question)\s*\d*\s*[:\]-]\s*",
                          re.IGNORECASE)


def parse_plan(text: str) -> tuple[str, str]:
    """ReSP's planned sub-question: the first non-empty line without a label. (question, problem)."""
    for line in (text if isinstance(text, str) else str(text)).splitlines():
        line = _PLAN_PREFIX.sub("", line.strip()).strip().strip('"').strip()
        if line:
            return line, ""
    return "", "empty plan"


def normalize_query(query: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", query.lower()).split())


def earlier_search(trajectory: list[dict[str, Any]], query: str, key: str = "argument") -> int | None:
    """The number (from 1) of the first earlier search step whose `key` is the same query, else None."""
    wanted = normalize_query(query)
    return next((number for number, step in enumerate(trajectory, 1)
                 if step.get("kind") == "search" and normalize_query(step.get(key, "")) == wanted), None)


@dataclass
class FunctionCall:
    """A ReaRAG step: its thought and its function call, parsed as data."""

    thought: str
    function: str  # search | finish | invalid
    argument: str = ""  # the query or the answer
    number: int | None = None  # the step number the model wrote ("Action 3:")
    problem: str = ""

    @property
    def invalid(self) -> bool:
        return self.function == "invalid"


_REARAG_THOUGHT = re.compile(r"Thought\s*(\d+)?\s*:\s*(.*?)(?=\n\s*Action\s*\d*\s*:|\Z)", re.IGNORECASE | re.DOTALL)
_REARAG_ACTION = re.compile(r"Action\s*(\d+)?\s*:", re.IGNORECASE)


def _first_object(text: str) -> str | None:
    """The first balanced {...} in `text`, quotes respected; None when there is none."""
    start = text.find("{")
    while start >= 0:
        depth, quote, escaped = 0, "", False
        for position in range(start, len(text)):
            char = text[position]
            if quote:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == quote:
                    quote = ""
            elif char in "'\"":
                quote = char
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[start: position + 1]
        start = text.find("{", start + 1)
    return None


def _as_data(literal: str) -> object:
    """A JSON object, or a Python dict literal (single quotes): parsed as data, never evaluated as code."""
    import ast
    import json

    try:
        return json.loads(literal)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(literal)  # literals only: no names, calls or attributes
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


_NAMED_CALL = re.compile(r"^\s*[`*]*\s*(search|finish)\b\s*[:(]?", re.IGNORECASE)
# What a small model writes that no literal parser reads (lenient only), on the call's own line:
# the official object with a quote of its value's own inside it ('query': 'Chiang Kai-shek's son'), and
# keyword calls (search(query="...")). The value runs to the last quote before the closing brackets.
_QUOTED_CALL = re.compile(r"""^[^\n]*?['"]function['"]\s*:\s*['"](search|finish)['"]\s*,\s*['"]parameters['"]\s*:"""
                          r"""\s*\{\s*['"](query|answer)['"]\s*:\s*(['"])(.*)\3\s*\}\s*\}""", re.IGNORECASE)
_KEYWORD_CALL = re.compile(r"""^\s*[`*]*\s*(search|finish)\s*\(\s*(?:(query|answer)\s*=\s*)?(['"])(.*)\3\s*\)""",
                           re.IGNORECASE)


def _loose_call(action: str) -> tuple[str, str] | None:
    """(function, value) from a call written with a stray quote or as a keyword call, else None."""
    line = action.strip().split("\n", 1)[0]
    for pattern in (_QUOTED_CALL, _KEYWORD_CALL):
        match = pattern.match(line)
        if match:
            function, key = match.group(1).lower(), (match.group(2) or "").lower()
            if not key or key == ("query" if function == "search" else "answer"):
                return function, match.group(4)
    return None


def parse_rearag_action(text: str, lenient: bool = False) -> FunctionCall:
    """`Thought N: ...` and `Action N:` with `{'function': 'search'|'finish', 'parameters': {...}}`: the first
    object after the Action label (code fences, single quotes and trailing text are fine).

    `lenient` (small) also reads the shapes small models write instead: the function's name then its
    parameters (`Action 1: search {"query": ...}`), the parameters alone (`{"query": ...}`: a query is a
    search, an answer a finish), a keyword call (`search(query="...")`), and the official object with an
    unescaped quote in its value (`{'query': 'Chiang Kai-shek's son'}`)."""
    text = text if isinstance(text, str) else str(text)
    thought_match = _REARAG_THOUGHT.search(text)
    thought = " ".join((thought_match.group(2) if thought_match else "").split())
    action_match = _REARAG_ACTION.search(text)
    number = int(action_match.group(1)) if action_match and action_match.group(1) else None
    if action_match is None:
        return FunctionCall(thought, "invalid", number=number, problem="no 'Action N:'")
    action = text[action_match.end():]
    literal = _first_object(action)
    data = _as_data(literal) if literal is not None else None
    loose = _loose_call(action) if lenient and not isinstance(data, dict) else None
    if loose is not None and loose[1].strip():
        return FunctionCall(thought, loose[0], " ".join(loose[1].split()), number=number)
    if literal is None:
        return FunctionCall(thought, "invalid", number=number, problem="no {...} function call after 'Action:'")
    if not isinstance(data, dict):
        return FunctionCall(thought, "invalid", number=number, problem="the function call is not a dict")
    function, parameters = data.get("function"), data.get("parameters")
    if lenient and function is None:
        named = _NAMED_CALL.match(action)
        parameters = parameters if isinstance(parameters, dict) else data
        function = named.group(1).lower() if named else "search" if "query" in parameters else \
            "finish" if "answer" in parameters else None
    if function not in ("search", "finish"):
        return FunctionCall(thought, "invalid", number=number, problem=f"unknown function {function!r}")
    key = "query" if function == "search" else "answer"
    value = parameters.get(key) if isinstance(parameters, dict) else None
    if value is None or not str(value).strip():
        return FunctionCall(thought, "invalid", number=number, problem=f"{function} needs parameters.{key}")
    return FunctionCall(thought, function, " ".join(str(value).split()), number=number)


@dataclass
class Plan:
    """A FuRePA planning: `[Analysis] r` then `[Search] q` or `[Answer] a`."""

    kind: str  # search | answer | invalid
    value: str = ""  # the query or the answer
    analysis: str = ""
    problem: str = ""


_PLAN_TAG = re.compile(r"\[\s*(analysis|search|answer)\s*\]\s*:?", re.IGNORECASE)


def parse_furepa_plan(text: str) -> Plan:
    """The first [Search] or [Answer] of a reply, with the [Analysis] before it. Never raises."""
    text = text if isinstance(text, str) else str(text)
    tags = list(_PLAN_TAG.finditer(text))
    analysis = ""
    for index, tag in enumerate(tags):
        end = tags[index + 1].start() if index + 1 < len(tags) else len(text)
        raw = text[tag.end():end]
        kind = tag.group(1).lower()
        if kind == "analysis":
            analysis = " ".join(raw.split())  # a reasoning may run over several lines
            continue
        # "Lines only start with [Analysis] or [Answer] or [Search]" (the paper's system prompt): a
        # query or an answer is its tag's line; what follows on later lines is not part of it.
        line = next((" ".join(ln.split()) for ln in raw.splitlines() if ln.strip()), "")
        if line:
            return Plan(kind, line, analysis)
    return Plan("invalid", analysis=analysis, problem="no [Search] or [Answer] line")
