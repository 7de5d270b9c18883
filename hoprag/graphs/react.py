"""ReAct baseline: the same reasoner, with the raw retrieved documents as the observation.
With `retriever='bm25'` in the context it is the papers' ReAct + BM25 baseline."""

from hoprag.graphs.react_family import build_react_family


def build():
    return build_react_family(with_notes=False).compile(name="react")


graph = build()
