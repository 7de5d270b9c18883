"""`hoprag serve` under load, called through langgraph-sdk the way Studio and apps call it: threads, runs
that wait and runs that stream.

- 20 concurrent ReNAct runs against an OpenAI-compatible stub that answers each call in 200 ms: no
  failures, every thread ends with its own question and answer; p50 / p95 latency and runs per second.
- 4 concurrent runs with the embedded model: all finish with their own state; llama.cpp calls queue one
  at a time (a process-wide lock), and the figures show how long each run waited for the model.

Set HOPRAG_LOAD_REPORT=FILE to write the figures as JSON (docs/serving.md, "Under load", quotes them).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import free_port, start_and_wait
from .openai_stub import start_stub

ROOT = Path(__file__).resolve().parents[1]
CORPUS = [
    {"id": "1", "title": "Rush (band)", "text": "Rush was a Canadian rock band formed in Toronto in 1968. "
                                               "Counterparts is the fifteenth studio album by Rush."},
    {"id": "2", "title": "Neil Peart", "text": "Neil Peart was a Canadian musician, the drummer and lyricist of "
                                              "the rock band Rush."},
    {"id": "3", "title": "Counterparts (album)", "text": "Counterparts is an album by the Canadian band Rush, "
                                                         "released in 1993."},
]




def start_server(env: dict[str, str], jobs: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    return start_and_wait([sys.executable, "-m", "hoprag.cli", "serve", "--port", str(port), "--jobs", str(jobs)], port,
                          env, seconds=120)


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()


async def one_run(client, graph: str, question: str, context: dict, stream: bool) -> dict:
    """One run on a thread of its own, then the thread's whole state, as Studio reads it."""
    thread = await client.threads.create()
    started = time.perf_counter()
    nodes: list[str] = []
    if stream:
        async for part in client.runs.stream(thread["thread_id"], graph, input={"question": question},
                                             context=context, stream_mode=["updates", "values"]):
            if part.event == "updates":
                nodes.extend(part.data)
    else:
        await client.runs.wait(thread["thread_id"], graph, input={"question": question}, context=context)
    seconds = time.perf_counter() - started
    state = (await client.threads.get_state(thread["thread_id"]))["values"]  # the whole state, question too
    return {"seconds": seconds, "state": state, "nodes": nodes, "question": question}


async def load(url: str, graph: str, questions: list[str], context: dict) -> tuple[list, float]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    started = time.perf_counter()
    results = await asyncio.gather(*(one_run(client, graph, q, context, stream=i % 4 == 0)
                                     for i, q in enumerate(questions)), return_exceptions=True)
    return results, time.perf_counter() - started


def figures(results: list[dict], wall: float) -> dict:
    seconds = sorted(r["seconds"] for r in results)
    return {"runs": len(results), "wall_s": round(wall, 2), "runs_per_s": round(len(results) / wall, 2),
            "p50_s": round(statistics.median(seconds), 2),
            "p95_s": round(seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))], 2),
            "max_s": round(seconds[-1], 2)}


def report(key: str, value: dict) -> None:
    target = os.environ.get("HOPRAG_LOAD_REPORT")
    if target:
        path = Path(target)
        data = json.loads(path.read_text()) if path.exists() else {}
        data[key] = value
        path.write_text(json.dumps(data, indent=1))
    print(key, json.dumps(value))


@pytest.fixture
def corpus_index(tmp_path) -> str:
    pytest.importorskip("langgraph_api")
    from hoprag.retrievers.index import build_index

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in CORPUS))
    build_index("load", f"jsonl:{corpus}", embedder="none", progress=False)
    return "load"


@pytest.mark.slow
def test_twenty_concurrent_runs_against_a_200ms_model(corpus_index):
    stub = start_stub(delay=0.2)
    jobs = int(os.environ.get("HOPRAG_LOAD_JOBS", "10"))
    env = dict(os.environ, OPENAI_BASE_URL=f"http://127.0.0.1:{stub.server_port}/v1", OPENAI_API_KEY="x")
    process, url = start_server(env, jobs)
    try:
        questions = [f"Which band #{i}?" for i in range(int(os.environ.get("HOPRAG_LOAD_RUNS", "20")))]
        context = {"llm": "openai:stub-load", "index": corpus_index, "retriever": "bm25", "k": 3, "max_steps": 4}
        results, wall = asyncio.run(load(url, "renact", questions, context))
    finally:
        stop_server(process)
        stub.shutdown()
    failures = [r for r in results if isinstance(r, BaseException)]
    assert not failures, failures[:3]
    for result in results:  # each thread holds its own run: no crossed states under load
        number = result["question"].split("#")[1].rstrip("?")
        assert result["state"]["question"] == result["question"]
        assert result["state"]["answer"] == f"Rush #{number}", result["state"].get("answer")
        assert [step["kind"] for step in result["state"]["trajectory"]] == ["search", "finish"]
    assert any(r["nodes"] and r["nodes"][0] == "reason" and "write_note" in r["nodes"] for r in results)
    calls = len(stub.prompts)
    report("stub_200ms", {**figures(results, wall), "jobs": jobs, "llm_calls": calls,
                          "llm_floor_s_per_run": round(0.2 * calls / len(results), 2)})


@pytest.mark.slow
def test_four_concurrent_runs_with_the_embedded_model(corpus_index):
    pytest.importorskip("llama_cpp")
    from hoprag.local_models import resolve_gguf

    try:
        resolve_gguf("qwen2.5-coder-1.5b")
    except Exception as error:  # a machine without the model: the README's first command fetches it
        pytest.skip(f"embedded model not available: {error}")
    process, url = start_server(dict(os.environ), jobs=10)
    questions = ["Which band recorded the album Counterparts?", "Who was the drummer of Rush?",
                 "In which city was the band Rush formed?", "In which year was the album Counterparts released?"]
    context = {"index": corpus_index, "retriever": "bm25", "k": 3, "preset": "small", "max_steps": 3}
    try:
        results, wall = asyncio.run(load(url, "renact", questions, context))
    finally:
        stop_server(process)
    failures = [r for r in results if isinstance(r, BaseException)]
    assert not failures, failures[:3]
    runs, intervals = [], []
    for result in results:
        state = result["state"]
        assert state["question"] == result["question"] and state["answer"].strip()
        assert state["trajectory"] and all(step.get("kind") for step in state["trajectory"])
        calls = [c for c in state["calls"] if not c.get("cached")]
        queued = sum(c["queued_seconds"] for c in calls)
        compute = sum(c["seconds"] - c["queued_seconds"] for c in calls)
        intervals += [(c["compute_started"], c["compute_started"] + c["seconds"] - c["queued_seconds"]) for c in calls]
        runs.append({"question": result["question"], "answer": state["answer"], "seconds": round(result["seconds"], 1),
                     "llm_calls": len(calls), "compute_seconds": round(compute, 1), "queued_seconds": round(queued, 1)})
    # No two llama.cpp calls ran at once: the calls of all runs, ordered by start, never overlap (each
    # interval is an upper bound of its compute, hence the small tolerance for the Python around it).
    intervals.sort()
    assert all(later[0] >= earlier[1] - 0.25 for earlier, later in zip(intervals, intervals[1:], strict=False))
    report("embedded_4", {**figures(results, wall), "runs_detail": runs,
                          "model_busy_share": round(sum(r["compute_seconds"] for r in runs) / wall, 2),
                          "queued_share": round(sum(r["queued_seconds"] for r in runs) / sum(r["seconds"] for r in runs), 2)})
