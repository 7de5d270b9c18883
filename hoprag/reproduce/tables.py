"""The seed papers' main result tables as data (one JSON file per table in `hoprag/reproduce/tables/`).

Each table keeps what the paper printed: its rows (methods), columns (datasets), metrics, every number, and
the setting the paper states. Each row also names the hoprag method and preset that re-measure it, or says
why none can. The format is described in docs/reproduce.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from hoprag.errors import HopragError

TABLES_PACKAGE = "hoprag.reproduce"
TABLES_FOLDER = "tables"



class TableFormatError(HopragError):
    """A table file that does not follow the format (a packaging or editing mistake)."""


@dataclass(frozen=True)
class Metric:
    id: str
    label: str  # the column header as the paper prints it
    summary: str | None  # the key of hoprag eval's summary.json that measures it (dotted for nested), or None
    source: str | None = None  # another table of the same paper the numbers come from (e.g. "Table 8")
    note: str | None = None


@dataclass(frozen=True)
class Dataset:
    id: str
    label: str
    split: str | None
    questions: int | None  # how many questions the paper evaluated (None: not stated)
    selection: str | None  # which ones: "first", "random", ...
    metric: str | None = None  # the one metric this column reports, where the table mixes metrics per column
    filter: str | None = None  # FRAMES: the reasoning type the questions are tagged with (the spec's #filter)
    note: str | None = None


@dataclass(frozen=True)
class Row:
    label: str  # the method as the paper names it
    method: str | None  # the hoprag method that re-measures it; None where hoprag cannot
    preset: str | None
    values: dict[str, dict[str, float]]  # dataset id -> metric id -> the paper's number
    group: str | None = None  # the block the row sits in (a model, "Vanilla RAG", ...), None where the table has none
    setting: dict[str, Any] = field(default_factory=dict)  # overrides of the table's setting (e.g. the model)
    not_implementable: str | None = None  # why no hoprag method can produce the row (with method None)
    ours: bool = False  # the paper's own method: its claimed ordering over the other rows is checked
    note: str | None = None

    @property
    def name(self) -> str:
        return f"{self.label} ({self.group})" if self.group else self.label


@dataclass(frozen=True)
class Cell:
    """One number of a table, with the method and preset that re-measure it."""

    table: str
    row: Row
    dataset: str
    metric: str
    value: float

    @property
    def method(self) -> str | None:
        return self.row.method

    @property
    def preset(self) -> str | None:
        return self.row.preset


@dataclass(frozen=True)
class Table:
    id: str
    paper: dict[str, Any]  # id, short, title, file (in ../shared/papers) or source (where it was taken from)
    table: str  # the table's name in the paper, e.g. "Table 1"
    caption: str
    setting: dict[str, Any]  # model, retriever, corpus, k, decoding, ... as the paper states them
    metrics: tuple[Metric, ...]
    datasets: tuple[Dataset, ...]
    rows: tuple[Row, ...]

    def cells(self) -> Iterator[Cell]:
        for row in self.rows:
            for dataset, numbers in row.values.items():
                for metric, value in numbers.items():
                    yield Cell(self.id, row, dataset, metric, value)

    def row_setting(self, row: Row) -> dict[str, Any]:
        """The setting a row was measured in: the table's, with the row's overrides."""
        return {**self.setting, **row.setting}


def _fields(cls: type, raw: dict[str, Any], where: str) -> dict[str, Any]:
    known = set(cls.__dataclass_fields__)
    unknown = set(raw) - known
    if unknown:
        raise TableFormatError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    return raw


def parse_table(raw: dict[str, Any]) -> Table:
    """A Table from a table file's JSON, checked: every cell names a dataset and metric of the table, and a row
    with no method says why."""
    where = f"table {raw.get('id', '?')}"
    try:
        metrics = tuple(Metric(**_fields(Metric, m, where)) for m in raw["metrics"])
        datasets = tuple(Dataset(**_fields(Dataset, d, where)) for d in raw["datasets"])
        rows = tuple(Row(**_fields(Row, r, where)) for r in raw["rows"])
        table = Table(id=raw["id"], paper=raw["paper"], table=raw["table"], caption=raw["caption"],
                      setting=raw["setting"], metrics=metrics, datasets=datasets, rows=rows)
    except (KeyError, TypeError) as error:
        raise TableFormatError(f"{where}: malformed ({type(error).__name__}: {error})") from None
    dataset_ids, metric_ids = {d.id for d in datasets}, {m.id for m in metrics}
    for row in rows:
        if row.method is None and not row.not_implementable:
            raise TableFormatError(f"{where}, row {row.name}: no method and no not_implementable reason")
        for dataset, numbers in row.values.items():
            if dataset not in dataset_ids or not set(numbers) <= metric_ids:
                raise TableFormatError(f"{where}, row {row.name}: cell {dataset}/{', '.join(numbers)} is not a "
                                       f"dataset/metric of the table")
    return table


def table_ids() -> list[str]:
    """The ids of the packaged tables, sorted."""
    folder = resources.files(TABLES_PACKAGE) / TABLES_FOLDER
    return sorted(entry.name.removesuffix(".json") for entry in folder.iterdir() if entry.name.endswith(".json"))


def load_table(table_id: str) -> Table:
    """A packaged table by id; HopragError (one line, listing the ids) for an unknown one."""
    ids = table_ids()
    if table_id not in ids:
        raise HopragError(f"unknown table '{table_id}'; known: {', '.join(ids)} (see: hoprag reproduce --list)")
    text = (resources.files(TABLES_PACKAGE) / TABLES_FOLDER / f"{table_id}.json").read_text(encoding="utf-8")
    return parse_table(json.loads(text))


def load_tables() -> list[Table]:
    return [load_table(table_id) for table_id in table_ids()]


def row_status(row: Row) -> tuple[str, str]:
    """Whether hoprag can re-measure a row: ("runnable", ""), ("unknown", the method or preset hoprag does not
    have), or ("not implementable", why)."""
    from hoprag.graphs import METHODS
    from hoprag.presets import PRESET_NAMES

    if row.method is None:
        return "not implementable", row.not_implementable or "no hoprag method"
    missing = [(kind, name) for kind, name, known in (("method", row.method, METHODS), ("preset", row.preset, PRESET_NAMES))
               if name not in known]
    if not missing:
        return "runnable", ""
    return "unknown", ", ".join(f"{kind} {name}" for kind, name in missing)


def paper_label(table: Table) -> str:
    """e.g. "ReSP (001)": the paper's short name, with its number in ../shared/papers where it is one of them."""
    return f"{table.paper['short']} ({table.paper['id']})" if table.paper.get("file") else table.paper["short"]


def list_rows() -> list[dict[str, Any]]:
    """One summary per table for `hoprag reproduce --list`."""
    listing = []
    for table in load_tables():
        statuses = [row_status(row)[0] for row in table.rows]
        used = {metric for row in table.rows for numbers in row.values.values() for metric in numbers}
        listing.append({
            "id": table.id, "paper": f"{paper_label(table)} {table.table}",
            "metrics": ", ".join(m.label for m in table.metrics if m.id in used),
            "datasets": ", ".join(d.label for d in table.datasets), "rows": len(table.rows),
            "runnable": statuses.count("runnable"), "unknown": statuses.count("unknown"),
            "not_implementable": statuses.count("not implementable"),
        })
    return listing
