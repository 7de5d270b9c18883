"""The side-by-side table of `hoprag reproduce`: each cell "measured (paper, delta)", the setting differences
from the paper above it, and the paper's claimed ordering (its own method over each baseline) checked against
the paper's numbers and the measured ones. Read from the run folders alone, so it re-renders without running.

hoprag's summary.json scores (EM, F1, cover EM, judge accuracy) are percentages (0-100), as the papers print
them; counts (steps, tokens) are counts on both sides: no metric is rescaled.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hoprag.graphs import CLOSED_BOOK
from hoprag.reproduce.run import RunKey, row_preset, status, summary_of
from hoprag.reproduce.tables import Dataset, Metric, Row, Table, paper_label

NOT_RUN = "—"
# Scores where more is better: the ones a paper's claim over its baselines is about.
QUALITY_SUMMARIES = ("f1", "em", "judge", "cover_em")
LEGEND = ("Each cell: measured (paper, measured − paper); — (paper): not run; n/a (paper): hoprag does not "
          "measure it; * an unfinished run.")


@dataclass(frozen=True)
class Measured:
    value: float | None
    partial: bool = False


Lookup = Callable[[Row, Dataset, Metric], Measured | None]


def summary_value(summary: dict[str, Any], key: str) -> float | None:
    """A (dotted) key of summary.json, e.g. `tokens_per_question.reasoner.input_tokens`."""
    value: Any = summary
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def load_runs(table: Table, out: Path, preset: str | None = None) -> dict[RunKey, dict[str, Any]]:
    """The summaries of the table's run folders in `out` that hold at least one question, by run (a run that
    stopped before its first question, e.g. for missing weights, measured nothing and has no setting to show)."""
    runs: dict[RunKey, dict[str, Any]] = {}
    for dataset in table.datasets:
        for row in table.rows:
            chosen = row_preset(row, preset)
            if not row.method or not chosen:
                continue
            key = RunKey(dataset.id, row.method, chosen)
            if key not in runs and (summary := summary_of(key.folder(out))) and summary.get("questions"):
                runs[key] = summary
    return runs


def lookup(runs: dict[RunKey, dict[str, Any]], preset: str | None) -> Lookup:
    def measured(row: Row, dataset: Dataset, metric: Metric) -> Measured | None:
        chosen = row_preset(row, preset)
        if not row.method or not chosen:
            return None
        summary = runs.get(RunKey(dataset.id, row.method, chosen))
        if summary is None:
            return None
        value = summary_value(summary, metric.summary) if metric.summary else None
        return Measured(value, bool(summary.get("partial")))
    return measured


# Scores and average steps are shown with one decimal; token counts (named so in the metric's id or summary key),
# means over questions, are shown whole.
def number(value: float, whole: bool = False) -> str:
    return str(math.floor(value + 0.5)) if whole else f"{value:.1f}"  # halves up, as the papers round


def paper_number(value: float, whole: bool) -> str:
    """The paper's number as it printed it (a token count with a decimal keeps it)."""
    return number(value, whole and value == int(value))


def cell_text(paper: float | None, metric: Metric, measured: Measured | None) -> str:
    """ "31.2 (38.6, -7.4)"; "— (38.6)" where not run; "n/a (38.6)" where hoprag does not measure it."""
    whole = "tokens" in f"{metric.id} {metric.summary}"
    if measured is None:
        shown = NOT_RUN
    elif metric.summary is None:
        shown = "n/a"
    elif measured.value is None:
        shown = NOT_RUN
    else:
        shown = number(measured.value, whole) + ("*" if measured.partial else "")
    if paper is None:
        return "" if shown in (NOT_RUN, "n/a") else f"{shown} (—)"
    if measured is None or measured.value is None:
        return f"{shown} ({paper_number(paper, whole)})"
    # the difference of the numbers as shown, so that it adds up (and never reads -0.0)
    delta = (math.floor(measured.value + 0.5) - paper if whole else round(measured.value - paper, 1)) + 0.0
    sign = "+" if delta >= 0 else "-"
    return f"{shown} ({paper_number(paper, whole)}, {sign}{paper_number(abs(delta), whole)})"


def columns(table: Table) -> list[tuple[Dataset, Metric]]:
    """(dataset, metric) per column: the dataset's one metric where it names one, else every metric a row gives."""
    metrics = {m.id: m for m in table.metrics}
    shown = []
    for dataset in table.datasets:
        ids = [dataset.metric] if dataset.metric else [m.id for m in table.metrics
                                                         if any(m.id in r.values.get(dataset.id, {}) for r in table.rows)]
        shown += [(dataset, metrics[i]) for i in ids if i in metrics]
    return shown


def hoprag_cell(row: Row, preset: str | None) -> str:
    state, why = status(row, preset)
    if state == "runnable":
        return f"{row.method} / {row_preset(row, preset)}"
    if state == "not implementable":
        return "not implementable"
    return f"{row.method} / {row_preset(row, preset)} ({state})"


@dataclass(frozen=True)
class Claim:
    """The paper's own method over one baseline, on one dataset and metric."""

    ours: Row
    baseline: Row
    dataset: Dataset
    metric: Metric
    paper: tuple[float, float]
    measured: tuple[float | None, float | None]

    @staticmethod
    def verdict(ours: float | None, baseline: float | None) -> str:
        if ours is None or baseline is None:
            return "not run"
        return "holds" if ours > baseline else "does not hold"

    @property
    def line(self) -> str:
        def pair(values: tuple[float | None, float | None]) -> str:
            return " vs ".join(NOT_RUN if v is None else number(v) for v in values)

        return (f"{self.ours.name} > {self.baseline.name} on {self.dataset.label} {self.metric.label}: "
                f"paper {pair(self.paper)}, {self.verdict(*self.paper)}; "
                f"measured {pair(self.measured)}, {self.verdict(*self.measured)}")


def claim_metric(table: Table, dataset: Dataset) -> Metric | None:
    """The score a claim is checked on: the dataset's one metric, else F1, else the table's first other score."""
    metrics = {m.id: m for m in table.metrics}
    if dataset.metric in metrics:
        return metrics[dataset.metric]
    if "f1" in metrics:
        return metrics["f1"]
    return next((m for m in table.metrics if m.summary in QUALITY_SUMMARIES), None)


def claims(table: Table, measured: Lookup) -> list[Claim]:
    """Each row the paper presents as its own (`ours`) against each baseline: those of its group (its model)
    where the group has any, else every other row; on each dataset both have the paper's number for."""
    found = []
    for ours in (row for row in table.rows if row.ours):
        same_group = [r for r in table.rows if not r.ours and ours.group and r.group == ours.group]
        baselines = same_group or [r for r in table.rows if not r.ours]
        for dataset in table.datasets:
            metric = claim_metric(table, dataset)
            if metric is None:
                continue
            for baseline in baselines:
                paper = (ours.values.get(dataset.id, {}).get(metric.id), baseline.values.get(dataset.id, {}).get(metric.id))
                if paper[0] is None or paper[1] is None:
                    continue
                values = tuple((m.value if m else None) for m in (measured(ours, dataset, metric),
                                                                    measured(baseline, dataset, metric)))
                found.append(Claim(ours, baseline, dataset, metric, (paper[0], paper[1]), (values[0], values[1])))
    return found


def _distinct(values: list[Any]) -> str:
    shown = list(dict.fromkeys(str(v) for v in values))
    return "; ".join(shown) if shown else NOT_RUN


def _by_run(values: dict[RunKey, str]) -> str:
    """The runs' distinct values; where they differ, each names its runs: by preset where that tells them apart (a
    table's baselines at `flashrag`, its own method at `paper`), else by method and preset."""
    groups: dict[str, list[RunKey]] = {}
    for key, value in values.items():
        groups.setdefault(value, []).append(key)
    if len(groups) < 2:
        return _distinct(list(groups))
    presets = [{key.preset for key in keys} for keys in groups.values()]
    by_preset = all(a.isdisjoint(b) for n, a in enumerate(presets) for b in presets[n + 1:])

    def names(keys: list[RunKey]) -> str:
        return ", ".join(dict.fromkeys(key.preset if by_preset else f"{key.method} / {key.preset}" for key in keys))

    return "; ".join(f"{value} ({names(keys)})" for value, keys in groups.items())


def _retrieval_label(config: dict[str, Any], labels: dict[tuple[str, str], str]) -> str:
    """What a run searched, as it recorded it (`retrieval`); for a record from before runs named it, its retriever
    over its index, `auto` as what it searches the index with here, where the index is here."""
    from hoprag.retrievers.retrievers import auto_retrieval

    if config.get("retrieval"):
        return str(config["retrieval"])
    kind, index = str(config.get("retriever")), str(config.get("index"))
    if (kind, index) not in labels:
        label = (auto_retrieval(index) or kind) if kind == "auto" else kind
        labels[(kind, index)] = label if index in ("none", "wikipedia") else f"{label} over index {index}"
    return labels[(kind, index)]


def _dataset_file(spec: str) -> str:
    path = Path(spec.partition(":")[2].split("#")[0])
    return f"{path.parent.name}/{path.name}"


def setting_differences(table: Table, runs: dict[RunKey, dict[str, Any]]) -> list[str]:
    """Model, retriever and corpus, k, questions and decoding: the paper's against what the runs recorded."""
    setting = table.setting
    configs = [summary.get("config") or {} for summary in runs.values()]
    models = [spec for config in configs for spec in dict.fromkeys((config.get("models") or {}).values())]
    labels: dict[tuple[str, str], str] = {}  # each index resolved once (a Chroma server may be slow or down)
    searching = [config for config in configs if config.get("method") not in CLOSED_BOOK]  # cot searches nothing
    retrieval = [_retrieval_label(config, labels) for config in searching] or (["none (closed book)"] if configs else [])
    ks = list(dict.fromkeys(config.get("k") for config in searching))
    k_same = " (the paper's)" if ks == [setting.get("k")] else ""
    decoding = _by_run({key: f"temperature {config.get('temperature')}, seed {config.get('seed')}, max_tokens "
                                f"{config.get('max_tokens')}" for key, config in zip(runs, configs, strict=True)})
    paper_questions, here_questions = [], []
    for dataset in table.datasets:
        count, selection = dataset.questions or "not stated", dataset.selection or ""
        if selection.startswith(f"{count} ("):  # "not stated (...)" under a count not stated: say it once
            selection = selection.removeprefix(f"{count} (").removesuffix(")")
        paper_questions.append(f"{dataset.label} {count}" + (f" ({selection})" if selection else ""))
        counts = [(s.get("questions"), _dataset_file(str((s.get("config") or {}).get("dataset", ""))))
                  for key, s in runs.items() if key.dataset == dataset.id]
        if counts:
            here_questions.append(f"{dataset.label} {_distinct([n for n, _ in counts])} (the first of "
                                  f"{_distinct([f for _, f in counts])})")
    lines = [
        f"model: paper {setting.get('model')}; here {_distinct(models)}",
        f"retriever and corpus: paper {setting.get('retriever')} over {setting.get('corpus')}; here {_distinct(retrieval)}",
        f"k: paper {setting.get('k')}; here {_distinct(ks)}{k_same}",
        f"questions: paper {'; '.join(paper_questions)}; here {'; '.join(here_questions) or NOT_RUN}",
        f"decoding: paper {setting.get('decoding')}; here {decoding}",
    ]
    lines += [f"{row.name}: paper " + ", ".join(f"{k} {v}" for k, v in row.setting.items())
              for row in table.rows if row.setting]
    return lines


@dataclass(frozen=True)
class Rendered:
    title: str
    caption: str
    differences: list[str]
    header: list[str]
    rows: list[list[str]]
    claims: list[str]
    notes: list[str]


def render(table: Table, out: Path, *, preset: str | None = None, notes: list[str] | None = None,
           datasets: list[str] | None = None) -> Rendered:
    """The table as measured in `out`'s run folders beside the paper's numbers; with `datasets`, only their
    columns, questions and orderings (what `--datasets` ran)."""
    if datasets is not None:
        table = replace(table, datasets=tuple(d for d in table.datasets if d.id in datasets))
    runs = load_runs(table, out, preset)
    measured = lookup(runs, preset)
    shown = columns(table)
    body = [[row.name, hoprag_cell(row, preset),
             *(cell_text(row.values.get(d.id, {}).get(m.id), m, measured(row, d, m)) for d, m in shown)]
            for row in table.rows]
    return Rendered(
        title=f"{paper_label(table)} {table.table}, re-measured", caption=table.caption,
        differences=setting_differences(table, runs),
        header=["Method", "hoprag", *(f"{d.label} {m.label}" for d, m in shown)], rows=body,
        claims=[claim.line for claim in claims(table, measured)], notes=list(notes or []))


def markdown(page: Rendered) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    parts = [f"# {page.title}", "", page.caption, "", "Setting differences from the paper:", "",
             *(f"- {d}" for d in page.differences), "", line(page.header), line(["---"] * len(page.header)),
             *(line(r) for r in page.rows), "", LEGEND]
    if page.claims:
        parts += ["", "The paper's claimed ordering, by its numbers and by the measured ones:", "",
                  *(f"- {c}" for c in page.claims)]
    if page.notes:
        parts += ["", "Not run:", "", *(f"- {n}" for n in page.notes)]
    return "\n".join(parts) + "\n"


def html_page(page: Rendered) -> str:
    from hoprag.eval.html_report import STYLE

    def items(lines: list[str]) -> str:
        return "<ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in lines) + "</ul>"

    def claim_item(text: str) -> str:
        measured = text.rpartition("; measured ")[2]
        mark = "yes" if measured.endswith(", holds") else "no" if measured.endswith("does not hold") else "muted"
        return f'<li class="{mark}">{html.escape(text)}</li>'

    head = "".join(f"<th>{html.escape(h)}</th>" for h in page.header)
    body = "".join("<tr>" + "".join(f"<td{' class=num' if i > 1 else ''}>{html.escape(c)}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in page.rows)
    sections = [f"<h1>{html.escape(page.title)}</h1>", f"<p class=muted>{html.escape(page.caption)}</p>",
                "<h2>Setting differences from the paper</h2>", items(page.differences),
                f"<div class=wide><table><tr>{head}</tr>{body}</table></div>",
                f"<p class=muted>{html.escape(LEGEND)}</p>"]
    if page.claims:
        sections += ["<h2>The paper's claimed ordering</h2>", "<ul>" + "".join(map(claim_item, page.claims)) + "</ul>"]
    if page.notes:
        sections += ["<h2>Not run</h2>", items(page.notes)]
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(page.title)}</title>"
            f"<style>{STYLE}</style></head><body>{''.join(sections)}</body></html>\n")


def write_pages(table: Table, page: Rendered, out: Path) -> tuple[Path, Path]:
    """OUT/TABLE.md and OUT/TABLE.html."""
    out.mkdir(parents=True, exist_ok=True)
    md, page_html = out / f"{table.id}.md", out / f"{table.id}.html"
    md.write_text(markdown(page), encoding="utf-8")
    page_html.write_text(html_page(page), encoding="utf-8")
    return md, page_html
