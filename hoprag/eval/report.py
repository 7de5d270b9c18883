"""`hoprag report`: a markdown table of runs (compared on the questions they share, by question id), deltas
against a baseline, and PNG plots."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hoprag.errors import HopragError
from hoprag.eval.runs import load_run, read_records, read_summary, seed_folders  # noqa: F401 (re-exported)

COLUMNS = ("em", "f1", "cover_em", "judge", "retrieval_recall", "avg_steps", "finish_rate", "invalid_output_rate",
           "avg_repeated_queries", "avg_llm_calls", "avg_cached_calls", "total_tokens_per_question", "avg_seconds",
           "seconds_over_llm", "reprocessed_prompt_share", "peak_rss_mb", "failures")
# e.g. a closed-book method retrieves nothing; a single-shot method parses no output
NOT_APPLICABLE = {"retrieval_recall": "n/a", "invalid_output_rate": "n/a"}


def role_tokens(summary: dict[str, Any]) -> str:
    """Input/output tokens per question of each role, e.g. `reasoner 4990/314, notes 14016/1407`."""
    roles = summary.get("tokens_per_question") or {}
    return ", ".join(f"{role} {row['input_tokens']:.0f}/{row['output_tokens']:.0f}" for role, row in roles.items())


@dataclass
class RunRow:
    """One run of a report: its summary over all its questions and, where the runs of its dataset cover
    different questions, its figures over the questions they all share."""

    path: Path
    summary: dict[str, Any]
    dataset: str  # the dataset the run's questions come from: runs of one dataset are compared on shared ids
    seeds: list[dict[str, dict[str, Any]]]  # each seed's records by question id (one for a single-seed run)
    ids: set[str] | None  # the questions it has records of; None where it kept no results.jsonl
    shared: dict[str, Any] | None = None  # the summary recomputed on the shared questions
    shared_ids: set[str] = field(default_factory=set)


def _dataset_key(summary: dict[str, Any]) -> str:
    """The dataset file a run read, by content where recorded (a filter or range only picks its questions)."""
    config = summary.get("config") or {}
    identity = config.get("dataset_identity")
    if identity:
        return str(identity).partition("#")[0]
    return str(config.get("dataset", "")).partition("#")[0]


def dataset_label(summary: dict[str, Any]) -> str:
    return Path(str((summary.get("config") or {}).get("dataset", "")).partition(":")[2]).name


def compare_runs(runs: list[Path]) -> list[RunRow]:
    """The runs of a report, each with its figures on the questions it shares with the other runs of its dataset
    (by question id), so that two runs of different lengths are compared on the same questions."""
    from hoprag.eval.runner import aggregate, seed_spread  # the runner reads run folders with load_run

    rows = []
    for path in runs:
        summary = load_run(path)
        seeds = [read_records(folder) for _, folder in seed_folders(path, summary)]
        present = [records for records in seeds if records]
        # a seed's questions: a multi-seed run covers the questions every seed answered
        ids = set.intersection(*(set(r) for r in present)) if present and len(present) == len(seeds) else None
        rows.append(RunRow(path, summary, _dataset_key(summary), seeds, ids))
    for key in dict.fromkeys(row.dataset for row in rows):
        group = [row for row in rows if row.dataset == key and row.ids is not None]
        if not group:
            continue
        shared = set.intersection(*(row.ids or set() for row in group))
        for row in group:
            row.shared_ids = shared
            if not shared:
                continue
            subsets = {number: aggregate([records[i] for i in sorted(shared)]) for number, records in enumerate(row.seeds)}
            row.shared = subsets[0] if len(subsets) == 1 else seed_spread(subsets)
            row.shared["config"] = row.summary.get("config") or {}
    return rows


def questions_differ(rows: list[RunRow]) -> bool:
    """Whether some runs of one dataset cover different questions (then means over all of each run's questions
    compare different questions)."""
    return any(row.ids is not None and row.ids != row.shared_ids for row in rows)


def shared_notes(rows: list[RunRow]) -> list[str]:
    """One sentence per dataset: how many questions its runs share, of how many each run has."""
    notes = []
    for key in dict.fromkeys(row.dataset for row in rows):
        group = [row for row in rows if row.dataset == key]
        counted = [row for row in group if row.ids is not None]
        label = dataset_label(group[0].summary) or "the dataset"
        if counted:
            sizes = ", ".join(f"{row.path.name} {len(row.ids or ())}" for row in counted)
            shared = len(counted[0].shared_ids)
            runs = f"the {len(counted)} runs share" if len(counted) > 1 else "the run has"
            notes.append(f"{label}: {runs} {shared} question{'s' if shared != 1 else ''} (of {sizes})")
        missing = [row.path.name for row in group if row.ids is None]
        if missing:
            notes.append(f"{label}: {', '.join(missing)} kept no results.jsonl, so only all of its questions can be shown")
    return notes


def _cells(s: dict[str, Any], base: dict[str, Any] | None) -> list[str]:
    cells = []
    for column in COLUMNS:
        value = s.get(column)
        cell = (NOT_APPLICABLE.get(column, "") if value is None else f"{value:g}" if isinstance(value, (int, float))
                else str(value))
        spread = s.get(f"{column}_spread")
        if isinstance(spread, dict) and "std" in spread:  # a multi-seed run: mean ± sample std over its seeds
            cell += f" ± {spread['std']:g}"
        if base is not None and s is not base and isinstance(value, (int, float)) and isinstance(base.get(column), (int, float)):
            cell += f" ({value - base[column]:+.1f})"
        cells.append(cell)
    return cells


def _markdown(rows: list[RunRow], figures: list[dict[str, Any] | None], bases: list[dict[str, Any] | None],
              counts: list[Any]) -> list[str]:
    header = "| run | method | preset | dataset | n | " + " | ".join(COLUMNS) + " | tokens in/out per role |"
    lines = [header, "|" + "---|" * (len(COLUMNS) + 6)]
    for row, s, base, n in zip(rows, figures, bases, counts, strict=True):
        cells = _cells(s, base) if s is not None else [""] * len(COLUMNS)
        config = row.summary.get("config") or {}
        seeds = f", {len(config['seeds'])} seeds" if config.get("seeds") else ""
        name = f"{row.path.name} (partial)" if row.summary.get("partial") else row.path.name  # still going, or killed
        lines.append(f"| {name} | {config.get('method')} | {config.get('preset', '')}{seeds} | {dataset_label(row.summary)} | "
                     f"{n} | " + " | ".join(cells) + f" | {role_tokens(s or {})} |")
    return lines


def check_baseline(runs: list[Path], baseline: int) -> None:
    """HopragError (one line) where `baseline` is not the position of one of the runs."""
    if not 0 <= baseline < len(runs):
        choices = "0 (there is one run)" if len(runs) == 1 else f"0 to {len(runs) - 1}"
        raise HopragError(f"--baseline {baseline}: give {choices}, the position of the run the deltas are taken "
                          "against in the runs' order on the command line (0: the first)")


def table(runs: list[Path], baseline: int = 0) -> str:
    """The markdown comparison. Where runs of one dataset cover different questions, the first table compares
    them on the questions they share (deltas against the baseline run's figures on those questions) and a second
    one keeps each run's figures over all its questions apart, without deltas."""
    check_baseline(runs, baseline)
    rows = compare_runs(runs)
    summaries = [row.summary for row in rows]
    if not questions_differ(rows):
        base = summaries[baseline] if summaries else None
        return "\n".join(_markdown(rows, summaries, [base] * len(rows), [s.get("questions") for s in summaries]))
    chosen = rows[baseline]
    bases = [chosen.shared if row.dataset == chosen.dataset else None for row in rows]
    lines = ["On the questions the runs of each dataset share (by question id): " + "; ".join(shared_notes(rows)) + ".",
             "", *_markdown(rows, [row.shared for row in rows], bases,
                            [len(row.shared_ids) if row.shared else "" for row in rows]),
             "", "All questions of each run (different questions: compare runs in the table above):", "",
             *_markdown(rows, summaries, [None] * len(rows), [s.get("questions") for s in summaries])]
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
        by_hops: dict[int, list[float]] = {}
        for row in read_records(path).values():  # the one reader: it skips a line cut by a killed run
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
