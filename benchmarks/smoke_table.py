"""The smoke table of benchmarks/smoke_baselines.sh, read from each cell's results.jsonl (so a cell that ran out of
its time budget still shows the questions it finished).

Usage: python benchmarks/smoke_table.py runs/smoke   (prints markdown)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DATASETS = {"hotpot": "HotpotQA-hard", "musique": "MuSiQue"}
PRESETS = ("small", "paper")


def read_cell(folder: Path) -> dict | None:
    path = folder / "results.jsonl"
    if not path.exists():
        return None
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not records:
        return None
    n = len(records)
    tokens_in = sum(u.get("input_tokens", 0) for r in records for u in (r.get("usage") or {}).values())
    tokens_out = sum(u.get("output_tokens", 0) for r in records for u in (r.get("usage") or {}).values())
    capped = sum(1 for r in records if (r.get("finished_by") or "").startswith("cap"))
    errors = sum(1 for r in records if r.get("error"))
    parsed = sum(r.get("parsed_outputs") or 0 for r in records)
    invalid = sum(r.get("invalid_outputs") or 0 for r in records)
    commits = {r.get("git_commit", "")[:7] for r in records}
    return {"n": n, "em": 100 * sum(r["metrics"]["em"] for r in records) / n,
            "f1": 100 * sum(r["metrics"]["f1"] for r in records) / n,
            "seconds": sum(r.get("seconds") or 0 for r in records) / n, "tokens": (tokens_in / n, tokens_out / n),
            "capped": capped, "errors": errors, "invalid": f"{100 * invalid / parsed:.0f}%" if parsed else "-",
            "commits": commits}


def main(root: Path) -> None:
    commits: set[str] = set()
    for key, label in DATASETS.items():
        print(f"\n### {label}, first 10 questions\n")
        print("| method | preset | n | EM | F1 | F1 − RAG | s/question | tokens in/out | capped | invalid outputs |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for preset in PRESETS:
            rag = read_cell(root / f"{key}-rag-{preset}")
            for folder in sorted(root.glob(f"{key}-*-{preset}")):
                if not folder.is_dir():
                    continue
                cell = read_cell(folder)
                method = folder.name[len(key) + 1:-len(preset) - 1]
                if cell is None:  # it ran out of its time budget before its first question
                    if folder.with_name(f"{folder.name}.budget-spent").exists():
                        print(f"| `{method}` | `{preset}` | 0 | - | - | - | > budget | - | - | - |")
                    continue
                commits |= cell["commits"]
                delta = f"{cell['f1'] - rag['f1']:+.1f}" if rag and method != "rag" else "0" if method == "rag" else "-"
                print(f"| `{method}` | `{preset}` | {cell['n']} | {cell['em']:.0f} | {cell['f1']:.1f} | {delta} | "
                      f"{cell['seconds']:.0f} | {cell['tokens'][0]:,.0f} / {cell['tokens'][1]:,.0f} | {cell['capped']} | "
                      f"{cell['invalid']} |")
    print(f"\ncommit(s): {', '.join(sorted(commits))}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/smoke"))
