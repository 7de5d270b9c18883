"""ReNAct: ReAct with NotesWriting (parallel notes, or iterative notes with `notes_mode='iterative'`)."""

from hoprag.graphs import compile_method
from hoprag.graphs.react_family import build_react_family


def build():
    return compile_method(build_react_family("notes"), "renact")


graph = build()
