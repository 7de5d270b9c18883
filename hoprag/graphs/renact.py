"""ReNAct: ReAct with NotesWriting (parallel notes, or iterative notes with `notes_mode='iterative'`)."""

from hoprag.graphs.react_family import build_react_family


def build():
    return build_react_family(with_notes=True).compile(name="renact")


graph = build()
