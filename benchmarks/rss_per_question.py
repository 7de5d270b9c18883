"""`hoprag eval ...` with one line per question of the process's resident memory: VmRSS when the question ends and
the high-water mark so far. `--trim-per-question` hands the freed heap back (glibc's malloc_trim) after each question
too and prints VmRSS before and after it. Run it with PYTHONPATH at another checkout to measure an earlier commit:

    HOPRAG_LLM_CACHE=runs/rss/cache.sqlite python benchmarks/rss_per_question.py eval --method renact --preset small \
        --dataset 2wiki:../shared/data/2wikimultihopqa/2wiki_dev_82.json --index auto --limit 8 --out runs/rss/run
    HOPRAG_LLM_CACHE=runs/rss-before-trim/cache.sqlite PYTHONPATH=../before python benchmarks/rss_per_question.py \
        --trim-per-question eval ... --out runs/rss-before-trim/run
"""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Callable
from typing import Any

from build_scale import rss_mb  # benchmarks/, this script's folder

import hoprag.eval.runner as runner
from hoprag.cli import main

try:
    from hoprag.memory import release_freed_memory
except ImportError:  # builds before 11b49ca keep it with the index builds
    from hoprag.retrievers.index import release_freed_memory


def probed(evaluate_one: Callable[..., dict[str, Any]], trim: bool) -> Callable[..., dict[str, Any]]:
    def evaluate_and_report(*args: Any, **kwargs: Any) -> dict[str, Any]:
        record = evaluate_one(*args, **kwargs)
        line = f"question {record['id']}: rss {rss_mb(os.getpid()):.0f} MB"
        if trim:
            release_freed_memory()
            line += f", after trim {rss_mb(os.getpid()):.0f} MB"
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"{line}, peak {peak} MB", file=sys.stderr, flush=True)
        return record

    return evaluate_and_report


if __name__ == "__main__":
    arguments = sys.argv[1:]
    trim = "--trim-per-question" in arguments
    runner.evaluate_one = probed(runner.evaluate_one, trim)
    sys.argv = ["hoprag", *(a for a in arguments if a != "--trim-per-question")]
    main()
