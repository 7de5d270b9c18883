"""SuRe (`sure`): candidates, candidate-conditioned summaries, verification and pair-wise ranking as FlashRAG's
SuRePipeline runs them, its parsers on malformed output, its presets and its counters in `hoprag eval`, with
scripted models and an in-memory retriever."""

from __future__ import annotations

import itertools
import json
import random
import string

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.eval.runner import run_eval
from hoprag.graphs import mermaid, method_counters
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever
from hoprag.nodes.sure import parse_candidates, parse_preference, parse_validity
from hoprag.presets import preset_options
from hoprag.run import run_question


class TwoPages:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        return [Document(id="d1", title="Rush (band)", text="Rush was a Canadian rock band."),
                Document(id="d2", title="Yes (band)", text="Yes is an English rock band.")][:k]


def scripted(verdicts: dict[str, str], rank: str = "Passage 1", candidates: str = "(a) Yes, (b) Rush"):
    """A generator that answers each SuRe prompt by its kind: candidates, a summary naming its candidate, the
    verdict for the candidate, and the same ranking reply for every pair."""

    def reply(messages) -> str:
        prompt = str(messages[-1].content)
        if prompt.startswith("Below are"):
            return candidates
        if prompt.startswith("Reference:"):
            return f"The passages say the answer is {prompt.split('Prediction: ')[1].splitlines()[0]}. [DONE]"
        if prompt.startswith("Question: Given the following passages"):
            return rank
        if "Does the passage correctly support the prediction?" in prompt:
            return verdicts[prompt.split("Prediction: ")[1].splitlines()[0]]
        if prompt.startswith("Pick the answer"):
            return "Rush"
        return "unexpected prompt"

    return reply


def setup(script, name: str = "sure", **options) -> tuple[Context, TwoPages, ScriptedChatModel]:
    retriever = TwoPages()
    register_retriever(f"{name}-index", retriever)
    generator = ScriptedChatModel(script)
    return Context(index=f"{name}-index", llm=register_fake(f"fake:{name}", generator), **options), retriever, generator


def test_ranking_picks_the_verified_candidate():
    # Every pair ranked "Passage 1": each summary wins once as the first passage, so ranking alone ties and
    # FlashRAG's argmax would take the first candidate; the verification decides for the second.
    ctx, retriever, generator = setup(scripted({"Yes": "False", "Rush": "True"}))
    result = run_question("sure", "Which band was Canadian?", ctx)
    assert result["answer"] == "Rush" and result["finished_by"] == "generate"
    assert retriever.queries == ["Which band was Canadian?"]
    # 1 candidate call, 2 summaries, 2 verifications, 2 ordered pairs: FlashRAG's calls.
    assert len(generator.prompts) == 7
    first = generator.prompts[0]
    assert first.startswith("Below are 2 passages related to the question at the end. After readingthe passages")
    assert "Passage #1 Title: Rush (band)\nPassage #1 Text: Rush was a Canadian rock band.\n\n" in first
    assert first.endswith("Question: Which band was Canadian?\nAnswer:")
    assert generator.prompts[3].startswith("Question: Which band was Canadian?\nPrediction: Yes\nPassage: The passages")
    steps = result["trajectory"]
    assert [s["kind"] for s in steps] == ["search", "summary", "summary", "verify", "verify", "rank"]
    assert steps[0]["candidates"] == ["Yes", "Rush"] and steps[0]["retrieved_titles"] == ["Rush (band)", "Yes (band)"]
    assert [s["valid"] for s in steps[3:5]] == [0, 1]
    assert steps[5]["scores"] == [1.0, 2.0] and steps[5]["action"] == "finish[Rush]"
    assert method_counters("sure", result) == {"candidates": 2, "verified": 1, "ranking_calls": 2, "invalid_outputs": 0}


def test_ranking_decides_between_verified_candidates_and_ties_take_the_first():
    ctx, _, _ = setup(scripted({"Yes": "True", "Rush": "True"}, rank="Passage 2"), name="sure-rank")
    # "Passage 2" scores 0 for the first passage of every pair: both totals are 1, the first candidate wins.
    assert run_question("sure", "Which band?", ctx)["answer"] == "Yes"

    def prefer_rush(messages) -> str:
        prompt = str(messages[-1].content)
        if prompt.startswith("Question: Given the following passages"):
            return "Passage 1" if prompt.split("Passage 1: ")[1].startswith("The passages say the answer is Rush") \
                else "Passage 2"
        return scripted({"Yes": "True", "Rush": "True"})(messages)

    ctx, _, _ = setup(prefer_rush, name="sure-prefer")
    assert run_question("sure", "Which band?", ctx)["answer"] == "Rush"


def test_no_candidates_is_an_empty_answer_in_paper_and_one_candidate_in_small():
    ctx, _, generator = setup(scripted({"Rush": "True"}, candidates="Rush"), name="sure-none")
    result = run_question("sure", "Which band?", ctx)
    assert result["answer"] == "" and result["finished_by"] == "no_candidates" and len(generator.prompts) == 1
    assert result["invalid_outputs"] == 1 and result["trajectory"][0]["problem"] == "no candidates"
    ctx, _, generator = setup(scripted({"Rush": "True"}, candidates="Rush"), name="sure-bare", preset="small")
    result = run_question("sure", "Which band?", ctx)
    # One candidate: its summary and verification, no pair to rank, and it is the answer.
    assert result["answer"] == "Rush" and len(generator.prompts) == 3
    ctx, _, _ = setup(scripted({"Rush": "True"}, candidates="Rush"), name="sure-bare-off", preset="small",
                      sure_unlisted_candidate=False)
    assert run_question("sure", "Which band?", ctx)["answer"] == ""


def test_parsers_follow_flashrag():
    assert parse_candidates("(a) Paris, (b) London") == ["Paris", "London"]
    assert parse_candidates("(a) Rush\nThe band (b) Yes") == ["Rush", "Yes"]
    assert parse_candidates("(a) , (b) Rush") == ["Rush"] and parse_candidates("Rush") == []
    assert parse_validity("True") == (1, True) and parse_validity("false.") == (0, True)
    assert parse_validity("I cannot tell") == (0, False)
    assert parse_preference("Passage 2 is better than passage 1") == (1.0, True)  # FlashRAG checks "passage 1" first
    assert parse_preference("passage 2") == (0.0, True) and parse_preference("Both") == (0.5, False)


def malformed_outputs(seed: int, n: int = 240) -> list[object]:
    """Random text, parentheses, labels and brackets without the expected shape, unicode, and non-strings."""
    rng = random.Random(seed)
    pieces = ["(", ")", "(a)", "(b", "a)", "()", "((", "))", "\n", ",", " ", "True", "Passage", "passage 3", "[DONE]",
              "é", "中", "\x00", "\t", "(1)", "(xx)", "Passage 1,Passage 2", "TRUE", "fals", "{", "}"]
    outputs: list[object] = ["", " ", "\n\n", None, 0, 3.5, ["(a) x"], {"a": 1}, "(" * 500, ")" * 500]
    while len(outputs) < n:
        outputs.append("".join(rng.choice(pieces + list(string.printable)) for _ in range(rng.randint(1, 60))))
    return outputs


def test_200_malformed_outputs_through_each_parser():
    for output in malformed_outputs(1):
        candidates = parse_candidates(output)
        assert isinstance(candidates, list) and all(isinstance(c, str) and c and "," not in c for c in candidates)
    for output in malformed_outputs(2):
        valid, read = parse_validity(output)
        assert valid in (0, 1) and isinstance(read, bool)
    for output in malformed_outputs(3):
        score, read = parse_preference(output)
        assert score in (0.0, 0.5, 1.0) and isinstance(read, bool)


def test_malformed_replies_run_through_the_graph():
    outputs = [o for o in malformed_outputs(4, 40) if isinstance(o, str)]
    replies = itertools.cycle(outputs)
    ctx, _, _ = setup(lambda messages: next(replies), name="sure-garbage")
    for _ in range(10):
        result = run_question("sure", "Which band?", ctx)
        assert isinstance(result["answer"], str)


def test_presets_follow_flashrag_and_small_adds_the_answer_steps():
    paper = preset_options("paper", "sure")
    assert (paper["temperature"], paper["k"], paper["max_tokens"]) == (0.0, 5, 32)
    assert not paper["sure_unlisted_candidate"] and not paper["answer_choices"] and not paper["concise_answer"]
    small = preset_options("small", "sure")
    assert small["max_tokens"] == 32 and small["sure_unlisted_candidate"] and small["answer_choices"]


def test_eval_records_the_counters_and_the_report_shows_the_steps(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Which band {i}?", "answers": ["Rush"]})
                              for i in range(2)))
    ctx, _, _ = setup(scripted({"Yes": "False", "Rush": "True"}), name="sure-eval")
    summary = run_eval("sure", f"jsonl:{data}", tmp_path / "out", ctx, progress=False)
    assert summary["em"] == 100.0 and summary["counters"]["verified"] == {"total": 2, "mean": 1.0}
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert record["counters"] == {"candidates": 2, "verified": 1, "ranking_calls": 2, "invalid_outputs": 0}
    from hoprag.eval.html_report import render_html

    page = render_html([tmp_path / "out"])
    assert "candidates[Yes | Rush]" in page and "verify[Rush]" in page and "finish[Rush]" in page


def test_the_graph_is_drawn():
    drawn = mermaid("sure")
    assert all(node in drawn for node in ("retrieve", "candidates", "summarize", "verify", "rank", "concise_answer"))
