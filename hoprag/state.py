"""Graph state shared by the iterative methods. Reducers say how parallel nodes merge their output."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict  # typing.TypedDict breaks the server's JSON schemas on 3.11


class InputState(TypedDict):
    question: str


class OutputState(TypedDict, total=False):
    answer: str
    trajectory: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    finished_by: str
    answer_reply: str
    repeated_queries: int
    dropped_observations: int
    judgements: list[dict[str, str]]


class RunState(TypedDict, total=False):
    """What every method's state holds: the question, its steps, its LLM calls and how it ended."""

    question: str
    trajectory: Annotated[list[dict[str, Any]], operator.add]
    calls: Annotated[list[dict[str, Any]], operator.add]
    answer: str
    finished_by: str


class AgentState(TypedDict, total=False):
    question: str
    # One entry per reasoning step: thought, action, query, retrieved ids, notes, observation.
    trajectory: Annotated[list[dict[str, Any]], operator.add]
    # Note-writer outputs of the step in flight; fan-out writers append here in parallel.
    step_notes: Annotated[list[dict[str, Any]], operator.add]
    # Usage records of every LLM call: role, model, tokens in/out, seconds.
    calls: Annotated[list[dict[str, Any]], operator.add]
    pending: dict[str, Any]  # the parsed action of the step in flight
    documents: list[dict[str, Any]]  # documents retrieved for the step in flight
    answer: str
    finished_by: str  # finish | notes | cap
    # The generator's reply the answer was read from, where that reply is free text (the synthesis at the step
    # cap): kept so a wrong reading can be told from a wrong answer.
    answer_reply: str
    repeated_queries: Annotated[int, operator.add]
    dropped_observations: int
