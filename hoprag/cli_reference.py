"""The CLI reference page (docs/cli.md), generated from the Typer app so it cannot go stale.

Regenerate with `python -m hoprag.cli_reference docs/cli.md`; a test fails when the page differs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

HEADER = """# CLI reference

Generated from the command-line app by `python -m hoprag.cli_reference docs/cli.md`; a test fails when
this page is stale. Every command also answers `--help`.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(param: Any) -> str:
    default = param.default
    if default is None or default == () or callable(default) or getattr(param, "is_flag", False) and not default:
        return ""
    if isinstance(default, (list, tuple)):
        return ", ".join(str(item) for item in default)
    return str(default)


def _command_section(path: str, command: Any, lines: list[str]) -> None:
    context = command.context_class(command, info_name=path)
    lines += [f"## `{path}`", ""]
    if command.help:
        lines += [" ".join(command.help.split()), ""]
    usage = " ".join(command.collect_usage_pieces(context))
    lines += ["```", f"{path} {usage}", "```", ""]
    rows = []
    for param in command.params:
        if param.name == "help" or getattr(param, "hidden", False):
            continue
        if getattr(param, "param_type_name", "") == "argument":
            name = (param.metavar or param.name or "").upper()
            help_text = getattr(param, "help", None) or ""
        else:
            name = ", ".join([*param.opts, *param.secondary_opts])
            help_text = getattr(param, "help", None) or ""
        rows.append(f"| `{_cell(name)}` | {_cell(_default(param))} | {_cell(help_text)} |")
    if rows:
        lines += ["| argument or option | default | what |", "|---|---|---|", *rows, ""]


def _walk(path: str, command: Any, lines: list[str]) -> None:
    if hasattr(command, "commands"):  # a group (Typer may bring its own click classes)
        for name in sorted(command.commands):
            _walk(f"{path} {name}", command.commands[name], lines)
    else:
        _command_section(path, command, lines)


def cli_reference_markdown() -> str:
    """The whole CLI reference page as markdown."""
    from hoprag.cli import app

    root = typer.main.get_command(app)
    lines = [HEADER]
    _walk("hoprag", root, lines)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = cli_reference_markdown()
    if args:
        Path(args[0]).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
