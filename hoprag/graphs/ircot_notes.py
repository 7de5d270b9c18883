"""IRCoT + NotesWriting (NotesWriting paper §3.3, Eq. 10)."""

from hoprag.graphs import compile_method
from hoprag.graphs.ircot import build_ircot


def build():
    return compile_method(build_ircot(with_notes=True), "ircot-notes")


graph = build()
