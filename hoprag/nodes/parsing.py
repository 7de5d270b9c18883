"""Defensive parsers of LLM output. A malformed output becomes data the method can react to."""

from __future__ import annotations

import re
from dataclasses import dataclass

_ACTION = re.compile(r"\b(search|finish)\s*\[(.*?)\]", re.IGNORECASE | re.DOTALL)
_THOUGHT = re.compile(r"Thought(?:\s*\d+)?\s*:\s*(.*?)(?=\n\s*Action(?:\s*\d+)?\s*:|\Z)", re.IGNORECASE | re.DOTALL)


@dataclass
class Action:
    thought: str
    kind: str  # search | finish | invalid
    argument: str = ""
    entity: str = ""
    query: str = ""
    problem: str = ""  # why the action is invalid, or a warning (several actions)


def parse_react(text: str) -> Action:
    """Read `Thought:` and the first `search[...]` / `finish[...]` of a reasoner turn."""
    thought_match = _THOUGHT.search(text)
    thought = (thought_match.group(1) if thought_match else text.split("Action")[0]).strip()
    actions = _ACTION.findall(text)
    if not actions:
        return Action(thought, "invalid", problem="no valid Action found")
    kind, argument = actions[0][0].lower(), " ".join(actions[0][1].split())
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


_NOTE = re.compile(r"^\W*(YES|NO)\W*#?\s*", re.IGNORECASE)


def parse_note(text: str) -> tuple[bool, str]:
    """`YES#notes` -> (True, notes); `NO#...` -> (False, ...). Text with no verdict but some content
    counts as a note: small note writers often skip the prefix yet extract the right sentence."""
    stripped = text.strip()
    match = _NOTE.match(stripped)
    if match:
        body = stripped[match.end():].strip()
        relevant = match.group(1).upper() == "YES" and bool(body)
        return relevant, body
    return bool(stripped), stripped


def normalize_query(query: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", query.lower()).split())
