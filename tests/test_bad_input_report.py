"""`hoprag report` on bad input: a run whose results.jsonl ends in a line cut by a kill still gets its table, plots
and HTML page (every reader skips the cut line); a --baseline that is no run's position and a summary.json that is
not one of hoprag eval each get one clear line and a non-zero exit, before anything is printed or written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoprag.eval.report import plot_figures
from hoprag.eval.runner import aggregate

from .cli_main import run_main


def record(question: int, right: bool, hops: int = 2) -> dict:
    return {"id": f"q{question}", "question": f"Question {question}?", "gold": [f"ans{question}"],
            "prediction": f"ans{question}" if right else "wrong", "error": None, "steps": question + 1,
            "llm_calls": 1, "seconds": 1.0, "finished_by": "answer", "trajectory": [], "hops": hops,
            "metrics": {"em": float(right), "f1": float(right), "cover_em": float(right)}}


def write_run(folder: Path, records: list[dict], tail: str = "") -> Path:
    """A hoprag eval run folder: results.jsonl (then `tail`, e.g. a line cut by a kill) and its summary.json."""
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    config = {"method": "rag", "preset": "paper", "dataset": "jsonl:data/dev.jsonl"}
    (folder / "summary.json").write_text(json.dumps({**aggregate(records), "config": config}))
    return folder




def one_line_error(monkeypatch, capsys, *args: str) -> tuple[str, str]:
    """The one stderr line of a refused `hoprag ARGS` (non-zero exit), and what it printed on stdout."""
    code, stdout, stderr = run_main(monkeypatch, capsys, *args)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code != 0 and len(lines) == 1, stderr
    return lines[0], stdout


def test_a_run_cut_by_a_kill_gets_its_table_plots_and_page(tmp_path, monkeypatch, capsys):
    cut = '{"id": "q9", "question": "Question 9?", "metri'  # what a killed eval leaves as its last line
    run = write_run(tmp_path / "killed", [record(0, True, hops=2), record(1, False, hops=3)], tail=cut)
    page = tmp_path / "report.html"
    code, stdout, stderr = run_main(monkeypatch, capsys, "report", str(run), "--html", str(page))
    assert code == 0, stderr
    assert "| killed |" in stdout
    assert (run / "f1_vs_tokens.png").is_file() and (run / "steps_vs_hops.png").is_file()
    assert "Question 1?" in page.read_text() and "Question 9?" not in page.read_text()
    # the steps-against-hops plot reads the whole lines: hops 2 and 3, one and two steps
    line = plot_figures([run])[1].axes[0].lines[0]
    assert list(line.get_xdata()) == [2, 3] and list(line.get_ydata()) == [1, 2]


@pytest.mark.parametrize("baseline", ["9", "2", "-1"])
def test_a_baseline_that_is_no_runs_position_is_one_line(tmp_path, monkeypatch, capsys, baseline):
    runs = [str(write_run(tmp_path / name, [record(0, True)])) for name in ("a", "b")]
    line, stdout = one_line_error(monkeypatch, capsys, "report", *runs, "--baseline", baseline)
    assert f"--baseline {baseline}: give 0 to 1" in line and "order on the command line" in line
    assert stdout == "" and not (tmp_path / "a" / "f1_vs_tokens.png").exists()  # refused before any output


def test_the_one_run_of_a_report_is_baseline_0(tmp_path, monkeypatch, capsys):
    run = str(write_run(tmp_path / "a", [record(0, True)]))
    line, _ = one_line_error(monkeypatch, capsys, "report", run, "--baseline", "1")
    assert "--baseline 1: give 0 (there is one run)" in line


@pytest.mark.parametrize(("content", "problem"), [
    ("[1, 2]", "it holds a JSON list, not an object"),
    ('{"config": "x", "questions": 1}', '"config" is not an object'),
    ("{}", 'no "config" object'),
    ('{"config": {"method": "rag"}}', 'no "questions" count'),
])
def test_a_summary_of_the_wrong_shape_is_one_line(tmp_path, monkeypatch, capsys, content, problem):
    run = tmp_path / "odd"
    run.mkdir()
    (run / "summary.json").write_text(content)
    line, stdout = one_line_error(monkeypatch, capsys, "report", str(run))
    assert f"{run / 'summary.json'} is not a hoprag eval summary ({problem}); give the --out folder" in line
    assert stdout == "" and not (run / "f1_vs_tokens.png").exists()  # no blank row, no empty plots
