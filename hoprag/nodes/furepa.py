"""FuRePA: furthest reasoning with plan assessment (the paper is the only source; every choice where it is
ambiguous is an option or listed in docs/methods/furepa.md).

- Furthest reasoning: at iteration t the LLM sees only the evidence E_t and the question (earlier
  reasoning and queries are masked); n candidate plans are sampled at temperature tp0 + raises * dtp.
- Plan assessor: the vote (finish once a query has run and the share of answer plans >= theta, with the
  majority answer), the query filter (DBSCAN, eps 2, over bag-of-words vectors; clusters holding an executed query
  are dropped; one representative per cluster; nothing left -> raise the temperature: the iteration ends
  (`furepa_raise_cap` 0, paper) or plans again, at most that many times, then the answer is forced), and
  the query scorer (a trained cross-encoder, or a training-free stand-in) that picks the query to run.
- Retrieval adds the single top-ranked document not already in E_t; at most T iterations, then the
  answer is forced."""

from __future__ import annotations

import math
import operator
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from typing_extensions import TypedDict

from hoprag.answers import normalize_answer
from hoprag.context import Context, context_of, given
from hoprag.documents import Document
from hoprag.llm import call_llm, draw_seed, resolve_spec
from hoprag.nodes.parsing import Plan, normalize_query, parse_furepa_plan
from hoprag.nodes.retrieve import search, search_many
from hoprag.prompts.furepa import (
    ANSWER_GRAMMAR,
    FIRST_EXAMPLES,
    FIRST_GRAMMAR,
    FIRST_SYSTEM,
    FIRST_USER,
    FORCE_ANSWER,
    LATTER_EXAMPLES,
    LATTER_GRAMMAR,
    LATTER_SYSTEM,
    LATTER_USER,
)

PLAN_TOKENS = 160
SCORER_DEPTH = 10  # documents a candidate query is scored against


class FuRePAState(TypedDict, total=False):
    question: str
    evidence: list[dict[str, Any]]  # E_t
    executed: list[str]  # queries run so far (masked from the LLM, used by the filter)
    iteration: int
    raises: int  # temperature raises in this iteration
    candidates: list[dict[str, Any]]
    best: dict[str, Any]  # the assessor's decision
    trajectory: Annotated[list[dict[str, Any]], operator.add]
    calls: Annotated[list[dict[str, Any]], operator.add]
    answer: str
    finished_by: str


def evidence_text(evidence: list[dict[str, Any]]) -> str:
    return " ".join(f"{d['title']}: {d['text']}" for d in evidence)


def plan_messages(question: str, evidence: list[dict[str, Any]], first: bool, force: bool = False) -> list[BaseMessage]:
    """Masked prompts: the first iteration asks for a query; later ones see E_t and the question only."""
    if first:
        messages: list[BaseMessage] = [SystemMessage(FIRST_SYSTEM)]
        for example, reply in FIRST_EXAMPLES:
            messages += [HumanMessage(FIRST_USER.format(question=example)), AIMessage(reply)]
        return [*messages, HumanMessage(FIRST_USER.format(question=question))]
    messages = [SystemMessage(LATTER_SYSTEM)]
    for context, example, reply in LATTER_EXAMPLES:
        messages += [HumanMessage(LATTER_USER.format(context=context, question=example)), AIMessage(reply)]
    user = LATTER_USER.format(context=evidence_text(evidence), question=question)
    return [*messages, HumanMessage(user + (FORCE_ANSWER if force else ""))]


def temperature(ctx: Context, raises: int) -> float:
    """tp0 + raises * dtp, held at 2.0, the most the OpenAI API accepts."""
    return min(2.0, given(ctx.furepa_tp0, 1.0) + raises * given(ctx.furepa_dtp, 0.5))


def is_first(state: FuRePAState) -> bool:
    """sgn(t): no query has run yet, so there is no evidence to answer from (the first prompt, searches only).
    An iteration that ended in a raise (`furepa_raise_cap` 0) ran no query: the next one is still the first."""
    return not state.get("executed")


def plan(state: FuRePAState, runtime: Any = None) -> dict[str, Any]:
    """n candidate plans, n calls with their own seeds (the paper asks one call for n choices; the embedded model
    returns one a call). Calls to an endpoint (`openai:`, `local-server:`) run concurrently, up to max_concurrency;
    the embedded model runs one call at a time anyway, so its candidates are drawn in order."""
    ctx = context_of(runtime)
    t, raises, first = state.get("iteration", 0), state.get("raises", 0), is_first(state)
    messages = plan_messages(state["question"], state.get("evidence") or [], first=first)
    n = (ctx.furepa_n or 5) if ctx.furepa_plan_assessor else 1
    grammar = ctx.action_grammar(FIRST_GRAMMAR if first else LATTER_GRAMMAR)

    def draw(i: int) -> tuple[str, Any]:
        options = ctx.with_options(temperature=temperature(ctx, raises), seed=draw_seed(ctx.seed, t, raises, i))
        text, record, _ = call_llm("reasoner", messages, options, max_tokens=PLAN_TOKENS, stop=["\nUser", "\nContext:"],
                                   grammar=grammar)
        return text, record

    workers = min(n, ctx.max_concurrency or n) if resolve_spec("reasoner", ctx).startswith(("openai:", "local-server:")) else 1
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            drawn = list(pool.map(draw, range(n)))  # in candidate order, whatever order they finish in
    else:
        drawn = [draw(i) for i in range(n)]
    candidates, calls = [], []
    for text, record in drawn:
        parsed = parse_furepa_plan(text)
        if first and parsed.kind == "answer":  # the first iteration can only search (no evidence yet)
            parsed = Plan("invalid", analysis=parsed.analysis, problem="an answer at the first iteration")
        candidates.append({"kind": parsed.kind, "value": parsed.value, "analysis": parsed.analysis, "problem": parsed.problem})
        calls.append(record.parsed(parsed.kind == "invalid", parsed.problem))
    return {"candidates": candidates, "calls": calls}


def bag_of_words(queries: list[str]) -> list[list[float]]:
    vocabulary = sorted({w for q in queries for w in normalize_query(q).split()})
    index = {w: i for i, w in enumerate(vocabulary)}
    vectors = []
    for query in queries:
        vector = [0.0] * len(vocabulary)
        for word in normalize_query(query).split():
            vector[index[word]] += 1.0
        vectors.append(vector)
    return vectors


def dbscan(vectors: list[list[float]], eps: float) -> list[int]:
    """Cluster labels of DBSCAN with min_samples 1 (every point is a core point): clusters are the
    components of the eps-neighbourhood graph (Euclidean distance)."""
    labels = [-1] * len(vectors)
    cluster = 0
    for start in range(len(vectors)):
        if labels[start] != -1:
            continue
        labels[start], frontier = cluster, [start]
        while frontier:
            point = frontier.pop()
            for other in range(len(vectors)):
                if labels[other] == -1 and math.dist(vectors[point], vectors[other]) <= eps:
                    labels[other] = cluster
                    frontier.append(other)
        cluster += 1
    return labels


def filter_queries(queries: list[str], executed: list[str], eps: float) -> list[str]:
    """The query filter: cluster the candidate and executed queries together, drop the clusters that
    hold an executed query, and keep the member nearest each remaining cluster's centre."""
    if not queries:
        return []
    pool = [*queries, *executed]
    vectors = bag_of_words(pool)
    labels = dbscan(vectors, eps)
    stale = {labels[len(queries) + i] for i in range(len(executed))}
    kept = []
    for label in sorted(set(labels[: len(queries)]) - stale):
        members = [i for i in range(len(queries)) if labels[i] == label]
        centre = [sum(vectors[i][d] for i in members) / len(members) for d in range(len(vectors[0]))]
        kept.append(queries[min(members, key=lambda i: math.dist(vectors[i], centre))])
    return kept


def majority_answer(answers: list[str]) -> str:
    """The most frequent answer (by normalized form); the first such plan's text."""
    counts = Counter(normalize_answer(a) for a in answers)
    top = max(counts.values())
    return next(a for a in answers if counts[normalize_answer(a)] == top)


def score_query(ctx: Context, query: str, documents: list[Document] | None = None) -> float:
    """The scorer's value of `query` from its top SCORER_DEPTH documents (retrieved here unless given)."""
    documents = search(ctx, query, k=SCORER_DEPTH) if documents is None else documents
    if ctx.furepa_scorer:
        from hoprag.furepa_scorer import load_scorer

        return load_scorer(ctx.furepa_scorer).score(query, [f"{d.title}: {d.text}" for d in documents])
    from hoprag.furepa_scorer import RetrievalScorer

    return RetrievalScorer().score_ranked([d.score or 0.0 for d in documents])


def assess(state: FuRePAState, runtime: Any = None) -> dict[str, Any]:
    """The plan assessor: planning decision (vote), query filter (DBSCAN), query scorer."""
    ctx = context_of(runtime)
    t, candidates = state.get("iteration", 0), state.get("candidates") or []
    answers = [c["value"] for c in candidates if c["kind"] == "answer"]
    queries = [c["value"] for c in candidates if c["kind"] == "search"]

    def analysis_of(kind: str, value: str) -> str:
        """The reasoning of the plan the assessor chose (the first with that answer or query)."""
        same = [c["analysis"] for c in candidates if c["kind"] == kind and normalize_answer(c["value"]) == normalize_answer(value)]
        return next((a for a in same if a), "")

    if not ctx.furepa_plan_assessor:  # w/o PA: the one sample decides
        only = candidates[0]
        if only["kind"] == "answer":
            return {"best": {"decision": "answer", "value": only["value"], "analysis": only["analysis"]}}
        query = only["value"] if only["kind"] == "search" else state["question"]
        return {"best": {"decision": "search", "value": query, "analysis": only["analysis"]}}
    if not is_first(state) and candidates and len(answers) / len(candidates) >= given(ctx.furepa_theta, 0.6):
        chosen = majority_answer(answers)
        return {"best": {"decision": "answer", "value": chosen, "analysis": analysis_of("answer", chosen),
                         "votes": f"{len(answers)}/{len(candidates)}"}}
    kept = filter_queries(queries, state.get("executed") or [], given(ctx.furepa_eps, 2.0))
    if not kept:
        raises, cap = state.get("raises", 0), given(ctx.furepa_raise_cap, 0)
        best = {"decision": "raise", "filtered_out": queries}
        if not cap:  # §3.2.2: "this iteration ends with the temperature increasing", no cap; it counts toward T
            step = _step({**state, "best": best}, ctx, kind="raise", action="raise temperature",
                         observation=f"No new query: the temperature rises to {temperature(ctx, raises + 1):g}.")
            return {"best": best, "raises": raises + 1, "iteration": t + 1, "trajectory": [step]}
        if raises < cap:  # small: the same iteration plans again
            return {"best": best, "raises": raises + 1}
        return {"best": {"decision": "force", "filtered_out": queries}}
    # The candidate queries are retrieved together: one request to a retrieval server, one batch of a LangChain retriever.
    found = search_many(ctx, kept, k=SCORER_DEPTH) if len(kept) > 1 else []
    scores = {q: score_query(ctx, q, d) for q, d in zip(kept, found, strict=True)} if len(kept) > 1 else {kept[0]: None}
    best = max(kept, key=lambda q: scores[q] or 0.0)
    return {"best": {"decision": "search", "value": best, "analysis": analysis_of("search", best), "scores": scores,
                     "filtered_out": [q for q in queries if q not in kept]}}


def route_after_assess(state: FuRePAState, runtime: Any = None) -> str:
    decision = state["best"]["decision"]
    if decision == "raise" and _at_cap(state, context_of(runtime)):  # a raise that ended iteration T
        return "force_answer"
    return {"answer": "answer", "raise": "plan", "force": "force_answer"}.get(decision, "retrieve")


def _step(state: FuRePAState, ctx: Context, **fields: Any) -> dict[str, Any]:
    best = state["best"]
    return {"kind": "search" if best["decision"] == "search" else "answer", "thought": best.get("analysis", ""),
            "iteration": state.get("iteration", 0), "temperature": temperature(ctx, state.get("raises", 0)),
            "candidates": [f"{c['kind']}: {c['value'] or c['problem']}" for c in state.get("candidates") or []],
            **{k: best[k] for k in ("votes", "scores", "filtered_out") if best.get(k)}, **fields}


def retrieve(state: FuRePAState, runtime: Any = None) -> dict[str, Any]:
    """E_{t+1} = E_t plus the top-ranked document for the query that E_t does not hold yet."""
    ctx = context_of(runtime)
    query = state["best"]["value"]
    evidence = list(state.get("evidence") or [])
    held = {d["id"] for d in evidence}
    found = search(ctx, query, k=len(evidence) + 1)
    new = next((d.to_dict() for d in found if d.id not in held), None)
    if new:
        evidence.append(new)
    step = _step(state, ctx, action=f"search[{query}]", query=query,
                 retrieved_ids=[new["id"]] if new else [], retrieved_titles=[new["title"]] if new else [],
                 observation=f"{new['title']}: {new['text']}" if new else "No new document.")
    return {"evidence": evidence, "executed": [*(state.get("executed") or []), query], "iteration": state.get("iteration", 0) + 1,
            "raises": 0, "trajectory": [step]}


def _at_cap(state: FuRePAState, ctx: Context) -> bool:
    """T iterations done (the paper's T = 6 where the preset leaves it unset)."""
    return state.get("iteration", 0) >= (ctx.max_iterations or 6)


def route_after_retrieve(state: FuRePAState, runtime: Any = None) -> str:
    return "force_answer" if _at_cap(state, context_of(runtime)) else "plan"


def answer(state: FuRePAState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    step = _step(state, ctx, action=f"answer[{state['best']['value']}]")
    return {"answer": state["best"]["value"], "finished_by": "vote", "trajectory": [step]}


def force_answer(state: FuRePAState, runtime: Any = None) -> dict[str, Any]:
    """No decision within T iterations (or nothing left to search): the answer is forced from E_t."""
    ctx = context_of(runtime)
    messages = plan_messages(state["question"], state.get("evidence") or [], first=False, force=True)
    options = ctx.with_options(temperature=given(ctx.furepa_tp0, 1.0))
    text, record, _ = call_llm("reasoner", messages, options, max_tokens=PLAN_TOKENS, stop=["\nUser", "\nContext:"],
                               grammar=ctx.action_grammar(ANSWER_GRAMMAR))
    parsed = parse_furepa_plan(text)
    answers = [c["value"] for c in state.get("candidates") or [] if c["kind"] == "answer"]
    if parsed.kind == "answer":
        value = parsed.value
    elif answers:  # the answer plans of the last round
        value = majority_answer(answers)
    elif parsed.kind == "search":  # a query is no answer
        value = ""
    else:  # no tags at all: the reply's last line may still be an answer
        value = re.sub(r"\[\w+\]", "", text).strip().split("\n")[-1].strip()
    step = {"kind": "answer", "thought": parsed.analysis, "action": f"answer[{value}]", "forced": True}
    # Two ways here, told apart in the records ("ended by"): T iterations, or a filter that left no new query
    # after every temperature raise (the runs of the 50-question tables that end early).
    return {"answer": value, "finished_by": "cap" if _at_cap(state, ctx) else "no_new_query", "trajectory": [step],
            "calls": [record.parsed(parsed.kind != "answer", parsed.problem or ("" if parsed.kind == "answer" else "no [Answer]"))]}

