"""What the embedded runtime's malloc_trim after every call costs: 12 real calls of alternating roles in one thread
(each prompt's token count is printed; the roles' prefixes are reused), each trim timed, after one warm-up call that
loads the model.

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

    ctx = Context(llm="local:qwen2.5-coder-1.5b", temperature=0.0, max_tokens=8)
    call_llm("reasoner", "Name the capital of France in one word.", ctx)  # loads the model, untimed
    llama_local.release_freed_memory = timed_trim
    prompt_tokens = 0
    started = time.perf_counter()
    for n in range(12):
        role = ("reasoner", "notes", "notes", "generator")[n % 4]
        _, record, _ = call_llm(role, FACTS + f"\nQuestion {n}: how many bridges does river {n} have?", ctx)
        prompt_tokens = max(prompt_tokens, record.input_tokens)
    total = time.perf_counter() - started
    print(f"calls {len(trims)} of up to {prompt_tokens} prompt tokens | trim ms: mean {1000 * sum(trims) / len(trims):.2f}, "
          f"max {1000 * max(trims):.2f} | share of the calls' time {100 * sum(trims) / total:.3f}%")


if __name__ == "__main__":
    main()
