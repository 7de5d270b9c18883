"""Markdown table of `hoprag eval` runs with the columns the preset benchmarks report.

Usage: python benchmarks/preset_table.py [--prompt-tps P --gen-tps G] runs/presets/hotpot-*   (run folders)

A folder of `hoprag eval --seeds N` (SEEDS=N in presets.sh) is one row: EM, F1 and cover-EM as the mean and
the sample standard deviation over its seeds; its summary.json holds the other columns merged over the seeds
(means, the ended-by counts summed, the largest peak RSS).

With the embedded model's throughput (prompt and generation tokens/s, from `benchmarks/llm_throughput.py`
in the same session), the table adds each run's LLM floor, prompt tokens / P + generated tokens / G a
question, and the ratio of its seconds to that floor (issue 13's target: at most 1.15).

With `--baseline FOLDER` (standard RAG's run on the same questions and index), the table adds each run's F1 minus
the baseline's and the median seconds a question (from its results.jsonl), for issue 13's targets. Where both folders
hold records, the difference is over the questions they share, so a run stopped part-way is compared with RAG on its
own questions, not with RAG's mean over all of them: the cell then says "on the same N".

A folder without summary.json (a run stopped part-way, or a seed's folder) is read from its records, aggregated with
this checkout's `aggregate`; its method and preset come from its name, `<dataset>-<method>-<preset>`.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hoprag.eval.runner import aggregate  # noqa: E402


def floor_seconds(summary: dict, prompt_tps: float, gen_tps: float) -> float:
    """Seconds a question would take inside the model alone at the given throughput, every prompt token evaluated.

    The tokens are those the model served; where a summary predates that count, those of every call, the response
    cache's included (which overstates the floor of a method that repeats a prompt within a question, as ReSP does)."""
    if "model_input_tokens_per_question" in summary:
        return summary["model_input_tokens_per_question"] / prompt_tps + summary["model_output_tokens_per_question"] / gen_tps
    roles = (summary.get("tokens_per_question") or {}).values()
    return sum(r["input_tokens"] / prompt_tps + r["output_tokens"] / gen_tps for r in roles)


def run_config(results: Path) -> dict[str, str]:
    """Method and preset from the run's name: `[open-]<dataset>-<method>-<preset>` (a run folder's or a committed
    file's; `open-` is presets.sh's prefix for a run over the open corpus, CORPUS=open). One seed of a multi-seed run
    (`<run>/seed-N/results.jsonl`, committed as `<run>@seed-N.results.jsonl`) is named by its run."""
    folder = results.parent.parent if re.fullmatch(r"seed-\d+", results.parent.name) else results.parent
    name = folder.name if results.name == "results.jsonl" else results.name.removesuffix(".results.jsonl")
    name = re.sub(r"@seed-\d+$", "", name)
    open_corpus = name.startswith("open-")
    dataset, _, rest = name.removeprefix("open-").partition("-")
    method, _, preset = rest.rpartition("-")
    config = {"method": method, "preset": preset, "dataset": f"partial:{dataset}"}  # the table shows the part after the kind
    return {**config, "index": "open"} if open_corpus else config


def records_summary(records: list[dict], results: Path) -> dict:
    """A summary of a run's records, with the method and preset of its name (`results`: its results.jsonl)."""
    return {**aggregate(records), "config": run_config(results)}


def load_summary(folder: Path, records: list[dict] | None = None) -> dict | None:
    """The run's summary.json, or its records aggregated where it has none (`records`, where the caller has read
    them already); None where it has no records yet."""
    if (folder / "summary.json").is_file():
        return json.loads((folder / "summary.json").read_text())
    records = load_records(folder) if records is None else records
    return records_summary(records, folder / "results.jsonl") if records else None


SPREAD_COLUMNS = ("em", "f1", "cover_em")


class NotResultsError(ValueError):
    """A file given as a results.jsonl that is not JSON lines (a summary.json, a log, a line cut by a killed run)."""


def read_results(results: Path) -> list[dict]:
    """The records of one results.jsonl; NotResultsError names the first line that is not a JSON object."""
    try:
        lines = results.read_text().splitlines()
    except UnicodeDecodeError:
        raise NotResultsError(f"{results} is not a results.jsonl (not text): give a run's results.jsonl") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        if not isinstance(record, dict):
            raise NotResultsError(f"{results} is not a results.jsonl (line {number} is not a JSON object): give a "
                                  "run's results.jsonl")
        records.append(record)
    return records


def load_records(folder: Path) -> list[dict]:
    """Every record under the folder (a multi-seed run's seed folders included)."""
    return [record for results in sorted(folder.rglob("results.jsonl")) for record in read_results(results)]


def f1_by_question(records: list[dict]) -> dict[str, float]:
    """Each question's F1 in percent, the mean over its records where a multi-seed run holds several."""
    scores: dict[str, list[float]] = {}
    for record in records:
        if "id" in record and "metrics" in record:
            scores.setdefault(record["id"], []).append(100 * record["metrics"]["f1"])
    return {qid: statistics.fmean(f1s) for qid, f1s in scores.items()}


def f1_against(run: dict[str, float], baseline: dict[str, float]) -> tuple[float, int, float] | None:
    """The run's F1 minus the baseline's over the questions both hold, how many those are, and the baseline's F1 on
    them; None if they share none. A question's F1 is the mean of its seeds, so a full run's difference is its mean
    minus the baseline's."""
    shared = run.keys() & baseline.keys()
    if not shared:
        return None
    baseline_f1 = statistics.fmean(baseline[q] for q in shared)
    return statistics.fmean(run[q] for q in shared) - baseline_f1, len(shared), baseline_f1


def row(folder: Path, prompt_tps: float | None = None, gen_tps: float | None = None,
        baseline_f1: float | None = None, baseline_by_question: dict[str, float] | None = None) -> str | None:
    """The folder's table row; None for a run with nothing in it yet.

    `baseline_by_question` (the baseline's `f1_by_question`) compares on the questions the run and the baseline share;
    `baseline_f1`, the baseline's mean, is the fallback where either side has no per-question records."""
    records = load_records(folder)
    summary = load_summary(folder, records)
    if summary is None:
        return None
    line = summary_row(summary, prompt_tps, gen_tps)
    if baseline_f1 is None and not baseline_by_question:
        return line
    seconds = [record["seconds"] for record in records]
    median = f"{statistics.median(seconds):.1f}" if seconds else "n/a"
    run_by_question = f1_by_question(records)
    if baseline_by_question and run_by_question:
        against = f1_against(run_by_question, baseline_by_question)
        if against is None:  # another dataset's or index's questions: no mean of either side compares
            return f"{line} n/a (no question shared) | {median} |"
        difference, shared, _ = against
        same = f" on the same {shared}" if shared < max(len(baseline_by_question), len(run_by_question)) else ""
        return f"{line} {difference:+.2f}{same} | {median} |"
    if baseline_f1 is None:
        return f"{line} n/a | {median} |"
    return f"{line} {summary['f1'] - baseline_f1:+.2f} | {median} |"


def summary_row(summary: dict, prompt_tps: float | None = None, gen_tps: float | None = None) -> str:
    """One table row of a run's summary (summary.json, or `aggregate` over its records: benchmarks/partial_row.py)."""
    config = summary.get("config", {})
    roles = summary.get("tokens_per_question") or {}
    tokens = ", ".join(f"{r} {v['input_tokens']:.0f}/{v['output_tokens']:.0f}" for r, v in roles.items())
    ended = ", ".join(f"{k} {v}" for k, v in (summary.get("finished_by") or {}).items())

    def cell(key: str) -> str:
        value = summary.get(key)
        spread = summary.get(f"{key}_spread") if key in SPREAD_COLUMNS else None
        if value is None:
            return "n/a"
        return f"{value:g} ± {spread['std']:g}" if spread else f"{value:g}"

    dataset = Path(str(config.get("dataset", "")).partition(":")[2]).name
    if config.get("index") == "open":
        dataset += " (open corpus)"
    floor = ""
    if prompt_tps and gen_tps:
        seconds = floor_seconds(summary, prompt_tps, gen_tps)
        floor = f" {seconds:.1f} | {summary['avg_seconds'] / seconds:.2f} |" if seconds and summary.get("avg_seconds") else " n/a | n/a |"
    extra = f", retrieval rate {summary['flare_retrieval_rate']:g}%" if "flare_retrieval_rate" in summary else ""
    seeds = f", {len(config['seeds'])} seeds" if config.get("seeds") else ""
    return (f"| {config.get('method')} | {config.get('preset')}{seeds} | {dataset} | {summary['questions']} | {cell('em')} | "
            f"{cell('f1')} | {cell('cover_em')} | {cell('avg_steps')} | {cell('finish_rate')} ({ended}) | "
            f"{cell('invalid_output_rate')} | {tokens}{extra} | {cell('avg_seconds')} | "
            f"{cell('reprocessed_prompt_share')} | {cell('seconds_over_llm')} | {cell('peak_rss_mb')} |{floor}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--prompt-tps", type=float, help="embedded model prompt tokens/s, measured in this session")
    parser.add_argument("--gen-tps", type=float, help="embedded model generation tokens/s, measured in this session")
    parser.add_argument("--baseline", help="run folder of standard RAG on the same questions: adds F1 vs it and median s")
    args = parser.parse_args()
    floor = bool(args.prompt_tps and args.gen_tps)
    baseline_records = load_records(Path(args.baseline)) if args.baseline else []
    baseline = load_summary(Path(args.baseline), baseline_records) if args.baseline else None
    if args.baseline and baseline is None:
        parser.error(f"--baseline {args.baseline}: no summary.json and no records there")
    baseline_f1 = baseline["f1"] if baseline else None
    baseline_by_question = f1_by_question(baseline_records) if args.baseline else None
    print("| method | preset | dataset | n | EM | F1 | cover-EM | steps | finish rate % (ended by) | invalid % | "
          "tokens in/out per question by role | s/question | re-processed prompt % | s / s in LLM | peak RSS MB |"
          + (" LLM floor s | s / floor |" if floor else "") + (" F1 - RAG F1 | median s |" if args.baseline else ""))
    print("|---" * (15 + 2 * floor + 2 * bool(args.baseline)) + "|")
    for folder in args.folders:
        line = row(Path(folder), args.prompt_tps, args.gen_tps, baseline_f1, baseline_by_question)
        if line:  # a run not started yet is no row
            print(line)


if __name__ == "__main__":
    main()
