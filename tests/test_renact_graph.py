"""ReNAct / ReAct graph behaviour with scripted models and an in-memory retriever."""

from __future__ import annotations

import time
from itertools import pairwise

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question


class ListRetriever:
    def __init__(self, documents: list[Document]):
        self.documents = documents
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        return self.documents[:k]


DOCS = [Document(id=f"d{i}", title=f"Title {i}", text=f"Fact number {i}.") for i in range(5)]


def make_ctx(reasoner: list[str] | object, notes: object = None, *, docs=DOCS, **options) -> Context:
    register_retriever("test-index", ListRetriever(docs))
    spec = register_fake("fake:reasoner", ScriptedChatModel(reasoner))
    notes_spec = register_fake("fake:notes", notes or ScriptedChatModel(lambda m: "YES#" + "note"))
    gen_spec = register_fake("fake:generator", ScriptedChatModel(lambda m: "Short Answer"))
    return Context(reasoner_llm=spec, notes_llm=notes_spec, generator_llm=gen_spec, index="test-index", **options)


def test_finish_after_one_search():
    ctx = make_ctx(["Thought: look it up\nAction: search[Title 1; what fact]", "Thought: done\nAction: finish[42]"])
    result = run_question("renact", "What is the fact?", ctx)
    assert result["answer"] == "42"
    assert result["finished_by"] == "finish"
    assert result["steps"] == 1
    step = result["trajectory"][0]
    assert step["query"] == "what fact" and step["entity"] == "Title 1"
    assert step["retrieved_ids"] == [d.id for d in DOCS]
    assert step["observation"].startswith("(Result 1) Title 0 - note")
    assert result["usage"]["notes"]["calls"] == 5
    assert result["usage"]["reasoner"]["calls"] == 2


def test_cap_reached_synthesizes_answer():
    ctx = make_ctx(lambda m: "Thought: again\nAction: search[something]", max_steps=3)
    result = run_question("renact", "Q?", ctx)
    assert result["finished_by"] == "cap"
    assert result["answer"] == "Short Answer"
    assert "Short Answer" in result["answer_reply"]  # the reply the answer was read from is kept
    assert result["turns"] == 3
    assert result["repeated_queries"] == 2


def test_malformed_action_is_an_observation():
    ctx = make_ctx(["I think the answer is something", "Thought: ok\nAction: search[]", "Action: finish[x]"])
    result = run_question("renact", "Q?", ctx)
    first, second = result["trajectory"][:2]
    assert first["kind"] == "invalid" and "Invalid action" in first["observation"]
    assert second["kind"] == "invalid" and "needs a query" in second["observation"]
    assert result["answer"] == "x"


def test_several_actions_run_only_the_first():
    ctx = make_ctx(["Thought: t\nAction: search[a]\nAction: search[b]", "Action: finish[y]"])
    result = run_question("renact", "Q?", ctx)
    assert result["trajectory"][0]["query"] == "a"
    assert "only the first" in result["trajectory"][0]["problem"]


def test_no_documents_and_all_no_notes():
    ctx = make_ctx(["Action: search[a]", "Action: finish[z]"], docs=[])
    result = run_question("renact", "Q?", ctx)
    assert "no documents" in result["trajectory"][0]["observation"]
    ctx = make_ctx(["Action: search[a]", "Action: finish[z]"], notes=ScriptedChatModel(lambda m: "NO#nothing"))
    result = run_question("renact", "Q?", ctx)
    assert "No relevant information" in result["trajectory"][0]["observation"]


@pytest.mark.parametrize(("method", "options"), [("renact-iterative", {}), ("renact", {"notes_mode": "iterative"})])
def test_iterative_notes_see_earlier_notes(method, options):
    """Both the method name and the option give iterative notes (the `renact` name once forced parallel notes
    over the option, while the summary recorded the option)."""
    notes = ScriptedChatModel(lambda m: "YES#fact from " + str(m[-1].content).split("# ")[1].split("\n")[0])
    ctx = make_ctx(["Action: search[a]", "Action: finish[z]"], notes=notes, **options)
    run_question(method, "Q?", ctx)
    # The fifth note writer sees the four notes written before it in the same step.
    assert notes.prompts[4].count("fact from Title") == 4
    assert "Previous Context: None" in notes.prompts[0]


def test_parallel_notes_do_not_see_each_other_and_run_concurrently():
    notes = ScriptedChatModel(lambda m: "YES#n", delay=0.3)
    ctx = make_ctx(["Action: search[a]", "Action: finish[z]"], notes=notes)
    started = time.perf_counter()
    run_question("renact", "Q?", ctx)
    elapsed = time.perf_counter() - started
    assert all("Previous Context: None" in p for p in notes.prompts)
    assert elapsed < 5 * 0.3 * 0.6


def test_react_observes_raw_documents():
    ctx = make_ctx(["Action: search[a]", "Action: finish[z]"])
    result = run_question("react", "Q?", ctx)
    assert "Fact number 3." in result["trajectory"][0]["observation"]
    assert "notes" not in result["usage"]


def test_bm25_segments_rank_by_score_and_keep_reading_order_among_ties():
    from hoprag.nodes.write_notes import top_segments

    def segment(marker: str) -> str:  # one sentence of 50 words is one segment
        return f"{marker} " + "filler " * 49 + "."

    pages = [{"title": "One", "text": " ".join(segment(m) for m in ("zero", "one", "two Thames"))},
             {"title": "Two", "text": " ".join(segment(m) for m in ("three", "Thames bridge", "five", "six"))}]
    segments = top_segments("Thames bridge", pages)
    # both query words first, then one; the rest score 0 and keep reading order, not BM25's tie order
    assert [text.split()[0] for _, text in segments] == ["Thames", "two", "zero", "one", "three"]
    assert [title for title, _ in segments][:2] == ["Two", "One"]


def test_long_finish_answer_is_shortened_in_small():
    ctx = make_ctx(["Action: finish[The answer to this question is certainly the one named Short Answer]"], preset="small")
    result = run_question("renact", "Q?", ctx)
    assert result["answer"] == "Short Answer"


def test_context_overflow_drops_oldest_observations():
    big = [Document(id="b", title="Big", text="word " * 400)]
    ctx = make_ctx(lambda m: "Action: search[again and again]", docs=big, max_steps=6, context_window=2200)
    result = run_question("react", "Q?", ctx)
    assert result["finished_by"] == "cap"
    assert result["dropped_observations"] >= 1


def _dropped_per_prompt(headroom: float) -> list[int]:
    """How many observations each reasoner prompt of a long react run shows as dropped."""
    big = [Document(id="b", title="Big", text="word " * 150)]
    seen: list[int] = []

    def reasoner(messages):
        seen.append(sum(str(m.content).endswith("[observation dropped to fit the context window]") for m in messages))
        return f"Thought: more\nAction: search[query {len(seen)}]"

    ctx = make_ctx(reasoner, docs=big, max_steps=12, context_window=2000, window_headroom=headroom)
    run_question("react", "Q?", ctx)
    return seen


def test_dropped_observations_stay_dropped_and_free_headroom():
    one_at_a_time, with_headroom = _dropped_per_prompt(0.0), _dropped_per_prompt(0.5)
    for seen in (one_at_a_time, with_headroom):
        assert seen == sorted(seen) and seen[-1] >= 2  # a dropped observation never comes back
    # Without headroom every step after the first overflow drops one more observation, so each prompt
    # changes right after the question; with it, drops come in batches and the steps between keep the prefix.
    changes = [sum(b != a for a, b in pairwise(seen)) for seen in (one_at_a_time, with_headroom)]
    assert changes[1] < changes[0]
    assert max(b - a for a, b in pairwise(with_headroom)) >= 2


def test_window_keeps_a_fitting_prompt_when_dropping_more_would_grow_it():
    from hoprag.nodes.reasoner import fit_prompt

    spec = register_fake("fake:window", ScriptedChatModel(lambda m: "x"))
    ctx = Context(reasoner_llm=spec, context_window=985, max_tokens=100).resolved("react")
    step = lambda observation: {"thought": "t", "action": "search[q]", "observation": observation}  # noqa: E731
    # Dropping the long first observation fits; dropping the one-word second too only adds the marker.
    trajectory = [step("long " * 200), step("x"), step("newest " * 10)]
    messages, dropped = fit_prompt("Q?", trajectory, ctx, headroom=0.9)
    assert dropped == 1 and "newest newest" in str(messages[-1].content) and "[...]" not in str(messages[-1].content)


def test_window_headroom_must_be_a_share():
    with pytest.raises(HopragError, match="window_headroom"):
        Context(window_headroom=25)


def test_empty_question_is_an_error():
    with pytest.raises(HopragError, match="empty"):
        run_question("renact", "  ", make_ctx([]))


def test_reasoner_sees_its_history_as_chat_turns():
    seen: list[list[tuple[str, str]]] = []

    def reasoner(messages):
        seen.append([(m.type, str(m.content)) for m in messages])
        return ["Thought: look\nAction: search[Title 1; fact]", "Thought: done\nAction: finish[42]"][len(seen) - 1]

    run_question("renact", "What is the fact?", make_ctx(reasoner))
    first, second = seen
    assert [kind for kind, _ in first] == ["human"] and first[0][1].endswith("Question: What is the fact?")
    assert [kind for kind, _ in second] == ["human", "ai", "human"]
    assert second[0] == first[0]  # the prefix is unchanged, so the KV cache is reused
    assert second[1][1] == "Thought 1: look\nAction 1: search[Title 1; fact]"
    assert second[2][1].startswith("Observation 1: (Result 1) Title 0 - note")
