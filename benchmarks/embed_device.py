"""Embedding throughput of a sentence-transformers embedder on any device (issue 15's GPU column).

    python benchmarks/embed_device.py CORPUS.jsonl [--model DIR] [--device cuda] [--n 10000]
        [--batches 32,128,512] [--dtypes float32,float16]

It runs hoprag's own `SentenceTransformerEmbedder` (the class behind `minilm` and `st:` embedders and
`--embed-device`), loaded straight from its file, so it runs on a GPU machine that has torch and
sentence-transformers but not the rest of hoprag's install (no chromadb, no langgraph). --model defaults
to the packaged all-MiniLM-L6-v2. Each figure embeds the same N passages of CORPUS.jsonl (e.g. from
benchmarks/make_corpus.py) once, after a warm-up, as the index build does: chunks of 256 passages handed
to `embed_passages`, which encodes them in batches of the given size. One JSON line per (dtype, batch).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
BUILD_CHUNK = 256  # passages per write batch in hoprag.retrievers.index.build_index


def load_embedders_module() -> ModuleType:
    """hoprag.retrievers.embedders without hoprag.retrievers' package import, which needs chromadb."""
    sys.path.insert(0, str(ROOT))  # hoprag.errors, which the module imports, needs nothing else
    spec = importlib.util.spec_from_file_location("hoprag_embedders", ROOT / "hoprag/retrievers/embedders.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--model", default=None, help="sentence-transformers model folder (default: packaged minilm)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--batches", default="32,128,512")
    parser.add_argument("--dtypes", default="float32,float16")
    args = parser.parse_args()

    import torch

    os.environ["HOPRAG_EMBED_DEVICE"] = args.device
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with open(args.corpus, encoding="utf-8") as handle:
        passages = [f"{r['title']}\n{r['text']}" for r in map(json.loads, (next(handle) for _ in range(args.n)))]
    embedders = load_embedders_module()
    # no --model: the packaged weights, loaded the way `--embedder minilm` loads them
    embedder = embedders.SentenceTransformerEmbedder("minilm", args.model) if args.model else embedders._minilm()
    device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device
    for dtype in args.dtypes.split(","):
        embedder._model.to(getattr(torch, dtype))
        for batch in map(int, args.batches.split(",")):
            embedder._batch_size = batch
            embedder.embed_passages(passages[:BUILD_CHUNK])  # warm-up: kernels, allocator
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            started = time.perf_counter()
            for i in range(0, len(passages), BUILD_CHUNK):
                embedder.embed_passages(passages[i:i + BUILD_CHUNK])
            seconds = time.perf_counter() - started
            print(json.dumps({"device": device_name, "dtype": dtype, "batch": batch, "passages": len(passages),
                              "seconds": round(seconds, 2), "passages_per_s": round(len(passages) / seconds, 1)}),
                  flush=True)


if __name__ == "__main__":
    main()
