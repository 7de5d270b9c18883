"""Answer and retrieval metrics.

EM / F1 follow the official HotpotQA evaluation script (``hotpot_evaluate_v1.py``) exactly, including
its yes/no/noanswer rule; every answer metric is maxed over the gold answer and its aliases.
FanOutQA loose/strict accuracy follow the FanOutQA paper (fraction / all of the gold answer strings
found in the prediction).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from hoprag.answers import normalize_answer

if TYPE_CHECKING:
    from hoprag.eval.datasets import Example

_SPECIAL = ("yes", "no", "noanswer")



def exact_match(prediction: str, ground_truth: str) -> bool:
    """Official HotpotQA exact match: equal after normalization."""
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def f1_precision_recall(prediction: str, ground_truth: str) -> tuple[float, float, float]:
    """Official HotpotQA token F1: returns (f1, precision, recall)."""
    normalized_prediction = normalize_answer(prediction)
    normalized_ground_truth = normalize_answer(ground_truth)
    zero = (0.0, 0.0, 0.0)
    if normalized_prediction in _SPECIAL and normalized_prediction != normalized_ground_truth:
        return zero
    if normalized_ground_truth in _SPECIAL and normalized_prediction != normalized_ground_truth:
        return zero
    prediction_tokens = normalized_prediction.split()
    ground_truth_tokens = normalized_ground_truth.split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return zero
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1, precision, recall


def _as_list(golds: str | Sequence[str]) -> list[str]:
    return [golds] if isinstance(golds, str) else [str(g) for g in golds]


def best_em(prediction: str, golds: str | Sequence[str]) -> float:
    """1.0 if the prediction exactly matches any gold answer or alias, else 0.0."""
    return float(any(exact_match(prediction, g) for g in _as_list(golds)))


def best_f1(prediction: str, golds: str | Sequence[str]) -> tuple[float, float, float]:
    """(f1, precision, recall) of the gold answer or alias with the highest F1."""
    scores = [f1_precision_recall(prediction, g) for g in _as_list(golds)]
    return max(scores, key=lambda s: s[0], default=(0.0, 0.0, 0.0))


def cover_em(prediction: str, golds: str | Sequence[str]) -> float:
    """1.0 if any normalized gold answer is a substring of the normalized prediction."""
    pred = normalize_answer(prediction)
    for gold in _as_list(golds):
        norm = normalize_answer(gold)
        if norm and norm in pred:
            return 1.0
    return 0.0


def _found(norm_gold: str, norm_pred: str) -> bool:
    # Whole-word match, as the FanOutQA evaluator does, so "1" is not found inside "1998".
    return bool(norm_gold) and re.search(rf"\b{re.escape(norm_gold)}\b", norm_pred) is not None


def loose_accuracy(prediction: str, golds: str | Sequence[str]) -> float:
    """FanOutQA loose accuracy: fraction of gold answer strings found in the prediction.

    Both sides are normalized with :func:`normalize_answer`; a gold string counts as found when it
    occurs in the prediction on word boundaries.
    """
    gold_list = _as_list(golds)
    if not gold_list:
        return 0.0
    pred = normalize_answer(prediction)
    return sum(_found(normalize_answer(g), pred) for g in gold_list) / len(gold_list)


def strict_accuracy(prediction: str, golds: str | Sequence[str]) -> float:
    """FanOutQA strict accuracy: 1.0 iff every gold answer string is found in the prediction."""
    gold_list = _as_list(golds)
    return float(bool(gold_list) and loose_accuracy(prediction, gold_list) == 1.0)


def _norm_title(title: str) -> str:
    return " ".join(str(title).replace("_", " ").split()).casefold()


def retrieval_recall(retrieved_titles: Iterable[str], gold_titles: Iterable[str]) -> float | None:
    """Fraction of distinct gold (supporting) titles among the retrieved titles; None without gold."""
    gold = {_norm_title(t) for t in gold_titles if str(t).strip()}
    if not gold:
        return None
    retrieved = {_norm_title(t) for t in retrieved_titles}
    return len(gold & retrieved) / len(gold)


def repeated_queries(queries: Iterable[str]) -> int:
    """How many queries repeat an earlier query (compared after :func:`normalize_answer`)."""
    seen: set[str] = set()
    repeats = 0
    for query in queries:
        norm = normalize_answer(query)
        if norm in seen:
            repeats += 1
        seen.add(norm)
    return repeats


def score_prediction(prediction: str, example: Example) -> dict[str, Any]:
    """All answer metrics of one prediction: em, f1, precision, recall, cover_em (+ loose, strict).

    For FanOutQA the answer is a set of gold strings: em/f1/cover_em compare against them joined
    into one reference (``", "``), and ``loose`` / ``strict`` are the FanOutQA accuracies.
    """
    prediction = prediction or ""
    fanout = getattr(example, "dataset", "") == "fanoutqa"
    references = [", ".join(example.answers)] if fanout and example.answers else list(example.answers)
    f1, precision, recall = best_f1(prediction, references)
    scores: dict[str, Any] = {
        "em": best_em(prediction, references),
        "f1": f1,
        "precision": precision,
        "recall": recall,
        "cover_em": cover_em(prediction, references),
    }
    if fanout:
        scores["loose"] = loose_accuracy(prediction, example.answers)
        scores["strict"] = strict_accuracy(prediction, example.answers)
    return scores
