"""A smaller, explained option surface: `hoprag presets show` prints every option a preset sets with its value
and a one-sentence reason; Context descriptions say what an option does, not its measurement history; and
docs/presets.md is generated from the same data (and stays fresh)."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

import pytest

from hoprag.context import Context
from hoprag.graphs import METHODS
from hoprag.presets import (
    ADAPTATION_METHODS,
    PRESET_METHOD,
    PRESET_NAMES,
    PRESETS,
    SHARED_OPTION_METHODS,
    SHARED_OPTION_UNREAD_BY,
    option_reason,
    preset_has,
    preset_options,
    preset_rows,
    reads_option,
)
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
    own = PRESETS[preset][1].get(PRESET_METHOD.get(method, method), {})
    options = {k: v for k, v in preset_options(preset, method).items() if k in own or reads_option(method, k)}
    assert set(rows) == set(options)
    for option, value in options.items():
        marker, text, reason = rows[option]
        assert text == (repr(value) if isinstance(value, str) else str(value)), option
        assert reason == option_reason(preset, method, option) and reason.endswith("."), option


def test_a_methods_own_values_are_marked_with_their_own_reasons():
    rows = shown(hoprag("presets", "show", "--preset", "paper", "--method", "rearag").stdout)
    assert rows["k"] == ("*", "3", "ReaRAG's official code: top-3 passages per search.")
    assert rows["top_p"][:2] == ("*", "0.85") and rows["answer_choices"][0] == " "
    small = shown(hoprag("presets", "show", "--preset", "small", "--method", "renact").stdout)
    assert small["temperature"][1] == "0.0" and "Greedy" in small["temperature"][2]


def test_without_options_both_presets_and_every_methods_own_values_are_shown():
    done = hoprag("presets", "show")
    assert done.returncode == 0, done.stderr
    assert "preset paper, the options every method shares" in done.stdout
    assert "preset small, the options every method shares" in done.stdout
    assert "preset paper, method rearag: its own values" in done.stdout
    assert "preset small, method ircot: its own values" in done.stdout


def test_one_method_shows_only_the_options_it_reads():
    recomp = shown(hoprag("presets", "show", "--preset", "small", "--method", "recomp").stdout)
    assert {"k", "temperature", "max_tokens", "recomp_compressor"} <= set(recomp)
    assert recomp["recomp_compressor"][0] == "*" and recomp["answer_choices"][0] == " "
    assert not {"flare_theta", "max_sentences", "rearag_invalid_feedback", "resp_local_input", "ircot_reader",
                "max_steps", "lenient_notes"} & set(recomp)
    ircot = shown(hoprag("presets", "show", "--preset", "paper", "--method", "ircot").stdout)
    assert {"max_sentences", "max_paragraphs", "paragraph_words", "ircot_reader", "stop_on_empty_step"} <= set(ircot)
    assert not {"flare_theta", "max_steps", "max_iterations", "resp_on_repeat"} & set(ircot)
    renact = shown(hoprag("presets", "show", "--preset", "small", "--method", "renact").stdout)
    assert {"lenient_notes", "grounded_notes", "partial_notes", "answer_from_notes", "max_steps"} <= set(renact)
    assert not {"max_sentences", "flare_beta", "notes_accumulate", "rearag_forced_finish"} & set(renact)
    cot = shown(hoprag("presets", "show", "--preset", "paper", "--method", "cot").stdout)
    assert "temperature" in cot and "k" not in cot  # closed-book: it never retrieves
    everything = hoprag("presets", "show", "--preset", "small").stdout  # without --method: the whole shared part
    assert set(PRESETS["small"][0]) <= set(shown(everything))


# Options every method's LLM calls or retrieval read (llm.py, nodes/retrieve.py): a new shared option is either one
# of these or declared in SHARED_OPTION_METHODS or ADAPTATION_METHODS.
EVERY_METHOD = {"temperature", "top_p", "max_tokens", "seed", "k"}


def test_every_shared_option_says_which_methods_read_it():
    shared = {option for preset in PRESET_NAMES for option in PRESETS[preset][0]}
    undeclared = shared - EVERY_METHOD - set(SHARED_OPTION_METHODS) - set(ADAPTATION_METHODS)
    assert not undeclared, f"add the methods that read {undeclared} to SHARED_OPTION_METHODS in hoprag/presets.py"
    declared = [*SHARED_OPTION_METHODS.values(), *ADAPTATION_METHODS.values(), *SHARED_OPTION_UNREAD_BY.values()]
    assert set().union(*declared) <= set(METHODS)


def _source(module: str) -> Path | None:
    base = ROOT / module.replace(".", "/")
    return next((path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()), None)


def _modules(module: str) -> set[str]:
    """`module` and every hoprag module it imports, transitively; not the option tables (context, presets)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        path = _source(name) if name.startswith("hoprag") and name not in seen else None
        if path is None or name in ("hoprag.context", "hoprag.presets"):
            continue
        seen.add(name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                todo += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                todo += [alias.name for alias in node.names]
    return seen


def _attributes(tree: ast.AST) -> set[str]:
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def test_every_option_shown_for_a_method_is_one_its_code_can_read():
    """An option `presets show --method M` lists is read (`ctx.option`, or a Context helper that reads it) somewhere
    in the code M's graph module imports; a method's own preset values are always listed."""
    context = ast.parse((ROOT / "hoprag" / "context.py").read_text(encoding="utf-8"))
    helpers = {fn.name: _attributes(fn) for cls in context.body if isinstance(cls, ast.ClassDef) and cls.name == "Context"
               for fn in cls.body if isinstance(fn, ast.FunctionDef)}
    unread = {}
    for method, (module, _) in METHODS.items():
        read = set().union(*(_attributes(ast.parse(_source(m).read_text(encoding="utf-8"))) for m in _modules(module)))
        read |= set().union(*(helpers[name] for name in read & set(helpers)))
        for preset in PRESET_NAMES:
            if not preset_has(preset, method):
                continue
            rows = {option: own for option, _, own, _ in preset_rows(preset, method)}
            own_values = PRESETS[preset][1].get(PRESET_METHOD.get(method, method), {})
            assert all(rows.get(option) for option in own_values), (preset, method)
            unread.update({(preset, method, option): module for option, own in rows.items()
                           if not own and option not in read})
    assert not unread, unread


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
    assert_one_line_error(hoprag("ask", "Who?", "--preset", "tiny"), "use auto, paper, small or flashrag")
