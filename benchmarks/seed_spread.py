"""One cell over seeds that ran as separate runs: each seed's row, then the mean and spread over the seeds.

`hoprag eval --seeds N` writes this summary for seeds s, s + 1, ...; on the frozen build a6addbb those share most of
their draws, so its independent seeds ran one `hoprag eval --seed N` each (seeds 0, 10 and 20, or 0, 30 and 60).
`hoprag merge-seeds` merges such runs from their summary.json files, but some committed runs are only records
(benchmarks/partial/) and the table needs F1 against RAG's. This reads their results.jsonl files (the seed comes
from a `seed-N` in the path, as in `<run>@seed-10.results.jsonl` or `<run>/seed-10/results.jsonl`) and merges them
with `seed_spread`, the same code as `--seeds`: EM, F1 and cover-EM as mean ± sample standard deviation, the
ended-by counts summed, the invalid outputs pooled. `--baseline` (standard RAG's results.jsonl on the same questions
and index) adds each seed's and the mean's F1 minus RAG's on the questions they hold.

Under each seed after the first file's, how it parts from that first run: questions whose trajectory (each step's raw
output and observation) or answer differs, and among the questions where neither run drew again for a repeated search
(ReNAct's and ReaRAG's `small` resample then; greedy methods never do), how many still differ. On one machine those
mostly repeat the first run's (without `--reproducible` the KV prefix a question reuses can still move a token), so
many differences there point to another machine or build. Records that name their machine (`machine`, from 8d2813e
on) are counted by machine, with a warning where the seeds do not all name one. Where the seeds hold different questions
(one stopped part-way), a line after the mean gives each seed's F1 and their mean ± spread over only the questions
every seed holds, with F1 - RAG on those.

    python benchmarks/seed_spread.py benchmarks/partial/a6addbb/2wiki-furepa-small@seed-{0,10,20}.results.jsonl \
        --baseline benchmarks/partial/a6addbb/2wiki-rag-small.results.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.partial_row import better_worse, read_records, run_script  # noqa: E402
from benchmarks.preset_table import f1_against, f1_by_question  # noqa: E402
from hoprag.eval.metrics import normalize_answer  # noqa: E402
from hoprag.eval.runner import UNKNOWN_MACHINE, aggregate, seed_spread  # noqa: E402


def seed_in(path: Path) -> int | None:
    """The N of the last `seed-N` in the path, None where it has none."""
    found = re.findall(r"seed-(\d+)", str(path))
    return int(found[-1]) if found else None


def same_answers(runs: list[list[dict]]) -> int:
    """How many questions get the same answer in every run (as the metrics compare them: normalized)."""
    by_question = [{r["id"]: normalize_answer(r.get("prediction") or "") for r in records} for records in runs]
    shared = set.intersection(*(set(answers) for answers in by_question))
    return sum(len({answers[q] for answers in by_question}) == 1 for q in shared)


def trajectory(record: dict) -> str:
    """What a question's run did, step by step: each step's raw output and its observation."""
    return json.dumps([(step.get("raw"), step.get("observation")) for step in record.get("trajectory") or []])


def draws(record: dict) -> int:
    """How many times the question's run sampled again after a repeated search."""
    return sum(step.get("resampled") or 0 for step in record.get("trajectory") or [])


def against_first(first_seed: int, first: list[dict], other: list[dict]) -> str:
    """How `other`'s run parts from `first`'s (seed `first_seed`) on the questions both hold (the module's text)."""
    first_by_id = {r["id"]: r for r in first}
    pairs = [(first_by_id[r["id"]], r) for r in other if r["id"] in first_by_id]
    moved = [(a, b) for a, b in pairs if trajectory(a) != trajectory(b)]
    answered = [(a, b) for a, b in pairs if normalize_answer(a.get("prediction") or "")
                != normalize_answer(b.get("prediction") or "")]
    f1 = [(a["metrics"]["f1"], b["metrics"]["f1"]) for a, b in answered]
    undrawn = [(a, b) for a, b in pairs if not draws(a) and not draws(b)]
    undrawn_moved = sum(trajectory(a) != trajectory(b) for a, b in undrawn)
    return (f"  against seed {first_seed}: trajectory differs in {len(moved)} of {len(pairs)}, answer in {len(answered)} "
            f"({sum(b > a for a, b in f1)} better, {sum(b < a for a, b in f1)} worse); this seed resampled in "
            f"{sum(draws(b) > 0 for _, b in pairs)} questions ({sum(draws(b) for _, b in pairs)} draws); of the "
            f"{len(undrawn)} resampled in neither, {undrawn_moved} {'differs' if undrawn_moved == 1 else 'differ'}")


def pooled_against(records: dict[int, list[dict]], baseline_by_question: dict[str, float]
                   ) -> tuple[float, int, float] | None:
    """F1 - RAG of the seeds' mean: a question's F1 is the mean over the seeds that hold it, so over full runs this is
    the mean's F1 - RAG (`f1_against`'s difference, shared count and RAG's F1; None where RAG holds none)."""
    return f1_against(f1_by_question([r for seed_records in records.values() for r in seed_records]),
                      baseline_by_question)


def on_shared_questions(records: dict[int, list[dict]], shared: set[str], baseline_by_question: dict[str, float]) -> str:
    """Each seed's F1 and their mean ± spread over only the questions every seed holds, and F1 - RAG on those. While
    one seed is part-way, the mean over seeds averages them over different questions; this compares them like for
    like."""
    kept = {seed: aggregate([r for r in seed_records if r["id"] in shared]) for seed, seed_records in records.items()}
    spread = seed_spread(kept)
    line = (f"on the {len(shared)} questions every seed holds: F1 "
            + ", ".join(f"seed {seed} {summary['f1']:.2f}" for seed, summary in kept.items())
            + f"; over seeds {spread['f1']:.2f} ± {spread['f1_spread']['std']:.2f}")
    if baseline_by_question:
        against = pooled_against({seed: [r for r in rs if r["id"] in shared] for seed, rs in records.items()},
                                 baseline_by_question)
        if against is None:
            line += " | RAG holds none of them"
        else:
            difference, held, rag_f1 = against
            line += f" | F1 - RAG {difference:+.2f}" + (f" on the {held} RAG holds" if held != len(shared) else "")
            line += f" (RAG {rag_f1:.2f})"
    return line


def machines(records: list[dict]) -> Counter[str]:
    """How many records each machine answered; records from before machines were recorded count as unknown."""
    return Counter(record.get("machine") or UNKNOWN_MACHINE for record in records)


def ended_by(counts: dict[str, int]) -> str:
    """`vote 48, cap 2`: how the runs ended."""
    return ", ".join(f"{how} {count}" for how, count in counts.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+", help="each seed's results.jsonl (a `seed-N` in each path)")
    parser.add_argument("--baseline", type=Path, help="standard RAG's results.jsonl on the same questions and index")
    args = parser.parse_args()
    seeds = [seed_in(path) for path in args.results]
    if None in seeds:
        print(f"no seed-N in {args.results[seeds.index(None)]}: name each file <run>@seed-N.results.jsonl or put it "
              "in a seed-N folder", file=sys.stderr)
        return 2
    if len(set(seeds)) < len(seeds):
        print(f"a seed is given twice: {sorted(seeds)}", file=sys.stderr)
        return 2
    records = {seed: read_records(path) for seed, path in zip(seeds, args.results, strict=True)}
    baseline = read_records(args.baseline) if args.baseline else []
    if None in records.values() or baseline is None:
        return 2
    baseline_by_question = f1_by_question(baseline)
    summaries = {seed: aggregate(seed_records) for seed, seed_records in records.items()}
    # aggregate keeps the invalid count and the rate; the pooled rate over the seeds needs the parsed count too
    parsed = {seed: sum(r.get("parsed_outputs") or 0 for r in seed_records) for seed, seed_records in records.items()}
    for seed, summary in summaries.items():
        line = (f"seed {seed}: {summary['questions']} questions | EM {summary['em']:.2f} | F1 {summary['f1']:.2f} | "
                f"cover-EM {summary['cover_em']:.2f}")
        if baseline:
            by_question = f1_by_question(records[seed])
            against = f1_against(by_question, baseline_by_question)
            if against is None:
                print(f"{args.baseline} shares no question with {args.results[seeds.index(seed)]}", file=sys.stderr)
                return 2
            better, worse = better_worse(by_question, baseline_by_question)
            line += f" | F1 - RAG {against[0]:+.2f} (RAG {against[2]:.2f}; {better} better, {worse} worse)"
        print(f"{line} | ended by {ended_by(summary['finished_by'])} | invalid {summary['invalid_outputs']} of "
              f"{parsed[seed]}")
        if seed != seeds[0]:
            print(against_first(seeds[0], records[seeds[0]], records[seed]))
        counts = machines(records[seed])
        if set(counts) != {UNKNOWN_MACHINE}:
            print("  machines: " + "; ".join(f"{m} ({n})" for m, n in counts.items()))
    spread = seed_spread(summaries)
    cells = " | ".join(f"{name} {spread[name]:.2f} ± {spread[f'{name}_spread']['std']:.2f}" for name in
                       ("em", "f1", "cover_em"))
    line = f"over seeds {', '.join(map(str, seeds))}: {cells}"
    if baseline:
        difference, shared, rag_f1 = pooled_against(records, baseline_by_question)
        line += f" | F1 - RAG {difference:+.2f} on the {shared} questions (RAG {rag_f1:.2f})"
    invalid, all_parsed = sum(s["invalid_outputs"] for s in summaries.values()), sum(parsed.values())
    rate = f" ({100 * invalid / all_parsed:.2f}%)" if all_parsed else ""
    print(f"{line} | ended by {ended_by(spread['finished_by'])} | invalid {invalid} of {all_parsed}{rate} | "
          f"same answer in every seed {same_answers(list(records.values()))}")
    print(f"seconds a question: {statistics.fmean(s['avg_seconds'] for s in summaries.values()):.1f} on the mean")
    held = [{r["id"] for r in seed_records} for seed_records in records.values()]
    shared = set.intersection(*held)
    if not shared:
        print("the seeds share no question: no like-for-like line")
    elif any(ids != shared for ids in held):
        print(on_shared_questions(records, shared, baseline_by_question))
    named = {m for seed_records in records.values() for m in machines(seed_records)}
    if len(named) > 1:
        print(f"warning: the seeds' records name {len(named)} machines; part of the spread may be the machines'")
    return 0


if __name__ == "__main__":
    run_script(main)
