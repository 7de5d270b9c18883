"""`hoprag ARGS` run in process through the real entry point (`hoprag.cli.main`), as a user's shell runs it: the
exit code and both streams, and the one-line error that bad input must give."""

from __future__ import annotations

import sys


def run_main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `hoprag ARGS`; never a traceback."""
    from hoprag.cli import main

    monkeypatch.setattr(sys, "argv", ["hoprag", *args])
    code = 0
    try:
        main()
    except SystemExit as exited:
        code = exited.code if isinstance(exited.code, int) else 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out, captured.err
    return code, captured.out, captured.err


def one_line_error(monkeypatch, capsys, *args: str) -> str:
    """The one stderr line of a refused `hoprag ARGS`, which must exit non-zero."""
    code, _, stderr = run_main(monkeypatch, capsys, *args)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code != 0 and len(lines) == 1, (code, stderr)
    return lines[0]
