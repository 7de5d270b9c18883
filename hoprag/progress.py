"""One progress bar for every long command (eval, build-data, scorer sampling and training)."""

from __future__ import annotations

import time
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class LoggedProgress(Progress):
    """A rich progress bar that, when its console is not a terminal (a log file, CI, `nohup`), prints a plain line
    when a task moves on (at most one per `every` seconds, and the last): rich alone draws such a bar once, at the
    end, so an hours-long evaluation would show nothing until it finished."""

    def __init__(self, *columns: Any, label: str, fields: tuple[str, ...], every: float = 10.0, **kwargs: Any) -> None:
        super().__init__(*columns, **kwargs)
        self._label, self._fields, self._every = label, fields, every
        self._logged: dict[TaskID, float] = {}

    def _log(self, task_id: TaskID) -> None:
        if self.disable or self.console.is_terminal or self.console.is_jupyter:  # those draw the live bar
            return
        task = self._tasks[task_id]
        now = time.monotonic()
        # At most one line per `every` seconds a task (a training loop steps each second), and always the last.
        if now - self._logged.get(task_id, -self._every) < self._every and not task.finished:
            return
        self._logged[task_id] = now
        text = " ".join(part.format(task=task) for part in (self._label, *self._fields))
        total = f"/{int(task.total)}" if task.total is not None else ""
        elapsed = time.strftime("%H:%M:%S", time.gmtime(task.elapsed or 0))
        self.console.print(f"{text} {int(task.completed)}{total} elapsed {elapsed}", highlight=False, soft_wrap=True)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._log(task_id)

    def update(self, task_id: TaskID, *args: Any, **kwargs: Any) -> None:
        moved = kwargs.get("advance") or kwargs.get("completed") is not None
        super().update(task_id, *args, **kwargs)
        if moved:
            self._log(task_id)


def progress_bar(label: str, *fields: str, enabled: bool = True) -> Progress:
    """`label` (may use `{task.description}` / `{task.fields[...]}`), the bar, done/total, each of
    `fields` as a text column, elapsed and remaining time. Off a terminal: one line per step instead."""
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), *(TextColumn(f) for f in fields),
               TimeElapsedColumn(), TimeRemainingColumn())
    return LoggedProgress(*columns, label=label, fields=fields, disable=not enabled)
