"""ReAct with NotesWriting: parallel notes (`renact`: the NotesWriting paper's ReAct + NotesWriting, the ReNAct
paper's "NotesWriting" rows), or iterative notes that each see the earlier ones (`renact-iterative`, or
`notes_mode='iterative'`: the ReNAct paper's "ReNAct" rows)."""

from hoprag.graphs import compile_method
from hoprag.graphs.react_family import build_react_family


def build():
    return compile_method(build_react_family("notes"), "renact")


graph = build()
