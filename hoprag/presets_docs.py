"""docs/presets.md, generated from the preset data (`hoprag.presets`) and the Context descriptions, so the page cannot
go stale: `python -m hoprag.presets_docs` rewrites it and a test compares."""

from __future__ import annotations

from typing import Any

from hoprag.presets import (  # noqa: F401
    _PAPER_ADDS_NOTHING,
    PRESET_METHOD,
    PRESET_NAMES,
    PRESETS,
    _shown,
    option_reason,
    reads_option,
)


def markdown_cell(text: str) -> str:
    """Text as one Markdown table cell: `|` escaped, and `<s>`/`<answer>` shown rather than read as HTML."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def presets_markdown() -> str:
    """docs/presets.md: every option the presets set, its values, what it does (its Context description) and why each
    preset sets it, then each method's own values. `python -m hoprag.presets_docs` rewrites the file."""
    from dataclasses import fields

    from hoprag.context import Context

    described = {f.name: f.metadata.get("description", "") for f in fields(Context)}
    shared = [PRESETS[name][0] for name in PRESET_NAMES]
    paper, small = shared[:2]
    lines = [
        "# Presets",
        "",
        "<!-- Generated from hoprag/presets.py and the Context descriptions in hoprag/context.py: do not edit by hand; "
        "rewrite it with `python -m hoprag.presets_docs`. -->",
        "",
        "A preset fills every option a run leaves unset. `paper` runs each method as its paper describes it, with "
        "nothing added; `small` adds the adaptations that make the methods work on small local models, each a "
        "named option. An option set explicitly (`--option NAME=VALUE`, a Context field) always wins over the "
        "preset, so `--preset small --option grounded_notes=false` turns one adaptation off. "
        "Every adaptation is off in `paper`, which adds nothing to the paper; the reason given for an adaptation is "
        "`small`'s. `flashrag` runs the methods of FlashRAG's benchmark table (rag, ircot, flare, iter-retgen, "
        "self-ask, sure, recomp, replug, self-rag, rearag) with FlashRAG's settings (greedy, top-5, 32 output tokens "
        "unless the method says otherwise) and no adaptation; another method under it is refused. "
        "`hoprag presets show [--preset P] [--method M]` prints the same for one preset and method.",
        "",
        "## Options every method shares",
        "",
        "The `why` column gives `paper`'s and `small`'s reasons; `hoprag presets show --preset flashrag` gives "
        "`flashrag`'s.",
        "",
        "| option | " + " | ".join(PRESET_NAMES) + " | what it does | why |",
        "|---|" + "---|" * len(PRESET_NAMES) + "---|---|",
    ]
    for option in dict.fromkeys(option for preset in shared for option in preset):
        why_paper, why_small = (option_reason(name, None, option) if option in preset else ""
                                for name, preset in zip(("paper", "small"), (paper, small), strict=True))
        # every adaptation is off in `paper`, for the one reason the page's introduction gives
        why = (why_paper if why_paper == why_small or not why_small else why_small if why_paper in (_PAPER_ADDS_NOTHING, "")
               else f"paper: {why_paper} small: {why_small}")
        values = [f"`{_shown(preset[option])}`" if option in preset else "not set" for preset in shared]
        lines.append(f"| `{option}` | {' | '.join(values)} | {markdown_cell(described.get(option, ''))} | "
                     f"{markdown_cell(why)} |")
    lines += ["", "## Each method's own values", "",
              "Where a method's paper or original code sets a value of its own, it replaces the shared one; of the "
              "shared options, each method reads only those its section names. "
              + ", ".join(f"`{alias}` takes the values of `{method}`" for alias, method in PRESET_METHOD.items()) + ".",
              ""]
    methods = dict.fromkeys(method for name in PRESET_NAMES for method in PRESETS[name][1])
    for method in methods:
        own = [PRESETS[name][1].get(method, {}) for name in PRESET_NAMES]
        lines += [f"### {method}", "", "| option | " + " | ".join(PRESET_NAMES) + " | why |",
                  "|---|" + "---|" * len(PRESET_NAMES) + "---|"]
        for option in dict.fromkeys(option for values in own for option in values):
            values = [f"`{_shown(values[option])}`" if option in values else "" for values in own]
            reasons = {name: option_reason(name, method, option) for name, values in zip(PRESET_NAMES, own, strict=True)
                       if option in values}
            distinct = set(reasons.values())
            why = next(iter(distinct)) if len(distinct) == 1 else " ".join(f"{k}: {v}" for k, v in reasons.items())
            lines.append(f"| `{option}` | {' | '.join(values)} | {markdown_cell(why)} |")
        # the shared options the method reads (`hoprag presets show --method` lists the same); the others it ignores
        reads = [option for option in dict.fromkeys(option for preset in shared for option in preset)
                 if reads_option(method, option) and not any(option in values for values in own)]
        lines += ["", f"It also reads the shared options {', '.join(f'`{option}`' for option in reads)}."
                  if reads else "It reads no other shared option.", ""]
    return "\n".join(lines)


DOCS_FILE = "docs/presets.md"  # relative to the repository root


def write_docs(root: Any = None) -> Any:
    """Rewrite docs/presets.md from the preset data; returns its path."""
    from pathlib import Path

    path = Path(root or Path(__file__).resolve().parents[1]) / DOCS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(presets_markdown(), encoding="utf-8")
    return path


if __name__ == "__main__":  # python -m hoprag.presets_docs
    print(f"wrote {write_docs()}")
