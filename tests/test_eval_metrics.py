"""Metrics (hand-computed after the official HotpotQA script), FanOutQA accuracy and the LLM judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoprag.eval.datasets import Example
from hoprag.eval.judge import (
    JUDGE_PROMPT,
    QUALITY_PROMPT,
    JudgeCache,
    build_judge_prompt,
    judge,
    parse_judgement,
    parse_quality,
)
from hoprag.eval.metrics import (
    best_em,
    best_f1,
    cover_em,
    exact_match,
    f1_precision_recall,
    loose_accuracy,
    normalize_answer,
    repeated_queries,
    retrieval_recall,
    score_prediction,
    strict_accuracy,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("The Eiffel Tower", "eiffel tower"),
    ("An apple a day, the end.", "apple day end"),
    ("U.S.A.", "usa"),
    ("  Theatre   of\tthe  Absurd ", "theatre of absurd"),  # articles only as whole words
    ("Rock 'n' Roll!", "rock n roll"),
])
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_exact_match_ignores_case_punctuation_articles() -> None:
    assert exact_match("The Beatles!", "beatles")
    assert not exact_match("The Beatles", "Beatles band")


def test_f1_partial_overlap() -> None:
    # "eiffel tower" vs "eiffel tower in paris": 2 common tokens, P = 2/2, R = 2/4, F1 = 2/3
    f1, precision, recall = f1_precision_recall("the Eiffel Tower", "Eiffel tower in Paris")
    assert precision == pytest.approx(1.0)
    assert recall == pytest.approx(0.5)
    assert f1 == pytest.approx(2 / 3)


def test_f1_repeated_tokens_use_counter_intersection() -> None:
    # pred "new new york" (3 tokens), gold "new york" (2): common = min counts = 2 -> P 2/3, R 1
    f1, precision, recall = f1_precision_recall("new new york", "New York")
    assert (precision, recall) == pytest.approx((2 / 3, 1.0))
    assert f1 == pytest.approx(0.8)


def test_yes_no_rule() -> None:
    assert f1_precision_recall("yes", "no") == (0.0, 0.0, 0.0)
    # gold is "yes", prediction normalizes to "yes it is" != "yes": zero, although "yes" overlaps
    assert f1_precision_recall("Yes, it is.", "yes") == (0.0, 0.0, 0.0)
    assert f1_precision_recall("noanswer", "no answer") == (0.0, 0.0, 0.0)
    assert f1_precision_recall("No.", "no") == (1.0, 1.0, 1.0)
    assert f1_precision_recall("something", "nothing") == (0.0, 0.0, 0.0)


def test_best_over_aliases() -> None:
    # vs "obama": P 1/2 R 1 F1 2/3; vs "barack hussein obama": P 1 R 2/3 F1 0.8 -> the latter
    f1, precision, recall = best_f1("Barack Obama", ["Obama", "Barack Hussein Obama"])
    assert (f1, precision, recall) == pytest.approx((0.8, 1.0, 2 / 3))
    assert best_em("Stanley Hall", ["G. Stanley Hall", "Stanley Hall"]) == 1.0
    assert best_em("Hall", ["G. Stanley Hall", "Stanley Hall"]) == 0.0
    assert best_f1("anything", []) == (0.0, 0.0, 0.0)
    assert best_em("x", "X.") == 1.0  # a single gold string is accepted too


def test_cover_em() -> None:
    assert cover_em("The answer is the Eiffel Tower, in Paris.", ["eiffel tower"]) == 1.0
    assert cover_em("Eiffel", ["Eiffel Tower"]) == 0.0
    assert cover_em("It was Stanley Hall.", ["G. Stanley Hall", "Stanley Hall"]) == 1.0
    assert cover_em("anything", ["the"]) == 0.0  # a gold that normalizes to "" never matches


def test_loose_and_strict_accuracy() -> None:
    golds = ["Pat Burrell", "Right", "Mark Mulder", "Left"]
    prediction = "Pat Burrell bats right; Mark Mulder bats right too."
    assert loose_accuracy(prediction, golds) == pytest.approx(3 / 4)
    assert strict_accuracy(prediction, golds) == 0.0
    assert strict_accuracy("Pat Burrell (right), Mark Mulder (left)", golds) == 1.0
    assert loose_accuracy("born in 1998", ["1"]) == 0.0  # whole words only
    assert loose_accuracy("x", []) == 0.0 and strict_accuracy("x", []) == 0.0


def test_retrieval_recall_and_repeated_queries() -> None:
    assert retrieval_recall(["Ed Wood", "Tyler Bates", "Ed Wood"], ["Scott Derrickson", "Ed Wood"]) == 0.5
    assert retrieval_recall(["scott_derrickson"], ["Scott Derrickson"]) == 1.0
    assert retrieval_recall(["a"], []) is None
    queries = ["Who directed Free Guy?", "who directed free guy", "Shawn Levy birth date",
               "The Shawn Levy birth date.", "Pál Gábor birth date"]
    assert repeated_queries(queries) == 2
    assert repeated_queries([]) == 0


def test_score_prediction() -> None:
    example = Example(id="q", question="?", answers=["Eiffel Tower in Paris"], dataset="hotpotqa")
    scores = score_prediction("the Eiffel Tower", example)
    assert set(scores) == {"em", "f1", "precision", "recall", "cover_em"}
    assert scores["em"] == 0.0 and scores["cover_em"] == 0.0
    assert scores["f1"] == pytest.approx(2 / 3)
    fanout = Example(id="f", question="?", answers=["Pat Burrell", "Right"], dataset="fanoutqa")
    scores = score_prediction("Pat Burrell bats right", fanout)
    assert scores["loose"] == 1.0 and scores["strict"] == 1.0
    # punctuation is deleted, not replaced by a space (official normalization): "right-handed" -> "righthanded"
    assert score_prediction("Pat Burrell, right-handed", fanout)["loose"] == 0.5
    assert score_prediction("", fanout)["loose"] == 0.0


# ---------------------------------------------------------------- judge


@pytest.mark.parametrize(("reply", "verdict"), [
    ("Explanation: same person.\nDecision: TRUE", True),
    ("Explanation: wrong year.\nDecision: FALSE", False),
    ('Explanation: ok\nDecision: "TRUE"', True),
    ("**Explanation:** matches.\n\n**Decision:** **False**", False),
    ("**Decision**: `true`", True),
    ("decision - false", False),
    ('I will answer as Decision: ("TRUE" or "FALSE").\nExplanation: no.\nDecision: FALSE', False),
    ("The answer looks right to me.", None),
    ("", None),
])
def test_parse_judgement(reply: str, verdict: bool | None) -> None:
    assert parse_judgement(reply)[0] is verdict


def test_parse_judgement_explanation() -> None:
    verdict, explanation = parse_judgement("**Explanation:** Both name Raoul Walsh.\n**Decision:** TRUE")
    assert verdict is True
    assert explanation == "Both name Raoul Walsh."


def test_judge_prompt_fields() -> None:
    assert "Carefully compare the \"Predicted Answer\" with the \"Ground Truth Answer\"" in JUDGE_PROMPT
    prompt = build_judge_prompt("Who was born first?", "Raoul Walsh", ["Raoul Walsh", "Walsh"])
    assert "Question: Who was born first?" in prompt
    assert "Predicted Answer: Raoul Walsh" in prompt
    assert "Ground Truth Answer: Raoul Walsh | Walsh" in prompt
    assert "{" not in prompt


def test_judge_uses_cache(tmp_path: Path) -> None:
    calls: list[str] = []

    def fake_llm(prompt: str) -> str:
        calls.append(prompt)
        return "Explanation: The prediction names the same person.\nDecision: TRUE"

    cache = JudgeCache(tmp_path / "judge.jsonl")
    first = judge("Who?", "Raoul Walsh", "Raoul Walsh", fake_llm, "gpt-4o", cache)
    assert first == {"correct": True, "explanation": "The prediction names the same person.", "cached": False}
    second = judge("Who?", "Raoul Walsh", "Raoul Walsh", fake_llm, "gpt-4o", cache)
    assert second["cached"] is True and second["correct"] is True
    assert len(calls) == 1
    # a fresh cache object reads the file; another model is another key
    reopened = JudgeCache(tmp_path / "judge.jsonl")
    assert judge("Who?", "Raoul Walsh", "Raoul Walsh", fake_llm, "gpt-4o", reopened)["cached"] is True
    assert judge("Who?", "Raoul Walsh", "Raoul Walsh", fake_llm, "other-model", reopened)["cached"] is False
    assert len(calls) == 2
    assert judge("Who?", "Raoul Walsh", "Raoul Walsh", fake_llm, "gpt-4o")["cached"] is False  # no cache


@pytest.mark.parametrize("prediction", ["", "   ", None])
def test_judge_scores_an_empty_prediction_wrong_without_a_call(prediction) -> None:
    calls: list[str] = []

    def credulous_judge(prompt: str) -> str:  # a judge that would credit anything
        calls.append(prompt)
        return "Explanation: matches.\nDecision: TRUE"

    verdict = judge("Who directed it?", prediction, "Raoul Walsh", credulous_judge, "gpt-4o")
    assert verdict["correct"] is False and not calls


def test_judge_unreadable_reply_not_cached(tmp_path: Path) -> None:
    replies = iter(["I am not sure.", "Explanation: no.\nDecision: FALSE"])
    cache = JudgeCache(tmp_path / "judge.jsonl")
    assert judge("Q", "A", "B", lambda _: next(replies), "m", cache)["correct"] is None
    result = judge("Q", "A", "B", lambda _: next(replies), "m", cache)
    assert result["correct"] is False and result["cached"] is False


def test_judge_cache_skips_cut_line(tmp_path: Path) -> None:
    path = tmp_path / "judge.jsonl"
    path.write_text('{"key": "abc", "correct": true, "explanation": "x"}\n{"key": "de')
    cache = JudgeCache(path)
    assert "abc" in cache and len(cache) == 1


def test_quality_prompt_and_parser() -> None:
    assert QUALITY_PROMPT.format(chain="step 1").endswith("Chain: step 1")
    reply = 'Efficient overall.\n```json\n{"Criterion 1": 4, "Criterion 2": 5, "Criterion 3": "3"}\n```'
    assert parse_quality(reply) == {"efficiency": 4, "redundancy": 5, "clarity": 3}
    assert parse_quality("Criterion 1: 2\nCriterion 2: 1\n**Criterion 3**: 0") == {
        "efficiency": 2, "redundancy": 1, "clarity": 0}
    assert parse_quality("no scores here") is None
    assert parse_quality('{"Criterion 1": 9, "Criterion 2": 5, "Criterion 3": 3}') is None
