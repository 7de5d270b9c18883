"""`hoprag report` compares like with like: runs of one dataset that cover different questions are compared on
the questions they share (by question id), the count is said, and each run's figures over all its questions
stay apart, without deltas. The run folders are written here, record by record."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from hoprag.eval.html_report import render_html
from hoprag.eval.report import table
from hoprag.eval.runner import aggregate


def record(question: int, right: bool) -> dict:
    return {"id": f"q{question}", "question": f"Question {question}?", "gold": [f"ans{question}"],
            "prediction": f"ans{question}" if right else "wrong", "error": None, "steps": 1, "llm_calls": 1,
            "seconds": 1.0, "finished_by": "answer", "trajectory": [],
            "metrics": {"em": float(right), "f1": float(right), "cover_em": float(right)}}


def write_run(folder: Path, method: str, records: list[dict], dataset: str = "hotpotqa:data/dev.jsonl",
              **summary_extra) -> Path:
    """A finished hoprag eval run folder: results.jsonl and the summary.json the runner aggregates from it."""
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    config = {"method": method, "preset": "small", "dataset": dataset,
              "dataset_identity": f"{dataset.partition(':')[0]}:hash-of-{Path(dataset).name}"}
    summary = {**aggregate(records), "config": config, **summary_extra}
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def thirty_and_twenty(tmp_path: Path) -> list[Path]:
    """A 30-question run, right on q0-q19 and wrong on q20-q29 (EM 66.67 over its own questions, 100 over the
    first 20), and a 20-question run right on q0-q9 only (EM 50)."""
    long = write_run(tmp_path / "rag-30", "rag", [record(i, i < 20) for i in range(30)])
    short = write_run(tmp_path / "renact-20", "renact", [record(i, i < 10) for i in range(20)])
    return [long, short]


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def rows_of(text: str, name: str) -> list[list[str]]:
    return [cells(line) for line in text.splitlines() if line.startswith(f"| {name} |")]


def test_runs_of_different_lengths_are_compared_on_the_questions_they_share(tmp_path):
    text = table(thirty_and_twenty(tmp_path))
    assert "the 2 runs share 20 questions (of rag-30 30, renact-20 20)" in text
    (shared_long, all_long), (shared_short, all_short) = rows_of(text, "rag-30"), rows_of(text, "renact-20")
    # On the 20 shared questions: EM 100 against 50, a delta of -50 (over each run's own questions it read -16.7).
    assert shared_long[4:6] == ["20", "100"] and shared_short[4:6] == ["20", "50 (-50.0)"]
    assert text.index("All questions of each run") < text.index("| rag-30 | rag | small | dev.jsonl | 30 |")
    assert all_long[4:6] == ["30", "66.67"] and all_short[4:6] == ["20", "50"]  # apart, and with no deltas
    assert "(-16.7)" not in text


def test_the_cli_prints_both_tables(tmp_path):
    runs = thirty_and_twenty(tmp_path)
    done = subprocess.run([sys.executable, "-m", "hoprag.cli", "report", *map(str, runs), "--plots",
                           str(tmp_path / "plots")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "share 20 questions" in done.stdout and "All questions of each run" in done.stdout
    assert "50 (-50.0)" in done.stdout


def test_runs_over_the_same_questions_keep_one_table(tmp_path):
    runs = [write_run(tmp_path / "a", "rag", [record(i, True) for i in range(3)]),
            write_run(tmp_path / "b", "cot", [record(i, i == 0) for i in range(3)])]
    text = table(runs)
    assert "questions the runs" not in text and "All questions" not in text and len(text.splitlines()) == 4
    assert rows_of(text, "b")[0][4:6] == ["3", "33.33 (-66.7)"]


def test_runs_of_different_datasets_are_not_matched_by_id(tmp_path):
    """q0 of MuSiQue is not q0 of HotpotQA: each dataset's runs are compared among themselves."""
    runs = [write_run(tmp_path / "hotpot", "rag", [record(i, True) for i in range(3)]),
            write_run(tmp_path / "musique", "rag", [record(i, False) for i in range(2)], dataset="musique:m.jsonl")]
    text = table(runs)
    assert "All questions" not in text and rows_of(text, "musique")[0][4] == "2"


def test_a_multi_seed_run_is_compared_on_the_shared_questions_of_every_seed(tmp_path):
    seeds = tmp_path / "renact-seeds"
    write_run(seeds / "seed-0", "renact", [record(i, True) for i in range(4)])
    write_run(seeds / "seed-1", "renact", [record(i, i % 2 == 0) for i in range(4)])
    (seeds / "summary.json").write_text(json.dumps({"seeds": [0, 1], "questions": 4, "em": 75.0, "config": {
        "method": "renact", "preset": "small", "seeds": [0, 1], "dataset": "hotpotqa:data/dev.jsonl",
        "dataset_identity": "hotpotqa:hash-of-dev.jsonl"}}))
    rag = write_run(tmp_path / "rag-2", "rag", [record(i, True) for i in range(2)])
    text = table([rag, seeds])
    assert "the 2 runs share 2 questions (of rag-2 2, renact-seeds 4)" in text
    # q0 right in both seeds, q1 right in seed 0 only: EM 100 and 50 over the shared two, mean 75 ± 35.36
    assert rows_of(text, "renact-seeds")[0][4:6] == ["2", "75 ± 35.36 (-25.0)"]


def test_the_html_page_compares_on_shared_questions_and_keeps_all_questions_apart(tmp_path):
    page = render_html(thirty_and_twenty(tmp_path))
    shared = page[page.index('<table id="comparison"'):page.index("</table>", page.index('<table id="comparison"'))]
    full = page[page.index('<table id="comparison-all"'):]
    full = full[:full.index("</table>")]
    assert "share 20 questions" in page[:page.index('<table id="comparison"')]
    assert re.search(r"<td>rag-30</td>.*?<td>20</td><td class=\"num\">100</td>", shared)
    assert re.search(r"<td>rag-30</td>.*?<td>30</td><td class=\"num\">66.67</td>", full)


def test_the_html_comparison_table_fits_the_page_width(tmp_path):
    """Its columns used to run off the right edge: the table takes the page's width in a fixed layout whose cells
    wrap (column names may break after an underscore), inside a box that scrolls sideways rather than the page."""
    page = render_html(thirty_and_twenty(tmp_path))
    style = page[page.index("<style>"):page.index("</style>")]
    assert re.search(r"table\.comparison\{[^}]*table-layout:fixed", style)
    assert re.search(r"table\.comparison\{[^}]*width:100%", style)
    assert re.search(r"table\.comparison th,table\.comparison td\{[^}]*overflow-wrap:anywhere", style)
    assert re.search(r"\.wide\{[^}]*overflow-x:auto", style)
    for table_id in ("comparison", "comparison-all"):
        assert f'<div class="wide"><table id="{table_id}" class="comparison">' in page
    assert '<th title="total_tokens_per_question">total_<wbr>tokens_<wbr>per_<wbr>question</th>' in page
