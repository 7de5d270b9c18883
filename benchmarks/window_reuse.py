"""Prompt tokens the reasoner re-reads under each window policy, replayed from finished ReAct-family runs.

Usage: python benchmarks/window_reuse.py RUN_DIR [--headroom 0 0.25 0.5] [--min-steps 10]

For every question of RUN_DIR/results.jsonl, each reasoner prompt of the recorded trajectory is rebuilt with
`fit_prompt` under the run's own options (RUN_DIR/summary.json's config: method, preset, window, token budget)
and each `window_headroom`, formatted with the embedded model's chat template and tokenized
with its tokenizer. llama.cpp reuses the KV cache for the longest common prefix of a prompt with the tokens
it holds (the previous reasoner prompt and its reply), so the tokens it evaluates are the prompt minus that
prefix. No model call runs: the trajectories stay the recorded ones, and the figure isolates the window
policy (under another policy the sampled model would have seen other prompts and gone its own way).
Runs with `reproducible` reuse only whole aligned blocks, which this count does not model: they are refused.
`measured` is the run's own evaluated count (headroom 0, the policy before `window_headroom`), to check the
replay against. Only calls of the main loop are counted (no resampled repeats, no synthesis at the cap).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields, replace
from pathlib import Path

from hoprag.context import Context
from hoprag.graphs import method_context
from hoprag.llm import chat_model, resolve_spec
from hoprag.nodes.reasoner import fit_prompt


def common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--headroom", type=float, nargs="+", default=[0.0, 0.25, 0.5])
    parser.add_argument("--min-steps", type=int, default=10, help="only questions with at least this many steps")
    args = parser.parse_args()
    summary = args.run_dir / "summary.json"
    if not summary.is_file() or not (args.run_dir / "results.jsonl").is_file():
        sys.exit(f"error: {args.run_dir} holds no finished hoprag eval run (summary.json and results.jsonl)")
    config = json.loads(summary.read_text())["config"]
    if config.get("reproducible"):
        sys.exit("error: a --reproducible run reuses the KV cache only in aligned blocks, which this replay does not model")

    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    known = {f.name for f in fields(Context)} - {"window_headroom"}
    recorded = {k: v for k, v in config.items() if k in known and not k.endswith("llm") and v is not None}
    base = method_context(config["method"], Context(**recorded))
    spec = resolve_spec("reasoner", base)
    llama = chat_model(spec, "reasoner", base).client  # type: ignore[attr-defined]
    template = Jinja2ChatFormatter(llama.metadata["tokenizer.chat_template"], eos_token="<|im_end|>", bos_token="")

    def tokens(messages: list) -> list[int]:
        chat = [{"role": "assistant" if m.type == "ai" else "user", "content": str(m.content)} for m in messages]
        return llama.tokenize(template(messages=chat).prompt.encode("utf-8"), add_bos=False, special=True)

    rows = [json.loads(line) for line in (args.run_dir / "results.jsonl").open()]
    rows = list({r["id"]: r for r in rows}.values())
    totals = {h: [0, 0] for h in args.headroom}
    measured = [0, 0]
    for row in rows:
        trajectory = row.get("trajectory") or []
        if len(trajectory) < args.min_steps:
            continue
        usage = row["usage"]["reasoner"]
        measured[0] += usage.get("evaluated_tokens", 0)
        measured[1] += usage["input_tokens"]
        line = [f"{row['id']} {len(trajectory)} steps: measured {usage.get('evaluated_tokens')}/{usage['input_tokens']}"]
        for headroom in args.headroom:
            ctx = replace(base, window_headroom=headroom)
            held: list[int] = []
            dropped = evaluated = prompt_total = 0
            for number in range(len(trajectory)):
                if trajectory[number].get("question_first"):  # a step recorded as question_first made no reasoner call
                    continue
                messages, dropped = fit_prompt(row["question"], trajectory[:number], ctx, dropped_before=dropped,
                                               headroom=headroom)
                prompt = tokens(messages)
                reused = min(common_prefix(held, prompt), len(prompt) - 1)
                evaluated += len(prompt) - reused
                prompt_total += len(prompt)
                reply = llama.tokenize(str(trajectory[number].get("raw", "")).encode("utf-8"), add_bos=False,
                                       special=True)
                held = prompt + reply
            totals[headroom][0] += evaluated
            totals[headroom][1] += prompt_total
            line.append(f"headroom {headroom}: {evaluated}/{prompt_total}")
        print("; ".join(line), flush=True)
    print(f"\nmeasured (the run): evaluated {measured[0]} of {measured[1]} prompt tokens "
          f"({100 * measured[0] / max(1, measured[1]):.1f}%)")
    for headroom, (evaluated, prompt_total) in totals.items():
        print(f"replayed, window_headroom {headroom}: evaluated {evaluated} of {prompt_total} prompt tokens "
              f"({100 * evaluated / max(1, prompt_total):.1f}%)")


if __name__ == "__main__":
    main()
