"""A FlashRAG corpus (`{id, contents}` JSONL) read line by line through an offset table on disk.

FlashRAG's wiki18 corpus is about 13 GB of text; a faiss index stores only vectors, and its row i is the
corpus's line i. The table makes line i one `pread`, so the corpus is never loaded: `offsets.npy` (uint64,
n + 1 byte positions, memory-mapped) plus a title lookup (`title_hash.npy` sorted, `title_rows.npy` the
rows in that order) so that pages can gather every passage of an article by its title.

The table is built once in chunks of lines, each chunk saved as it completes, so an interrupted build
resumes where it stopped; the final files appear by atomic rename, so a reader never sees half a table.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.jsonfile import read_json as _read_json
from hoprag.jsonfile import write_json as _write_json

TABLE_FILES = ("offsets.npy", "title_hash.npy", "title_rows.npy", "table.json")
CHUNK_LINES = 1_000_000


def split_contents(record: dict[str, Any]) -> tuple[str, str]:
    """(title, text) of a FlashRAG record: the title is the first line of `contents`, and wiki18 quotes it
    ("\\"Anne Frank\\"\\nAnnelies ..."); records with explicit `title`/`text` fields are read as they are."""
    if "contents" not in record:
        return str(record.get("title", "")).strip(), str(record.get("text", ""))
    head, _, text = str(record["contents"]).partition("\n")
    title = head.strip()
    if len(title) >= 2 and title[0] == title[-1] == '"':
        title = title[1:-1].strip()
    return str(record.get("title") or title), text.strip()


def title_hash(title: str) -> int:
    return int.from_bytes(hashlib.blake2b(title.encode("utf-8"), digest_size=8).digest(), "little")


def _stamp(corpus: Path) -> dict[str, Any]:
    stat = corpus.stat()
    return {"corpus": str(corpus), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def build_table(corpus: Path, folder: Path, chunk_lines: int = CHUNK_LINES,
                on_progress: Callable[[int, int], None] | None = None) -> int:
    """Build (or resume building) the offset table of `corpus` in `folder`; returns the number of rows.

    Memory stays bounded by one chunk while reading; the final merge holds three arrays of 8 bytes a row
    (about 0.5 GB for wiki18's 21M passages), once. A table built for another version of the file is rebuilt.
    """
    if not corpus.is_file():
        raise HopragError(f"corpus file not found: {corpus}")
    stamp = _stamp(corpus)
    done = _read_json(folder / "table.json")
    if done and {key: done.get(key) for key in stamp} == stamp and all((folder / f).is_file() for f in TABLE_FILES):
        return int(done["rows"])
    work = folder / "table.build"
    if _read_json(work / "stamp.json") != stamp:  # a build for another file (or none): start over
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        _write_json(work / "stamp.json", stamp)
    chunks = sorted(work.glob("chunk-*.json"))
    position = int(_read_json(chunks[-1])["end"]) if chunks else 0
    rows = sum(int(_read_json(c)["rows"]) for c in chunks)
    with corpus.open("rb") as stream:
        stream.seek(position)
        while True:
            starts: list[int] = []
            hashes: list[int] = []
            for line in stream:
                start, position = position, position + len(line)
                if not line.strip():  # a blank line (a trailing newline) is no passage and no faiss row
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise HopragError(f"{corpus}: line {rows + len(starts) + 1} is not JSON ({error.msg}); "
                                      f"expected FlashRAG's {{\"id\", \"contents\"}} per line") from None
                starts.append(start)
                hashes.append(title_hash(split_contents(record)[0]))
                if len(starts) == chunk_lines:
                    break
            if not starts:
                break
            number = len(chunks)
            np.save(work / f"chunk-{number:05d}-starts.npy", np.asarray(starts, dtype=np.uint64))
            np.save(work / f"chunk-{number:05d}-titles.npy", np.asarray(hashes, dtype=np.uint64))
            # The chunk's record is written last: a chunk without one is redone on resume.
            _write_json(work / f"chunk-{number:05d}.json", {"rows": len(starts), "end": position})
            chunks.append(work / f"chunk-{number:05d}.json")
            rows += len(starts)
            if on_progress:
                on_progress(rows, position)
    _merge(work, folder, chunks, rows, position)
    _write_json(folder / "table.json", {**stamp, "rows": rows})
    shutil.rmtree(work, ignore_errors=True)
    return rows


def _merge(work: Path, folder: Path, chunks: list[Path], rows: int, end: int) -> None:
    offsets = np.lib.format.open_memmap(folder / "offsets.tmp.npy", mode="w+", dtype=np.uint64, shape=(rows + 1,))
    hashes = np.empty(rows, dtype=np.uint64)
    at = 0
    for chunk in chunks:
        stem = chunk.name.removesuffix(".json")
        starts = np.load(work / f"{stem}-starts.npy")
        offsets[at:at + len(starts)] = starts
        hashes[at:at + len(starts)] = np.load(work / f"{stem}-titles.npy")
        at += len(starts)
    # Row i's bytes run from offsets[i] to offsets[i + 1]; the last row ends where the file's lines end.
    offsets[rows] = end
    offsets.flush()
    del offsets
    order = np.argsort(hashes, kind="stable").astype(np.uint32 if rows < 2**32 else np.uint64)
    np.save(folder / "title_rows.tmp.npy", order)
    np.save(folder / "title_hash.tmp.npy", hashes[order])
    for name in ("offsets", "title_rows", "title_hash"):
        os.replace(folder / f"{name}.tmp.npy", folder / f"{name}.npy")


class OffsetCorpus:
    """Passages by row: one positioned read each; the table is memory-mapped, the text never loaded."""

    def __init__(self, corpus: Path, folder: Path, source: str = "") -> None:
        if not corpus.is_file():
            raise HopragError(f"corpus file not found: {corpus}")
        self.path = corpus
        self.source = source
        self.offsets = np.load(folder / "offsets.npy", mmap_mode="r")
        self.title_hashes = np.load(folder / "title_hash.npy", mmap_mode="r")
        self.title_rows = np.load(folder / "title_rows.npy", mmap_mode="r")
        self.rows = len(self.offsets) - 1
        self._file = corpus.open("rb")
        self._lock = threading.Lock()  # only where os.pread is missing (Windows): seek + read must pair

    def _read(self, row: int) -> bytes:
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        if hasattr(os, "pread"):
            return os.pread(self._file.fileno(), end - start, start)
        with self._lock:
            self._file.seek(start)
            return self._file.read(end - start)

    def document(self, row: int, score: float | None = None) -> Document:
        line = self._read(row)
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise HopragError(f"{self.path} changed since its offset table was built (row {row} is not a JSON "
                              f"line); register the index again with: hoprag index add") from None
        title, text = split_contents(record)
        return Document(id=str(record.get("id", row)), title=title, text=text, source=self.source, score=score,
                        metadata={"row": row})

    def rows_with_title(self, title: str) -> list[int]:
        key = np.uint64(title_hash(title))
        low = int(np.searchsorted(self.title_hashes, key, side="left"))
        high = int(np.searchsorted(self.title_hashes, key, side="right"))
        return sorted(int(r) for r in self.title_rows[low:high])

    def by_title(self, title: str) -> list[Document]:
        # A hash match is checked against the real title: two titles may share a 64-bit hash.
        return [d for d in (self.document(r) for r in self.rows_with_title(title)) if d.title == title]


