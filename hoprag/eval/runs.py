"""Reading finished or running eval folders (summary.json, results.jsonl, seed folders): shared by the runner, which
resumes and merges runs, and the reports, which compare them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hoprag.errors import HopragError


def read_summary(file: Path) -> dict[str, Any]:
    """A summary.json's content; HopragError (one line) where it cannot be read or is not the summary hoprag eval
    writes (an object with the run's "config" object and its count of "questions")."""
    try:
        summary = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HopragError(f"{file} is unreadable ({error}); rerun its hoprag eval command to rewrite it") from None
    if not isinstance(summary, dict):
        problem = f"it holds a JSON {type(summary).__name__}, not an object"
    elif not isinstance(summary.get("config"), dict):
        problem = 'no "config" object' if "config" not in summary else '"config" is not an object'
    elif not isinstance(summary.get("questions"), int) or isinstance(summary.get("questions"), bool):
        problem = 'no "questions" count'
    else:
        return summary
    raise HopragError(f"{file} is not a hoprag eval summary ({problem}); give the --out folder of a hoprag eval run, "
                      "or rerun its hoprag eval command to rewrite it")


def load_run(path: Path) -> dict[str, Any]:
    summary = path / "summary.json"
    if not path.is_dir():
        raise HopragError(f"{path} is not a folder; give the --out folder of a hoprag eval run")
    if not summary.is_file():
        raise HopragError(f"{path} has no summary.json; is it an output folder of hoprag eval?")
    return read_summary(summary)


def read_records(path: Path) -> dict[str, dict[str, Any]]:
    """The records of a run folder's results.jsonl by question id (a rerun's record of a question replaces the
    earlier one, as a resumed run reads them); {} where it has none."""
    file = path / "results.jsonl"
    if not file.is_file():
        return {}
    records: dict[str, dict[str, Any]] = {}
    for line in file.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a kill
        if isinstance(record, dict) and "id" in record and isinstance(record.get("metrics"), dict):
            records[str(record["id"])] = record
    return records


def seed_folders(path: Path, summary: dict[str, Any]) -> list[tuple[str, Path]]:
    """Where a run's records are, as (name, folder): each seed's folder for a multi-seed run (`hoprag eval --seeds N`,
    or seeds merged by `hoprag merge-seeds`, whose folders may lie elsewhere), else the run's own folder."""
    seed_runs = (summary.get("config") or {}).get("seed_runs") or {}  # merged: where each seed's run is
    if seed_runs:
        return [(f"{path.name}/{name}", path / where) for name, where in seed_runs.items()]
    seeds = [path / f"seed-{seed}" for seed in summary.get("seeds") or []]
    if seeds and all(seed.is_dir() for seed in seeds):
        return [(f"{path.name}/{seed.name}", seed) for seed in seeds]
    return [(path.name, path)]
