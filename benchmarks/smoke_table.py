"""The smoke table of benchmarks/smoke_baselines.sh, read from each cell's results.jsonl (so a cell that ran out of
its time budget still shows the questions it finished).

Usage: python benchmarks/smoke_table.py runs/smoke   (prints markdown)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# A cell's records by question id, skipping a line cut by the budget's kill.
from hoprag.eval.runs import read_records  # noqa: E402

DATASETS = {"hotpot": "HotpotQA-hard", "musique": "MuSiQue"}
PRESETS = ("small", "paper")


def read_cell(folder: Path) -> dict | None:
    records = list(read_records(folder).values())
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


NO_CELL = ["-"] * 8  # a preset that did not run the method


def row_cells(cell: dict | None, rag: dict | None, method: str) -> list[str]:
    """One preset's columns of a method's row; a cell without records ran out of its time budget before its
    first question (smoke_baselines.sh makes a folder per cell it starts)."""
    if cell is None:
        return ["0", "-", "-", "-", "> budget", "-", "-", "-"]
    delta = "0" if method == "rag" else f"{cell['f1'] - rag['f1']:+.1f}" if rag else "-"
    return [str(cell["n"]), f"{cell['em']:.0f}", f"{cell['f1']:.1f}", delta, f"{cell['seconds']:.0f}",
            f"{cell['tokens'][0]:,.0f}/{cell['tokens'][1]:,.0f}", str(cell["capped"]), cell["invalid"]]


def main(root: Path) -> None:
    """One row a method, each column "small · paper": one value where only `small` ran, "-" for the `small` a
    method only `paper` ran lacks."""
    commits: set[str] = set()
    for key, label in DATASETS.items():
        print(f"\n**{label}**\n")
        print("| method | n | EM | F1 | F1 − RAG | s/question | tokens in/out | capped | invalid outputs |")
        print("|---|---|---|---|---|---|---|---|---|")
        rag = {preset: read_cell(root / f"{key}-rag-{preset}") for preset in PRESETS}
        methods = sorted({folder.name[len(key) + 1:].rsplit("-", 1)[0] for folder in root.glob(f"{key}-*")
                          if folder.is_dir() and folder.name.rsplit("-", 1)[1] in PRESETS})
        for method in methods:
            columns = []
            for preset in PRESETS:
                folder = root / f"{key}-{method}-{preset}"
                cell = read_cell(folder)
                commits |= cell["commits"] if cell else set()
                columns.append(row_cells(cell, rag[preset], method) if folder.is_dir() else NO_CELL)
            shown = columns[:1] if columns[1] is NO_CELL else columns
            print(f"| `{method}` | " + " | ".join(" · ".join(values) for values in zip(*shown, strict=True)) + " |")
    print(f"\ncommit(s): {', '.join(sorted(commits))}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/smoke"))
