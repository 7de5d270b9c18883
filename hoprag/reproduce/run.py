"""`hoprag reproduce TABLE`: run every missing cell of a paper's table through `hoprag eval`'s runner.

One run folder per (dataset, method, preset) under the output folder, `OUT/DATASET/METHOD-PRESET`: rows that
name the same method and preset (the same method under two of the paper's models) share one run, since hoprag
runs them on the one model it is given. A rerun continues each run where it stopped (the runner resumes from
its results.jsonl), so a finished run makes no model call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hoprag.context import Context
from hoprag.errors import (
    EndpointUnavailableError,
    HopragError,
    RetrievalUnavailableError,
    RunUnavailableError,
)
from hoprag.jsonfile import read_json
from hoprag.reproduce.tables import Dataset, Row, Table, row_status

DATA_ENV = "HOPRAG_DATA"
FLASHRAG_COLLECTION = "FlashRAG's dataset collection (Hugging Face RUC-NLPIR/FlashRAG_datasets)"
# FlashRAG's convention where the paper states no question count: the first 1000 of the split.
DEFAULT_QUESTIONS = 1000
# Where the table names no split: FlashRAG's own choice, the test set where there is one, else dev.
FLASHRAG_SPLITS = ("test", "dev")
DEFAULT_OUT = Path("runs") / "reproduce"
WIKI18_HINT = ("give --index NAME (e.g. FlashRAG's wiki18 index, registered with hoprag index add) or --retriever "
               "http://HOST:PORT/retrieve")


@dataclass(frozen=True)
class DataSource:
    """Where a table's dataset lies in a data folder: FlashRAG's collection (DIR/NAME/SPLIT.jsonl), or hoprag's
    evaluation data layout (DIR/PATH, read as KIND); where to get it."""

    flashrag: str | None
    files: tuple[tuple[str, str], ...] = ()  # (loader kind, path in the data folder), the first present wins
    where: str = FLASHRAG_COLLECTION


# Table dataset ids -> files. HotpotQA: the first questions of the dev set, distractor setting (FlashRAG's
# hotpotqa/dev.jsonl is that set, in that order; hoprag's evaluation data keeps its first 100), never the
# level-"hard" selection, which no table used.
DATA_SOURCES: dict[str, DataSource] = {
    "hotpotqa": DataSource("hotpotqa", (("hotpotqa", "hotpotqa/hotpot_dev_distractor_first100_hf.json"),)),
    "2wiki": DataSource("2wikimultihopqa", (("2wiki", "2wikimultihopqa/2wiki_dev_82.json"),)),
    "musique": DataSource("musique", (("musique", "musique/musique_ans_dev_100.jsonl"),)),
    "nq": DataSource("nq", (("nq", "nq_open/NQ-open.dev.jsonl"),)),
    "triviaqa": DataSource("triviaqa"),
    "popqa": DataSource("popqa"),
    "webq": DataSource("web_questions"),
    "bamboogle": DataSource("bamboogle"),
    "fanoutqa": DataSource(None, (("fanoutqa", "fanoutqa/fanout-final-dev.json"),),
                           "FanOutQA's release (github.com/zhudotexe/fanoutqa, fanout-final-dev.json)"),
    "frames": DataSource(None, (("frames", "frames/test.tsv"),), "Hugging Face google/frames-benchmark (test.tsv)"),
    "multihop-rag": DataSource(None, (("jsonl", "multihop-rag/test.jsonl"),),
                               "github.com/yixuantt/MultiHop-RAG, as one {question, answers} object a line"),
    "iirc": DataSource(None, (("jsonl", "iirc/dev.jsonl"),),
                       "IIRC's site (allenai.org/data/iirc), as one {question, answers} object a line"),
}


@dataclass(frozen=True)
class RunKey:
    """One run of a table: a dataset, a method and the preset it runs with."""

    dataset: str
    method: str
    preset: str

    def folder(self, out: Path) -> Path:
        return out / self.dataset / f"{self.method}-{self.preset}"


@dataclass(frozen=True)
class DatasetFile:
    spec: str  # KIND:PATH, as hoprag eval takes it
    layout: str  # which layout of the data folder it was found in
    questions: int  # how many questions the file holds (after the table's filter)


@dataclass
class Outcome:
    """What a run of a table did: the runs it finished or found finished, and a line for everything it skipped."""

    ran: list[RunKey] = field(default_factory=list)
    finished_before: list[RunKey] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # rows and datasets that did not run, each with why
    failed: list[str] = field(default_factory=list)  # runs that stopped with an error (a rerun retries them)


def row_preset(row: Row, forced: str | None) -> str | None:
    """The preset a row runs with: `--preset`'s where given, else the one the table names."""
    return forced if forced and row.method else row.preset


def status(row: Row, forced: str | None) -> tuple[str, str]:
    """`row_status` of the row as it would run (with a forced preset)."""
    return row_status(replace(row, preset=row_preset(row, forced)))


def pick(value: str | None, valid: list[str], option: str, table: Table) -> list[str]:
    """The comma-separated names of `--datasets` / `--methods` (all of `valid` where not given); an unknown name is
    one line listing the valid ones."""
    if value is None:
        return list(valid)
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in valid]
    if unknown or not names:
        raise HopragError(f"--{option} {value!r}: {table.id} has no {option.removesuffix('s')} "
                          f"{', '.join(unknown) or '(none given)'}; use one or more of: {', '.join(valid)}")
    return names


def check_selection(table: Table, datasets: str | None, methods: str | None) -> None:
    """Fail on an unknown --datasets or --methods name before any work."""
    pick(datasets, [d.id for d in table.datasets], "datasets", table)
    pick(methods, table_methods(table), "methods", table)


def check_preset(preset: str | None, ctx: Context) -> str | None:
    """--preset as every row runs with it: None (each row's own), auto (the one that fits the run's model), or a
    preset."""
    from hoprag.llm import auto_preset
    from hoprag.presets import PRESET_NAMES

    if preset is None:
        return None
    if preset == "auto":
        return auto_preset(ctx)[0]
    if preset not in PRESET_NAMES:
        raise HopragError(f"unknown preset '{preset}'; use auto, {', '.join(PRESET_NAMES)}, or leave it out to run each row "
                          "with the preset its table names")
    return preset


def table_methods(table: Table) -> list[str]:
    return list(dict.fromkeys(row.method for row in table.rows if row.method))


def data_folder(data: Path | None) -> Path | None:
    """--data, else $HOPRAG_DATA, else none; a folder that is not there is one line."""
    from_env = os.environ.get(DATA_ENV, "").strip()
    folder = data if data is not None else Path(from_env).expanduser() if from_env else None
    if folder is not None and not folder.is_dir():
        given = "--data" if data is not None else f"${DATA_ENV}"
        raise HopragError(f"{given} {folder}: no such folder; give the folder that holds the datasets "
                          "(FlashRAG's dataset collection, or laid out as docs/evaluation.md describes)")
    return folder


def locate_dataset(dataset: Dataset, data: Path | None) -> DatasetFile | str:
    """The file of a table's dataset in the data folder, or the line that says it is not there and where to get it.
    FlashRAG's layout wins where both could match (its file is the set the FlashRAG-run tables used): the table's
    split, else test, else dev; then hoprag's evaluation data file."""
    from hoprag.eval.datasets import load_dataset

    source = DATA_SOURCES.get(dataset.id)
    if source is None:
        return f"{dataset.label} ({dataset.id}): hoprag knows no file for this dataset; skipped"
    expected: list[str] = []
    candidates: list[tuple[str, str]] = []
    if source.flashrag:
        splits = dict.fromkeys(s for s in (dataset.split, *FLASHRAG_SPLITS) if s in FLASHRAG_SPLITS)
        candidates += [("flashrag", f"{source.flashrag}/{split}.jsonl") for split in splits]
        expected.append(f"{source.flashrag}/{next(iter(splits))}.jsonl")
    candidates += list(source.files)
    expected += [path for _, path in source.files]
    if data is not None:
        for kind, relative in candidates:
            path = data / relative
            if not path.is_file():
                continue
            spec = f"{kind}:{path}" + (f"#{dataset.filter}" if dataset.filter and kind == "frames" else "")
            layout = "FlashRAG's dataset collection" if kind == "flashrag" else "hoprag's evaluation data"
            try:
                return DatasetFile(spec, layout, len(load_dataset(spec)))
            except HopragError as error:
                return f"{dataset.label} ({dataset.id}): {error}; skipped"
    where = f"not in {data}" if data is not None else f"no data folder (--data DIR or ${DATA_ENV})"
    return (f"{dataset.label} ({dataset.id}): {where}; expected {' or '.join(expected)} there, from {source.where}; "
            "skipped")


def question_count(dataset: Dataset, file: DatasetFile, limit: int | None) -> int:
    """--limit, else the paper's count, else FlashRAG's first 1000; never more than the file holds."""
    wanted = limit if limit is not None else dataset.questions or DEFAULT_QUESTIONS
    return max(1, min(wanted, file.questions))


def dataset_index(file: DatasetFile, ctx: Context, index: str) -> str:
    """The index a dataset's runs retrieve from, as `hoprag eval` picks it: `auto` builds the closed corpus of a
    file with paragraphs (HotpotQA, 2Wiki, MuSiQue); a retriever that needs no index gets none."""
    from hoprag.eval.runner import CLOSED_CORPUS_KINDS, auto_index
    from hoprag.retrievers.registry import uses_index

    if not uses_index(ctx.retriever, index):
        return "wikipedia" if ctx.retriever == "wikipedia" else (index if index != "auto" else "none")
    if index != "auto":
        return index
    if file.spec.partition(":")[0] not in CLOSED_CORPUS_KINDS:
        raise HopragError(f"its file ({file.layout}) has no paragraphs to build --index auto from; {WIKI18_HINT}")
    return auto_index(file.spec)


def summary_of(folder: Path) -> dict[str, Any] | None:
    """A run folder's summary.json, or None where it has none yet (or one cut by a kill)."""
    summary = read_json(folder / "summary.json")
    return summary if isinstance(summary, dict) else None


def is_finished(folder: Path, questions: int) -> bool:
    summary = summary_of(folder)
    return bool(summary and not summary.get("partial") and summary.get("questions") == questions
                and not summary.get("failures"))


def skipped_rows(table: Table, rows: list[Row], forced: str | None) -> list[str]:
    """One line per row that cannot run now: not implementable, or naming a method or preset hoprag does not have."""
    lines = []
    for row in rows:
        state, why = status(row, forced)
        if state != "runnable":
            lines.append(f"{row.name}: {state}: {why}; skipped")
    return lines


def reproduce_table(table: Table, ctx: Context, out: Path, *, data: Path | None, index: str = "auto",
                    limit: int | None = None, datasets: str | None = None, methods: str | None = None,
                    preset: str | None = None, concurrency: int = 1, judge_spec: str | None = None,
                    progress: bool = True, say: Callable[[str], None] = print) -> Outcome:
    """Run every runnable row of `table` on each of its datasets (or those `datasets` / `methods` name, comma
    separated) into `out`; `say` gets one line per row or dataset skipped and per run done."""
    from hoprag.eval.runner import run_eval

    chosen_datasets = pick(datasets, [d.id for d in table.datasets], "datasets", table)
    chosen_methods = pick(methods, table_methods(table), "methods", table)
    if limit is not None and limit < 1:
        raise HopragError(f"--limit must be at least 1, got {limit}")
    rows = [row for row in table.rows if row.method in chosen_methods or (methods is None and row.method is None)]
    outcome = Outcome(skipped=skipped_rows(table, rows, preset))
    for line in outcome.skipped:
        say(line)
    keys = list(dict.fromkeys((row.method, row_preset(row, preset)) for row in rows
                              if status(row, preset)[0] == "runnable"))
    for dataset in (d for d in table.datasets if d.id in chosen_datasets):
        if not keys:
            break
        file = locate_dataset(dataset, data)
        if isinstance(file, str):
            outcome.skipped.append(file)
            say(file)
            continue
        try:
            index_name = dataset_index(file, ctx, index)
        except HopragError as error:
            line = f"{dataset.label} ({dataset.id}): {error}; skipped"
            outcome.skipped.append(line)
            say(line)
            continue
        questions = question_count(dataset, file, limit)
        for method, row_preset_name in keys:
            key = RunKey(dataset.id, str(method), str(row_preset_name))
            folder = key.folder(out)
            finished = is_finished(folder, questions)
            run_ctx = ctx.with_options(preset=key.preset, index=index_name)
            try:
                summary = run_eval(key.method, file.spec, folder, run_ctx, limit=questions, concurrency=concurrency,
                                   progress=progress, judge_spec=judge_spec)
            except (RetrievalUnavailableError, EndpointUnavailableError):
                raise  # the index or the model is gone for every run: stop; a rerun resumes
            except RunUnavailableError as error:  # this run needs what is not here (weights, log-probabilities)
                line = f"{dataset.label} {key.method} ({key.preset}): {error}; skipped"
                outcome.skipped.append(line)
                say(line)
                continue
            except HopragError as error:
                line = f"{dataset.label} {key.method} ({key.preset}): {error}"
                outcome.failed.append(line)
                say(line)
                continue
            (outcome.finished_before if finished else outcome.ran).append(key)
            how = "finished earlier" if finished else "done"
            say(f"{dataset.label} {key.method} ({key.preset}): {how}, {summary.get('questions')} questions "
                f"({file.layout}), {folder}")
    return outcome
