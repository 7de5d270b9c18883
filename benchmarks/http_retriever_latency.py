"""What a retrieval server adds per query: in-process retrieval against the same retriever behind `/retrieve`.

A BM25 index over the first N passages of the packaged `wiki-offline` Wikipedia lead sections is built in a temporary
HOPRAG_HOME. A real HTTP server on 127.0.0.1, in its own process (as a retrieval server is), answers FlashRAG's
`/retrieve` protocol from that index. The same questions are then timed (a) in process (`BM25Retriever.search`) and
(b) through `HttpRetriever`, by 1 and 32 concurrent callers (threads), one query per call and batched (several queries
per call: `search_many`, one request). Each configuration runs `--rounds` times, interleaved, and the latencies are
pooled, so a burst of load from elsewhere on the machine spreads over all of them; compare as ratios within one run.

    python benchmarks/http_retriever_latency.py [--passages 5000] [--queries 320] [--out runs/http_retriever_latency.md]
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
INDEX = "http-bench"
K = 5


def write_corpus(path: Path, passages: int) -> list[tuple[str, str]]:
    """The first `passages` wiki-offline lead sections as FlashRAG's `{id, contents}` JSONL."""
    from hoprag.retrievers.sources import iter_source

    rows = [(d.title, d.text) for d in itertools.islice(iter_source("wiki-offline"), passages)]
    with path.open("w", encoding="utf-8") as handle:
        for i, (title, text) in enumerate(rows):
            handle.write(json.dumps({"id": str(i), "contents": f'"{title}"\n{text}'}) + "\n")
    return rows


def make_questions(rows: list[tuple[str, str]], count: int, seed: int = 0) -> list[str]:
    """Question-like queries: a title and a few words of its passage, as a method's search queries look."""
    rng = random.Random(seed)
    out = []
    for title, text in rng.sample(rows, min(count, len(rows))):
        words = text.split()
        start = rng.randrange(max(1, len(words) - 6))
        out.append(f"{title} {' '.join(words[start:start + 6])}")
    return out


def serve(home: str, ready: Any) -> None:
    """The retrieval server process: FlashRAG's `/retrieve` over the benchmark's BM25 index."""
    os.environ["HOPRAG_HOME"] = home
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # exit cleanly: release what this process holds
    from hoprag.retrievers import BM25Retriever

    retriever = BM25Retriever(index=INDEX)
    retriever.search("warm up", K)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            found = retriever.search_many(body["queries"], int(body.get("topk", K)))
            result = [[{"document": {"id": d.id, "contents": f'"{d.title}"\n{d.text}'}, "score": d.score}
                       for d in documents] for documents in found]
            payload = json.dumps({"result": result}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128  # 32 callers connect at once

    server = Server(("127.0.0.1", 0), Handler)
    ready.send(server.server_address[1])
    server.serve_forever()


def timed(call: Any, work: list[Any], concurrency: int) -> tuple[list[float], float]:
    """Each item's latency in ms with `concurrency` callers taking items from one queue, and the wall seconds."""
    def one(item: Any) -> float:
        started = time.perf_counter()
        call(item)
        return (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    if concurrency == 1:
        latencies = [one(item) for item in work]
    else:
        with ThreadPoolExecutor(concurrency) as pool:
            latencies = list(pool.map(one, work))
    return latencies, time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=320, help="queries per configuration and round")
    parser.add_argument("--batch", type=int, default=8, help="queries per batched call (one request)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "runs" / "http_retriever_latency.md"))
    args = parser.parse_args()

    home = tempfile.mkdtemp(prefix="hoprag-http-bench-")
    os.environ["HOPRAG_HOME"] = home
    from hoprag.retrievers import BM25Retriever, build_index
    from hoprag.retrievers.http import HttpRetriever
    from hoprag.retrievers.index import BM25_ONLY

    corpus = Path(home) / "corpus.jsonl"
    rows = write_corpus(corpus, args.passages)
    manifest = build_index(INDEX, f"jsonl:{corpus}", embedder=BM25_ONLY, progress=False)
    questions = make_questions(rows, args.queries)
    batches = [questions[i:i + args.batch] for i in range(0, len(questions), args.batch)]

    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    server = context.Process(target=serve, args=(home, sender), daemon=True)
    server.start()
    if not receiver.poll(300):
        raise SystemExit("the retrieval server process did not start within 300 s")
    port = receiver.recv()
    local = BM25Retriever(index=INDEX)
    remote = HttpRetriever(url=f"http://127.0.0.1:{port}/retrieve", retries=0)
    local.search("warm up", K)
    remote.search("warm up", K)

    # (name, backend, concurrency, batched) -> pooled latencies (ms per call) and wall seconds
    configs = [(backend, concurrency, batched) for batched in (False, True) for concurrency in (1, 32)
               for backend in ("in-process", "http")]
    latencies: dict[tuple[str, int, bool], list[float]] = {c: [] for c in configs}
    walls: dict[tuple[str, int, bool], float] = {c: 0.0 for c in configs}
    load_before = os.getloadavg()
    started = time.perf_counter()
    for _ in range(args.rounds):
        for config in configs:
            backend, concurrency, batched = config
            retriever = local if backend == "in-process" else remote
            if batched:
                got, wall = timed(lambda b, r=retriever: r.search_many(b, K), batches, concurrency)
            else:
                got, wall = timed(lambda q, r=retriever: r.search(q, K), questions, concurrency)
            latencies[config] += got
            walls[config] += wall
    elapsed = time.perf_counter() - started
    load_after = os.getloadavg()
    server.terminate()
    server.join(10)
    shutil.rmtree(home, ignore_errors=True)

    lines = [
        f"HTTP retriever against in-process BM25, {manifest['count']} passages (wiki-offline), k={K}; "
        f"{args.queries} queries x {args.rounds} rounds per row; batched rows: {args.batch} queries a call.",
        f"Machine: {os.cpu_count()} cores shared with other work (load average {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after); {elapsed:.0f} s of timing. Compare rows as ratios within this run.",
        "",
        "| call | callers | in-process p50 / p95 ms | HTTP p50 / p95 ms | added p50 / p95 ms | HTTP / in-process p50 "
        "| in-process / HTTP queries/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for batched in (False, True):
        for concurrency in (1, 32):
            a = latencies[("in-process", concurrency, batched)]
            b = latencies[("http", concurrency, batched)]
            per = args.batch if batched else 1
            # per query: a batched call's latency over its queries
            a50, a95, b50, b95 = (percentile(v, q) / per for v in (a, b) for q in (0.5, 0.95))
            qps = [len(questions) * args.rounds / walls[(backend, concurrency, batched)]
                   for backend in ("in-process", "http")]
            call = f"{args.batch} queries / request (per query)" if batched else "1 query"
            lines.append(f"| {call} | {concurrency} | {a50:.2f} / {a95:.2f} | {b50:.2f} / {b95:.2f} | "
                         f"{b50 - a50:+.2f} / {b95 - a95:+.2f} | {b50 / a50:.1f}x | {qps[0]:.0f} / {qps[1]:.0f} |")
    report = "\n".join(lines) + "\n"
    print(report)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, encoding="utf-8")
    print(f"written: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
