"""A smaller, explained option surface: `hoprag presets show` prints every option a preset sets with its value
and a one-sentence reason; Context descriptions say what an option does, not its measurement history; and
docs/presets.md is generated from the same data (and stays fresh)."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from hoprag.context import Context
from hoprag.presets import PRESET_NAMES, PRESETS, option_reason, preset_options
from hoprag.presets_docs import markdown_cell, presets_markdown

from .test_cli import assert_one_line_error, hoprag

ROOT = Path(__file__).resolve().parents[1]


def shown(stdout: str) -> dict[str, tuple[str, str, str]]:
    """`hoprag presets show` lines as option -> (own marker, value, reason)."""
    rows = {}
    for line in stdout.splitlines():
        match = re.match(r"^  ([* ]) (\w+) +(\S+) +(.+)$", line)
        if match:
            rows[match[2]] = (match[1], match[3], match[4])
    return rows


@pytest.mark.parametrize(("preset", "method"), [("small", "rearag"), ("paper", "resp"), ("small", "renact-iterative")])
def test_presets_show_prints_every_option_its_value_and_a_reason(preset, method):
    done = hoprag("presets", "show", "--preset", preset, "--method", method)
    assert done.returncode == 0, done.stderr
    rows = shown(done.stdout)
    options = preset_options(preset, method)
    assert set(rows) == set(options)
    for option, value in options.items():
        marker, text, reason = rows[option]
        assert text == (repr(value) if isinstance(value, str) else str(value)), option
        assert reason == option_reason(preset, method, option) and reason.endswith("."), option


def test_a_methods_own_values_are_marked_with_their_own_reasons():
    rows = shown(hoprag("presets", "show", "--preset", "paper", "--method", "rearag").stdout)
    assert rows["k"] == ("*", "3", "ReaRAG's official code: top-3 passages per search.")
    assert rows["top_p"][:2] == ("*", "0.85") and rows["concise_answer"][0] == " "
    small = shown(hoprag("presets", "show", "--preset", "small", "--method", "renact").stdout)
    assert small["temperature"][1] == "0.0" and "Greedy" in small["temperature"][2]


def test_without_options_both_presets_and_every_methods_own_values_are_shown():
    done = hoprag("presets", "show")
    assert done.returncode == 0, done.stderr
    assert "preset paper, the options every method shares" in done.stdout
    assert "preset small, the options every method shares" in done.stdout
    assert "preset paper, method rearag: its own values" in done.stdout
    assert "preset small, method ircot: its own values" in done.stdout


def test_a_method_name_that_sets_an_option_says_so():
    assert "renact-iterative also sets, by its name: notes_mode=iterative" in hoprag(
        "presets", "show", "--method", "renact-iterative").stdout


def test_bad_preset_or_method_is_one_line():
    assert_one_line_error(hoprag("presets", "show", "--preset", "tiny"), "unknown preset 'tiny'")
    assert_one_line_error(hoprag("presets", "show", "--method", "renakt"), "unknown method 'renakt'")


def test_every_option_a_preset_sets_has_a_reason():
    """A new option in a preset needs its one-sentence reason in hoprag/presets.py (REASONS or METHOD_REASONS)."""
    missing = [f"{preset}/{method or 'shared'}: {option}" for preset in PRESET_NAMES
               for method in [None, *PRESETS[preset][1]] for option in preset_options(preset, method)
               if not option_reason(preset, method, option)]
    assert not missing, missing


HISTORY = re.compile(r"\bF1\b|\bEM\b|BENCHMARKS|\b[Ii]ssue \d|%|\b[Mm]easured\b|\b1\.5B\b|->|\b[Cc]ommit\b|\b[Ss]cored\b")


def test_context_descriptions_say_what_an_option_does_not_its_measurement_history():
    history = {f.name: HISTORY.findall(f.metadata["description"]) for f in fields(Context)}
    assert not {name: found for name, found in history.items() if found}


def test_the_history_pattern_catches_what_descriptions_used_to_carry():
    old = ["Off in both presets (measured on ReaRAG small: no invalid outputs, but F1 -10.4 from early finishes).",
           "invalid outputs 24.9% -> 15.9% (BENCHMARKS.md, issue 13)", "made the 1.5B model answer 'Yes'"]
    assert all(HISTORY.search(text) for text in old)


def test_docs_presets_is_generated_from_the_preset_data():
    """docs/presets.md is presets_markdown()'s output; after changing a preset or a Context description, rewrite it
    with `python -m hoprag.presets_docs`."""
    assert (ROOT / "docs" / "presets.md").read_text(encoding="utf-8") == presets_markdown(), (
        "docs/presets.md is stale: run python -m hoprag.presets_docs")


def test_the_docs_page_names_every_option_with_its_values_description_and_reason():
    page = presets_markdown()
    description = {f.name: f.metadata["description"] for f in fields(Context)}
    for option, value in PRESETS["small"][0].items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{option}` |"))
        assert f"`{value!r}`" in row or f"`{value}`" in row, option
        assert markdown_cell(description[option]) in row, option
        assert markdown_cell(option_reason("small", None, option)) in row, option
    assert "### rearag" in page and "| `rearag_invalid_retries` | `20` | `5` |" in page


def auto_ctx(**options):
    from hoprag.cli import make_context

    return make_context(retriever="auto", k=None, preset="auto", **options)


def test_the_auto_preset_is_small_for_the_embedded_models_and_paper_for_every_other(monkeypatch):
    for role in ("REASONER", "NOTES", "SUMMARIZER", "GENERATOR", "ANSWERER"):
        monkeypatch.delenv(f"HOPRAG_{role}_LLM", raising=False)
    assert auto_ctx().preset == "small"  # the default model is the embedded one
    assert auto_ctx(llm="local:qwen2.5-coder-1.5b").preset == "small"
    assert auto_ctx(llm="openai:gpt-4o-mini").preset == "paper"
    assert auto_ctx(llm="local-server:qwen").preset == "paper"
    assert auto_ctx(llm="openai:gpt-4o-mini", generator_llm="local:x.gguf").preset == "small"  # one embedded role
    monkeypatch.setenv("HOPRAG_LLM", "openai:gpt-4o-mini")
    assert auto_ctx().preset == "paper"
    from hoprag.cli import make_context

    assert make_context(retriever="auto", k=None, preset="paper", llm="local:x.gguf").preset == "paper"  # named wins


def test_ask_and_eval_default_to_auto_print_the_choice_and_record_it(tmp_path):
    import json

    from .openai_stub import start_stub

    corpus = tmp_path / "tiny.jsonl"
    corpus.write_text(json.dumps({"id": "1", "title": "Rush", "text": "Rush is a Canadian rock band."}))
    assert hoprag("index", "build", "tiny", "--source", f"jsonl:{corpus}").returncode == 0
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Which band?", "answers": ["Rush"]}))
    stub = start_stub()
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{stub.server_port}/v1", "OPENAI_API_KEY": "x"}
    try:
        asked = hoprag("ask", "Which band?", "--index", "tiny", "--retriever", "bm25", "--llm", "openai:stub",
                       "--method", "rag", env=env)
        evaluated = hoprag("eval", "--method", "rag", "--dataset", f"jsonl:{data}", "--index", "tiny", "--retriever",
                           "bm25", "--llm", "openai:stub", "--out", str(tmp_path / "run"), env=env)
    finally:
        stub.shutdown()
    assert asked.returncode == 0, asked.stderr
    assert "--preset auto: paper (model openai:stub, not an embedded one)" in asked.stderr
    assert evaluated.returncode == 0, evaluated.stderr
    assert "preset paper (auto: model openai:stub, not an embedded one)" in evaluated.stdout
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["config"]["preset"] == "paper"


def test_a_bad_preset_names_auto_too():
    assert_one_line_error(hoprag("ask", "Who?", "--preset", "tiny"), "use auto, paper or small")
