"""What the embedded runtime's malloc_trim after every call costs: 12 real calls of alternating roles (about 900
prompt tokens each, the roles' prefixes reused), each trim timed.

    python benchmarks/trim_cost.py
"""

from __future__ import annotations

import time

from hoprag import llama_local, memory
from hoprag.context import Context
from hoprag.llm import call_llm

FACTS = " ".join(f"River {i} flows through town {i * 7} and has {i * 3} bridges." for i in range(60))


def main() -> None:
    trims: list[float] = []
    trim = memory.release_freed_memory

    def timed_trim() -> None:
        started = time.perf_counter()
        trim()
        trims.append(time.perf_counter() - started)

    llama_local.release_freed_memory = timed_trim
    ctx = Context(llm="local:qwen2.5-coder-1.5b", temperature=0.0, max_tokens=8)
    started = time.perf_counter()
    for n in range(12):
        role = ("reasoner", "notes", "notes", "generator")[n % 4]
        call_llm(role, FACTS + f"\nQuestion {n}: how many bridges does river {n} have?", ctx)
    total = time.perf_counter() - started
    print(f"calls {len(trims)} | trim ms: mean {1000 * sum(trims) / len(trims):.2f}, max {1000 * max(trims):.2f} | "
          f"share of the calls' time {100 * sum(trims) / total:.3f}%")


if __name__ == "__main__":
    main()
