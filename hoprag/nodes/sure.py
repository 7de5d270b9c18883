"""SuRe (Kim et al., ICLR 2024) as FlashRAG's SuRePipeline runs it: answer candidates from the top-k passages, a
summary of the passages conditioned on each candidate, a True/False validity check of each summary, pair-wise
ranking of the summaries over every ordered pair, and the candidate with the highest validity + ranking score."""

from __future__ import annotations

import itertools
import re
from typing import Any

from hoprag.context import context_of
from hoprag.llm import call_llm
from hoprag.nodes.generate import first_line
from hoprag.prompts.sure import SURE_CANDIDATES, SURE_PASSAGE, SURE_RANK, SURE_SUMMARY, SURE_VERIFY
from hoprag.state import RunState

NO_CANDIDATES = "no candidates"  # a candidate reply without any "(a) ..." item
NO_VERDICT = "no verdict"  # a validity reply with neither True nor False (scored 0, as FlashRAG does)
NO_PREFERENCE = "no preference"  # a ranking reply naming neither passage (scored 0.5, as FlashRAG does)
# FlashRAG's parse_candidates: every "(label) text" item, up to the next parenthesis.
CANDIDATE_ITEM = re.compile(r"\((\w+)\)\s*([^()]+)")


class SuReState(RunState, total=False):
    documents: list[dict[str, Any]]  # the top-k passages every step reads
    candidates: list[str]
    summaries: list[str]  # one per candidate, in order
    validity: list[int]  # 1 where the verifier said the summary supports its candidate


def parse_candidates(reply: Any) -> list[str]:
    """FlashRAG's parse_candidates: the text after each "(x)" up to the next parenthesis, its first line, commas
    removed; hoprag also drops the items that are left empty ("(a) , (b) Rush")."""
    text = str(reply or "").strip("\n").strip()
    items = [match[1].split("\n")[0].strip().replace(",", "").strip() for match in CANDIDATE_ITEM.findall(text)]
    return [item for item in items if item]


def parse_validity(reply: Any) -> tuple[int, bool]:
    """FlashRAG's parse_validation: 1 where the reply says "true" anywhere, else 0; and whether it said either."""
    text = str(reply or "").strip().lower()
    return (1 if "true" in text else 0), ("true" in text or "false" in text)


def parse_preference(reply: Any) -> tuple[float, bool]:
    """FlashRAG's parse_ranking: 1 where the reply names Passage 1 (checked first), 0 for Passage 2, else 0.5; and
    whether it named one."""
    text = str(reply or "").strip().lower()
    if "passage 1" in text:
        return 1.0, True
    if "passage 2" in text:
        return 0.0, True
    return 0.5, False


def passages_text(documents: list[dict[str, Any]]) -> str:
    """FlashRAG's format_ref: `Passage #i Title: ...` and `Passage #i Text: ...`, a blank line after each."""
    return "".join(SURE_PASSAGE.format(number=i, title=d["title"], text=d["text"]) for i, d in enumerate(documents, 1))


def sure_candidates(state: SuReState, runtime: Any = None) -> dict[str, Any]:
    """Step 1: the candidate answers. No candidate ends the run with an empty answer, as FlashRAG's does; under
    `sure_unlisted_candidate` (small) a reply without the (a)/(b) form is one candidate, its first line."""
    ctx = context_of(runtime)
    question = state["question"]
    documents = state.get("documents") or []
    reference = passages_text(documents)
    prompt = SURE_CANDIDATES.format(N=len(documents), reference=reference, question=question)
    text, record, _ = call_llm("generator", prompt, ctx)
    candidates = parse_candidates(text)
    if not candidates and ctx.sure_unlisted_candidate and first_line(text):
        candidates = [first_line(text)]
    invalid = not parse_candidates(text)
    step = {"kind": "search", "query": question, "argument": question, "entity": "", "thought": text.strip(),
            "action": f"candidates[{' | '.join(candidates)}]", "candidates": candidates,
            "retrieved_ids": [d["id"] for d in documents], "retrieved_titles": [d["title"] for d in documents],
            "observation": reference.strip() or "The search returned no documents."}
    if invalid:
        step["problem"] = NO_CANDIDATES
    update: dict[str, Any] = {"candidates": candidates, "trajectory": [step],
                              "calls": [record.parsed(invalid, NO_CANDIDATES if invalid else "")]}
    if not candidates:
        update.update(answer="", finished_by="no_candidates")
    return update


def route_after_candidates(state: SuReState, runtime: Any = None) -> str:
    """Summaries for the candidates; none: the answer steps (small) or the end."""
    from hoprag.nodes.reasoner import after_answer

    return "summarize" if state.get("candidates") else after_answer(context_of(runtime))


def sure_summarize(state: SuReState, runtime: Any = None) -> dict[str, Any]:
    """Step 2: for each candidate, a summary of the same passages that supports it."""
    ctx = context_of(runtime)
    reference = passages_text(state.get("documents") or [])
    summaries, steps, calls = [], [], []
    for candidate in state.get("candidates") or []:
        prompt = SURE_SUMMARY.format(reference=reference, question=state["question"], pred=candidate)
        text, record, _ = call_llm("generator", prompt, ctx)
        summaries.append(text.strip())
        steps.append({"kind": "summary", "candidate": candidate, "thought": text.strip(),
                      "action": f"summarize[{candidate}]"})
        calls.append(record.to_dict())
    return {"summaries": summaries, "trajectory": steps, "calls": calls}


def sure_verify(state: SuReState, runtime: Any = None) -> dict[str, Any]:
    """Step 3a: does each summary support its candidate (True: 1, else 0)."""
    ctx = context_of(runtime)
    validity, steps, calls = [], [], []
    for candidate, summary in zip(state.get("candidates") or [], state.get("summaries") or [], strict=False):
        text, record, _ = call_llm("generator", SURE_VERIFY.format(question=state["question"], pred=candidate,
                                                                   summary=summary), ctx)
        valid, read = parse_validity(text)
        validity.append(valid)
        step = {"kind": "verify", "candidate": candidate, "thought": text.strip(), "action": f"verify[{candidate}]",
                "valid": valid, "observation": "supported" if valid else "not supported"}
        if not read:
            step["problem"] = NO_VERDICT
        steps.append(step)
        calls.append(record.parsed(not read, "" if read else NO_VERDICT))
    return {"validity": validity, "trajectory": steps, "calls": calls}


def sure_scores(validity: list[int], preferences: dict[tuple[int, int], float]) -> list[float]:
    """FlashRAG's final score of candidate i: its validity plus the row sum of the ranking matrix, where entry (i, j)
    is the score of the reply with summary i as Passage 1 and summary j as Passage 2."""
    return [validity[i] + sum(score for (first, _), score in preferences.items() if first == i)
            for i in range(len(validity))]


def sure_rank(state: SuReState, runtime: Any = None) -> dict[str, Any]:
    """Step 3b and the choice: every ordered pair of summaries ranked, then the candidate with the highest validity +
    ranking score (the first of equal ones, numpy's argmax)."""
    ctx = context_of(runtime)
    candidates = state.get("candidates") or []
    summaries = state.get("summaries") or []
    validity = list(state.get("validity") or [])
    validity += [0] * (len(candidates) - len(validity))
    preferences: dict[tuple[int, int], float] = {}
    replies, calls = [], []
    for first, second in itertools.permutations(range(len(summaries)), 2):
        prompt = SURE_RANK.format(question=state["question"], summary1=summaries[first], summary2=summaries[second])
        text, record, _ = call_llm("generator", prompt, ctx)
        score, read = parse_preference(text)
        preferences[(first, second)] = score
        replies.append(f"{first + 1} vs {second + 1}: {text.strip()}")
        calls.append(record.parsed(not read, "" if read else NO_PREFERENCE))
    scores = sure_scores(validity, preferences)
    best = max(range(len(candidates)), key=lambda i: (scores[i], -i))
    answer = candidates[best]
    ranking = "; ".join(f"{c}: {validity[i]} + {scores[i] - validity[i]:g} = {scores[i]:g}"
                        for i, c in enumerate(candidates))
    step = {"kind": "rank", "thought": "\n".join(replies), "action": f"finish[{answer}]", "scores": scores,
            "observation": f"validity + ranking: {ranking}"}
    if any(c.get("invalid") for c in calls):
        step["problem"] = NO_PREFERENCE
    return {"answer": answer, "finished_by": "generate", "trajectory": [step], "calls": calls}


def counters(result: dict[str, Any]) -> dict[str, int]:
    """SuRe's own counters for `hoprag eval`: candidates, those verified, ranking calls, invalid outputs."""
    trajectory = result.get("trajectory") or []
    return {"candidates": sum(len(step.get("candidates") or []) for step in trajectory),
            "verified": sum(int(step.get("valid") or 0) for step in trajectory if step.get("kind") == "verify"),
            "ranking_calls": sum(len(step.get("scores") or []) * (len(step.get("scores") or []) - 1)
                                 for step in trajectory if step.get("kind") == "rank"),
            "invalid_outputs": int(result.get("invalid_outputs") or 0)}
