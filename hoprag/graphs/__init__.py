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


# The README's "Graphs" section: one diagram per exported graph, drawn from the compiled graph.
DIAGRAMS = ("renact", "react", "resp", "rag", "cot")


def mermaid(name: str) -> str:
    graph, _ = load_method(name)
    return graph.get_graph().draw_mermaid().strip()


def update_readme_diagrams(readme: str) -> str:
    """The README text with each block after a `<!-- diagram:NAME -->` marker redrawn from its graph."""
    import re

    def redraw(match: re.Match[str]) -> str:
        return f"{match.group(1)}```mermaid\n{mermaid(match.group(2))}\n```"

    return re.sub(r"(<!-- diagram:([\w-]+) -->\n)```mermaid\n.*?```", redraw, readme, flags=re.DOTALL)
