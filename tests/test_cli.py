"""The command line: one clear error line and a non-zero exit for bad input; `ask --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .openai_stub import start_stub


def hoprag(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hoprag.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=300)


def assert_one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    assert fragment in result.stderr, result.stderr


@pytest.fixture
def tiny_corpus(tmp_path):
    corpus = tmp_path / "tiny.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in [
        {"id": "1", "title": "Rush", "text": "Rush is a Canadian rock band that released Counterparts."},
        {"id": "2", "title": "Neil Peart", "text": "Neil Peart, drummer of Rush, is in the Modern Drummer Hall of Fame."},
    ]))
    return corpus


def test_unknown_source():
    assert_one_line_error(hoprag("index", "build", "x", "--source", "ftp:nowhere"), "source")


def test_missing_source_file():
    assert_one_line_error(hoprag("index", "build", "x", "--source", "hotpotqa:no/such/file.json"), "no/such/file.json")


def test_empty_corpus(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert_one_line_error(hoprag("index", "build", "x", "--source", f"jsonl:{empty}"), "no documents")


def test_unknown_index():
    assert_one_line_error(hoprag("index", "info", "nope"), "hoprag index build")
    assert_one_line_error(hoprag("ask", "Who?", "--index", "nope"), "hoprag index build")


def test_index_build_info_and_embedder_mismatch(tiny_corpus):
    built = hoprag("index", "build", "tiny", "--source", f"jsonl:{tiny_corpus}")
    assert built.returncode == 0, built.stderr
    info = json.loads(hoprag("index", "info", "tiny").stdout)
    assert info["count"] == 2 and info["source"] == f"jsonl:{tiny_corpus}"
    assert_one_line_error(hoprag("index", "build", "tiny", "--source", f"jsonl:{tiny_corpus}", "--embedder", "minilm"),
                          "embedder")


def test_unknown_model_spec_and_empty_question(tiny_corpus):
    assert hoprag("index", "build", "tiny", "--source", f"jsonl:{tiny_corpus}").returncode == 0
    assert_one_line_error(hoprag("ask", "Who?", "--index", "tiny", "--llm", "gpt-4"), "unknown model spec")
    assert_one_line_error(hoprag("ask", "  ", "--index", "tiny"), "empty")


def test_unreachable_endpoint(tiny_corpus):
    assert hoprag("index", "build", "tiny", "--source", f"jsonl:{tiny_corpus}").returncode == 0
    result = hoprag("ask", "Who?", "--index", "tiny", "--llm", "openai:m", env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert_one_line_error(result, "cannot reach")


def test_ask_json_with_an_openai_compatible_endpoint(tiny_corpus):
    assert hoprag("index", "build", "tiny", "--source", f"jsonl:{tiny_corpus}").returncode == 0
    stub = start_stub()
    try:
        result = hoprag("ask", "Which band?", "--index", "tiny", "--retriever", "bm25", "--llm", "openai:stub", "--json",
                        env={"OPENAI_BASE_URL": f"http://127.0.0.1:{stub.server_port}/v1", "OPENAI_API_KEY": "x"})
    finally:
        stub.shutdown()
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["answer"] == "Rush"
    assert set(payload) >= {"answer", "steps", "trajectory", "usage", "seconds"}
    assert payload["steps"] == 1 and payload["usage"]["notes"]["calls"] >= 1



def test_ask_prints_every_method_as_it_runs(tiny_corpus):
    # The printed trace (not --json) of every method: IRCoT/FLARE steps have no observation, and
    # printing one as a ReAct step crashed `ask` after the first retrieval.
    from hoprag.graphs import METHODS

    assert hoprag("index", "build", "tiny", "--source", f"jsonl:{tiny_corpus}").returncode == 0
    stub = start_stub()
    try:
        for method in METHODS:
            # RECOMP's `paper` needs its T5 checkpoint (test_recomp checks its one-line error): the LLM stand-in runs.
            extra = ("--option", "recomp_compressor=llm") if method == "recomp" else ()
            result = hoprag("ask", "Which band?", "--index", "tiny", "--retriever", "bm25", "--llm", "openai:stub",
                            "--method", method, "--max-steps", "2", *extra,
                            env={"OPENAI_BASE_URL": f"http://127.0.0.1:{stub.server_port}/v1", "OPENAI_API_KEY": "x"})
            assert result.returncode == 0 and "Traceback" not in result.stdout + result.stderr, (method, result.stderr)
            assert "Answer:" in result.stdout, (method, result.stdout)
            if method.startswith(("ircot", "flare")):
                assert "Sentence: Counterparts is an album by Rush." in result.stderr  # the trace goes to stderr
            if method.startswith("flare"):
                assert "gate: lowest token probability 0.99, kept without retrieval" in result.stderr
    finally:
        stub.shutdown()

def test_bad_method_and_options_fail_before_any_work(tmp_path):
    dataset = "hotpotqa:../shared/data/hotpotqa/hotpot_dev_distractor_hard_100.json"
    assert_one_line_error(hoprag("eval", "--method", "nope", "--dataset", dataset, "--out", str(tmp_path / "r")),
                          "unknown method")
    assert_one_line_error(hoprag("ask", "Who?", "--method", "nope"), "unknown method")
    assert_one_line_error(hoprag("ask", "Who?", "--k", "0"), "--k")
    assert_one_line_error(hoprag("ask", "Who?", "--retriever", "tfidf"), "unknown retriever")
    assert_one_line_error(hoprag("eval", "--method", "rag", "--dataset", dataset, "--out", str(tmp_path / "r"),
                                 "--concurrency", "0"), "--concurrency")
    assert not (tmp_path / "r").exists()  # nothing was built or written


def test_usage_errors_and_bad_values_are_one_line(tmp_path):
    dataset = "hotpotqa:../shared/data/hotpotqa/hotpot_dev_distractor_hard_100.json"
    for result, fragment in [
        (hoprag("eval"), "Missing option '--method'. (see: hoprag eval --help)"),
        (hoprag("ask", "Who?", "--k", "abc"), "Invalid value for '--k'"),
        (hoprag("nosuchcommand"), "No such command 'nosuchcommand'"),
        (hoprag("serve", "--port", "99999"), "--port must be a TCP port"),
        (hoprag("report", str(tmp_path / "nowhere")), "is not a folder"),
        (hoprag("merge-seeds", str(tmp_path), str(tmp_path / "r"), "--out", str(tmp_path / "m")),
         "has no summary.json"),  # a folder, but no run's
        (hoprag("eval", "--method", "rag", "--dataset", dataset, "--out", str(tmp_path / "r"), "--limit", "0"), "--limit must be at least 1"),
        (hoprag("eval", "--method", "rag", "--dataset", "foo:x.json", "--out", str(tmp_path / "r")), "unknown dataset kind 'foo'"),
        (hoprag("eval", "--method", "rag", "--dataset", "x.json", "--out", str(tmp_path / "r")), "must look like KIND:PATH"),
    ]:
        assert_one_line_error(result, fragment)
        assert len((result.stderr + result.stdout).strip().splitlines()) == 1, result.stderr
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert_one_line_error(hoprag("eval", "--method", "rag", "--dataset", dataset, "--out", str(a_file)), "is a file")


def test_merge_seeds_prints_the_mean_and_spread_and_writes_the_summary(tmp_path):
    for seed, f1 in [(10, 30.0), (20, 40.0)]:
        (tmp_path / f"seed-{seed}").mkdir()
        summary = {"questions": 2, "em": f1, "f1": f1, "cover_em": f1, "finished_by": {"answer": 2},
                   "config": {"method": "rag", "preset": "paper", "limit": 2, "seed": seed, "git_commit": "abc"}}
        (tmp_path / f"seed-{seed}" / "summary.json").write_text(json.dumps(summary))
    result = hoprag("merge-seeds", str(tmp_path / "seed-10"), str(tmp_path / "seed-20"), "--out", str(tmp_path / "m"))
    assert result.returncode == 0, result.stderr
    assert "seeds 10, 20 | em 35.0 ± 7.07 | f1 35.0 ± 7.07" in result.stdout
    merged = json.loads((tmp_path / "m" / "summary.json").read_text())
    assert merged["finished_by"] == {"answer": 4} and merged["config"]["git_commit"] == "abc"
    assert "warning" not in result.stderr  # neither seed names its machine (runs recorded before machines were)
    assert merged["config"]["machine"] == "unknown"


def test_merge_seeds_warns_when_the_seeds_ran_on_different_kinds_of_machine(tmp_path):
    machines = {10: "x86_64 · AMD EPYC · avx avx2 f16c fma · llama-cpp-python 0.3.36",
                20: "x86_64 · Intel Xeon · avx avx2 avx512f f16c fma · llama-cpp-python 0.3.36"}
    for seed, machine in machines.items():
        (tmp_path / f"seed-{seed}").mkdir()
        summary = {"questions": 2, "em": 30.0, "f1": 30.0, "finished_by": {"answer": 2},
                   "config": {"method": "rag", "preset": "paper", "limit": 2, "seed": seed, "machine": machine}}
        (tmp_path / f"seed-{seed}" / "summary.json").write_text(json.dumps(summary))
    result = hoprag("merge-seeds", str(tmp_path / "seed-10"), str(tmp_path / "seed-20"), "--out", str(tmp_path / "m"))
    assert result.returncode == 0, result.stderr  # merged all the same: the warning leaves the decision to the user
    assert "warning: the seeds' records name 2 machines" in result.stderr and "avx512f" in result.stderr
    assert json.loads((tmp_path / "m" / "summary.json").read_text())["config"]["machine"] == sorted(machines.values())
    del summary["config"]["machine"]  # seed 20 from before machines were recorded: unknown, so not surely one machine
    (tmp_path / "seed-20" / "summary.json").write_text(json.dumps(summary))
    result = hoprag("merge-seeds", str(tmp_path / "seed-10"), str(tmp_path / "seed-20"), "--out", str(tmp_path / "m"))
    assert "name 2 machines (unknown; x86_64 · AMD EPYC" in result.stderr


def test_a_bare_command_group_prints_its_help_and_no_error():
    for args in [(), ("index",), ("models",)]:
        result = hoprag(*args)
        assert result.returncode == 0, result.stderr
        assert "Usage:" in result.stdout and "Commands" in result.stdout
        assert "error" not in result.stderr, result.stderr


def test_option_pairs_set_context_options_by_their_types():
    from hoprag.cli import make_context, parse_options

    assert parse_options(["grounded_notes=false", "max-steps=4", "flare_theta=0.7", "resp_on_repeat=replan"]) == {
        "grounded_notes": False, "max_steps": 4, "flare_theta": 0.7, "resp_on_repeat": "replan"}
    ctx = make_context(retriever="auto", k=None, preset="small", extra=["grounded_notes=off", "k=3"]).resolved("renact")
    assert ctx.grounded_notes is False and ctx.k == 3 and ctx.lenient_notes is True  # the rest of the preset stays


def test_bad_option_pairs_are_one_line_errors():
    assert_one_line_error(hoprag("ask", "Who?", "--option", "grounded_note=false"), "did you mean grounded_notes")
    assert_one_line_error(hoprag("ask", "Who?", "--option", "grounded_notes=maybe"), "grounded_notes takes true or false")
    assert_one_line_error(hoprag("ask", "Who?", "--option", "resp_on_repeat=never"), "retrieve | replan | end")
    assert_one_line_error(hoprag("ask", "Who?", "--option", "max_steps"), "give the value too, as max_steps=VALUE")
    assert_one_line_error(hoprag("ask", "Who?", "--option", "max_stepz"), "use KEY=VALUE")


@pytest.mark.slow
def test_ask_json_with_the_embedded_model(tiny_corpus):
    assert hoprag("index", "build", "tiny", "--source", f"jsonl:{tiny_corpus}").returncode == 0
    result = hoprag("ask", "Which Canadian rock band released Counterparts?", "--index", "tiny", "--method", "rag",
                    "--llm", "local:qwen2.5-coder-1.5b", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert "Rush" in payload["answer"]
    assert payload["usage"]["generator"]["input_tokens"] > 20 and payload["usage"]["generator"]["output_tokens"] >= 1
