"""Standard RAG and CoT baselines, the LLM response cache, and the LLM judge in `hoprag eval`."""

from __future__ import annotations

import json

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.eval.runner import run_eval
from hoprag.llm import ScriptedChatModel, call_llm, register_fake
from hoprag.llm_cache import is_cacheable
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question


class Recorder:
    def __init__(self, documents):
        self.documents, self.queries = documents, []

    def search(self, query, k):
        self.queries.append(query)
        return self.documents[:k]


DOCS = [Document(id=f"d{i}", title=f"Page {i}", text=f"Page {i} says {i * 11}.") for i in range(6)]


def test_standard_rag_retrieves_the_question_once_and_answers_from_the_documents():
    retriever = Recorder(DOCS)
    register_retriever("rag-index", retriever)
    generator = ScriptedChatModel(["33\nbecause page 3 says so"])
    ctx = Context(llm=register_fake("fake:rag-gen", generator), index="rag-index", k=4)
    result = run_question("rag", "What does page 3 say?", ctx)
    assert retriever.queries == ["What does page 3 say?"]
    assert result["answer"] == "33" and result["steps"] == 1 and result["llm_calls"] == 1
    assert result["trajectory"][0]["retrieved_titles"] == ["Page 0", "Page 1", "Page 2", "Page 3"]
    prompt = generator.prompts[0]
    assert prompt.startswith("Answer the question based on the given document.")  # static part first
    assert "Doc 4 (Title: Page 3) Page 3 says 33." in prompt and "Page 4" not in prompt
    assert prompt.rstrip().endswith("Question: What does page 3 say?")


def test_cot_reads_the_answer_after_the_marker_and_retrieves_nothing():
    register_retriever("cot-index", Recorder(DOCS))
    model = ScriptedChatModel(["Paris is the capital of France.\nSo the answer is: Paris."])
    ctx = Context(llm=register_fake("fake:cot", model), index="cot-index")
    result = run_question("cot", "What is the capital of France?", ctx)
    assert result["answer"] == "Paris" and result["steps"] == 0
    assert "capital of France" in result["trajectory"][0]["thought"]


def test_response_cache_serves_repeats_and_keys_on_parameters():
    model = ScriptedChatModel(lambda messages: f"reply {len(model.prompts)}")
    spec = register_fake("fake:cached", model)
    ctx = Context(llm=spec, llm_cache=True)
    first, record, _ = call_llm("reasoner", "same prompt", ctx, max_tokens=10)
    again, cached, _ = call_llm("reasoner", "same prompt", ctx, max_tokens=10)
    assert (first, again) == ("reply 1", "reply 1") and len(model.prompts) == 1
    assert cached.cached and not record.cached and cached.input_tokens == record.input_tokens
    other, _, _ = call_llm("reasoner", "same prompt", ctx, max_tokens=11)  # another parameter: a new call
    assert other == "reply 2"
    call_llm("reasoner", "same prompt", ctx.with_options(llm_cache=False), max_tokens=10)
    assert len(model.prompts) == 3  # the cache is off unless asked for


def test_sampled_calls_are_cached_only_under_a_fixed_seed():
    assert is_cacheable(0.0, None) and is_cacheable(0.7, 1) and not is_cacheable(0.7, None)
    model = ScriptedChatModel(lambda messages: f"sample {len(model.prompts)}")
    spec = register_fake("fake:sampled", model)
    unseeded = Context(llm=spec, llm_cache=True, temperature=0.7, seed=None)
    assert call_llm("reasoner", "p", unseeded)[0] != call_llm("reasoner", "p", unseeded)[0]
    seeded = unseeded.with_options(seed=3)
    assert call_llm("reasoner", "p", seeded)[0] == call_llm("reasoner", "p", seeded)[0]


def test_eval_rerun_costs_no_model_calls_and_judge_is_added_later(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"What does page {i} say?",
                                          "answers": [str(i * 11)]}) for i in range(3)))
    register_retriever("eval-rag", Recorder(DOCS))
    generator = ScriptedChatModel(lambda messages: "11" if "page 1" in str(messages[-1].content) else "wrong")
    ctx = Context(llm=register_fake("fake:eval-gen", generator), index="eval-rag", llm_cache=True)
    first = run_eval("rag", f"jsonl:{data}", tmp_path / "a", ctx, progress=False)
    assert len(generator.prompts) == 3
    summary = run_eval("rag", f"jsonl:{data}", tmp_path / "b", ctx, progress=False)  # a fresh folder
    assert len(generator.prompts) == 3 and summary["em"] == round(100 / 3, 2)
    records = [json.loads(line) for line in (tmp_path / "b" / "results.jsonl").read_text().splitlines()]
    assert all(r["usage"]["generator"]["cached_calls"] == 1 for r in records) and summary["avg_cached_calls"] == 1
    # The rerun's tokens are the first run's, but the model served none of them: its LLM floor has no tokens.
    assert summary["tokens_per_question"] == first["tokens_per_question"]
    assert first["model_input_tokens_per_question"] == first["tokens_per_question"]["generator"]["input_tokens"] > 0
    assert summary["model_input_tokens_per_question"] == summary["model_output_tokens_per_question"] == 0

    judge_model = ScriptedChatModel(
        lambda m: "Explanation: matches.\nDecision: TRUE" if "Predicted Answer: 11" in str(m[-1].content)
        else "Explanation: differs.\nDecision: FALSE")
    judge_spec = register_fake("fake:judge", judge_model)
    summary = run_eval("rag", f"jsonl:{data}", tmp_path / "a", ctx, progress=False, judge_spec=judge_spec)
    assert len(judge_model.prompts) == 3 and summary["judge"] == round(100 / 3, 2)
    assert summary["config"]["eval_judge"] == judge_spec and "judge" not in summary["config"]["models"]
    lines = (tmp_path / "a" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["judge"]["model"] == judge_spec for line in lines)
    run_eval("rag", f"jsonl:{data}", tmp_path / "a", ctx, progress=False, judge_spec=judge_spec)
    assert len(judge_model.prompts) == 3  # judged records are not judged again


def test_readme_diagrams_are_drawn_from_the_graphs():
    from pathlib import Path

    from hoprag.graphs import DIAGRAMS, update_readme_diagrams

    root = Path(__file__).resolve().parents[1]
    # The README and the method pages (docs/methods/*.md) hold the diagrams; each is drawn from its graph.
    pages = [root / "README.md", *sorted((root / "docs" / "methods").glob("*.md"))]
    texts = {page: page.read_text() for page in pages}
    assert all(any(f"<!-- diagram:{name} -->" in text for text in texts.values()) for name in DIAGRAMS)
    for page, text in texts.items():
        assert update_readme_diagrams(text) == text, f"run: hoprag diagram --readme {page.relative_to(root)}"


def test_readme_langchain_example_runs(monkeypatch, capsys):
    """The README's Python example, as written, with a scripted model and an in-memory index in place of
    the embedded model and the demo index."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = next(block for block in re.findall(r"```python\n(.*?)```", readme, re.S) if "RunnableLambda" in block)

    class Passages:
        def search(self, query: str, k: int) -> list[Document]:
            return [Document(id="a", title="Big Stone Gap", text="Big Stone Gap was directed by Adriana Trigiani.")]

    register_retriever("demo", Passages())
    monkeypatch.setenv("HOPRAG_LLM", register_fake("fake:readme", ScriptedChatModel(
        lambda messages: "Thought: the page says so\nAction: finish[Adriana Trigiani]")))
    try:
        exec(compile(example, "README.md", "exec"), {})
    finally:
        register_retriever("demo", None)
    assert capsys.readouterr().out.splitlines() == ["Adriana Trigiani", "Adriana Trigiani"]


def test_cache_file_can_be_chosen_per_run(tmp_path, monkeypatch):
    model = ScriptedChatModel(lambda messages: f"reply {len(model.prompts)}")
    ctx = Context(llm=register_fake("fake:per-run", model), llm_cache=True)
    monkeypatch.setenv("HOPRAG_LLM_CACHE", str(tmp_path / "run-a.sqlite"))
    assert call_llm("reasoner", "p", ctx)[0] == call_llm("reasoner", "p", ctx)[0] == "reply 1"
    monkeypatch.setenv("HOPRAG_LLM_CACHE", str(tmp_path / "run-b.sqlite"))
    assert call_llm("reasoner", "p", ctx)[0] == "reply 2"  # a fresh file: nothing carried over
    assert (tmp_path / "run-a.sqlite").is_file() and (tmp_path / "run-b.sqlite").is_file()
