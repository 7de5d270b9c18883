"""One module per method, each exposing a compiled `graph` and a builder."""

from __future__ import annotations

from typing import Any

METHODS = {
    "renact": ("hoprag.graphs.renact", {"notes_mode": "parallel"}),
    "renact-iterative": ("hoprag.graphs.renact", {"notes_mode": "iterative"}),
    "react": ("hoprag.graphs.react", {}),
    "resp": ("hoprag.graphs.resp", {}),
    "rag": ("hoprag.graphs.rag", {}),
    "cot": ("hoprag.graphs.cot", {}),
}


def load_method(name: str) -> tuple[Any, dict[str, Any]]:
    """The compiled graph of a method and the context options the method name implies."""
    import importlib

    from hoprag.errors import UnknownSpecError

    if name not in METHODS:
        raise UnknownSpecError(f"unknown method '{name}'; known: {', '.join(METHODS)}")
    module, options = METHODS[name]
    return importlib.import_module(module).graph, options
