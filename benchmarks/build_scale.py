"""Index builds at growing corpus sizes: seconds, passages/s, peak RSS and disk (issue 15).

Each build runs `hoprag index build` in a fresh HOPRAG_HOME as a child process; its peak RSS is the
kernel's own figure for that child (os.wait4), and its RSS is also sampled every second (curve in the
JSON output). Corpora come from benchmarks/make_corpus.py (real text from ../shared/data and wiki-offline).

    python benchmarks/build_scale.py --sizes 10000,50000,100000 --embedders none,minilm --out runs/build-scale
    python benchmarks/build_scale.py --kill-resume 10000 --embedders minilm --out runs/build-kill
    python benchmarks/build_scale.py --table runs/build-scale/scale.json

--kill-resume N: build N passages, SIGKILL the build at a random moment, rerun it, and count the ids in
the index (every passage must be there exactly once).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def corpus(size: int, folder: Path) -> Path:
    path = folder / f"corpus-{size}.jsonl"
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), str(size), str(path)], check=True)
    return path


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def build(name: str, source: Path, embedder: str, home: Path, kill_after: float | None = None,
          extra: list[str] | None = None) -> dict:
    env = dict(os.environ, HOPRAG_HOME=str(home), COLUMNS="120")
    command = [sys.executable, "-m", "hoprag.cli", "index", "build", name, "--source", f"jsonl:{source}",
               "--embedder", embedder, *(extra or [])]
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    curve: list[tuple[float, float]] = []

    def sample() -> None:
        while child.poll() is None:
            value = rss_mb(child.pid)
            if value:
                curve.append((round(time.perf_counter() - started, 1), round(value, 1)))
            time.sleep(1.0)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    if kill_after is not None:
        time.sleep(kill_after)
        child.send_signal(signal.SIGKILL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    sampler.join(timeout=2)
    stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
    return {"embedder": embedder, "seconds": round(seconds, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "returncode": child.returncode, "rss_curve_mb": curve, "stderr_tail": stderr[-400:]}


def disk_mb(folder: Path) -> float:
    return round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20, 1)


def manifest(home: Path, name: str) -> dict:
    return json.loads((home / "data" / "indexes" / name / "manifest.json").read_text())


def stored_ids(home: Path, name: str) -> list[str]:
    env = dict(os.environ, HOPRAG_HOME=str(home))
    script = ("import json, sys\nfrom hoprag.retrievers.index import open_index\nindex = open_index(sys.argv[1])\n"
              "ids = index.collection.get(include=[])['ids'] if index.dense else "
              "[r[0] for r in index.docs.connection.execute('SELECT id FROM passages')]\n"
              "print(json.dumps(ids))")
    out = subprocess.run([sys.executable, "-c", script, name], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def scale(args: argparse.Namespace, out: Path) -> None:
    results = json.loads((out / "scale.json").read_text()) if (out / "scale.json").exists() else []
    done = {(r["embedder"], r["passages"]) for r in results}
    for embedder in args.embedders.split(","):
        for size in map(int, args.sizes.split(",")):
            if (embedder, size) in done:
                continue  # an interrupted benchmark resumes
            source = corpus(size, out)
            with tempfile.TemporaryDirectory(dir=args.tmp) as home:
                row = build("scale", source, embedder, Path(home), extra=args.extra.split() if args.extra else None)
                info = manifest(Path(home), "scale")
                row.update(passages=info["count"], embed_seconds=info["last_build"]["seconds"],
                           embed_passages_per_s=info["last_build"]["passages_per_s"],
                           disk_mb=disk_mb(Path(home) / "data" / "indexes" / "scale"))
            row["passages_per_s"] = round(row["passages"] / row["seconds"], 1)
            print(json.dumps({k: v for k, v in row.items() if k != "rss_curve_mb"}), flush=True)
            results.append(row)
            (out / "scale.json").write_text(json.dumps(results, indent=1))


def kill_resume(args: argparse.Namespace, out: Path) -> None:
    size = args.kill_resume
    source = corpus(size, out)
    expected = sum(1 for _ in source.open())
    rows = []
    rng = random.Random(args.seed)
    for embedder in args.embedders.split(","):
        with tempfile.TemporaryDirectory(dir=args.tmp) as home:
            # Time a first attempt's start-up so the kill lands inside the embedding, at a random point.
            delay = rng.uniform(args.kill_min, args.kill_max)
            killed = build("killed", source, embedder, Path(home), kill_after=delay)
            partial = stored_ids_partial(Path(home), "killed", embedder)
            resumed = build("killed", source, embedder, Path(home))
            info = manifest(Path(home), "killed")
            ids = stored_ids(Path(home), "killed")
            row = {"embedder": embedder, "passages": expected, "killed_after_s": round(delay, 1),
                   "killed_returncode": killed["returncode"], "stored_when_killed": partial,
                   "resumed_seconds": resumed["seconds"], "resumed_added": info["last_build"]["added"],
                   "ids": len(ids), "distinct_ids": len(set(ids)), "every_passage_once": len(ids) == len(set(ids)) == expected}
            print(json.dumps(row), flush=True)
            rows.append(row)
    (out / "kill_resume.json").write_text(json.dumps(rows, indent=1))


def stored_ids_partial(home: Path, name: str, embedder: str) -> int:
    """Passages an interrupted build had written (it has no manifest yet, so read the store directly)."""
    folder = home / "data" / "indexes" / name
    if embedder == "none":
        import sqlite3

        return sqlite3.connect(folder / "docs.sqlite").execute("SELECT COUNT(*) FROM passages").fetchone()[0]
    import chromadb

    client = chromadb.PersistentClient(path=str(folder / "chroma"))
    return client.get_collection("passages").count()


def table(files: list[Path]) -> None:
    """Markdown rows of finished runs: RSS along the build (sampled each second) shows whether it grows."""
    print("| embedder | passages | seconds | passages/s (whole build) | embedding passages/s | peak RSS MB | "
          "RSS at 25 / 50 / 75 / 95% of the build | disk MB |")
    print("|---|---|---|---|---|---|---|---|")
    for file in files:
        for row in json.loads(file.read_text()):
            curve = row["rss_curve_mb"]
            marks = " / ".join(str(round(curve[min(len(curve) - 1, int(f * len(curve)))][1])) if curve else "-"
                               for f in (0.25, 0.5, 0.75, 0.95))
            print(f"| {row['embedder']} | {row['passages']:,} | {row['seconds']} | {row['passages_per_s']} | "
                  f"{row['embed_passages_per_s']} | {row['peak_rss_mb']} | {marks} | {row['disk_mb']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,50000,100000")
    parser.add_argument("--embedders", default="none,minilm")
    parser.add_argument("--extra", default="", help="extra arguments of `hoprag index build`, e.g. '--batch-size 64'")
    parser.add_argument("--kill-resume", type=int, default=0)
    parser.add_argument("--kill-min", type=float, default=20.0)
    parser.add_argument("--kill-max", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tmp", default=None, help="where the throwaway HOPRAG_HOMEs go")
    parser.add_argument("--out", type=Path, help="output folder (scale.json / kill_resume.json)")
    parser.add_argument("--table", type=Path, nargs="+", help="print the markdown table of these scale.json files")
    args = parser.parse_args()
    if args.table:
        table(args.table)
        return
    if args.out is None:
        parser.error("--out is required")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.kill_resume:
        kill_resume(args, args.out)
    else:
        scale(args, args.out)


if __name__ == "__main__":
    main()
