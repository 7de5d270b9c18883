"""Write a JSONL corpus of N passages for the index-build benchmarks (issue 15), from real text only.

The pool: every paragraph of the HotpotQA, MuSiQue and 2Wiki files in ../shared/data (dev and train) and
the 10,033 `wiki-offline` Wikipedia lead sections. Larger corpora add finer views of the same text
(windows of two sentences, then single sentences), the way chunked Wikipedia dumps hold overlapping
passages; every passage is distinct (content-addressed id).

    python benchmarks/make_corpus.py 100000 corpus-100k.jsonl
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from hoprag.documents import Document
from hoprag.retrievers.sources import iter_source, stable_id

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SOURCES = [
    "wiki-offline",
    f"hotpotqa:{DATA / 'hotpotqa/hotpot_dev_distractor_hard_100.json'}",
    f"hotpotqa:{DATA / 'hotpotqa/hotpot_dev_distractor_first100_hf.json'}",
    f"hotpotqa:{DATA / 'hotpotqa/hotpot_train_100.json'}",
    f"jsonl:{DATA / 'hotpotqa/hotpot_train_100_corpus.json'}",
    f"musique:{DATA / 'musique/musique_ans_dev_100.jsonl'}",
    f"musique:{DATA / 'musique/musique_ans_train_100.jsonl'}",
    f"musique:{DATA / 'musique/musique_train_100_corpus.json'}",
    f"2wiki:{DATA / '2wikimultihopqa/2wiki_dev_82.json'}",
]
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def pool() -> list[Document]:
    return [doc for source in SOURCES for doc in iter_source(source)]


def views(documents: list[Document]) -> Iterator[tuple[str, str]]:
    """The pool, then two-sentence windows, then single sentences of at least 8 words."""
    yield from ((d.title, d.text) for d in documents)
    split = [(d.title, SENTENCE.split(d.text)) for d in documents]
    for title, sentences in split:
        for i in range(len(sentences) - 1):
            yield title, f"{sentences[i]} {sentences[i + 1]}"
    for title, sentences in split:
        yield from ((title, s) for s in sentences if len(s.split()) >= 8)


def main() -> None:
    if len(sys.argv) != 3 or not sys.argv[1].isdigit():
        sys.exit("usage: python benchmarks/make_corpus.py N OUT.jsonl")
    wanted, out = int(sys.argv[1]), Path(sys.argv[2])
    seen: set[str] = set()
    with out.open("w", encoding="utf-8") as sink:
        for title, text in views(pool()):
            doc_id = stable_id(title, text)
            if doc_id in seen or not text.strip():
                continue
            seen.add(doc_id)
            sink.write(json.dumps({"id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
            if len(seen) == wanted:
                break
    if len(seen) < wanted:
        sys.exit(f"only {len(seen)} distinct passages available (asked {wanted}); written to {out}")
    print(f"{len(seen)} passages -> {out}")


if __name__ == "__main__":
    main()
