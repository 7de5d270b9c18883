"""`hoprag report --html FILE RUN...`: one self-contained HTML page (no CDN, works offline) to compare
runs question by question: the comparison table and plots, every question with each run's answer,
a filter for the questions where the runs disagree, and each run's trajectory for a question."""

from __future__ import annotations

import html
import io
import json
from pathlib import Path
from typing import Any

from hoprag.errors import HopragError
from hoprag.eval.report import (
    COLUMNS,
    NOT_APPLICABLE,
    RunRow,
    compare_runs,
    dataset_label,
    plot_figures,
    questions_differ,
    read_records,
    seed_folders,
    shared_notes,
)

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d1d1f;max-width:1500px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d8d8de;padding:4px 8px;vertical-align:top}
.wide{overflow-x:auto;max-width:100%}
table.comparison{table-layout:fixed;width:100%;font-size:12px}
table.comparison th,table.comparison td{padding:3px 4px;overflow-wrap:anywhere;word-break:break-word}
table.comparison col.run{width:11%}
th{background:#f3f2fa;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
.right{background:#e7f6e9}.wrong{background:#fdecec}.answer{cursor:pointer}.answer:hover{outline:2px solid #7b6cf6}
.answer.open{outline:2px solid #4b3bd6}.gold{font-weight:700;color:#0a7a2f}.gold::after{content:" \\2605"}
.yes{color:#0a7a2f;font-weight:600}.no{color:#a11;font-weight:600}.muted{color:#6b6b75}
.trajectory{border:1px solid #c9c4f5;background:#fbfaff;padding:8px 12px;margin:4px 0 10px}
.step{border-top:1px dashed #d8d8de;padding:6px 0}.step:first-child{border-top:none}
.label{display:inline-block;min-width:92px;color:#4b3bd6;font-weight:600}
.plots svg{max-width:48%;height:auto;display:inline-block}
details>summary{cursor:pointer;color:#4b3bd6}pre{white-space:pre-wrap;margin:2px 0}
"""

SCRIPT = """
function toggleTrajectory(cell){
  const panel=document.getElementById(cell.dataset.target);
  const open=panel.hidden;
  panel.hidden=!open; cell.classList.toggle('open',open);
}
function applyFilter(){
  const only=document.getElementById('only-disagree').checked;
  let shown=0;
  document.querySelectorAll('tr.question').forEach(row=>{
    const hide=only && row.dataset.agree==='1';
    row.hidden=hide;
    document.querySelectorAll('tr.trajectories[data-question="'+row.dataset.question+'"]').forEach(t=>t.hidden=hide);
    if(!hide) shown++;
  });
  document.getElementById('shown-count').textContent=shown;
}
document.addEventListener('DOMContentLoaded',()=>{
  document.querySelectorAll('.answer').forEach(c=>c.addEventListener('click',()=>toggleTrajectory(c)));
  document.getElementById('only-disagree').addEventListener('change',applyFilter);
  applyFilter();
});
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _records(path: Path) -> list[dict[str, Any]]:
    """A run folder's records (the tolerant reader's: a line cut by a kill is skipped), one per question."""
    return list(read_records(path).values())


def is_correct(record: dict[str, Any]) -> bool:
    """Right or wrong: the LLM judge where the run has one, else exact match."""
    metrics = record.get("metrics") or {}
    value = metrics.get("judge") if metrics.get("judge") is not None else metrics.get("em")
    return bool(value)


def _cell(value: Any, column: str) -> str:
    if value is None:
        return NOT_APPLICABLE.get(column, "")
    return f"{value:g}" if isinstance(value, int | float) else _e(value)


def _head(column: str) -> str:
    # `_<wbr>`: a long column name may break after an underscore, so the fixed-layout table fits the page
    return f'<th title="{_e(column)}">{_e(column).replace("_", "_<wbr>")}</th>'


def _comparison(rows: list[RunRow], figures: list[dict[str, Any] | None], counts: list[Any], table_id: str) -> str:
    """One comparison table (fixed layout at the page's width, cells wrap): a row per run, `figures` its numbers."""
    head = "".join(_head(c) for c in ("run", "method", "preset", "dataset", "n", *COLUMNS))
    cols = '<col class="run">' + "<col>" * (4 + len(COLUMNS))
    body = []
    for row, summary, count in zip(rows, figures, counts, strict=True):
        config = row.summary.get("config") or {}
        cells = [row.path.name, config.get("method"), config.get("preset", ""), dataset_label(row.summary), count]
        body.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells)
                    + "".join(f'<td class="num">{_cell((summary or {}).get(c), c) if summary else ""}</td>'
                              for c in COLUMNS) + "</tr>")
    return (f'<div class="wide"><table id="{table_id}" class="comparison"><colgroup>{cols}</colgroup>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


def _comparisons(rows: list[RunRow]) -> str:
    """The comparison: where runs of one dataset cover different questions, first on the questions they share
    (by question id), then each run over all its questions, apart."""
    summaries = [row.summary for row in rows]
    everything = [s.get("questions") for s in summaries]
    if not questions_differ(rows):
        return _comparison(rows, summaries, everything, "comparison")
    shared = _comparison(rows, [row.shared for row in rows], [len(row.shared_ids) if row.shared else "" for row in rows],
                         "comparison")
    return (f'<p id="shared-questions">The runs cover different questions, so they are compared on the questions '
            f'the runs of each dataset share (by question id): {_e("; ".join(shared_notes(rows)))}.</p>{shared}'
            f'<h3>All questions of each run</h3><p class="muted">Each run over all its own questions: these means '
            f'are over different questions, so they do not compare across runs.</p>'
            f'{_comparison(rows, summaries, everything, "comparison-all")}')


def _plots(runs: list[Path]) -> str:
    svgs = []
    for figure in plot_figures(runs):
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg")
        text = buffer.getvalue()
        svgs.append(text[text.index("<svg"):])  # drop the XML prolog: inline SVG
        import matplotlib.pyplot as plt

        plt.close(figure)
    return '<div class="plots">' + "".join(svgs) + "</div>"


def _titles(titles: list[str], gold: set[str]) -> str:
    return ", ".join(f'<span class="{"gold" if t.strip().lower() in gold else ""}">{_e(t)}</span>' for t in titles)


KNOWN_STEP_KEYS = {"thought", "action", "kind", "entity", "query", "argument", "problem", "raw", "observation",
                   "retrieved_ids", "retrieved_titles", "notes", "usage", "repeated", "sub_question", "global_summary",
                   "local_answer", "local_raw", "judgement", "judge_raw"}


def _step(number: int, step: dict[str, Any], gold: set[str]) -> str:
    parts = [f'<div class="step"><span class="label">Step {number}</span>']
    usage = step.get("usage")
    if usage:
        parts.append(f'<span class="muted"> · {usage["calls"]} LLM calls, {usage["input_tokens"]} in / '
                     f'{usage["output_tokens"]} out tokens, {usage["seconds"]:.1f} s</span>')

    def line(label: str, body: str) -> None:
        parts.append(f'<div><span class="label">{_e(label)}</span> {body}</div>')

    if step.get("thought"):
        line("Thought", _e(step["thought"]))
    if step.get("action"):
        line("Action", f"<code>{_e(step['action'])}</code>" + (" <em>(repeated query)</em>" if step.get("repeated") else ""))
    if step.get("problem"):
        line("Problem", f'<span class="no">{_e(step["problem"])}</span>')
    if step.get("sub_question"):
        line("Sub-question", _e(step["sub_question"]))
    if step.get("retrieved_titles"):
        line("Retrieved", _titles(step["retrieved_titles"], gold))
    for note in step.get("notes") or []:
        verdict = '<span class="yes">YES</span>' if note.get("relevant") else '<span class="no">NO</span>'
        line("Note", f"{verdict} {_e(note.get('title'))}: {_e(note.get('note'))}")
    if step.get("global_summary"):
        line("Global evidence", _e(step["global_summary"]))
    if step.get("local_answer") is not None:
        line("Local pathway", _e(step["local_answer"] or "No"))
    if step.get("judgement"):
        line("Sufficient?", _e(step["judgement"]))
    for key, value in step.items():  # method-specific fields, e.g. FLARE's gate decisions
        if key not in KNOWN_STEP_KEYS and value not in (None, "", [], {}):
            line(key.replace("_", " "), f"<code>{_e(json.dumps(value, default=str) if not isinstance(value, str) else value)}</code>")
    if step.get("observation"):
        parts.append(f"<details><summary>Observation</summary><pre>{_e(step['observation'])}</pre></details>")
    parts.append("</div>")
    return "".join(parts)


def _trajectory(record: dict[str, Any], run: str) -> str:
    gold = {t.strip().lower() for t in record.get("gold_titles") or []}
    steps = "".join(_step(i, step, gold) for i, step in enumerate(record.get("trajectory") or [], 1))
    answer_usage = record.get("answer_usage") or {}
    foot = (f'<div class="muted">Answer {_e(record.get("prediction"))!s} ({_e(record.get("finished_by"))}); '
            f'{record.get("seconds", 0):.1f} s in all'
            + (f", final answer {answer_usage['calls']} LLM calls, {answer_usage['input_tokens']} in / "
               f"{answer_usage['output_tokens']} out tokens" if answer_usage.get("calls") else "") + "</div>")
    if record.get("answer_reply"):  # the free-text reply the answer was read from (the synthesis at the cap)
        foot += f'<div class="muted">Read from the reply: <q>{_e(record["answer_reply"])}</q></div>'
    error = f'<div class="no">Error: {_e(record["error"])}</div>' if record.get("error") else ""
    return f"<div><strong>{_e(run)}</strong></div>{error}{steps or '<div class=muted>No steps.</div>'}{foot}"


def _answer_columns(runs: list[Path], summaries: list[dict[str, Any]]) -> list[tuple[str, Path]]:
    """The runs whose answers are columns: a multi-seed run (`hoprag eval --seeds N`, or seeds merged by `hoprag
    merge-seeds`) gives one per seed."""
    columns = []
    for path, summary in zip(runs, summaries, strict=True):
        seed_runs = (summary.get("config") or {}).get("seed_runs") or {}  # merged: where each seed's run is
        missing = [f"{name} at {where}" for name, where in seed_runs.items() if not (path / where).is_dir()]
        if missing:  # the merged folder moved without its seeds: its answers would be an empty column
            raise HopragError(f"{path} merges seeds whose folders are gone ({', '.join(missing)}, relative to "
                              "it); merge them again with hoprag merge-seeds where they are")
        columns += seed_folders(path, summary)
    return columns


def render_html(runs: list[Path]) -> str:
    names = [p.name for p in runs]
    compared = compare_runs(runs)
    summaries = [row.summary for row in compared]
    columns = _answer_columns(runs, summaries)
    column_names = [name for name, _ in columns]
    by_run = [read_records(path) for _, path in columns]  # the one reader: it skips a line cut by a killed run
    order: list[str] = []
    for records in by_run:
        order += [i for i in records if i not in order]
    rows = []
    disagreements = 0
    for number, question_id in enumerate(order):
        present = [records.get(question_id) for records in by_run]
        first = next(r for r in present if r)
        verdicts = {is_correct(r) for r in present if r}
        agree = len(verdicts) == 1
        disagreements += not agree
        cells, panels = [], []
        for run_index, record in enumerate(present):
            if record is None:
                cells.append('<td class="muted">not run</td>')
                continue
            target = f"t-{number}-{run_index}"
            mark = "right" if is_correct(record) else "wrong"
            f1 = (record.get("metrics") or {}).get("f1")
            cells.append(f'<td class="answer {mark}" data-target="{target}" title="show the trajectory">'
                         f'{_e(record.get("prediction") or "(no answer)")}'
                         f'<div class="muted">{"right" if mark == "right" else "wrong"}'
                         f'{f" · F1 {f1:.2f}" if isinstance(f1, int | float) else ""}</div></td>')
            panels.append(f'<div class="trajectory" id="{target}" hidden>{_trajectory(record, column_names[run_index])}</div>')
        gold = " | ".join(first.get("gold") or [])
        rows.append(f'<tr class="question" data-question="{number}" data-agree="{int(agree)}">'
                    f'<td>{_e(first.get("question"))}</td><td>{_e(gold)}</td>{"".join(cells)}</tr>'
                    f'<tr class="trajectories" data-question="{number}"><td colspan="{2 + len(columns)}" '
                    f'style="border:none;padding:0">{"".join(panels)}</td></tr>')
    run_heads = "".join(f"<th>{_e(n)}</th>" for n in column_names)
    distinct = {str((s.get("config") or {}).get("dataset")) for s in summaries}
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>hoprag report: {_e(", ".join(names))}</title>
<style>{STYLE}</style></head><body>
<h1>hoprag report</h1>
<p class="muted">{len(runs)} runs, {len(order)} questions{"" if len(distinct) <= 1 else " (several datasets)"}.
Click an answer to open that run's trajectory: thoughts, queries, retrieved titles (gold ones marked ★),
notes, ReSP memories, per-step tokens and seconds.</p>
<h2>Comparison</h2>{_comparisons(compared)}
<h2>Plots</h2>{_plots(runs)}
<h2>Questions</h2>
<label><input type="checkbox" id="only-disagree"> only questions where the runs disagree (one right, another
wrong: {disagreements})</label> &middot; showing <span id="shown-count">{len(order)}</span>
<table id="questions"><thead><tr><th>question</th><th>gold</th>{run_heads}</tr></thead>
<tbody>{"".join(rows)}</tbody></table>
<script>{SCRIPT}</script></body></html>
"""


def write_html(runs: list[Path], out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(runs), encoding="utf-8")
    return out
