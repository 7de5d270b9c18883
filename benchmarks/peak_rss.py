"""Peak resident memory, re-processed prompt share and seconds per question of `hoprag eval`, per method.

Each method runs in a process of its own (so each peak is that method's), with an empty response cache.
`--hoprag` and `--pythonpath` point at another checkout to measure an earlier commit in the same run,
for example a git worktree at the commit before a change:

    python benchmarks/peak_rss.py --methods rag resp renact --limit 2 --out runs/rss
    python benchmarks/peak_rss.py --methods resp --limit 2 --out runs/rss-before --pythonpath ../before
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HOTPOT = "hotpotqa:../shared/data/hotpotqa/hotpot_dev_distractor_hard_100.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", required=True)
    parser.add_argument("--dataset", default=HOTPOT)
    parser.add_argument("--index", default="hotpot-hard")
    parser.add_argument("--preset", default="small")
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--hoprag", default=str(Path(sys.executable).with_name("hoprag")))
    parser.add_argument("--pythonpath", default="", help="import hoprag from this checkout instead")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more `hoprag eval` options")
    args = parser.parse_args()
    env = dict(os.environ, **({"PYTHONPATH": args.pythonpath} if args.pythonpath else {}))
    rows = []
    for method in args.methods:
        out = args.out / method
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        command = [args.hoprag, "eval", "--method", method, "--dataset", args.dataset, "--index", args.index,
                   "--limit", str(args.limit), "--preset", args.preset, "--out", str(out), *args.extra]
        started = time.time()
        with (out / "output.log").open("w") as log:
            process = subprocess.Popen(command, env={**env, "HOPRAG_LLM_CACHE": str(out / "llm-cache.sqlite")},
                                       stdout=log, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(process.pid, 0)
        seconds = time.time() - started
        summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").is_file() else {}
        row = {"method": method, "exit": os.waitstatus_to_exitcode(status), "peak_rss_mb": round(usage.ru_maxrss / 1024),
               "reprocessed_prompt_share": summary.get("reprocessed_prompt_share"), "f1": summary.get("f1"),
               "s_per_question": summary.get("avg_seconds"), "wall_s": round(seconds, 1),
               "tokens_per_question": summary.get("total_tokens_per_question")}
        if row["exit"]:
            row["error"] = (out / "output.log").read_text(errors="replace").strip().splitlines()[-1:]
        rows.append(row)
        print(json.dumps(row), flush=True)
    (args.out / "peak_rss.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
