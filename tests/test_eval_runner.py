"""The eval runner: one line per question, resume, failures recorded, summary and report."""

from __future__ import annotations

import json

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.eval.report import plots, table
from hoprag.eval.runner import run_eval
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever


class Static:
    def search(self, query, k):
        return [Document(id="a", title="Alpha", text="alpha")]


def write_dataset(path, n):
    path.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "answers": [f"ans{i}"],
                                          "hops": 2}) for i in range(n)))


def reasoner(messages):
    prompt = "\n".join(str(m.content) for m in messages)
    number = prompt.split("Question: Question ")[-1].split("?")[0]
    if number == "3":
        raise RuntimeError("endpoint down")
    if "Observation 1:" in prompt.split("Question: Question")[-1]:
        return f"Action: finish[ans{number}]"
    return "Action: search[alpha]"


def make_ctx() -> Context:
    register_retriever("eval-index", Static())
    spec = register_fake("fake:eval", ScriptedChatModel(lambda m: "YES#alpha" if "Extract relevant" in str(m[-1].content) else reasoner(m)))
    return Context(llm=spec, index="eval-index", max_retries=0)


def test_run_resume_and_failures(tmp_path):
    data = tmp_path / "d.jsonl"
    write_dataset(data, 6)
    out = tmp_path / "run"
    summary = run_eval("renact", f"jsonl:{data}", out, make_ctx(), limit=4, progress=False)
    assert summary["questions"] == 4 and summary["failures"] == 1
    assert summary["em"] == 75.0 and summary["avg_steps"] == 0.75
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 4
    failed = [json.loads(line) for line in lines if json.loads(line)["error"]]
    assert failed[0]["id"] == "q3" and "endpoint down" in failed[0]["error"] and failed[0]["metrics"]["em"] == 0
    # Simulate a kill mid-write, then rerun with a larger limit: the new questions run, and the failed one again.
    with (out / "results.jsonl").open("a") as sink:
        sink.write('{"id": "q4", "trunc')
    summary = run_eval("renact", f"jsonl:{data}", out, make_ctx(), limit=6, progress=False)
    ids = [json.loads(line)["id"] for line in (out / "results.jsonl").read_text().splitlines() if "trunc" not in line]
    assert sorted(ids) == ["q0", "q1", "q2", "q3", "q3", "q4", "q5"]
    assert summary["questions"] == 6
    config = json.loads((out / "summary.json").read_text())["config"]
    assert config["method"] == "renact" and config["models"]["reasoner"] == "fake:eval"


def test_resume_refuses_other_options_and_foreign_records(tmp_path, monkeypatch):
    import pytest

    from hoprag.errors import HopragError

    data = tmp_path / "d.jsonl"
    write_dataset(data, 3)
    out = tmp_path / "run"
    run_eval("renact", f"jsonl:{data}", out, make_ctx(), limit=2, progress=False)
    before = (out / "results.jsonl").read_text()
    with pytest.raises(HopragError, match="other options.*method 'renact' there, 'react' now"):
        run_eval("react", f"jsonl:{data}", out, make_ctx(), limit=2, progress=False)
    with pytest.raises(HopragError, match="preset 'paper' there, 'small' now"):
        run_eval("renact", f"jsonl:{data}", out, make_ctx().with_options(preset="small"), limit=2, progress=False)
    assert (out / "results.jsonl").read_text() == before  # nothing was mixed in
    # The same options resume, with more questions and another concurrency.
    summary = run_eval("renact", f"jsonl:{data}", out, make_ctx(), limit=3, concurrency=2, progress=False)
    assert summary["questions"] == 3
    # A run recorded before `truncated_sampling` existed sampled truncated: `paper` (untruncated now) may not resume it.
    summary_path = out / "summary.json"
    recorded = json.loads(summary_path.read_text())
    del recorded["config"]["truncated_sampling"]
    summary_path.write_text(json.dumps(recorded))
    with pytest.raises(HopragError, match="truncated_sampling True there, False now"):
        run_eval("renact", f"jsonl:{data}", out, make_ctx(), limit=2, progress=False)
    run_eval("renact", f"jsonl:{data}", out, make_ctx().with_options(truncated_sampling=True), limit=2, progress=False)
    recorded["config"]["truncated_sampling"] = False  # back to the paper run, for what follows
    summary_path.write_text(json.dumps(recorded))
    # The same file by another path (relative, from its folder) is the same dataset; another file is not.
    monkeypatch.chdir(tmp_path)
    assert run_eval("renact", "jsonl:d.jsonl", out, make_ctx(), limit=3, progress=False)["questions"] == 3
    other = tmp_path / "other.jsonl"
    write_dataset(other, 4)
    with pytest.raises(HopragError, match="dataset_identity"):
        run_eval("renact", f"jsonl:{other}", out, make_ctx(), limit=3, progress=False)
    (out / "results.jsonl").write_text('{"question": "no id"}\n')
    with pytest.raises(HopragError, match="line 1 is not a record of hoprag eval"):
        run_eval("renact", f"jsonl:{data}", out, make_ctx(), limit=3, progress=False)


def test_concurrency_and_report(tmp_path):
    data = tmp_path / "d.jsonl"
    write_dataset(data, 3)
    run_eval("renact", f"jsonl:{data}", tmp_path / "a", make_ctx(), concurrency=3, progress=False)
    run_eval("react", f"jsonl:{data}", tmp_path / "b", make_ctx(), progress=False)
    text = table([tmp_path / "a", tmp_path / "b"])
    assert "| a | renact |" in text and "| b | react |" in text and "(+0.0)" in text
    paths = plots([tmp_path / "a", tmp_path / "b"], tmp_path / "plots")
    assert all(p.stat().st_size > 1000 for p in paths)


def test_progress_off_a_terminal_is_a_line_per_question(tmp_path, capsys, monkeypatch):
    """In a log file (CI, nohup) rich draws its bar only at the end; an hours-long run prints a line as it goes."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):  # they make rich treat any output as a terminal
        monkeypatch.delenv(name, raising=False)
    data = tmp_path / "d.jsonl"
    write_dataset(data, 2)
    run_eval("renact", f"jsonl:{data}", tmp_path / "run", make_ctx(), progress=True)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("renact ") and "elapsed" in line]
    assert [line.split(" elapsed")[0] for line in lines] == ["renact 1/2", "renact 2/2"]


def test_a_killed_run_keeps_its_options_and_a_partial_summary(tmp_path):
    """summary.json is written before the first question and after each one: a run killed midway refuses a resume
    with other options (it used to have no summary, so nothing was compared) and `hoprag report` reads it."""
    import pytest

    from hoprag.errors import HopragError

    data = tmp_path / "d.jsonl"
    write_dataset(data, 3)
    out = tmp_path / "run"
    register_retriever("eval-index", Static())

    class Killed(BaseException):  # like a kill, not an error the runner records: the run stops here
        pass

    kill = [True]

    def killed_at_question_2(messages):
        if kill[0] and "Question 2?" in "\n".join(str(m.content) for m in messages):
            raise Killed
        return "YES#alpha" if "Extract relevant" in str(messages[-1].content) else reasoner(messages)

    ctx = Context(llm=register_fake("fake:killed", ScriptedChatModel(killed_at_question_2)), index="eval-index",
                  max_retries=0)
    with pytest.raises(Killed):
        run_eval("renact", f"jsonl:{data}", out, ctx, progress=False)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True and summary["questions"] == 2 and summary["config"]["finished"] is None
    assert "(partial)" in table([out])
    with pytest.raises(HopragError, match="preset 'paper' there, 'small' now"):
        run_eval("renact", f"jsonl:{data}", out, ctx.with_options(preset="small"), progress=False)
    # A resume that would search something else than the records did is refused; the recorded name is kept.
    summary["config"]["retrieval"] = "dense (e5) over index elsewhere"
    (out / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(HopragError, match="searched dense .e5. over index elsewhere; this one would search "
                                          "registered retriever eval-index"):
        run_eval("renact", f"jsonl:{data}", out, ctx, progress=False)
    summary["config"]["retrieval"] = "registered retriever eval-index"
    (out / "summary.json").write_text(json.dumps(summary))
    kill[0] = False  # the same command again resumes and finishes
    finished = run_eval("renact", f"jsonl:{data}", out, ctx, progress=False)
    assert finished["questions"] == 3 and "partial" not in finished and finished["config"]["finished"]
    assert finished["config"]["retrieval"] == "registered retriever eval-index"  # named as the run started


def test_a_run_names_what_it_searched_closed_book_and_own_paragraphs_apart(tmp_path):
    """cot searches nothing (no retrieval recorded); long-context reads each question's own paragraphs where the
    dataset gives them, not the index; another method names its retriever."""
    from hoprag.eval.datasets import Example
    from hoprag.eval.runner import _run_retrieval

    register_retriever("named-index", Static())
    ctx = Context(index="named-index")
    with_paragraphs = [Example(id="1", question="Q?", answers=["a"], paragraphs=[{"title": "T", "text": "x"}])]
    plain = [Example(id="2", question="Q?", answers=["a"])]
    assert _run_retrieval("cot", ctx, plain, tmp_path, {}, resuming=True) is None
    assert _run_retrieval("long-context", ctx, with_paragraphs, tmp_path, {}, resuming=True) == \
        "the question's own paragraphs"
    assert _run_retrieval("long-context", ctx, plain, tmp_path, {}, resuming=True) == "registered retriever named-index"
    # A finished run read again (nothing to resume) keeps the name it recorded.
    assert _run_retrieval("rag", ctx, plain, tmp_path, {"retrieval": "bm25 over index old"}, resuming=False) == \
        "bm25 over index old"
