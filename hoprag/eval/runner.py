"""`hoprag eval`: run a method over a dataset, one JSONL line per finished question, resumable."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import resource
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from hoprag.context import METHOD_ROLES, Context
from hoprag.errors import HopragError, RunUnavailableError
from hoprag.eval.datasets import Example, dataset_file_hash, load_dataset, resolve_dataset_spec
from hoprag.eval.judge import JudgeCache, judge
from hoprag.eval.metrics import retrieval_recall, score_prediction
from hoprag.eval.runs import load_run
from hoprag.furepa_scorer import scorer_description
from hoprag.graphs import CLOSED_BOOK, READS_OWN_CORPUS, method_context, method_counters
from hoprag.llm import call_llm, draw_seed, resolve_spec
from hoprag.machine import machine_fingerprint
from hoprag.paths import cache_dir
from hoprag.presets import preset_options
from hoprag.progress import progress_bar
from hoprag.retrievers.retrievers import retrieval_label
from hoprag.run import run_question

CLOSED_CORPUS_KINDS = ("hotpotqa", "musique", "2wiki")
IN_PROCESS_SPECS = ("local:", "fake:")  # models that run in this process: their records name this machine
UNKNOWN_MACHINE = "unknown"
OWN_DECISION = ("finish", "sufficient", "generate", "answer", "vote", "notes", "verified")  # the method's own decision, not a cap


def auto_index(dataset: str) -> str:
    """The closed-corpus index of a dataset file, keyed by its content hash; built on first use."""
    from hoprag.retrievers.index import build_index, list_indexes

    load_dataset(dataset)  # a bad KIND:PATH or file fails with its own message, before an index is built for it
    kind, _, path = dataset.partition(":")
    if kind not in CLOSED_CORPUS_KINDS:
        raise HopragError(f"--index auto needs a dataset with paragraphs ({', '.join(CLOSED_CORPUS_KINDS)}); got {kind}")
    name = f"auto-{kind}-{dataset_file_hash(path.split('#')[0])}"
    if not any(i["name"] == name for i in list_indexes()):
        build_index(name, f"{kind}:{path.split('#')[0]}")
    return name


# Options a resumed run may change: which questions, how they are scheduled, and the response cache.
RESUMABLE_CHANGES = {"limit", "questions", "concurrency", "max_concurrency", "max_retries", "llm_cache"}

QUESTIONS_FORMAT = "N, A-B or A- (1-based, inclusive; A- runs to the end), e.g. 51-100"


def parse_questions(text: str) -> tuple[int, int | None]:
    """`--questions` as (first, last), both 1-based and inclusive, `last` None for "to the end": "51-100", "51-",
    "7". HopragError (one line) for anything else."""
    raw = text.strip()
    first_text, dash, last_text = raw.partition("-")
    try:
        first = int(first_text)
        last = (int(last_text) if last_text.strip() else None) if dash else first
    except ValueError:
        raise HopragError(f"--questions {text!r}: use {QUESTIONS_FORMAT}") from None
    if first < 1:
        raise HopragError(f"--questions {text!r}: questions are numbered from 1; use {QUESTIONS_FORMAT}")
    if last is not None and last < first:
        raise HopragError(f"--questions {text!r}: the range ends before it starts; use {QUESTIONS_FORMAT}")
    return first, last


def questions_text(first: int, last: int | None) -> str:
    """A range as summary.json records it (and `--questions` reads it back): "51-100", "51-" or "7"."""
    return str(first) if last == first else f"{first}-{'' if last is None else last}"


def select_questions(dataset: str, questions: str | None, limit: int | None) -> list[Example]:
    """The dataset's questions a run evaluates: those of the range `questions` (all without one), then the first
    `limit` of them. A range that starts after the dataset's last question is refused."""
    if questions is None:
        examples = load_dataset(dataset, limit=limit)
        if not examples:
            raise HopragError(f"dataset {dataset} holds no questions; give a file with at least one")
        return examples
    first, last = parse_questions(questions)
    stops = [stop for stop in (last, first - 1 + limit if limit is not None else None) if stop is not None]
    examples = load_dataset(dataset, limit=min(stops) if stops else None)
    if len(examples) < first:
        raise HopragError(f"--questions {questions}: the dataset has only {len(examples)} questions")
    return examples[first - 1:]


def dataset_identity(dataset: str) -> str:
    """The dataset as a resumed run compares it: its kind, its content hash and its filter, so that a relative and an
    absolute path to the same file (or a copy of it) are the same dataset."""
    kind, _, location = dataset.partition(":")
    path, sep, filter_text = location.partition("#")
    return f"{kind.strip().lower()}:{dataset_file_hash(Path(path).expanduser())}{sep}{filter_text.strip()}"


def run_options(method: str, dataset: str, ctx: Context) -> dict[str, Any]:
    """What decides a run's answers: the method, the dataset, every context option and each role's model."""
    options = {k: v for k, v in dataclasses.asdict(ctx).items() if not k.endswith("llm")}
    return {"method": method, "dataset": dataset, "dataset_identity": dataset_identity(dataset), **options,
            "models": {role: resolve_spec(role, ctx) for role in METHOD_ROLES}}


def _earlier_config(out: Path) -> dict[str, Any]:
    """The config of the run `out` holds (empty when it holds none, or an unreadable summary)."""
    try:
        config = json.loads((out / "summary.json").read_text()).get("config")
    except (OSError, json.JSONDecodeError, AttributeError):
        return {}
    return config if isinstance(config, dict) else {}


# Options added after runs were first recorded, with the behaviour an earlier run that lacks them had (both
# `paper` behaviours changed when they were added). Other unrecorded options kept their behaviour when unset.
BEFORE_RECORDED = {"truncated_sampling": True, "rearag_greedy_answers": True}


def _differing_options(earlier: dict[str, Any], now: dict[str, Any],
                      ignored: set[str]) -> list[tuple[str, Any, Any]]:
    """The options two runs' configs both record with different values, as (key, earlier's, now's) in now's order.
    Options a config did not record (added in later versions) take the behaviour it had (`BEFORE_RECORDED`) or
    are not compared; where both recorded the dataset's identity (kind, content, filter), the path it was given
    by may differ."""
    earlier, now = ({**{k: v for k, v in BEFORE_RECORDED.items() if k not in c}, **c} if c else c
                    for c in (earlier, now))
    path_free = {"dataset"} if "dataset_identity" in earlier and "dataset_identity" in now else set()
    return [(k, earlier[k], v) for k, v in now.items() if k in earlier and k not in ignored | path_free
            and earlier[k] != v]


def _check_resume(out: Path, earlier: dict[str, Any], options: dict[str, Any]) -> None:
    """Refuse to resume into `out` with other options than the run it holds: its records would be mixed with
    records of another configuration under one summary."""
    differ = _differing_options(earlier, json.loads(json.dumps(options, default=str)), RESUMABLE_CHANGES)
    if differ:
        shown = "; ".join(f"{k} {then!r} there, {now!r} now" for k, then, now in differ[:3])
        raise HopragError(f"{out} holds a run with other options ({shown}); rerun with its options to resume it, "
                          "or give another --out")


def _run_retrieval(method: str, ctx: Context, examples: list[Example], out: Path, earlier: dict[str, Any],
                   resuming: bool) -> str | None:
    """What the run searches, as its record names it (None: closed book). Named when the run starts and then kept,
    so a rebuilt index or another environment does not rename a run's records; questions added to a run that
    searched something else are refused, as other options are."""
    if method in CLOSED_BOOK:
        return None
    if method in READS_OWN_CORPUS and any(e.paragraphs for e in examples):
        return "the question's own paragraphs"
    now = retrieval_label(ctx.index, ctx.retriever)
    recorded = earlier.get("retrieval")
    if not isinstance(recorded, str):  # a new run, or records from before runs named it
        return now
    if resuming and recorded != now:
        raise HopragError(f"{out} holds a run that searched {recorded}; this one would search {now}; rerun it where "
                          "it searches the same to resume it, or give another --out")
    return recorded


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              cwd=Path(__file__).resolve().parent).stdout.strip()
    except Exception:
        return ""


def evaluate_one(method: str, example: Example, ctx: Context, commit: str = "", machine: str = "") -> dict[str, Any]:
    record: dict[str, Any] = {"id": example.id, "question": example.question, "gold": example.answers,
                              "judge_gold": judge_gold(example), "gold_titles": example.supporting_titles,
                              "hops": example.hops, "type": example.type,
                              "git_commit": commit, "machine": machine}
    try:
        result = run_question(method, example.question, ctx, paragraphs=example.paragraphs)
    except RunUnavailableError:  # a retrieval server that is down, weights that are missing: every question needs it
        raise  # the index is gone for every question: stop the run (a rerun resumes) instead of failing them all
    except Exception as error:  # recorded and scored as wrong; the run goes on, and a rerun retries it
        record.update(prediction="", error=f"{type(error).__name__}: {error}",
                      metrics=score_prediction("", example), seconds=0.0)
        return record
    titles = [t for step in result["trajectory"]
              for t in (*step.get("earlier_retrieved_titles", []), *step.get("retrieved_titles", []))]
    metrics = score_prediction(result["answer"], example)
    if example.supporting_titles:  # a closed-book method's recall is n/a (None), not 0
        metrics["retrieval_recall"] = (None if method in CLOSED_BOOK
                                       else retrieval_recall(titles, example.supporting_titles))
    # Peak resident memory of the process so far (the model, indexes, caches): a run's peak is its records' max.
    record["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    record.update(prediction=result["answer"], metrics=metrics, error=None, **{
        k: result[k] for k in ("steps", "turns", "repeated_queries", "dropped_observations", "cut_calls", "cut_tokens",
                               "llm_calls", "parsed_outputs", "invalid_outputs", "invalid_replies", "usage",
                               "answer_usage", "seconds", "finished_by", "answer_reply", "trajectory")
    })
    if counters := method_counters(method, result):  # the method's own counts (Iter-RetGen's rounds, Self-Ask's searches)
        record["counters"] = counters
    return record


def judge_gold(example: Example) -> str:
    """The ground truth the LLM judge sees. Aliases are alternatives ("a | b"); FanOutQA's answer is a
    list or table whose every item is needed, so it is given whole and marked as such."""
    if example.dataset == "fanoutqa" and isinstance(example.raw.get("answer"), list | dict):
        answer = example.raw["answer"]
        items = [f"{k}: {v}" for k, v in answer.items()] if isinstance(answer, dict) else [str(a) for a in answer]
        return "All of the following (every item is required): " + "; ".join(items)
    return " | ".join(example.answers)


JUDGE_ATTEMPTS = 2  # an unreadable verdict is asked again once (sampled), then scored wrong


def judge_record(record: dict[str, Any], judge_ctx: Context, cache: JudgeCache) -> None:
    """Add the LLM judge's decision (the papers' GPT-4 judge prompt) to a finished record, in place.
    A verdict that stays unreadable is scored wrong and counted (`judge_unreadable`), so every record
    is in the judge accuracy's denominator."""
    spec = resolve_spec("judge", judge_ctx)
    gold = record.get("judge_gold") or record["gold"]
    for attempt in range(JUDGE_ATTEMPTS):
        options = judge_ctx if attempt == 0 else judge_ctx.with_options(temperature=0.7, seed=draw_seed(judge_ctx.seed, attempt))
        verdict = judge(record["question"], record.get("prediction") or "", gold,
                        lambda prompt, o=options: call_llm("judge", prompt, o, max_tokens=256)[0], spec, cache)
        if verdict["correct"] is not None:
            break
    unreadable = verdict["correct"] is None
    record["metrics"]["judge"] = 0.0 if unreadable else float(verdict["correct"])
    record["judge"] = {"model": spec, **verdict, "unreadable": unreadable, "attempts": attempt + 1}


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records) or 1
    metric_names = sorted({m for r in records for m in r["metrics"]})
    summary: dict[str, Any] = {"questions": len(records), "failures": sum(1 for r in records if r.get("error"))}
    for name in metric_names:
        values = [r["metrics"].get(name) for r in records if r["metrics"].get(name) is not None]
        summary[name] = round(100 * sum(values) / len(values), 2) if values else None
    for name in ("steps", "repeated_queries", "llm_calls", "seconds"):
        summary[f"avg_{name}"] = round(sum(r.get(name) or 0 for r in records) / n, 3)
    # How runs ended: by the method's own decision (finish, a sufficient verdict, a single-shot answer)
    # or by a cap; and the share of parsed LLM outputs that a parser could not use.
    ended = [r.get("finished_by") or "error" for r in records]
    summary["finished_by"] = {reason: ended.count(reason) for reason in sorted(set(ended))}
    summary["finish_rate"] = round(100 * sum(e in OWN_DECISION for e in ended) / n, 2)
    parsed = sum(r.get("parsed_outputs") or 0 for r in records)
    summary["invalid_outputs"] = sum(r.get("invalid_outputs") or 0 for r in records)
    summary["invalid_output_rate"] = round(100 * summary["invalid_outputs"] / parsed, 2) if parsed else None
    # The method's own counters (rounds, searches, invalid outputs, ...): their total and mean per question.
    counted = sorted({name for r in records for name in r.get("counters") or {}})
    if counted:
        summary["counters"] = {name: {"total": (total := sum((r.get("counters") or {}).get(name, 0) for r in records)),
                                      "mean": round(total / n, 3)} for name in counted}
    # SearChain: which reader verified the chains (DPR, the paper's, or the LLM reader that stands in for it).
    readers = sorted({s["reader"] for r in records for s in r.get("trajectory") or [] if s.get("reader")})
    if readers:
        summary["reader"] = readers[0] if len(readers) == 1 else readers
    # RECOMP: which compressor wrote what the generator read (a checkpoint, or the LLM that stands in for one).
    compressors = sorted({s["compressor"] for r in records for s in r.get("trajectory") or [] if s.get("compressor")})
    if compressors:
        summary["compressor"] = compressors[0] if len(compressors) == 1 else compressors
    # FLARE: the share of look-ahead sentences whose confidence gate fired retrieval. An empty draft is no
    # sentence: it has no tokens to score, so it always passes the gate, and FLARE `paper` runs that looped on
    # empty drafts to the cap read as retrieving on 27% of sentences where it retrieved on every one that had text.
    gates = [s["gate"]["retrieved"] for r in records for s in r.get("trajectory") or []
             if isinstance(s.get("gate"), dict) and s["gate"].get("draft")]
    if gates:
        summary["flare_retrieval_rate"] = round(100 * sum(gates) / len(gates), 2)
    # Questions whose prompts outgrew the window: the ReAct family drops old observations, ReaRAG cuts the middle.
    summary["window_fitted_questions"] = sum(1 for r in records if r.get("dropped_observations") or r.get("cut_calls"))
    if any("judge" in r for r in records):
        summary["judge_unreadable"] = sum(1 for r in records if (r.get("judge") or {}).get("unreadable"))
    # Calls served by the response cache cost no model time: seconds compare only where these do.
    summary["avg_cached_calls"] = round(
        sum(u.get("cached_calls", 0) for r in records for u in (r.get("usage") or {}).values()) / n, 3)
    roles: dict[str, dict[str, float]] = {}
    for r in records:
        for role, usage in (r.get("usage") or {}).items():
            row = roles.setdefault(role, {"input_tokens": 0.0, "output_tokens": 0.0, "calls": 0.0})
            for key in row:
                row[key] += usage[key] / n
    summary["tokens_per_question"] = {role: {k: round(v, 1) for k, v in row.items()} for role, row in roles.items()}
    summary["total_tokens_per_question"] = round(
        sum(row["input_tokens"] + row["output_tokens"] for row in roles.values()), 1)
    # The tokens the model served a question, less those of calls the response cache answered: the LLM floor's.
    # Records from before the usage kept cached tokens apart have no such count; they get none.
    usages = [u for r in records for u in (r.get("usage") or {}).values()]
    if all("cached_input_tokens" in u or not u.get("cached_calls") for u in usages):
        for kind in ("input", "output"):
            summary[f"model_{kind}_tokens_per_question"] = round(
                sum(u[f"{kind}_tokens"] - u.get(f"cached_{kind}_tokens", 0) for u in usages) / n, 1)
    # The embedded model: the share of prompt tokens it evaluated rather than reused from a role's KV cache.
    evaluated = [(u["evaluated_tokens"], u["evaluated_of"]) for u in usages if u.get("evaluated_of")]
    if evaluated:
        summary["reprocessed_prompt_share"] = round(100 * sum(e for e, _ in evaluated) / sum(o for _, o in evaluated), 1)
    # Seconds in the model (calls not served by the cache, less the time they queued for the embedded model)
    # against the wall-clock seconds of the question: what orchestration, retrieval and Python add.
    model_seconds = sum(u["seconds"] - u.get("queued_seconds", 0.0) for u in usages)
    if model_seconds > 0:
        summary["avg_llm_seconds"] = round(model_seconds / n, 3)
        summary["seconds_over_llm"] = round(sum(r.get("seconds") or 0 for r in records) / model_seconds, 3)
    peaks = [r["peak_rss_mb"] for r in records if r.get("peak_rss_mb")]
    if peaks:
        summary["peak_rss_mb"] = max(peaks)
    return summary


def run_eval(method: str, dataset: str, out: Path, ctx: Context, *, limit: int | None = None,
             questions: str | None = None, concurrency: int = 1, progress: bool = True,
             judge_spec: str | None = None) -> dict[str, Any]:
    """Evaluate `method` on `dataset` into `out`; finished questions (results.jsonl, by question id) are skipped.

    `questions` is a 1-based inclusive range of the dataset's questions ("51-100", "51-", "7"); `limit` keeps the
    first N of them. With `judge_spec`, every record gets the LLM judge's decision; records of an earlier run that
    lack one are judged too, so a finished run can be judged later."""
    dataset = resolve_dataset_spec(dataset)  # a flashrag:DIR folder is recorded (and resumed) as its split's file
    if questions is not None:
        questions = questions_text(*parse_questions(questions))  # recorded in one spelling: " 51 - " is "51-"
    examples = select_questions(dataset, questions, limit)
    ctx = method_context(method, ctx)  # the options the method's name implies and its preset's, recorded below
    options, earlier = run_options(method, dataset, ctx), _earlier_config(out)
    _check_resume(out, earlier, options)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    done: dict[str, dict[str, Any]] = {}
    if results_path.exists():
        for number, line in enumerate(results_path.read_text().splitlines(), 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a kill mid-write: that question runs again
            if not isinstance(record, dict) or "id" not in record:
                raise HopragError(f"{results_path} line {number} is not a record of hoprag eval (no id); "
                                  "move the file away or give another --out")
            done[record["id"]] = record
    # A question that failed (an endpoint that kept failing, a crash) is run again; a finished one is kept.
    todo = [e for e in examples if e.id not in done or done[e.id].get("error")]
    retrieval = _run_retrieval(method, ctx, examples, out, earlier if done else {}, resuming=bool(todo))
    if results_path.exists() and results_path.stat().st_size and not results_path.read_bytes().endswith(b"\n"):
        with results_path.open("a") as sink:
            sink.write("\n")  # end the line cut by a kill so the next record starts on its own line
    commit = _git_commit()
    # The decoding machine is this one only for a model run in this process; a served model's is not known here.
    in_process = any(spec.startswith(IN_PROCESS_SPECS) for spec in options["models"].values())
    machine = machine_fingerprint() if in_process else UNKNOWN_MACHINE
    # The evaluation judge reads greedily whatever the method's sampling; it has a role of its own.
    judge_ctx = dataclasses.replace(ctx, judge_llm=judge_spec, temperature=0.0) if judge_spec else None
    judge_one = (functools.partial(judge_record, judge_ctx=judge_ctx, cache=JudgeCache(cache_dir() / "judgements.jsonl"))
                 if judge_ctx else None)
    lock = threading.Lock()

    def write_summary(finished: bool) -> dict[str, Any]:
        """summary.json of the records so far. Written before the first question and after each one, so a killed run
        keeps its options (a resume with others is refused) and `hoprag report` reads it (`partial`: true)."""
        records = [done[e.id] for e in examples if e.id in done]
        summary = aggregate(records)
        # The commit that produced the records, not the one that re-aggregated them (records written before
        # commits were kept per record take the earlier summary's).
        fallback = earlier.get("git_commit") if isinstance(earlier.get("git_commit"), str) else ""
        commits = sorted({r.get("git_commit") or fallback or commit for r in records}) or [commit]
        # Where the records came from (a resumed run may span machines); records from before it was kept name none.
        machines = sorted({r.get("machine") or UNKNOWN_MACHINE for r in records}) or [machine]
        summary["config"] = {
            "limit": limit, "questions": questions, "concurrency": concurrency, **options,
            "retrieval": retrieval,
            "preset_options": preset_options(ctx.preset, method),
            "eval_judge": resolve_spec("judge", judge_ctx) if judge_ctx else None,
            "git_commit": one_or_list(commits),
            "machine": one_or_list(machines),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S") if finished else None,
        }
        if method in ("furepa", "furepa-no-pa"):  # the paper's scorer is trained; without one a stand-in runs
            summary["furepa_scorer"] = scorer_description(ctx.furepa_scorer, ctx.furepa_plan_assessor)
        if not finished:
            summary["partial"] = True
        partial = out / "summary.json.tmp"  # write, then swap: a kill mid-write leaves the last summary whole
        partial.write_text(json.dumps(summary, indent=2, default=str))
        os.replace(partial, out / "summary.json")
        return summary

    if todo:
        write_summary(finished=False)

    def run_one(example: Example) -> dict[str, Any]:
        record = evaluate_one(method, example, ctx, commit, machine)
        if judge_one:
            judge_one(record)
        return record

    with progress_bar("{task.description}", enabled=progress) as bar, results_path.open("a") as sink:
        task = bar.add_task(f"{method}", total=len(examples), completed=len(examples) - len(todo))
        retried = sum(1 for e in todo if e.id in done)
        if retried and progress:
            bar.console.print(f"retrying {retried} question(s) that failed in an earlier run")
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            futures = [pool.submit(run_one, e) for e in todo]
            for future in as_completed(futures):
                try:
                    record = future.result()
                except RunUnavailableError as error:
                    pool.shutdown(wait=True, cancel_futures=True)
                    kept = sum(not r.get("error") for r in done.values())
                    where = ("" if not kept else f". The finished question is kept in {results_path}" if kept == 1
                             else f". The {kept} finished questions are kept in {results_path}")
                    raise type(error)(f"{error}{where}; once that is fixed, rerun the same command to resume"
                                      ) from error
                with lock:
                    sink.write(json.dumps(record, default=str) + "\n")
                    sink.flush()
                    done[record["id"]] = record
                    write_summary(finished=False)
                bar.advance(task)
    unjudged = [r for r in done.values() if "judge" not in r["metrics"]] if judge_one else []
    if unjudged and judge_one:
        for record in unjudged:
            judge_one(record)
        # Rewrite whole, then swap: a kill mid-rewrite leaves the old file intact.
        partial = results_path.with_suffix(".jsonl.tmp")
        partial.write_text("".join(json.dumps(r, default=str) + "\n" for r in done.values()))
        os.replace(partial, results_path)
    return write_summary(finished=True)


SPREAD_METRICS = ("em", "f1", "cover_em", "judge", "retrieval_recall", "finish_rate", "invalid_output_rate",
                  "avg_steps", "total_tokens_per_question", "avg_seconds")


def merge_seed_summaries(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One summary of several seeds' runs: each number the mean over the runs, tokens per role the mean,
    the ended-by counts summed, peak RSS the largest (a peak, not a mean)."""
    import statistics

    merged: dict[str, Any] = {}
    for name, value in runs[0].items():
        values = [r.get(name) for r in runs]
        if isinstance(value, int | float) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            merged[name] = round(statistics.fmean(values), 3)
    roles = {role: None for r in runs for role in r.get("tokens_per_question") or {}}
    merged["tokens_per_question"] = {
        role: {field: round(statistics.fmean((r.get("tokens_per_question") or {}).get(role, {}).get(field, 0)
                                             for r in runs), 1) for field in ("input_tokens", "output_tokens", "calls")}
        for role in roles}
    ended: dict[str, int] = {}
    for r in runs:
        for how, count in (r.get("finished_by") or {}).items():
            ended[how] = ended.get(how, 0) + count
    merged["finished_by"] = ended
    peaks = [r["peak_rss_mb"] for r in runs if isinstance(r.get("peak_rss_mb"), int | float)]
    if peaks:
        merged["peak_rss_mb"] = max(peaks)
    return merged


def seed_spread(runs: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """One summary of a cell run under several seeds (`runs`: each seed's summary, by seed): the summaries merged,
    each of SPREAD_METRICS as the mean over the seeds with its spread (sample standard deviation, min, max), and
    each seed's own SPREAD_METRICS under `runs`. `hoprag eval --seeds` writes it; benchmarks/seed_spread.py
    computes it for seeds that ran as separate `--seed N` runs."""
    import statistics

    summary: dict[str, Any] = {"seeds": list(runs), **merge_seed_summaries(list(runs.values()))}
    summary["questions"] = min(r["questions"] for r in runs.values())
    for name in SPREAD_METRICS:
        values = [r[name] for r in runs.values() if isinstance(r.get(name), int | float)]
        if values:
            summary[name] = round(statistics.fmean(values), 2)
            summary[f"{name}_spread"] = {"std": round(statistics.stdev(values), 2) if len(values) > 1 else 0.0,
                                         "min": min(values), "max": max(values)}
    summary["runs"] = {f"seed-{seed}": {k: r.get(k) for k in SPREAD_METRICS} for seed, r in runs.items()}
    return summary


# Config keys that may differ between the seeds of one cell: they do not decide its answers (the questions, set by
# limit and questions, must be the same).
SEED_RUN_DIFFERENCES = (RESUMABLE_CHANGES - {"limit", "questions"}) | {"seed", "finished", "git_commit", "machine"}
# Named first when two runs are different cells: what a reader recognises a cell by.
CELL_KEYS = ("method", "preset", "dataset_identity", "dataset", "index", "questions", "limit", "models")


def _single_seed_summary(path: Path) -> dict[str, Any]:
    """The summary of a finished single-seed run in `path`; HopragError (one line) for anything else."""
    summary = load_run(path)
    config = summary.get("config") if isinstance(summary, dict) else None
    if isinstance(config, dict) and "seeds" in config:
        raise HopragError(f"{path} is the merged folder of several seeds; give its seed-N folders instead")
    if not isinstance(config, dict) or not isinstance(config.get("seed"), int):
        raise HopragError(f"{path / 'summary.json'} records no seed (an unseeded run, or not one of hoprag eval); rerun it with "
                          "--seed N to merge it")
    if summary.get("partial"):
        raise HopragError(f"{path} is unfinished ({summary.get('questions')} questions so far); rerun its "
                          "hoprag eval command to finish it, then merge")
    return summary


def _cell_differences(first: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """What makes two seeds' configs different cells, e.g. `preset 'paper' / 'small'`, `preset_options.k 5 / 3`:
    the options a resume would refuse, what names a cell first, a dict option by its entries."""
    differences = sorted(_differing_options(first, other, SEED_RUN_DIFFERENCES), key=lambda d: (
        CELL_KEYS.index(d[0]) if d[0] in CELL_KEYS else len(CELL_KEYS), d[0]))
    shown = []
    for key, one, two in differences:
        if isinstance(one, dict) and isinstance(two, dict):  # name the entries, not two whole dicts
            shown += [f"{key}.{sub} {one.get(sub)!r} / {two.get(sub)!r}" for sub in sorted(one.keys() | two.keys())
                      if one.get(sub) != two.get(sub)]
        else:
            shown.append(f"{key} {one!r} / {two!r}")
    return shown


def _recorded(config: dict[str, Any], key: str) -> list[str]:
    """The commits (`git_commit`) or machines (`machine`) a run recorded: a string, or a list where its records came
    from several."""
    recorded = config.get(key)
    return [c for c in ([recorded] if isinstance(recorded, str) else recorded or []) if c]


def machines_of(config: dict[str, Any]) -> list[str]:
    """The machines a run's (or a merge's) records came from; `unknown` for a run recorded before machines were."""
    return _recorded(config, "machine") or [UNKNOWN_MACHINE]


def one_or_list(values: list[str]) -> str | list[str]:
    """A config entry as runs record it: the one value, or the sorted list of several."""
    return values[0] if len(values) == 1 else sorted(values)


def merged_machines(configs: list[dict[str, Any]]) -> str | list[str]:
    """The `machine` entry of a summary over several runs (seeds): every machine their records name."""
    return one_or_list(list({m for config in configs for m in machines_of(config)}))


def machines_warning(config: dict[str, Any]) -> str | None:
    """A warning line where a merged run's seeds do not all name one machine, else None."""
    machines = machines_of(config)
    if len(machines) < 2:
        return None
    return (f"warning: the seeds' records name {len(machines)} machines ({'; '.join(machines)}); another CPU build "
            "can decode other greedy tokens, so part of the spread may be the machines'")


def merge_seed_runs(runs: list[Path], out: Path) -> dict[str, Any]:
    """Merge separate `hoprag eval --seed N` runs of one cell (every option that decides answers the same; each
    finished) into out/summary.json: the summary `hoprag eval --seeds` writes, so `hoprag report out` shows the
    mean ± spread. Seeds run apart (another day, another machine, seeds that are not consecutive) merge like the
    seeds of one `--seeds` run, in the order of their seeds; `seed_runs` records where each seed's records are,
    relative to out, for the HTML report."""
    if len(runs) < 2:
        raise HopragError("give at least two runs to merge (the --out folders of hoprag eval --seed N)")
    if out.resolve() in {path.resolve() for path in runs}:
        raise HopragError(f"--out {out} is one of the runs; give a new folder for the merged summary")
    if (out / "results.jsonl").exists() or (out / "summary.json").is_file() and "seeds" not in _earlier_config(out):
        raise HopragError(f"--out {out} holds a run of hoprag eval; give a new folder (or an earlier merge's)")
    summaries: dict[Path, dict[str, Any]] = {path: _single_seed_summary(path) for path in runs}
    by_seed: dict[int, Path] = {}
    for path in runs:
        seed = summaries[path]["config"]["seed"]
        if seed in by_seed:
            raise HopragError(f"{by_seed[seed]} and {path} both ran seed {seed}; merge runs of different seeds")
        by_seed[seed] = path
    by_seed = dict(sorted(by_seed.items()))  # as --seeds orders them, whatever the argument order
    first, *others = by_seed.values()
    for path in others:
        differences = _cell_differences(summaries[first]["config"], summaries[path]["config"])
        if differences:
            raise HopragError(f"{first} and {path} are different cells ({'; '.join(differences[:3])}); merge only "
                              "the seeds of one cell")
    merged = seed_spread({seed: summaries[path] for seed, path in by_seed.items()})
    commits = sorted({commit for path in by_seed.values() for commit in _recorded(summaries[path]["config"], "git_commit")})
    # `finished` is each seed's own time; the merge has no single one.
    config = {k: v for k, v in summaries[first]["config"].items() if k not in {"seed", "finished"}}
    target = out.resolve()
    merged["config"] = {**config, "seeds": list(by_seed),
                        "git_commit": one_or_list(commits) or "",
                        # Seeds from several kinds of machine merge, but part of their spread may be the machine's.
                        "machine": merged_machines([summaries[path]["config"] for path in by_seed.values()]),
                        "seed_runs": {f"seed-{seed}": os.path.relpath(path.resolve(), target)
                                      for seed, path in by_seed.items()}}
    if out.exists() and not out.is_dir():
        raise HopragError(f"--out {out} is a file; give a folder for the merged summary.json")
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "summary.json.tmp"  # write, then swap: a kill mid-write leaves no half summary
    partial.write_text(json.dumps(merged, indent=2, default=str))
    os.replace(partial, out / "summary.json")
    return merged


def run_eval_seeds(method: str, dataset: str, out: Path, ctx: Context, seeds: int, **options: Any) -> dict[str, Any]:
    """`seeds` runs with seeds ctx.seed, ctx.seed + 1, ... into out/seed-N, and out/summary.json with the
    mean and the spread (sample standard deviation, min, max) of each metric over the runs."""
    first = ctx.seed or 0
    runs = {}
    for seed in range(first, first + seeds):
        runs[seed] = run_eval(method, dataset, out / f"seed-{seed}", dataclasses.replace(ctx, seed=seed), **options)
    summary = seed_spread(runs)
    config = dict(next(iter(runs.values()))["config"])
    config.pop("seed", None)
    # a seed resumed on another machine names it
    summary["config"] = {**config, "seeds": list(runs), "machine": merged_machines([r["config"] for r in runs.values()])}
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary
