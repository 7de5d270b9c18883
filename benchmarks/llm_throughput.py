"""Prompt and generation tokens/s of the embedded models, in process and behind llama_cpp.server.

Usage: python benchmarks/llm_throughput.py [--models qwen2.5-coder-1.5b qwen2.5-coder-0.5b] [--repeats 3]
Prompt speed uses a fresh ~512-token prompt per call (no KV reuse); generation speed uses 128 tokens.
"""

from __future__ import annotations

import argparse
import statistics
import time

from hoprag.context import Context
from hoprag.llm import call_llm, register_fake  # noqa: F401  (registers the layer)

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
         "upsilon phi chi psi omega").split()


def prompt_of(seed: int, words: int = 380) -> str:
    body = " ".join(WORDS[(i * 7 + seed) % len(WORDS)] for i in range(words))
    return f"[{seed}] Continue this list of Greek letters with more of them, in any order:\n{body}"


def measure(spec: str, repeats: int) -> dict[str, float]:
    ctx = Context(llm=spec, max_tokens=128, temperature=0.0)
    call_llm("reasoner", "warm up", ctx, max_tokens=4)
    prompt_rates, gen_rates = [], []
    for i in range(repeats):
        started = time.perf_counter()
        _, record, _ = call_llm("reasoner", prompt_of(100 + i), ctx, max_tokens=1)
        prompt_rates.append(record.input_tokens / (time.perf_counter() - started))
        _, record, _ = call_llm("reasoner", prompt_of(200 + i, 20), ctx, max_tokens=128)
        # Subtract the short prompt's cost using the measured prompt rate.
        gen_seconds = record.seconds - record.input_tokens / prompt_rates[-1]
        gen_rates.append(record.output_tokens / max(gen_seconds, 1e-6))
    return {"prompt_tps": statistics.median(prompt_rates), "gen_tps": statistics.median(gen_rates)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", nargs="+", default=["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"])
    parser.add_argument("--modes", nargs="+", default=["local", "local-server"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| model | runtime | prompt tok/s | generation tok/s |")
    print("|---|---|---|---|")
    for model in args.models:
        for mode in args.modes:
            result = measure(f"{mode}:{model}", args.repeats)
            runtime = "in process" if mode == "local" else "llama_cpp.server + ChatOpenAI"
            print(f"| {model} | {runtime} | {result['prompt_tps']:.0f} | {result['gen_tps']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
