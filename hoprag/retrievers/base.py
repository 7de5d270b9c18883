"""The retriever base class and the retriever values every backend shares; the backends (index kinds, a retrieval
server, Wikipedia, registered LangChain retrievers) import it, and `make_retriever` picks among them."""

from __future__ import annotations

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from hoprag.documents import Document
from hoprag.errors import HopragError, RetrievalUnavailableError, UnknownSpecError
from hoprag.retrievers.index import open_index

KINDS: tuple[str, ...] = ("dense", "bm25", "hybrid")

VALUES_HELP = (f"auto, {', '.join(KINDS)}, wikipedia, an http(s):// retrieval server URL, py:MODULE:ATTR, "
               "a registered retriever name or an index name")


class Retriever(BaseRetriever):
    """Base: `search(query, k)` returns hoprag Documents; LangChain's `invoke` returns top `self.k`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    k: int = 5

    def search(self, query: str, k: int) -> list[Document]:
        raise NotImplementedError

    def search_many(self, queries: list[str], k: int) -> list[list[Document]]:
        """The top k for each query; backends that answer several queries in one request (a retrieval server, a
        LangChain retriever's `batch`) override it."""
        return [self.search(query, k) for query in queries]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[LCDocument]:
        return [d.to_langchain() for d in self.search(query, self.k)]


def _is_index(name: str) -> bool:
    """Whether `name` opens as an index (Chroma + BM25, or a faiss index: open_index resolves both)."""
    try:
        open_index(name)
    except UnknownSpecError:
        return False
    except HopragError as error:
        if isinstance(error, RetrievalUnavailableError):
            raise
        return False  # not an index name at all (e.g. it has a '/' or a space)
    return True
