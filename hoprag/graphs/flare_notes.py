"""FLARE + NotesWriting (NotesWriting paper §3.3, Eq. 11)."""

from hoprag.graphs import compile_method
from hoprag.graphs.flare import build_flare


def build():
    return compile_method(build_flare(with_notes=True), "flare-notes")


graph = build()
