"""One progress bar for every long command (eval, build-data, scorer sampling and training)."""

from __future__ import annotations

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def progress_bar(label: str, *fields: str, enabled: bool = True) -> Progress:
    """`label` (may use `{task.description}` / `{task.fields[...]}`), the bar, done/total, each of
    `fields` as a text column, elapsed and remaining time."""
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), *(TextColumn(f) for f in fields),
               TimeElapsedColumn(), TimeRemainingColumn())
    return Progress(*columns, disable=not enabled)
