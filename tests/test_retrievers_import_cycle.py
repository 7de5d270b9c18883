"""hoprag.retrievers.index and hoprag.retrievers.faiss_index depend one way: index opens both kinds of index, the faiss
kind imports nothing of it (what both need is in hoprag.retrievers.manifests). Imports inside functions count too:
they are the same cycle, only deferred."""

from __future__ import annotations

import ast
from pathlib import Path

import hoprag

PACKAGE = Path(hoprag.__file__).resolve().parent


def imported_modules(module: str) -> set[str]:
    """Every hoprag module `module` imports, at its top or inside a function (`from A import b` names A and A.b)."""
    tree = ast.parse((PACKAGE.parent / (module.replace(".", "/") + ".py")).read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return {name for name in found if name.startswith("hoprag")}


def test_faiss_index_does_not_import_index():
    assert "hoprag.retrievers.index" not in imported_modules("hoprag.retrievers.faiss_index")


def test_the_shared_module_imports_neither_kind():
    imported = imported_modules("hoprag.retrievers.manifests")
    assert not imported & {"hoprag.retrievers.index", "hoprag.retrievers.faiss_index"}


def test_open_index_still_opens_the_faiss_kind():
    from hoprag.retrievers import faiss_index, index

    assert index.FaissIndex is faiss_index.FaissIndex and index.faiss_manifest is faiss_index.faiss_manifest
