"""Markdown table of `hoprag eval` runs with the columns the preset benchmarks report.

Usage: python benchmarks/preset_table.py runs/presets/hotpot-*   (run folders with summary.json)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def row(folder: Path) -> str:
    summary = json.loads((folder / "summary.json").read_text())
    config = summary.get("config", {})
    roles = summary.get("tokens_per_question") or {}
    tokens = ", ".join(f"{r} {v['input_tokens']:.0f}/{v['output_tokens']:.0f}" for r, v in roles.items())
    ended = ", ".join(f"{k} {v}" for k, v in (summary.get("finished_by") or {}).items())

    def cell(key: str) -> str:
        value = summary.get(key)
        return "n/a" if value is None else f"{value:g}"

    dataset = Path(str(config.get("dataset", "")).partition(":")[2]).name
    extra = f", retrieval rate {summary['flare_retrieval_rate']:g}%" if "flare_retrieval_rate" in summary else ""
    return (f"| {config.get('method')} | {config.get('preset')} | {dataset} | {summary['questions']} | {cell('em')} | "
            f"{cell('f1')} | {cell('cover_em')} | {cell('avg_steps')} | {cell('finish_rate')} ({ended}) | "
            f"{cell('invalid_output_rate')} | {tokens}{extra} | {cell('avg_seconds')} |")


def main(folders: list[str]) -> None:
    print("| method | preset | dataset | n | EM | F1 | cover-EM | steps | finish rate % (ended by) | invalid % | "
          "tokens in/out per question by role | s/question |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for folder in folders:
        path = Path(folder)
        if (path / "summary.json").is_file():
            print(row(path))


if __name__ == "__main__":
    main(sys.argv[1:])
