"""The benchmark table script: one row a run, a multi-seed run (`hoprag eval --seeds N`) included."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from hoprag.eval.runner import merge_seed_summaries

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "preset_table.py"


def _benchmark_script(name: str) -> ModuleType:
    """A script of benchmarks/ (not a package) loaded as a module."""
    spec = importlib.util.spec_from_file_location(name, SCRIPT.with_name(f"{name}.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _preset_table() -> ModuleType:
    return _benchmark_script("preset_table")


def _seed_summary(f1: float, seconds: float, rss: int, ended: dict[str, int]) -> dict:
    return {"questions": 2, "em": 50.0, "f1": f1, "cover_em": 50.0, "avg_steps": 2, "finish_rate": 100,
            "finished_by": ended, "invalid_output_rate": 0, "avg_seconds": seconds, "peak_rss_mb": rss,
            "reprocessed_prompt_share": 30.0, "seconds_over_llm": 1.0,
            "tokens_per_question": {"reasoner": {"input_tokens": 100.0, "output_tokens": 10.0, "calls": 2}},
            "config": {"method": "renact", "preset": "paper", "dataset": "hotpotqa:x/hard.json", "seed": 0}}


def test_a_multi_seed_run_is_one_row_with_mean_and_spread(tmp_path: Path) -> None:
    run = tmp_path / "hotpot-renact-paper"
    run.mkdir()
    seeds = [_seed_summary(40.0, 10.0, 2000, {"finish": 2}), _seed_summary(60.0, 30.0, 2500, {"finish": 1, "cap": 1})]
    summary = {"seeds": [0, 1], **merge_seed_summaries(seeds), "questions": 2, "f1": 50.0,
               "f1_spread": {"std": 14.14, "min": 40.0, "max": 60.0}, "em_spread": {"std": 0.0, "min": 50, "max": 50},
               "config": {"method": "renact", "preset": "paper", "dataset": "hotpotqa:x/hard.json", "seeds": [0, 1]}}
    (run / "summary.json").write_text(json.dumps(summary))

    cells = [c.strip() for c in _preset_table().row(run, prompt_tps=100, gen_tps=10).split("|")[1:-1]]

    assert cells[:7] == ["renact", "paper, 2 seeds", "hard.json", "2", "50 ± 0", "50 ± 14.14", "50"]
    assert cells[8] == "100 (finish 3, cap 1)"  # ended-by counts summed over the seeds
    assert cells[11] == "20"  # seconds: the mean over the seeds
    assert cells[14] == "2500"  # peak RSS: the larger peak, not a mean
    assert cells[15:] == ["2.0", "10.00"]  # floor: 100/100 + 10/10 s; 20 s over it


def test_a_single_run_is_read_as_it_is(tmp_path: Path) -> None:
    run = tmp_path / "one"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(_seed_summary(40.0, 10.0, 2000, {"finish": 2})))

    cells = [c.strip() for c in _preset_table().row(run).split("|")[1:-1]]

    assert cells[1] == "paper" and cells[4:6] == ["50", "40"] and cells[11] == "10"


def test_a_baseline_adds_f1_against_rag_and_the_median_seconds_of_the_records(tmp_path: Path) -> None:
    run = tmp_path / "open-hotpot-renact-small"
    run.mkdir()
    summary = _seed_summary(40.0, 10.0, 2000, {"finish": 2})
    summary["config"]["index"] = "open"
    (run / "summary.json").write_text(json.dumps(summary))
    (run / "results.jsonl").write_text("".join(json.dumps({"seconds": s}) + "\n" for s in (3.0, 50.0, 7.0)))

    cells = [c.strip() for c in _preset_table().row(run, baseline_f1=45.5).split("|")[1:-1]]

    assert cells[2] == "hard.json (open corpus)"
    assert cells[-2:] == ["-5.50", "7.0"]  # 40 - 45.5; the median of 3, 50 and 7, where the mean would be 20


def _record(qid: str, f1: float, cached_input: int) -> dict:
    usage = {"calls": 3, "cached_calls": 1, "input_tokens": 300, "output_tokens": 30, "seconds": 5.0,
             "cached_input_tokens": cached_input, "cached_output_tokens": 10}
    return {"id": qid, "metrics": {"em": f1, "f1": f1, "cover_em": f1}, "steps": 2, "seconds": 6.0,
            "finished_by": "sufficient", "parsed_outputs": 2, "invalid_outputs": 0, "usage": {"summarizer": usage}}


def test_a_folder_without_summary_is_read_from_its_records_with_a_floor_of_the_tokens_the_model_served(
        tmp_path: Path, monkeypatch, capsys) -> None:
    run = tmp_path / "open-hotpot-resp-paper"  # a run stopped part-way: records, no summary.json
    run.mkdir()
    (run / "results.jsonl").write_text(json.dumps(_record("q1", 1.0, 100)) + "\n" + json.dumps(_record("q2", 0.0, 300)) + "\n")
    rag = tmp_path / "open-hotpot-rag-small"
    rag.mkdir()
    # RAG ran all three questions (F1 33.33); on the two the stopped run holds it scores 0.
    (rag / "results.jsonl").write_text("".join(json.dumps({**_record(qid, f1, 0), "finished_by": "generate"}) + "\n"
                                               for qid, f1 in (("q1", 0.0), ("q2", 0.0), ("q3", 1.0))))
    table = _preset_table()

    cells = [c.strip() for c in table.row(run, prompt_tps=100, gen_tps=10).split("|")[1:-1]]

    assert cells[:3] == ["resp", "paper", "hotpot (open corpus)"] and cells[5] == "50"
    assert cells[8] == "100 (sufficient 2)"
    # 300 prompt tokens a question, 200 of them answered by the response cache: the model served 100 and 20 more.
    assert cells[-2:] == ["3.0", "2.00"]  # 100/100 + 20/10 s; 6 s over it

    monkeypatch.setattr("sys.argv", ["preset_table.py", "--baseline", str(rag), str(run), str(tmp_path / "empty")])
    (tmp_path / "empty").mkdir()  # a run not started yet: no row
    table.main()
    rows = capsys.readouterr().out.splitlines()[2:]
    # 50 against RAG's 0 on the run's own two questions, not against RAG's 33.33 over all three
    assert len(rows) == 1 and rows[0].split("|")[-3].strip() == "+50.00 on the same 2"
    # RAG's run of other questions (another dataset's) gives no difference rather than one of unrelated means
    assert table.row(run, baseline_f1=0.0, baseline_by_question={"q9": 0.0}).split("|")[-3].strip() == "n/a (no question shared)"


def test_a_partial_row_compares_with_rag_on_the_questions_the_run_holds(tmp_path: Path) -> None:
    run = tmp_path / "musique-renact-paper.results.jsonl"
    run.write_text("".join(json.dumps(_record(qid, f1, 0)) + "\n" for qid, f1 in (("q1", 1.0), ("q2", 0.5))))
    rag = tmp_path / "musique-rag-small.results.jsonl"
    rag.write_text("".join(json.dumps(_record(qid, f1, 0)) + "\n" for qid, f1 in (("q1", 0.5), ("q2", 0.5), ("q3", 0.0))))
    script = SCRIPT.parent / "partial_row.py"

    shown = subprocess.run([sys.executable, str(script), str(run), "--baseline", str(rag)],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    missing = subprocess.run([sys.executable, str(script), str(run), "--baseline", str(tmp_path / "none.jsonl")],
                             capture_output=True, text=True)

    # 75 - 50, not 75 - 33.33; q1 scores higher than RAG, q2 the same
    assert shown[-1] == "F1 - RAG on the 2 questions both hold: +25.00 (RAG 50.00 on them); 1 better, 0 worse"
    assert missing.returncode == 2 and missing.stderr.strip().startswith("no such results file:")


def test_a_partial_row_of_one_sessions_questions_has_its_floor(tmp_path: Path) -> None:
    """`--questions A-B` keeps the records one session added; `--prompt-tps/--gen-tps` add that session's floor."""
    run = tmp_path / "hotpot-renact-paper.results.jsonl"
    run.write_text("".join(json.dumps(_record(qid, f1, 0)) + "\n" for qid, f1 in (("q1", 1.0), ("q2", 0.5), ("q3", 0.0))))
    rag = tmp_path / "hotpot-rag-small.results.jsonl"
    rag.write_text("".join(json.dumps(_record(qid, 0.5, 0)) + "\n" for qid in ("q1", "q2", "q3")))
    script = str(SCRIPT.parent / "partial_row.py")

    def shown(*options: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, script, str(run), *options], capture_output=True, text=True)

    segment = shown("--questions", "2-3", "--baseline", str(rag), "--prompt-tps", "100", "--gen-tps", "10")
    beyond, malformed = shown("--questions", "2-4"), shown("--questions", "3-2")

    row = segment.stdout.splitlines()[0].split("|")
    assert row[4].strip() == "2" and row[6].strip() == "25"  # two questions, F1 (50 + 0) / 2
    assert row[-3:-1] == [" 5.0 ", " 1.20 "]  # 300/100 + (30 - 10 cache-served)/10 = 5 s of model time; 6 s taken
    assert segment.stdout.splitlines()[-1].endswith("-25.00 (RAG 50.00 on them); 0 better, 1 worse")
    assert beyond.returncode == 2 and beyond.stderr.strip().endswith("holds 3 records, fewer than 4")
    assert malformed.returncode == 2 and "expected FIRST-LAST" in malformed.stderr


def test_a_file_that_is_not_json_lines_is_refused_with_one_line(tmp_path: Path) -> None:
    """A summary.json given for a results.jsonl, or a last line cut by a killed run, names the file and the line in
    both scripts instead of a traceback."""
    summary = tmp_path / "2wiki-furepa-small@seed-0.results.jsonl"
    summary.write_text(json.dumps({"f1": 0.5, "questions": 2}, indent=2))
    cut = tmp_path / "2wiki-furepa-small@seed-10.results.jsonl"
    cut.write_text(json.dumps(_record("q1", 1.0, 0)) + "\n" + json.dumps(_record("q2", 0.5, 0))[:20] + "\n")
    scripts = [str(SCRIPT.parent / name) for name in ("partial_row.py", "seed_spread.py")]

    refused = [subprocess.run([sys.executable, script, str(path)], capture_output=True, text=True)
               for script in scripts for path in (summary, cut)]

    for done, line in zip(refused, ("line 1", "line 2", "line 1", "line 2"), strict=True):
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip().endswith(f"is not a results.jsonl ({line} is not a JSON object): give a run's "
                                            "results.jsonl") and len(done.stderr.strip().splitlines()) == 1


def test_seeds_run_separately_merge_into_mean_spread_and_pooled_counts(tmp_path: Path) -> None:
    """benchmarks/seed_spread.py: one `--seed N` run a file, merged as `--seeds` merges; a file without a seed in its
    name is refused with one line."""
    answers = {0: (("q1", 1.0, "Paris"), ("q2", 0.0, "x")), 10: (("q1", 0.0, "paris."), ("q2", 0.5, "y"))}
    paths = []
    for seed, rows in answers.items():
        path = tmp_path / f"2wiki-furepa-small@seed-{seed}.results.jsonl"
        path.write_text("".join(json.dumps({**_record(qid, f1, 0), "prediction": answer,
                                            "invalid_outputs": 1 if seed else 0, "parsed_outputs": 4}) + "\n"
                                for qid, f1, answer in rows))
        paths.append(str(path))
    rag = tmp_path / "2wiki-rag-small.results.jsonl"
    rag.write_text("".join(json.dumps(_record(qid, 0.25, 0)) + "\n" for qid in ("q1", "q2")))
    script = str(SCRIPT.parent / "seed_spread.py")

    lines = subprocess.run([sys.executable, script, *paths, "--baseline", str(rag)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    unnamed = subprocess.run([sys.executable, script, str(rag)], capture_output=True, text=True)

    assert lines[0].startswith("seed 0: 2 questions | EM 50.00 | F1 50.00")
    assert "F1 - RAG +25.00 (RAG 25.00; 1 better, 1 worse)" in lines[0] and lines[0].endswith("invalid 0 of 8")
    assert "F1 - RAG +0.00 (RAG 25.00; 1 better, 1 worse)" in lines[1]
    assert lines[2].startswith("  against seed 0: trajectory differs in 0 of 2, answer in 1 (1 better, 0 worse)")
    del lines[2]
    over = lines[2].split(" | ")
    assert over[0] == "over seeds 0, 10: em 37.50 ± 17.68" and over[1] == "f1 37.50 ± 17.68"  # F1 50 and 25
    assert "F1 - RAG +12.50 on the 2 questions (RAG 25.00)" in lines[2]
    assert "ended by sufficient 4" in lines[2] and "invalid 2 of 16 (12.50%)" in lines[2]
    assert lines[2].endswith("same answer in every seed 1")  # "Paris" and "paris." normalize alike; "x" and "y" do not
    assert not any("every seed holds" in line for line in lines)  # both seeds hold both questions
    assert unnamed.returncode == 2 and unnamed.stderr.startswith("no seed-N in ") and "Traceback" not in unnamed.stderr


def test_seeds_part_way_are_also_compared_on_the_questions_every_seed_holds(tmp_path: Path) -> None:
    """A seed stopped part-way averages over fewer questions than the others; a last line gives the spread over only
    the questions all seeds hold, with F1 - RAG on those."""
    answers = {0: (("q1", 1.0), ("q2", 0.0), ("q3", 1.0)), 30: (("q1", 0.5), ("q2", 0.0))}
    paths = []
    for seed, rows in answers.items():
        path = tmp_path / f"2wiki-renact-small@seed-{seed}.results.jsonl"
        path.write_text("".join(json.dumps({**_record(qid, f1, 0), "prediction": str(f1)}) + "\n" for qid, f1 in rows))
        paths.append(str(path))
    rag = tmp_path / "2wiki-rag-small.results.jsonl"
    rag.write_text("".join(json.dumps(_record(qid, 0.25, 0)) + "\n" for qid in ("q1", "q2", "q3")))

    lines = subprocess.run([sys.executable, str(SCRIPT.parent / "seed_spread.py"), *paths, "--baseline", str(rag)],
                           capture_output=True, text=True, check=True).stdout.splitlines()

    assert lines[-1] == ("on the 2 questions every seed holds: F1 seed 0 50.00, seed 30 25.00; over seeds 37.50 ± "
                         "17.68 | F1 - RAG +12.50 (RAG 25.00)")
    # a question run twice (a resumed failure) is still one question; seeds sharing none get a line, not a traceback
    Path(paths[1]).write_text(Path(paths[0]).read_text() + json.dumps({**_record("q3", 1.0, 0), "prediction": "1.0"})
                              + "\n")
    again = subprocess.run([sys.executable, str(SCRIPT.parent / "seed_spread.py"), *paths], capture_output=True,
                           text=True, check=True).stdout
    Path(paths[1]).write_text(json.dumps({**_record("q9", 1.0, 0), "prediction": "x"}) + "\n")
    apart = subprocess.run([sys.executable, str(SCRIPT.parent / "seed_spread.py"), *paths], capture_output=True,
                           text=True)
    assert "every seed holds" not in again
    assert apart.returncode == 0 and apart.stdout.splitlines()[-1] == "the seeds share no question: no like-for-like line"


def test_each_seed_is_compared_with_the_first_and_machines_are_counted(tmp_path: Path) -> None:
    """seed_spread.py's line under each later seed: trajectories and answers that differ from the first seed's, and
    how many differ among the questions neither run resampled (a machine's mark, since those repeat on one machine);
    records that name machines are counted, with a warning where the seeds span several."""
    def step(raw: str, resampled: int = 0) -> dict:
        return {"raw": raw, "observation": "page", "resampled": resampled}

    runs = {  # q1: same; q2: resampled in seed 7, answer worse; q3: not resampled, another first step, same answer
        0: [("q1", 1.0, "a", [step("t1")], "cpu A"), ("q2", 1.0, "b", [step("t2")], "cpu A"),
            ("q3", 0.0, "c", [step("t3")], "cpu A")],
        7: [("q1", 1.0, "a", [step("t1")], "cpu B"), ("q2", 0.0, "z", [step("t2 drawn", resampled=2)], "cpu B"),
            ("q3", 0.0, "c.", [step("t3 other")], "cpu B")],
    }
    paths = []
    for seed, rows in runs.items():
        path = tmp_path / f"2wiki-renact-small@seed-{seed}.results.jsonl"
        path.write_text("".join(json.dumps({**_record(qid, f1, 0), "prediction": answer, "trajectory": steps,
                                            "machine": machine}) + "\n" for qid, f1, answer, steps, machine in rows))
        paths.append(str(path))

    lines = subprocess.run([sys.executable, str(SCRIPT.parent / "seed_spread.py"), *paths], capture_output=True,
                           text=True, check=True).stdout.splitlines()

    assert lines[1] == "  machines: cpu A (3)" and lines[4] == "  machines: cpu B (3)"
    assert lines[3] == ("  against seed 0: trajectory differs in 2 of 3, answer in 1 (0 better, 1 worse); this seed "
                        "resampled in 1 questions (2 draws); of the 2 resampled in neither, 1 differs")
    assert lines[-1] == "warning: the seeds' records name 2 machines; part of the spread may be the machines'"


def test_one_seed_of_a_multi_seed_run_is_named_by_its_run() -> None:
    """A seed's folder (`<run>/seed-N/results.jsonl`) and its committed file (`<run>@seed-N.results.jsonl`) give the
    run's method and preset, not `seed-N`."""
    run_config = _preset_table().run_config
    expected = {"method": "furepa", "preset": "small", "dataset": "partial:2wiki"}

    assert run_config(Path("runs/presets/2wiki-furepa-small/seed-2/results.jsonl")) == expected
    assert run_config(Path("partial/a6addbb/2wiki-furepa-small@seed-1.results.jsonl")) == expected
    assert run_config(Path("runs/presets/open-hotpot-resp-paper/results.jsonl")) == {
        "method": "resp", "preset": "paper", "dataset": "partial:hotpot", "index": "open"}


def test_frozen_run_runs_a_command_from_a_commit_with_partial_results_seeded(tmp_path):
    """benchmarks/frozen_run.sh: the command runs in an archive of the commit, `$HOPRAG` runs that tree's code, and
    a run's committed partial results (<partial>/<commit>/<run>.results.jsonl, and <run>@seed-N.results.jsonl for
    seed N of a multi-seed run) are in place to resume."""
    root = SCRIPT.parents[1]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if not (root / ".venv" / "bin" / "python").exists() or shutil.which("git") is None or head.returncode:
        pytest.skip("needs the README's .venv and a git checkout")
    commit = head.stdout.strip()
    partial = tmp_path / "partial"
    (partial / commit).mkdir(parents=True)
    (partial / commit / "hotpot-x-paper.results.jsonl").write_text('{"id": "q1"}\n')
    # a multi-seed run: seed 0 is the single-seed run's records (a link), seed 1 its own file
    (partial / commit / "hotpot-x-paper@seed-0.results.jsonl").symlink_to("hotpot-x-paper.results.jsonl")
    (partial / commit / "hotpot-x-paper@seed-1.results.jsonl").write_text('{"id": "q2"}\n')
    frozen = tmp_path / "frozen"
    script = str(root / "benchmarks" / "frozen_run.sh")
    env = {**os.environ, "HOPRAG_PARTIAL_DIR": str(partial)}
    done = subprocess.run(["bash", script, commit, str(frozen), "bash", "-c",
                           '$HOPRAG --help >/dev/null && echo "$HOPRAG" && cd runs/presets/hotpot-x-paper && '
                           'cat results.jsonl seed-0/results.jsonl seed-1/results.jsonl'],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(frozen / ".frozen-bin" / "hoprag"), '{"id": "q1"}', '{"id": "q1"}', '{"id": "q2"}']
    assert (frozen / "hoprag" / "cli.py").is_file()
    bad = subprocess.run(["bash", script, "no-such-commit", str(tmp_path / "b"), "true"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown commit 'no-such-commit'" in bad.stderr


def test_index_topk_counts_the_questions_whose_first_search_returns_the_recorded_passages(tmp_path: Path) -> None:
    """benchmarks/index_topk.py: a rebuilt index is checked against a run's recorded first searches; an index that
    does not exist is one line and exit 2."""
    script = SCRIPT.parent / "index_topk.py"
    index_topk = _benchmark_script("index_topk")
    step = {"kind": "search", "query": "", "retrieved_ids": []}
    records = [{"id": "same", "trajectory": [{**step, "query": "q1", "retrieved_ids": ["a", "b"]}]},
               {"id": "swapped", "trajectory": [{**step, "query": "q2", "retrieved_ids": ["c", "d"]}]},
               {"id": "other", "trajectory": [{**step, "query": "q3", "retrieved_ids": ["e", "f"]}]},
               {"id": "closed-book", "trajectory": [{"kind": "answer"}]}]
    now = {"q1": ["a", "b"], "q2": ["d", "c"], "q3": ["e", "x"]}

    searched, in_order, as_set, differs = index_topk.compare_top_k(records, lambda query, k: now[query][:k])

    assert (searched, in_order, as_set) == (3, 1, 2)  # the record that never searched is not counted
    assert [line.split(":")[0] for line in differs] == ["swapped", "other"]
    results = tmp_path / "hotpot-rag-small.results.jsonl"
    results.write_text("".join(json.dumps(record) + "\n" for record in records))
    missing = subprocess.run([sys.executable, str(script), "no-such-index", str(results)], capture_output=True,
                             text=True)
    assert missing.returncode == 2 and missing.stderr.startswith("no index named 'no-such-index'")
    assert len(missing.stderr.strip().splitlines()) == 1


def _heldout_cell(root: Path, name: str, f1s: dict[str, float], seconds: float = 10.0, rss: int | None = None,
                  failed: str = "") -> None:
    folder = root / name
    folder.mkdir()
    records = [{"id": key, "metrics": {"em": float(f1 == 1.0), "f1": f1}, "seconds": seconds, "git_commit": "abcdef1234",
                "usage": {"reasoner": {"input_tokens": 100, "output_tokens": 10}, "writer": {"input_tokens": 50,
                                                                                            "output_tokens": 5}}}
               for key, f1 in f1s.items()]
    if failed:  # scored as an empty answer, as hoprag eval records a question whose calls kept failing
        records.append({"id": failed, "error": "boom", "metrics": {"em": 0.0, "f1": 0.0}, "seconds": 0.0})
    lines = [json.dumps(r) for r in records] + ['{"id": "cut']
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n")
    if rss is not None:
        (folder / "summary.json").write_text(json.dumps({"peak_rss_mb": rss}))


def test_heldout_table_compares_each_cell_with_rag_on_the_questions_both_hold(tmp_path: Path) -> None:
    """Rows in the references-first order, a partial cell with its count and its F1 − RAG over the shared
    questions only, cost per question summed over roles, and the commits named."""
    heldout = _benchmark_script("heldout_table")
    full = {f"q{n}": 1.0 if n < 25 else 0.0 for n in range(50)}  # 50 questions, F1 50
    _heldout_cell(tmp_path, "hotpot-rag-small", full, seconds=4.0, rss=2300)
    _heldout_cell(tmp_path, "hotpot-renact-small", {"q0": 0.5, "q30": 1.0}, seconds=30.0, rss=2600)  # partial
    _heldout_cell(tmp_path, "hotpot-cot-small", {key: 0.0 for key in full if key != "q49"}, failed="q49")
    text = heldout.tables(tmp_path)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [row.split(" | ")[0] for row in rows[:3]] == ["| `rag`", "| `cot`", "| `renact`"]
    assert rows[0].startswith("| `rag` | 50.0 | 50.00 | 0 | - | - | - |")
    assert rows[1].startswith("| `cot` | 0.0 (1 failed) | 0.00 | −50.00 |")  # the failed question scored wrong
    # q0: 0.5 - 1.0, q30: 1.0 - 0.0, mean +25; two of hotpot's 50 questions
    assert rows[2].startswith("| `renact` | 50.0 (n = 2) | 75.00 | +25.00 |")
    assert rows[5].startswith("| `renact` | 30.0 (30.0) | 150 / 15 | - | - |") and rows[5].endswith("| 2,600 |")
    assert rows[3].endswith("| 2,300 |") and rows[4].endswith("| - |")
    assert text.rstrip().endswith("commit(s): abcdef1")
    # the count the cells have reached, per dataset, above the tables (a dataset without cells: 0)
    assert text.splitlines()[0] == "questions: HotpotQA-hard 50 of 50, MuSiQue 0 of 50, 2Wiki 0 of 32"


def test_heldout_table_states_the_count_every_cell_reached_once(tmp_path: Path) -> None:
    """A run stopped after a round: every cell at the same count, said once above the tables, not in each cell."""
    heldout = _benchmark_script("heldout_table")
    ten = {f"q{n}": 1.0 if n < 5 else 0.0 for n in range(10)}
    for name in ("hotpot-rag-small", "hotpot-resp-small", "2wiki-rag-small"):
        _heldout_cell(tmp_path, name, ten)
    _heldout_cell(tmp_path, "2wiki-resp-small", dict(list(ten.items())[:7]))  # still running
    _heldout_cell(tmp_path, "hotpot-cot-small", {f"q{n}": 0.0 for n in range(12)})  # into the next round
    text = heldout.tables(tmp_path)
    # the count most cells hold (a tie: the larger), not the furthest cell's
    assert text.splitlines()[0] == "questions: HotpotQA-hard 10 of 50, MuSiQue 0 of 50, 2Wiki 10 of 32"
    resp = next(line for line in text.splitlines() if line.startswith("| `resp` | "))
    assert resp.startswith("| `resp` | 50.0 | 50.00 | +0.00 | - | - | - | 71.4 (n = 7) | 71.43 | +0.00 |")
    cot = next(line for line in text.splitlines() if line.startswith("| `cot` | "))
    assert cot.startswith("| `cot` | 0.0 (n = 12) | 0.00 | −50.00 (on 10) |")


def test_heldout_table_puts_a_paper_row_under_its_small_row_and_compares_it_with_paper_rag(tmp_path: Path) -> None:
    """`paper` cells get their own rows, marked, each after the method's `small` row, with F1 − RAG against RAG at the
    same preset; a method run only at `paper` still gets its row."""
    heldout = _benchmark_script("heldout_table")
    _heldout_cell(tmp_path, "2wiki-rag-small", {"q0": 1.0, "q1": 1.0})
    _heldout_cell(tmp_path, "2wiki-rag-paper", {"q0": 1.0, "q1": 0.0})  # no answer_choices: misses a choice question
    _heldout_cell(tmp_path, "2wiki-resp-small", {"q0": 1.0, "q1": 0.0})
    _heldout_cell(tmp_path, "2wiki-resp-paper", {"q0": 1.0, "q1": 0.0})
    _heldout_cell(tmp_path, "2wiki-rearag-paper", {"q0": 0.0, "q1": 0.0})
    text = heldout.tables(tmp_path)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert "F1 − RAG: against `rag` at the row's preset, over the questions both cells hold." in text
    accuracy = [row.split(" | ")[0] for row in rows[:5]]
    assert accuracy == ["| `rag`", "| `rag`, preset `paper`", "| `resp`", "| `resp`, preset `paper`",
                        "| `rearag`, preset `paper`"]
    assert rows[0].endswith("| 100.0 | 100.00 | 0 |") and rows[1].endswith("| 50.0 | 50.00 | 0 |")
    assert rows[2].endswith("| 50.0 | 50.00 | −50.00 |")  # against `small` RAG
    assert rows[3].endswith("| 50.0 | 50.00 | +0.00 |")  # against `paper` RAG
    assert rows[4].endswith("| 0.0 | 0.00 | −50.00 |")
    assert [row.split(" | ")[0] for row in rows[5:]] == accuracy  # the cost table, in the same order


def test_heldout_script_grows_every_cell_round_by_round_at_both_presets(tmp_path: Path) -> None:
    """heldout.sh (with a stand-in for hoprag that records its calls): every cell's job of a round before any of the
    next, `small` cells then `paper` cells, one folder and response cache a cell, then the tables and reports."""
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "hoprag"
    fake.write_text(f"""#!{sys.executable}
import os, pathlib, sys
with open({str(calls)!r}, "a") as log:
    log.write(" ".join(sys.argv[1:] + [os.environ.get("HOPRAG_LLM_CACHE", "-")]) + "\\n")
if sys.argv[1] == "eval":
    pathlib.Path(sys.argv[sys.argv.index("--out") + 1]).mkdir(parents=True, exist_ok=True)
""")
    fake.chmod(0o755)
    env = {**os.environ, "HOPRAG": str(fake), "PYTHON": sys.executable, "DATA": "data", "WORKERS": "1",
           "ROUNDS": "10 20", "METHODS": "resp rag", "PAPER_METHODS": "resp"}

    def run_script(folder: Path) -> list[list[str]]:
        """heldout.sh into FOLDER, with the env as it is now: the stand-in's `eval` calls, each its arguments."""
        run = subprocess.run(["bash", str(SCRIPT.with_name("heldout.sh")), str(folder)], env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return [line.split() for line in calls.read_text().splitlines() if line.startswith("eval")]

    def flag(call: list[str], name: str) -> str:
        return call[call.index(name) + 1]

    out = tmp_path / "out"
    evals = run_script(out)
    cells = [(flag(a, "--method"), flag(a, "--preset"), flag(a, "--dataset").split(":")[0], flag(a, "--questions"),
              flag(a, "--limit")) for a in evals]
    files = [("hotpot", "hotpotqa", "51-100"), ("musique", "musique", "51-100"), ("2wiki", "2wiki", "51-82")]
    jobs = [(method, preset, file, limit) for limit in ("10", "20")
            for method, preset in (("resp", "small"), ("rag", "small"), ("resp", "paper")) for file in files]
    assert cells == [(method, preset, kind, questions, limit) for method, preset, (_, kind, questions), limit in jobs]
    folders = [str(out / f"{name}-{method}-{preset}") for method, preset, (name, _, _), _ in jobs]
    assert [flag(a, "--out") for a in evals] == folders
    assert [a[-1] for a in evals] == [f"{folder}.llm-cache.sqlite" for folder in folders]  # one cache a cell
    # per dataset, its own cells only, RAG's `small` first (the report compares every run with its first)
    reports = [line.split()[1:-1] for line in calls.read_text().splitlines() if line.startswith("report")]
    assert reports == [[str(out / f"{name}-{cell}") for cell in ("rag-small", "resp-small", "resp-paper")]
                       for name in ("hotpot", "musique", "2wiki")]
    assert (out / "hotpot.md").is_file()
    assert (out / "heldout.md").read_text().startswith("questions: ")
    # PAPER_METHODS empty: no `paper` cell. A cell holding its round's questions (a range shorter than the round:
    # all of it), none failed, starts no process; one with a failed question runs again, to retry it.
    calls.unlink()
    env |= {"ROUNDS": "40", "METHODS": "rag", "PAPER_METHODS": ""}
    held = tmp_path / "small-only"
    for name, good, failed in (("hotpot", 40, 0), ("musique", 39, 1), ("2wiki", 32, 0)):
        (held / f"{name}-rag-small").mkdir(parents=True)
        lines = [json.dumps({"id": f"q{n}", "error": None, "metrics": {"em": 1.0, "f1": 1.0}}) for n in range(good)]
        lines += [json.dumps({"id": "qx", "error": "boom", "metrics": {"em": 0.0, "f1": 0.0}})] * failed
        (held / f"{name}-rag-small" / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert [(flag(a, "--preset"), flag(a, "--out")) for a in run_script(held)] == [
        ("small", str(held / "musique-rag-small"))]


def test_smoke_table_shows_both_presets_of_a_method_in_one_row(tmp_path: Path, capsys) -> None:
    """Each column "small · paper"; one value where only `small` ran; "-" for the `small` a method lacks; a cell
    folder without records ran out of its time budget."""
    smoke = _benchmark_script("smoke_table")
    for name, f1s in {"hotpot-rag-small": [1.0, 0.0], "hotpot-rag-paper": [1.0, 0.0], "hotpot-sure-small": [1.0],
                      "hotpot-self-ask-paper": [0.0, 0.0]}.items():
        _heldout_cell(tmp_path, name, {f"q{n}": f1 for n, f1 in enumerate(f1s)})
    (tmp_path / "hotpot-infogent-small").mkdir()
    smoke.main(tmp_path)
    rows = {line.split(" | ")[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("| `")}
    assert rows["| `rag`"].startswith("| `rag` | 2 · 2 | 50 · 50 | 50.0 · 50.0 | 0 · 0 | 10 · 10 | 150/15 · 150/15 |")
    assert rows["| `sure`"].startswith("| `sure` | 1 | 100 | 100.0 | +50.0 | 10 |")
    assert rows["| `self-ask`"].startswith("| `self-ask` | - · 2 | - · 0 | - · 0.0 | - · -50.0 |")
    assert rows["| `infogent`"].startswith("| `infogent` | 0 | - | - | - | > budget |")
