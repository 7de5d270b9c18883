"""One module per method, each exposing a compiled `graph` and a builder."""

from __future__ import annotations

from typing import Any

from langgraph.graph import StateGraph

# method -> (module, options the method name implies)
METHODS = {
    # ReAct + NotesWriting: the ReNAct paper's "NotesWriting" rows (notes_mode as the context sets it, parallel by default)
    "renact": ("hoprag.graphs.renact", {}),
    "renact-iterative": ("hoprag.graphs.renact", {"notes_mode": "iterative"}),  # the ReNAct paper's "ReNAct" rows
    "react": ("hoprag.graphs.react", {}),
    "react-bm25": ("hoprag.graphs.react_bm25", {}),
    "resp": ("hoprag.graphs.resp", {}),
    "rag": ("hoprag.graphs.rag", {}),
    "cot": ("hoprag.graphs.cot", {}),
    "rearag": ("hoprag.graphs.rearag", {}),
    "furepa": ("hoprag.graphs.furepa", {}),
    "furepa-no-pa": ("hoprag.graphs.furepa", {"furepa_plan_assessor": False}),  # the paper's "w/o PA" ablation
    "ircot": ("hoprag.graphs.ircot", {}),
    "ircot-notes": ("hoprag.graphs.ircot_notes", {}),
    "flare": ("hoprag.graphs.flare", {}),
    "flare-notes": ("hoprag.graphs.flare_notes", {}),
    "iter-retgen": ("hoprag.graphs.iter_retgen", {}),
    "self-ask": ("hoprag.graphs.self_ask", {}),
    "replug": ("hoprag.graphs.replug", {}),
    "self-rag": ("hoprag.graphs.self_rag", {}),
    "search-o1": ("hoprag.graphs.search_o1", {}),
    "searchain": ("hoprag.graphs.searchain", {}),
    "infogent": ("hoprag.graphs.infogent", {}),
    "sure": ("hoprag.graphs.sure", {}),
    "long-context": ("hoprag.graphs.long_context", {}),
    "chatcot": ("hoprag.graphs.chatcot", {}),
    "recomp": ("hoprag.graphs.recomp", {}),
}

# What each method reads: whole Markdown pages (NotesWriting, and the ReAct baselines it compares
# against) or top-k passages (ReSP and standard RAG, whose papers use 100-word Wikipedia passages).
# IRCoT and FLARE read paragraphs, as their original code; with NotesWriting they read pages, as ReNAct. Infogent's
# Extractor reads whole web pages (ReNAct's Infogent rows: Wikipedia pages).
READS_PAGES = {"renact", "renact-iterative", "react", "react-bm25", "ircot-notes", "flare-notes", "infogent"}
# The run-metadata key that carries a compiled graph's method name to its nodes (`hoprag.context.graph_method`).
METHOD_METADATA = "hoprag_method"

# Methods that never retrieve: their retrieval recall is n/a, not 0.
CLOSED_BOOK = {"cot"}
# Methods whose input takes the question's own corpus (a dataset record's paragraphs) where `hoprag eval` has one.
READS_OWN_CORPUS = {"long-context"}


def reads_pages(method: str | None) -> bool:
    return method in READS_PAGES


def compile_method(builder: StateGraph, method: str) -> Any:
    """Compile a method's graph; its name travels in the run metadata, so every node applies the
    method's preset (`hoprag.context.context_of`), whoever runs the graph (CLI, server, a LangChain app)."""
    return builder.compile(name=method).with_config(metadata={METHOD_METADATA: method})


def load_method(name: str) -> tuple[Any, dict[str, Any]]:
    """The compiled graph of a method and the context options the method name implies."""
    import importlib

    from hoprag.errors import UnknownSpecError

    if name not in METHODS:
        raise UnknownSpecError(f"unknown method '{name}'; known: {', '.join(METHODS)}")
    module, options = METHODS[name]
    return importlib.import_module(module).graph, options


def method_counters(method: str, result: dict[str, Any]) -> dict[str, int]:
    """A method's own counters of one run (`hoprag eval` records them per question and averages them in summary.json):
    its graph module's `counters(result)` of `run_question`'s result, or none."""
    import importlib

    if method not in METHODS:
        return {}
    count = getattr(importlib.import_module(METHODS[method][0]), "counters", None)
    return dict(count(result)) if callable(count) else {}


def method_context(method: str, ctx: Any) -> Any:
    """`ctx` as `method` runs with it: the options its name implies (renact-iterative: iterative notes), then
    the preset's. Both a run and its recorded configuration use this."""
    _, implied = load_method(method)
    return ctx.with_options(**implied).resolved(method)


# The README's "Graphs" section: one diagram per exported graph, drawn from the compiled graph.
DIAGRAMS = ("renact", "react", "react-bm25", "resp", "rag", "cot", "rearag", "furepa", "ircot", "ircot-notes", "flare", "flare-notes",
            "iter-retgen", "self-ask", "search-o1", "searchain", "sure", "long-context", "chatcot", "recomp",
            "replug", "self-rag", "infogent")


def mermaid(name: str) -> str:
    graph, _ = load_method(name)
    return graph.get_graph().draw_mermaid().strip()


def update_readme_diagrams(readme: str) -> str:
    """The README text with each block after a `<!-- diagram:NAME -->` marker redrawn from its graph."""
    import re

    def redraw(match: re.Match[str]) -> str:
        return f"{match.group(1)}```mermaid\n{mermaid(match.group(2))}\n```"

    return re.sub(r"(<!-- diagram:([\w-]+) -->\n)```mermaid\n.*?```", redraw, readme, flags=re.DOTALL)
