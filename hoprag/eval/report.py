"""`hoprag report`: a markdown table of runs, deltas against a baseline, and PNG plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hoprag.errors import HopragError

COLUMNS = ("em", "f1", "cover_em", "judge", "retrieval_recall", "avg_steps", "finish_rate", "invalid_output_rate",
           "avg_repeated_queries", "avg_llm_calls", "avg_cached_calls", "total_tokens_per_question", "avg_seconds",
           "seconds_over_llm", "reprocessed_prompt_share", "peak_rss_mb", "failures")
# e.g. a closed-book method retrieves nothing; a single-shot method parses no output
NOT_APPLICABLE = {"retrieval_recall": "n/a", "invalid_output_rate": "n/a"}


def role_tokens(summary: dict[str, Any]) -> str:
    """Input/output tokens per question of each role, e.g. `reasoner 4990/314, notes 14016/1407`."""
    roles = summary.get("tokens_per_question") or {}
    return ", ".join(f"{role} {row['input_tokens']:.0f}/{row['output_tokens']:.0f}" for role, row in roles.items())


def read_summary(file: Path) -> Any:
    """A summary.json's content; HopragError (one line) where it cannot be read."""
    try:
        return json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HopragError(f"{file} is unreadable ({error}); rerun its hoprag eval command to rewrite it") from None


def load_run(path: Path) -> dict[str, Any]:
    summary = path / "summary.json"
    if not path.is_dir():
        raise HopragError(f"{path} is not a folder; give the --out folder of a hoprag eval run")
    if not summary.is_file():
        raise HopragError(f"{path} has no summary.json; is it an output folder of hoprag eval?")
    return read_summary(summary)


def table(runs: list[Path], baseline: int = 0) -> str:
    summaries = [load_run(p) for p in runs]
    header = "| run | method | preset | dataset | n | " + " | ".join(COLUMNS) + " | tokens in/out per role |"
    lines = [header, "|" + "---|" * (len(COLUMNS) + 6)]
    base = summaries[baseline] if summaries else {}
    for path, s in zip(runs, summaries, strict=True):
        cells = []
        for column in COLUMNS:
            value = s.get(column)
            cell = (NOT_APPLICABLE.get(column, "") if value is None else f"{value:g}" if isinstance(value, (int, float))
                    else str(value))
            spread = s.get(f"{column}_spread")
            if isinstance(spread, dict) and "std" in spread:  # a multi-seed run: mean ± sample std over its seeds
                cell += f" ± {spread['std']:g}"
            if s is not base and isinstance(value, (int, float)) and isinstance(base.get(column), (int, float)):
                cell += f" ({value - base[column]:+.1f})"
            cells.append(cell)
        config = s.get("config", {})
        dataset = Path(str(config.get("dataset", "")).partition(":")[2]).name
        seeds = f", {len(config['seeds'])} seeds" if config.get("seeds") else ""
        name = f"{path.name} (partial)" if s.get("partial") else path.name  # a run still going, or killed
        lines.append(f"| {name} | {config.get('method')} | {config.get('preset', '')}{seeds} | {dataset} | {s.get('questions')} | " + " | ".join(cells) + f" | {role_tokens(s)} |")
    return "\n".join(lines)


def plot_figures(runs: list[Path]) -> list[Any]:
    """F1 against tokens per question, and steps per question against gold hops (matplotlib figures)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summaries = [load_run(p) for p in runs]
    first, ax = plt.subplots(figsize=(6, 4))
    for path, s in zip(runs, summaries, strict=True):
        ax.scatter(s.get("total_tokens_per_question") or 0, s.get("f1") or 0, label=path.name)
    ax.set_xlabel("tokens per question")
    ax.set_ylabel("F1")
    ax.legend(fontsize=7)
    first.tight_layout()
    second, ax = plt.subplots(figsize=(6, 4))
    for path in runs:
        results = path / "results.jsonl"
        rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()] if results.is_file() else []
        by_hops: dict[int, list[float]] = {}
        for row in rows:
            if row.get("hops"):
                by_hops.setdefault(int(row["hops"]), []).append(row.get("steps") or 0)
        xs = sorted(by_hops)
        ax.plot(xs, [sum(by_hops[x]) / len(by_hops[x]) for x in xs], marker="o", label=path.name)
    ax.set_xlabel("gold hops")
    ax.set_ylabel("steps per question")
    ax.legend(fontsize=7)
    second.tight_layout()
    return [first, second]


def plots(runs: list[Path], out: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "f1_vs_tokens.png", out / "steps_vs_hops.png"]
    for figure, path in zip(plot_figures(runs), paths, strict=True):
        figure.savefig(path, dpi=120)
        plt.close(figure)
    return paths
