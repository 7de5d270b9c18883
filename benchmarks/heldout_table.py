"""The held-out tables of docs/results.md, from the run folders of benchmarks/heldout.sh
(`<dataset>-<method>-<preset>`, `small` and `paper`): accuracy (EM, F1 and F1 minus the same preset's RAG on the same
questions, per dataset) and cost (seconds a question, mean and median in brackets, and main-model tokens a question;
peak resident memory). A method's `paper` row follows its `small` row and is marked so. Each cell is read from its
results.jsonl, so a cell still running or stopped shows the questions it finished; a line above the tables says how
many questions of each dataset most cells have reached, and a cell at another count gives its own. A failed
question counts as wrong, as `hoprag eval` scores it, and the cell says how many failed.

Usage: python benchmarks/heldout_table.py runs/heldout   (prints markdown; heldout.sh writes it to OUT/heldout.md)
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# A cell's records by question id, a failed question's (scored wrong, as `hoprag eval` scores it) included.
from hoprag.eval.runs import read_records  # noqa: E402

DATASETS = {"hotpot": ("HotpotQA-hard", 50), "musique": ("MuSiQue", 50), "2wiki": ("2Wiki", 32)}
# Rows in this order (the references, then the seed papers' methods, then the baselines); others after, by name.
ORDER = ("rag", "cot", "renact", "renact-iterative", "react", "resp", "rearag", "furepa", "ircot", "ircot-notes",
         "flare", "flare-notes", "iter-retgen", "self-ask", "search-o1", "searchain", "chatcot", "infogent", "replug",
         "sure", "recomp", "long-context")
PRESETS = ("small", "paper")  # a method's rows in this order; a `paper` row says so


def cell(records: dict[str, dict[str, Any]], rag: dict[str, dict[str, Any]], is_rag: bool) -> dict[str, Any]:
    """EM and F1 (percent), F1 minus RAG's over the questions both hold, seconds and tokens a question."""
    rows = list(records.values())
    shared = [key for key in records if key in rag]
    delta = None if is_rag or not shared else 100 * statistics.fmean(
        [records[key]["metrics"]["f1"] - rag[key]["metrics"]["f1"] for key in shared])
    usage = [list((r.get("usage") or {}).values()) for r in rows]
    seconds = [r.get("seconds") or 0.0 for r in rows if not r.get("error")] or [0.0]  # every question failed: 0
    return {"n": len(rows), "failed": sum(1 for r in rows if r.get("error")), "shared": len(shared),
            "em": 100 * statistics.fmean([r["metrics"]["em"] for r in rows]),
            "f1": 100 * statistics.fmean([r["metrics"]["f1"] for r in rows]), "delta": delta,
            "seconds": statistics.fmean(seconds), "median_seconds": statistics.median(seconds),
            "tokens_in": statistics.fmean([sum(u.get("input_tokens", 0) for u in roles) for roles in usage]),
            "tokens_out": statistics.fmean([sum(u.get("output_tokens", 0) for u in roles) for roles in usage]),
            "commits": {r["git_commit"][:7] for r in rows if r.get("git_commit")}}


def peak_rss(folders: list[Path]) -> str:
    """The range of the cells' peak resident memory (MB), from their summary.json."""
    peaks = []
    for folder in folders:
        try:
            peaks.append(int(json.loads((folder / "summary.json").read_text())["peak_rss_mb"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    if not peaks:
        return "-"
    low, high = min(peaks), max(peaks)
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def rows_of(root: Path) -> list[tuple[str, str]]:
    """The (method, preset) pairs with a cell folder: methods in ORDER (others after, by name), `small` first."""
    found = {(folder.name.split("-", 1)[1][: -len(preset) - 1], preset) for key in DATASETS for preset in PRESETS
             for folder in root.glob(f"{key}-*-{preset}") if folder.is_dir()}
    names = {method for method, _ in found}
    ordered = [m for m in ORDER if m in names] + sorted(names - set(ORDER))
    return [(method, preset) for method in ordered for preset in PRESETS if (method, preset) in found]


def row_name(method: str, preset: str) -> str:
    return f"`{method}`" if preset == "small" else f"`{method}`, preset `{preset}`"


def tables(root: Path) -> str:
    """Both tables as markdown, and the commits the records came from (the table is one commit's: more is flagged)."""
    cells: dict[tuple[str, str, str], dict[str, Any]] = {}
    rows = rows_of(root)
    for key in DATASETS:
        # Each row is compared with RAG at its own preset (`paper` RAG reads choice questions without `small`'s help).
        rag = {preset: read_records(root / f"{key}-rag-{preset}") for preset in PRESETS}
        for method, preset in rows:
            records = rag[preset] if method == "rag" else read_records(root / f"{key}-{method}-{preset}")
            if records:
                cells[(key, method, preset)] = cell(records, rag[preset], method == "rag")

    # The count most of a dataset's cells have reached (the script grows every cell in rounds; a tie goes to the
    # larger); a cell at another count says how many it has.
    held = {key: Counter(c["n"] for (k, _, _), c in cells.items() if k == key) for key in DATASETS}
    reached = {key: max(counts, key=lambda n: (counts[n], n), default=0) for key, counts in held.items()}

    def count(key: str, c: dict[str, Any]) -> str:
        """A cell at another count than its dataset's says how many it has; one with failed questions, how many."""
        notes = ([] if c["n"] == reached[key] else [f"n = {c['n']}"]) + ([f"{c['failed']} failed"] if c["failed"] else [])
        return f" ({', '.join(notes)})" if notes else ""

    def delta(c: dict[str, Any]) -> str:
        if c["delta"] is None:  # RAG's cell holds none of its questions
            return "-"
        same = "" if c["shared"] == c["n"] else f" (on {c['shared']})"
        return f"{c['delta']:+.2f}{same}".replace("-", "−")

    lines = ["questions: " + ", ".join(f"{label} {reached[key]} of {total}" for key, (label, total) in DATASETS.items()),
             "",
             "| method | " + " | ".join(f"{label} EM | {label} F1 | F1 − RAG" for label, _ in DATASETS.values()) + " |",
             "|---|" + "---|---|---|" * len(DATASETS)]
    for method, preset in rows:
        row = [row_name(method, preset)]
        for key in DATASETS:
            c = cells.get((key, method, preset))
            if c is None:
                row += ["-", "-", "-"]
            else:
                row += [f"{c['em']:.1f}{count(key, c)}", f"{c['f1']:.2f}", "0" if method == "rag" else delta(c)]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "F1 − RAG: against `rag` at the row's preset, over the questions both cells hold.",
              "", "| method | " + " | ".join(f"{label} s/question | {label} tokens in/out" for label, _ in
                                             DATASETS.values()) + " | peak RSS MB |",
              "|---|" + "---|---|" * len(DATASETS) + "---|"]
    for method, preset in rows:
        row = [row_name(method, preset)]
        for key in DATASETS:
            c = cells.get((key, method, preset))
            row += ["-", "-"] if c is None else [f"{c['seconds']:.1f} ({c['median_seconds']:.1f})",
                                                 f"{c['tokens_in']:,.0f} / {c['tokens_out']:,.0f}"]
        row.append(peak_rss([root / f"{key}-{method}-{preset}" for key in DATASETS]))
        lines.append("| " + " | ".join(row) + " |")
    commits = sorted({commit for c in cells.values() for commit in c["commits"]})
    one = "" if len(commits) <= 1 else " (more than one commit: this is not one commit's table)"
    lines += ["", f"commit(s): {', '.join(commits) or '-'}{one}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/heldout")
    if not folder.is_dir():
        sys.exit(f"{folder}: no such folder; give the OUT folder of benchmarks/heldout.sh")
    sys.stdout.write(tables(folder))
