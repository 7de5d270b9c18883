"""LLM-as-judge answer correctness (the papers' GPT-4 judge prompt) with an on-disk cache.

The judge model is any callable ``llm(prompt) -> str``, so this module does not depend on the model
layer. Judgements are cached in a JSON-lines file keyed by ``sha256(model + prompt)``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hoprag.errors import HopragError

# The GPT-4 judge prompt of the papers (Figure 6 of the ReaRAG-style evaluation, from FRAMES):
# verbatim wording, with the «question» / «LLM_response» / «ground_truth_answer» slots as fields.
JUDGE_PROMPT = """===Task===
I need your help in evaluating an answer provided by an LLM against a ground truth answer. Your task is to determine if the ground truth answer is present in the LLM's response. Please analyze the provided data and make a decision.
===Instructions===
1. Carefully compare the "Predicted Answer" with the "Ground Truth Answer".
2. Consider the substance of the answers - look for equivalent information or correct answers. Do not focus on exact wording unless the exact wording is crucial to the meaning.
3. Your final decision should be based on whether the meaning and the vital facts of the "Ground Truth Answer" are present in the "Predicted Answer."
===Input Data===
- Question: {question}
- Predicted Answer: {prediction}
- Ground Truth Answer: {ground_truth}
===Output Format===
Provide your final evaluation in the following format:
Explanation: (How you made the decision?)
Decision: ("TRUE" or "FALSE")
Please proceed with the evaluation."""

# Figure 7 of the paper: quality evaluation of a reasoning chain (three criteria rated 0-5).
QUALITY_PROMPT = """You are asked to evaluate the reasoning chain produced in response to a question, particularly focusing on how effectively tools were used throughout the process. The evaluation should be based on the following clearly defined criteria. For each criterion, provide a numerical rating on a scale from 0 to 5, where 5 represents excellent performance and 0 indicates poor or entirely absent performance.

Criterion 1: Efficiency of the Steps Taken

Definition:
Evaluate the overall efficiency of each step in the reasoning chain, with specific focus on whether the tool calls and reasoning steps helped progress toward the final correct answer. Efficient steps reduce uncertainty, narrow the solution space, or directly contribute to solving the problem.

Rating Guide:
5 - Extremely efficient: Every step clearly advances the reasoning; no wasted effort.
4 - Highly efficient: Most steps are purposeful, with only minor inefficiencies.
3 - Moderately efficient: Some steps are valuable, others contribute little.
2 - Minimally efficient: Several steps are misdirected or low-impact.
1 - Poorly efficient: Most steps offer minimal or no progress toward the answer.
0 - Not efficient at all: Steps are irrelevant, aimless, or distracting.

Criterion 2: Redundancy of Steps

Definition:
Assess the reasoning chain for unnecessary repetition or duplication of steps, including redundant tool calls or rephrasing of the same logic without new insight. A low-redundancy chain avoids rework and keeps the progression streamlined.

Rating Guide:
5 - No redundancy: Each step is unique and adds distinct value.
4 - Very low redundancy: Only minor repetition, quickly resolved.
3 - Moderate redundancy: Some ideas or tool uses are repeated without added benefit.
2 - Noticeable redundancy: Multiple steps repeat similar content or actions unnecessarily.
1 - High redundancy: Repetition significantly detracts from conciseness.
0 - Extremely redundant: Most of the chain rehashes prior reasoning with no new value.

Criterion 3: Clarity and Coherence of the Reasoning Chain

Definition:
Examine how clearly and logically the reasoning chain progresses from the question to the final answer. This includes whether steps are easy to follow, logically connected, and free of ambiguity or excessive complexity.

Rating Guide:
5 - Exceptionally clear and coherent: The reasoning is logical, concise, and easy to follow.
4 - Mostly clear: The chain is understandable with minor clarity issues.
3 - Moderately clear: Some transitions or justifications are unclear or weak.
2 - Confusing in parts: Multiple unclear, inconsistent, or disjointed steps.
1 - Difficult to follow: Lacks logical flow or clear structure.
0 - Incomprehensible: The chain cannot be understood or followed logically.

First provide your reasoning of your evaluation then structure your responses as a json with the keys "Criterion 1", "Criterion 2", "Criterion 3" and the values as the ratings you provided. Chain: {chain}"""

QUALITY_CRITERIA = {"Criterion 1": "efficiency", "Criterion 2": "redundancy", "Criterion 3": "clarity"}

_DECISION = re.compile(r"decision[^a-z0-9]{0,16}(true|false)\b", re.IGNORECASE)
_EXPLANATION = re.compile(r"explanation[^a-z0-9(]{0,8}(.*?)(?=decision[^a-z0-9]{0,16}(?:true|false)\b|\Z)",
                          re.IGNORECASE | re.DOTALL)


def _clean(text: str) -> str:
    return text.strip().strip("*_#`\"' \n:-").strip()


def build_judge_prompt(question: str, prediction: str, gold: str | Sequence[str]) -> str:
    """The judge prompt filled in; several gold answers (aliases) are joined with " | "."""
    ground_truth = gold if isinstance(gold, str) else " | ".join(str(g) for g in gold)
    return JUDGE_PROMPT.format(question=question.strip(), prediction=(prediction or "").strip(),
                               ground_truth=ground_truth.strip())


def parse_judgement(text: str) -> tuple[bool | None, str]:
    """Read ``Decision: TRUE/FALSE`` (any case, quotes, markdown bold); (None, text) when absent.

    The last decision in the text wins (models sometimes restate the format first).
    """
    text = text or ""
    decisions = list(_DECISION.finditer(text))
    if not decisions:
        return None, text.strip()
    verdict = decisions[-1].group(1).lower() == "true"
    match = _EXPLANATION.search(text)
    explanation = _clean(match.group(1)) if match else ""
    if not explanation:
        explanation = _clean(text[: decisions[-1].start()])
    return verdict, explanation


def parse_quality(text: str) -> dict[str, int] | None:
    """Scores of the reasoning-chain quality prompt: {efficiency, redundancy, clarity} (0-5), or None."""
    scores: dict[str, int] = {}
    for match in re.finditer(r"\{[^{}]*\}", text or ""):
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            for key, name in QUALITY_CRITERIA.items():
                value = data.get(key)
                if isinstance(value, int | float | str) and str(value).strip().replace(".", "", 1).isdigit():
                    scores[name] = int(float(value))
    if len(scores) < len(QUALITY_CRITERIA):  # fall back to "Criterion N": M anywhere in the text
        for number, value in re.findall(r"criterion\s*([123])\W{0,6}(\d)\b", text or "", re.IGNORECASE):
            scores.setdefault(QUALITY_CRITERIA[f"Criterion {number}"], int(value))
    if len(scores) < len(QUALITY_CRITERIA) or not all(0 <= v <= 5 for v in scores.values()):
        return None
    return scores


class JudgeCache:
    """JSON-lines cache of judgements keyed by ``sha256(model + "\\n" + prompt)``; safe across threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            try:
                lines = self.path.read_text(encoding="utf-8").splitlines()
            except OSError as error:
                raise HopragError(f"cannot read the judge cache {self.path}: {error}") from error
            for line in lines:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by a kill mid-write: that judgement is asked again
                if isinstance(entry, dict) and "key" in entry:
                    self._entries[entry["key"]] = entry

    @staticmethod
    def key(model: str, prompt: str) -> str:
        return hashlib.sha256(f"{model}\n{prompt}".encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, entry: dict[str, Any]) -> None:
        entry = {"key": key, **entry}
        with self._lock:
            self._entries[key] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as sink:
                sink.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries


EMPTY_PREDICTION = "empty prediction: wrong, the judge is not asked"


def judge(question: str, prediction: str, gold: str | Sequence[str], llm: Callable[[str], str], model: str,
          cache: JudgeCache | None = None) -> dict[str, Any]:
    """Ask the judge whether the prediction holds the gold answer: {correct, explanation, cached}.

    ``correct`` is None when the judge's reply has no readable decision; such replies are not cached. An empty
    prediction (a run that gave no answer) holds no answer, so it is wrong without a judge call, which could
    otherwise credit a gold answer that the judge finds in the question.
    """
    if not (prediction or "").strip():
        return {"correct": False, "explanation": EMPTY_PREDICTION, "cached": False}
    prompt = build_judge_prompt(question, prediction, gold)
    key = JudgeCache.key(model, prompt)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return {"correct": hit["correct"], "explanation": hit.get("explanation", ""), "cached": True}
    reply = llm(prompt)
    response = str(getattr(reply, "content", reply))  # a plain str, or a chat message with .content
    correct, explanation = parse_judgement(response)
    if cache is not None and correct is not None:
        cache.put(key, {"model": model, "correct": correct, "explanation": explanation, "response": response})
    return {"correct": correct, "explanation": explanation, "cached": False}
