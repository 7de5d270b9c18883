"""ReAct + BM25, the ReNAct paper's baseline: the same loop, but the observation is the top BM25
segments of the retrieved pages for the query (the paper's Table 7 shows five short segments)."""

from hoprag.graphs import compile_method
from hoprag.graphs.react_family import build_react_family


def build():
    return compile_method(build_react_family("segments"), "react-bm25")


graph = build()
