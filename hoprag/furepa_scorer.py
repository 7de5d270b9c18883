"""FuRePA's query scorer at inference (Eqs. 7, 8, 10): how good a query is, from how sharply it singles out
documents. Training (Eq. 9) lives in `hoprag.training.furepa_scorer`.

Training (Eq. 9): for a query, the question's documents D are ranked by the retriever; g is the rank of the
first gold document; documents ranked 1..g are positive, the rest negative; the target query score is 1/g.
A cross-encoder gives s_j = sigmoid(w . H_j[CLS]) for each (query, document) pair and
loss = BCE(s_j, y_j) + alpha * MSE(1 / sum_j s_j, 1/g), alpha = 0.1.
Prediction (Eq. 10): 0 if no s_j > 0.5, else 1 / #(s_j > 0.5).

Without a trained scorer the graph uses `RetrievalScorer`, a training-free stand-in that applies the same
prediction rule to the retriever's own scores (min-max scaled over the top documents).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol


class QueryScorer(Protocol):
    def score(self, query: str, documents: list[str]) -> float: ...


def predicted_score(probabilities: list[float]) -> float:
    """Eq. 10: 1 / the number of documents judged related (s_j > 0.5), or 0 when none is."""
    related = sum(1 for p in probabilities if p > 0.5)
    return 1.0 / related if related else 0.0






STAND_IN = ("training-free stand-in for the paper's trained roberta-large scorer (the retriever's scores of the top 10, "
            "read with Eq. 10)")


def scorer_description(scorer: str | None, plan_assessor: bool | None = True) -> str:
    """One line naming the query scorer a FuRePA run uses: the trained scorer's folder, or the stand-in (which runs
    whenever no `furepa_scorer` is given, in both presets); without the plan assessor no scorer runs."""
    if plan_assessor is False:
        return "none (w/o PA: one sampled plan decides, no query scorer)"
    return f"trained scorer {scorer}" if scorer else STAND_IN


class RetrievalScorer:
    """Training-free stand-in: the retriever's scores of the query's top documents, min-max scaled, read
    with Eq. 10's rule. A query that singles out one document scores 1; a vague one that many documents
    match about equally scores low."""

    def score_ranked(self, scores: list[float]) -> float:
        if not scores:
            return 0.0
        high, low = max(scores), min(scores)
        if high - low < 1e-9:
            return 1.0 / len(scores)
        return predicted_score([(s - low) / (high - low) for s in scores])


class CrossEncoderScorer:
    """The trained scorer: an encoder over "[CLS] query [SEP] document" with a linear head on [CLS]."""

    def __init__(self, folder: str | Path) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        folder = Path(folder)
        if not (folder / "scorer.json").is_file():
            from hoprag.errors import HopragError

            raise HopragError(f"{folder} holds no trained query scorer (scorer.json); train one with: "
                              "hoprag furepa train-scorer --dataset KIND:PATH --out DIR")
        self.config = json.loads((folder / "scorer.json").read_text())
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder / "encoder"))
        self.encoder = AutoModel.from_pretrained(str(folder / "encoder"))
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
        self.head.load_state_dict(torch.load(folder / "head.pt", map_location="cpu"))
        self.encoder.eval()

    def probabilities(self, query: str, documents: list[str]) -> list[float]:
        import torch

        if not documents:
            return []
        with torch.no_grad():
            batch = self.tokenizer([query] * len(documents), documents, truncation=True, max_length=256,
                                   padding=True, return_tensors="pt")
            hidden = self.encoder(**batch).last_hidden_state[:, 0]
            return torch.sigmoid(self.head(hidden)).squeeze(-1).tolist()

    def score(self, query: str, documents: list[str]) -> float:
        return predicted_score(self.probabilities(query, documents))


_LOADED: dict[str, CrossEncoderScorer] = {}


def load_scorer(path: str) -> CrossEncoderScorer:
    if path not in _LOADED:
        _LOADED[path] = CrossEncoderScorer(path)
    return _LOADED[path]
