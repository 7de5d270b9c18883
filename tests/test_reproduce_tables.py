"""The papers' tables in hoprag/reproduce/tables: transcribed right (sampled cells checked against the paper
texts in ../shared/papers), every row re-measurable or saying why not, and `hoprag reproduce --list`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace

import pytest

from hoprag.graphs import METHODS
from hoprag.presets import PRESET_NAMES
from hoprag.reproduce.tables import (
    TableFormatError,
    load_table,
    load_tables,
    parse_table,
    row_status,
    table_ids,
)

from .conftest import SHARED_PAPERS, needs_shared_papers

GPT = "GPT-4o-mini"
LLAMA = "Llama-3.1-70B-Instruct"  # NotesWriting's group name
LLAMA_003 = "Llama-3.1-70B-Inst"  # ReNAct's, as its tables print it

# Where each table's numbers stand in the paper text: (paper file, the block's first line starts with, the line
# that ends the block starts with). The block runs from the last `begin` line before the first `end` line.
BLOCKS = {
    "resp1": ("001_b18443c2bc0aef0b.txt", "Method\tPipeline\tHotpotQA", "Table 1: Performance comparison"),
    "nw2": ("000_510e996df240c65b.txt", "Model\tSetting\tBenchmark", "Table 2: ReAct and"),
    "nw3": ("000_510e996df240c65b.txt", "Model\tSetting\tBenchmark", "Table 3: IRCoT performance"),
    "nw4": ("000_510e996df240c65b.txt", "Model\tSetting\tBenchmark", "Table 4: FLARE performance"),
    "nw8": ("000_510e996df240c65b.txt", "Score (%)\tInput", "Table 8: IRCoT results"),
    "nw9": ("000_510e996df240c65b.txt", "Model\tSetting\tBenchmark", "Table 9: FLARE results"),
    "rn1": ("003_4df998b9077e622f.txt", "M\tDS\tMethod", "Table 1: Results on FanoutQA"),
    "rn2": ("003_4df998b9077e622f.txt", "M\tDS\tMethod", "Table 2: Evaluations"),
    "rr1": ("002_160e91e7528f6a3f.txt", "Category | Model | Multi-hop", "4.1 Experimental setup"),
    "fp1": ("004_d9bd393083a1464b.txt", "Table 1: All metrics of detail", "Table 2: Ablation results"),
}

# (table id, row label, row group, dataset, metric) = the number on the paper's line (block, line label, which
# occurrence of that label in the block, 0-based; which number after the label, 0-based, "-" counted).
SAMPLES = [
    ("resp-table1", "Standard RAG", None, "hotpotqa", "f1", "resp1", "Standard RAG", 0, 0),
    ("resp-table1", "SuRe", None, "2wiki", "f1", "resp1", "SuRe", 0, 1),
    ("resp-table1", "IRCoT", None, "hotpotqa", "f1", "resp1", "IRCoT", 0, 0),
    ("resp-table1", "ReSP(ours)", None, "2wiki", "f1", "resp1", "ReSP(ours)", 0, 1),
    ("notes-table2", "ReAct", GPT, "fanoutqa", "f1", "nw2", "Fanout-QA", 0, 0),
    ("notes-table2", "ReAct + NotesWriting (ReNAct)", GPT, "frames", "notes_input_tokens", "nw2", "Frames", 1, 5),
    ("notes-table2", "ReAct", LLAMA, "hotpotqa", "avg_steps", "nw2", "Hotpot-QA", 2, 2),
    ("notes-table2", "ReAct + NotesWriting (ReNAct)", LLAMA, "multihop-rag", "main_input_tokens", "nw2",
     "MultiHop-RAG", 3, 3),
    ("notes-table2", "ReAct + NotesWriting (ReNAct)", LLAMA, "fanoutqa", "notes_output_tokens", "nw2", "Fanout-QA", 3, 6),
    ("notes-table3", "IRCoT", GPT, "hotpotqa", "judge", "nw3", "HotpotQA", 0, 1),
    ("notes-table3", "IRCoT + NotesWriting", GPT, "frames", "f1", "nw3", "Frames", 1, 0),
    ("notes-table3", "IRCoT", LLAMA, "multihop-rag", "f1", "nw3", "M-RAG", 2, 0),
    ("notes-table3", "IRCoT + NotesWriting", LLAMA, "fanoutqa", "judge", "nw3", "FanoutQA", 3, 1),
    ("notes-table3", "IRCoT", GPT, "multihop-rag", "main_input_tokens", "nw8", "MultiHop-RAG", 0, 2),
    ("notes-table3", "IRCoT + NotesWriting", LLAMA, "fanoutqa", "notes_input_tokens", "nw8", "Fanout-QA", 3, 4),
    ("notes-table3", "IRCoT + NotesWriting", GPT, "hotpotqa", "notes_output_tokens", "nw8", "Hotpot-QA", 1, 5),
    ("notes-table4", "FLARE", GPT, "frames", "f1", "nw4", "Frames", 0, 0),
    ("notes-table4", "FLARE + NotesWriting", GPT, "hotpotqa", "judge", "nw4", "HotpotQA", 1, 1),
    ("notes-table4", "FLARE", LLAMA, "hotpotqa", "f1", "nw4", "Hotpot-QA", 0, 0),
    ("notes-table4", "FLARE + NotesWriting", LLAMA, "multihop-rag", "judge", "nw4", "M-RAG", 3, 1),
    ("notes-table4", "FLARE + NotesWriting", GPT, "frames", "notes_output_tokens", "nw9", "Frames", 1, 5),
    ("notes-table4", "FLARE", LLAMA, "multihop-rag", "main_output_tokens", "nw9", "MultiHop-RAG", 2, 3),
    ("renact-table1", "ReAct", LLAMA_003, "fanoutqa", "avg_tokens", "rn1", "ReAct", 0, 2),
    ("renact-table1", "NotesWriting", LLAMA_003, "frames", "judge", "rn1", "NotesWriting", 1, 1),
    ("renact-table1", "ReNAct", GPT, "fanoutqa", "f1", "rn1", "ReNAct", 2, 0),
    ("renact-table1", "CoT", GPT, "frames", "avg_tokens", "rn1", "CoT", 3, 2),
    ("renact-table1", "ReAct + BM25", GPT, "frames", "avg_steps", "rn1", "ReAct + BM25", 3, 3),
    ("renact-table2", "ReAct + BM25", LLAMA_003, "hotpotqa", "f1", "rn2", "ReAct + BM25", 1, 0),
    ("renact-table2", "ReAct", GPT, "multihop-rag", "judge", "rn2", "ReAct", 2, 1),
    ("renact-table2", "ReNAct", GPT, "hotpotqa", "avg_tokens", "rn2", "ReNAct", 3, 2),
    ("rearag-table1", "GLM-4-32B(128k)", "In-context", "hotpotqa", "judge", "rr1", "GLM-4-32B(128k)", 0, 2),
    ("rearag-table1", "GLM-4-32B(128k)", "Vanilla RAG", "nq", "em", "rr1", "GLM-4-32B(128k)", 1, 7),
    ("rearag-table1", "SearChain(GPT-4o)", "Advanced RAG", "iirc", "em", "rr1", "SearChain(GPT-4o)", 0, 5),
    ("rearag-table1", "ReaRAG-9B", "Ours", "musique", "judge", "rr1", "ReaRAG-9B", 0, 0),
    ("furepa-table1", "OurModel", None, "hotpotqa", "acc", "fp1", "OurModel", 0, 5),
    ("furepa-table1", "-w/o PA", None, "2wiki", "sp_recall", "fp1", "-w/o PA", 1, 9),
    ("furepa-table1", "SearChain", None, "musique", "avg_tokens", "fp1", "SearChain", 2, 14),
    ("furepa-table1", "IterRetGen", None, "hotpotqa", "f1", "fp1", "IterRetGen", 0, 2),
    ("furepa-table1", "ChatCot", None, "2wiki", "em", "fp1", "ChatCot", 1, 1),
]

# FlashRAG's table is not among the papers: these lines are copied verbatim from its README (github.com/RUC-NLPIR/
# FlashRAG, commit 1ee524901aa3daf009f97b7a31e7a1b58eee8206, "Supporting Methods"), links cut.
FLASHRAG_README_LINES = """
| Standard RAG | Sequential  | 35.1    | 58.9          | 35.3          | 21.0       | 36.7       | 15.7      |  |
| Self-RAG | Loop        | 36.4    | 38.2          | 29.6          | 25.1       | 32.7       | 21.9      | Use trained selfrag-llama2-7B |
| FLARE | Loop        | 22.5    | 55.8          | 28.0          | 33.9       | 20.7       | 20.2      |  |
| IRCoT | Loop        | 33.3    | 56.9          | 41.5          | 32.4       | 45.6       | 20.7      |  |
| ReaRAG | Reasoning | 26.3 | 51.8 | 24.6 | 42.9 | 41.6 | 21.2 | 41.9 | ReaRAG-9B |
"""
# ReSP's Table 1 prints FlashRAG's numbers for these rows (FlashRAG row -> ReSP row).
SAME_AS_RESP = {"SuRe": "SuRe", "RECOMP-abstractive": "RECOMP", "REPLUG": "REPLUG", "Iter-Retgen, ITRG": "Iter-RetGen"}

_NUMBER = re.compile(r"^(\d+(?:\.\d+)?)([KM]?)$")


def _number(token: str) -> float | None:
    """A number as the papers print it ("116K", "1.4M", "<b>47.2</b>"); None for "-" (not reported)."""
    token = re.sub(r"<[^>]+>", "", token)
    if token == "-":
        return None
    match = _NUMBER.match(token)
    if match is None:
        raise ValueError(token)
    return float(match.group(1)) * {"": 1, "K": 1_000, "M": 1_000_000}[match.group(2)]


def _block(block: str) -> list[str]:
    file, begin, end = BLOCKS[block]
    lines = (SHARED_PAPERS / file).read_text(encoding="utf-8").splitlines()
    stop = next(i for i, line in enumerate(lines) if line.startswith(end))
    start = max(i for i in range(stop) if lines[i].strip().startswith(begin))
    return lines[start:stop]


def _cells(line: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.split(r"[\t|]", line)]


def paper_numbers(block: str, label: str, occurrence: int) -> list[float | None]:
    """The numbers after `label` on its `occurrence`-th line of the block ("-" is None; words and the
    "(-86%)" notes are skipped)."""
    matches = []
    for line in _block(block):
        cells = _cells(line)
        if label in cells:
            matches.append(" ".join(cells[cells.index(label) + 1:]))
        elif line.startswith(label + " "):  # FuRePA's table is space-separated
            matches.append(line[len(label):])
    assert len(matches) > occurrence, f"{label!r} occurs {len(matches)} times in block {block}"
    numbers = []
    for token in matches[occurrence].split():
        try:
            numbers.append(_number(token))
        except ValueError:
            continue
    return numbers


def table_value(table_id: str, label: str, group: str | None, dataset: str, metric: str) -> float | None:
    rows = [r for r in load_table(table_id).rows if r.label == label and r.group == group]
    assert len(rows) == 1, f"{table_id}: {len(rows)} rows named {label!r} in group {group!r}"
    return rows[0].values.get(dataset, {}).get(metric)


def check_sample(sample: tuple, value: float | None) -> None:
    table_id, label, group, dataset, metric, block, paper_label, occurrence, column = sample
    printed = paper_numbers(block, paper_label, occurrence)
    assert value == pytest.approx(printed[column]), (
        f"{table_id} {label} ({group}) {dataset}/{metric}: table has {value}, the paper prints {printed[column]} "
        f"(numbers on its line: {printed})")


def test_samples_cover_every_paper_table_with_three_cells_across_rows_and_columns():
    paper_tables = [t for t in table_ids() if not t.startswith("flashrag")]
    for table_id in paper_tables:
        samples = [s for s in SAMPLES if s[0] == table_id]
        assert len(samples) >= 3, table_id
        assert len({(s[1], s[2]) for s in samples}) >= 3 and len({s[3] for s in samples}) >= 2, table_id


@needs_shared_papers
@pytest.mark.parametrize("sample", SAMPLES, ids=[f"{s[0]}:{s[1]}:{s[2]}:{s[3]}:{s[4]}" for s in SAMPLES])
def test_sampled_cells_match_the_paper_text(sample):
    check_sample(sample, table_value(*sample[:5]))


@needs_shared_papers
def test_a_transcription_error_fails_the_check():
    sample = SAMPLES[1]
    with pytest.raises(AssertionError, match="the paper prints 20.6"):
        check_sample(sample, table_value(*sample[:5]) + 0.1)


@needs_shared_papers
def test_flashrag_rows_resp_copied_match_resp_table1_text():
    flashrag = {r.label: r for r in load_table("flashrag-table").rows}
    for flashrag_label, resp_label in SAME_AS_RESP.items():
        printed = paper_numbers("resp1", resp_label, 0)
        values = flashrag[flashrag_label].values
        assert [values["hotpotqa"]["f1"], values["2wiki"]["f1"]] == pytest.approx(printed), flashrag_label


def test_flashrag_rows_match_its_readme_lines():
    tables = {"Reasoning": load_table("flashrag-reasoning"), None: load_table("flashrag-table")}
    for line in FLASHRAG_README_LINES.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        table = tables.get(cells[1], tables[None])
        row = next(r for r in table.rows if r.label == cells[0])
        readme = [float(c) for c in cells[2:2 + len(table.datasets)]]
        ours = [row.values[d.id][d.metric] for d in table.datasets]
        assert ours == readme, cells[0]


def test_every_row_names_a_method_and_preset_or_says_why_not():
    for table in load_tables():
        for row in table.rows:
            status, why = row_status(row)
            where = f"{table.id}: {row.name}"
            if row.method is None:
                assert status == "not implementable" and row.not_implementable, where
                continue
            assert row.method in METHODS, where
            assert row.preset in PRESET_NAMES, where
            assert status == "runnable", f"{where}: {why}"


def test_every_table_states_its_setting_and_question_counts():
    for table in load_tables():
        for key in ("model", "retriever", "corpus", "k", "decoding"):
            assert key in table.setting, f"{table.id}: setting lacks {key}"
        assert table.paper["title"] and table.table and table.caption, table.id
        assert all(d.split and (d.questions or d.selection) for d in table.datasets), table.id
        assert sum(1 for _ in table.cells()) > 0, table.id


def test_a_row_without_method_or_reason_is_a_format_error():
    raw = json.loads(json.dumps(_raw("resp-table1")))
    raw["rows"][0]["method"] = None
    with pytest.raises(TableFormatError, match="not_implementable"):
        parse_table(raw)
    raw = json.loads(json.dumps(_raw("resp-table1")))
    raw["rows"][0]["values"]["musique"] = {"f1": 1.0}
    with pytest.raises(TableFormatError, match="musique"):
        parse_table(raw)


def _raw(table_id: str) -> dict:
    from importlib import resources

    return json.loads((resources.files("hoprag.reproduce") / "tables" / f"{table_id}.json").read_text())


def test_unknown_status_says_what_is_missing():
    row = load_table("resp-table1").rows[0]
    assert row_status(replace(row, preset="flashrag"))[0] == "runnable"
    assert row_status(replace(row, preset="no-such-preset")) == ("unknown", "preset no-such-preset")
    status, why = row_status(replace(row, method="no-such-method", preset="paper"))
    assert status == "unknown" and "no-such-method" in why


def _hoprag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hoprag.cli", "reproduce", *args], capture_output=True, text=True,
                          timeout=120)


def test_reproduce_list_names_every_table_with_paper_metric_datasets_and_rows():
    result = _hoprag("--list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert [line.split(" | ")[0] for line in lines] == table_ids()
    resp = next(line for line in lines if line.startswith("resp-table1 "))
    assert "ReSP (001) Table 1 | F1 | HotpotQA, 2Wiki | 7 rows" in resp


def test_reproduce_an_unknown_table_is_one_line_listing_the_known_ones():
    # Running a table: tests/test_reproduce_run.py.
    unknown = _hoprag("no-such-table")
    assert unknown.returncode != 0 and "unknown table 'no-such-table'" in unknown.stderr
    assert "Traceback" not in unknown.stderr and len(unknown.stderr.strip().splitlines()) == 1
