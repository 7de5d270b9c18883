"""ReAct baseline: the reasoner sees the raw retrieved pages as its observation."""

from hoprag.graphs import compile_method
from hoprag.graphs.react_family import build_react_family


def build():
    return compile_method(build_react_family("documents"), "react")


graph = build()
