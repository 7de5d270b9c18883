"""Markdown table of `hoprag eval` runs with the columns the preset benchmarks report.

Usage: python benchmarks/preset_table.py [--prompt-tps P --gen-tps G] runs/presets/hotpot-*   (run folders)

A folder of `hoprag eval --seeds N` (SEEDS=N in presets.sh) is one row: EM, F1 and cover-EM as the mean and
the sample standard deviation over its seeds, every other column the mean over the seeds' own summaries
(the ended-by counts summed).

With the embedded model's throughput (prompt and generation tokens/s, from `benchmarks/llm_throughput.py`
in the same session), the table adds each run's LLM floor, prompt tokens / P + generated tokens / G a
question, and the ratio of its seconds to that floor (issue 13's target: at most 1.15).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def floor_seconds(summary: dict, prompt_tps: float, gen_tps: float) -> float:
    """Seconds a question would take inside the model alone at the given throughput, every prompt token evaluated."""
    roles = (summary.get("tokens_per_question") or {}).values()
    return sum(r["input_tokens"] / prompt_tps + r["output_tokens"] / gen_tps for r in roles)


SPREAD_COLUMNS = ("em", "f1", "cover_em")


def load(folder: Path) -> dict:
    """The run's summary; for a multi-seed run, its seeds' summaries merged (means, ended-by counts summed)."""
    summary = json.loads((folder / "summary.json").read_text())
    seeds = [folder / f"seed-{seed}" / "summary.json" for seed in summary.get("seeds", [])]
    if not seeds or not all(path.is_file() for path in seeds):
        return summary
    runs = [json.loads(path.read_text()) for path in seeds]
    merged = dict(runs[0])
    for key, value in runs[0].items():
        values = [r.get(key) for r in runs]
        if isinstance(value, int | float) and all(isinstance(v, int | float) for v in values):
            merged[key] = round(sum(values) / len(values), 2)
    roles = {role for r in runs for role in (r.get("tokens_per_question") or {})}
    merged["tokens_per_question"] = {
        role: {field: sum((r.get("tokens_per_question") or {}).get(role, {}).get(field, 0) for r in runs) / len(runs)
               for field in ("input_tokens", "output_tokens")} for role in sorted(roles)}
    ended: dict[str, int] = {}
    for r in runs:
        for how, count in (r.get("finished_by") or {}).items():
            ended[how] = ended.get(how, 0) + count
    merged["finished_by"] = ended
    rss = [r["peak_rss_mb"] for r in runs if isinstance(r.get("peak_rss_mb"), int | float)]
    if rss:
        merged["peak_rss_mb"] = max(rss)  # a peak, not a mean
    merged["config"] = summary["config"]
    merged["questions"] = summary["questions"]
    for key in SPREAD_COLUMNS:  # the seeds run's own mean and spread
        if key in summary:
            merged[key] = summary[key]
            merged[f"{key}_spread"] = summary.get(f"{key}_spread")
    return merged


def row(folder: Path, prompt_tps: float | None = None, gen_tps: float | None = None) -> str:
    summary = load(folder)
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
    args = parser.parse_args()
    floor = bool(args.prompt_tps and args.gen_tps)
    print("| method | preset | dataset | n | EM | F1 | cover-EM | steps | finish rate % (ended by) | invalid % | "
          "tokens in/out per question by role | s/question | re-processed prompt % | s / s in LLM | peak RSS MB |"
          + (" LLM floor s | s / floor |" if floor else ""))
    print("|---" * (15 + 2 * floor) + "|")
    for folder in args.folders:
        path = Path(folder)
        if (path / "summary.json").is_file():
            print(row(path, args.prompt_tps, args.gen_tps))


if __name__ == "__main__":
    main()
