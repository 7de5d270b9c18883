"""IRCoT and FLARE `paper` fidelity (issue 91): the note writer's Previous Context, notes stamped by retrieval,
FLARE's token budget, IRCoT's retrieval record under its paragraph cap, and the "answer is" ending."""

from __future__ import annotations

import re

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.eval.datasets import Example
from hoprag.eval.runner import evaluate_one
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.cot import parse_cot_step
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question

from .conftest import fake_roles
from .test_ircot_flare import confident, setup, with_probability

FACT = "Rush was formed in Willowdale."


def page(name: str, text: str) -> Document:
    return Document(id=name, title=name, text=text)


class ScriptedSearches:
    """The pages of each search in turn (the last list again after the script ends)."""

    def __init__(self, *searches: list[Document]):
        self.searches = searches
        self.queries: list[str] = []

    def search(self, query, k):
        self.queries.append(query)
        return list(self.searches[min(len(self.queries), len(self.searches)) - 1])


def previous_context(prompt: str) -> str:
    return prompt.split("Previous Context: ", 1)[1].split("\nQuery:", 1)[0]


def figure5_writer(messages) -> str:
    """A note writer that follows Figure 5 to the letter: content already in Previous Context gets NO#."""
    prompt = str(messages[-1].content)
    context = prompt.split("Context: ", 1)[1].split("\nPrevious Context:", 1)[0]
    if "Willowdale" not in context:
        return "NO#No relevant context."
    return "NO#Already extracted." if "Willowdale" in previous_context(prompt) else f"YES#{FACT}"


def documents_of(prompt: str) -> str:
    """The DOCUMENTS block of the question being answered (after the few-shot examples)."""
    return prompt.rsplit("DOCUMENTS:", 1)[1].split("\n\nQuestion:", 1)[0]


def ircot_notes_run(**options):
    retriever = ScriptedSearches([page("Rush (band)", FACT), page("Toronto", "Toronto is a city.")],
                                 [page("Neil Peart", "Neil Peart was a drummer.")],
                                 [page("Rush (band)", FACT)])
    register_retriever("fidelity-index", retriever)
    replies = iter(["<s>Rush is a band.</s>", "<s>Neil Peart drummed for Rush.</s>",
                    "<s>Rush formed in Willowdale.</s> <answer>Willowdale</answer>"])
    models = {"reasoner": ScriptedChatModel(lambda m: next(replies)), "notes": ScriptedChatModel(figure5_writer)}
    ctx = Context(index="fidelity-index", **fake_roles("fidelity", models), **options)
    result = run_question("ircot-notes", "Where was Rush formed?", ctx)
    return result, models


@pytest.mark.parametrize("accumulate", [None, True])
def test_a_page_retrieved_at_steps_1_and_3_keeps_its_fact_visible_to_the_reasoner(accumulate):
    # Figure 5 tells the writer to answer NO# for content "already extracted". `paper` (notes_accumulate off) shows the
    # reasoner only the notes of the last retrieval, so the writer's Previous Context holds no earlier notes: before,
    # it held step 1's note, the writer refused the page at step 3 and the fact was gone ("No relevant information").
    result, models = ircot_notes_run(notes_accumulate=accumulate)
    step3 = documents_of(models["reasoner"].prompts[2])
    assert FACT in step3 and "No relevant information" not in step3
    writer_step3 = [p for p in models["notes"].prompts if "Willowdale" in p.split("Previous Context:")[0]][-1]
    if accumulate:  # the other reading: the notes stay, the writer sees them and the reasoner still does
        assert FACT in previous_context(writer_step3)
        assert FACT in documents_of(models["reasoner"].prompts[1])
    else:
        assert previous_context(writer_step3) == "None"
        assert [n["relevant"] for n in result["trajectory"][2]["notes"]] == [True]
        assert FACT not in documents_of(models["reasoner"].prompts[1])  # Eq. 10: step 2 reads its own notes only


def test_flare_notes_regenerates_from_the_gated_retrievals_notes_only():
    # Step 0's two retrievals (the question's, then the gated one's) must not merge: the regenerated sentence reads the
    # notes of the 5 new pages, as plain FLARE reads the 5 new pages (NotesWriting Eq. 11).
    unsure = ("<s>Rush is from Toronto.</s>", [("<s>Rush is from", 0.9), (" Toronto", 0.3), (".</s>", 0.9)])
    notes = lambda m: "YES#note from " + str(m[-1].content).split("# ")[1].split("\n")[0]  # noqa: E731
    seen = {}
    for preset in ("paper", "small"):
        replies = iter([unsure, "<s>Rush is from Willowdale.</s> <answer>Rush</answer>"])
        ctx, retriever, models = setup(lambda m, replies=replies: next(replies), notes=notes, preset=preset)
        result = run_question("flare-notes", "Which band?", ctx)
        assert len(retriever.queries) == 2 and result["answer"] == "Rush"
        seen[preset] = documents_of(models["reasoner"].prompts[1])
        seen[preset + " step"] = [n["title"] for n in result["trajectory"][0]["notes"]]
        assert "note from Page 1.0" in documents_of(models["reasoner"].prompts[0])  # the first draft: the question's
    assert len(re.findall("note from Page", seen["paper"])) == 5 and "note from Page 1." not in seen["paper"]
    assert seen["paper step"] == [f"Page 2.{i}" for i in range(5)]
    # With notes_accumulate (small) the question's notes stay, by that option's reading.
    assert len(re.findall("note from Page", seen["small"])) == 10


def test_flare_token_budget_counts_only_the_kept_text():
    # Four steps, each a 100-token unsure draft (discarded) and a 5-token regenerated sentence: 20 kept tokens. Counting
    # the drafts, the 256-token budget ended the chain after the third step and asked for the answer.
    long_draft = with_probability("<s>" + " ".join(["maybe"] * 99) + " x</s>", 0.5)

    def reasoner(messages):
        prompt = str(messages[-1].content)
        if prompt.endswith("tags now."):
            return "<answer>Capped</answer>"
        regenerated = len(calls) % 2 == 1
        calls.append(prompt)
        if not regenerated:
            return long_draft
        return "<s>Step done, four more words.</s>" if len(calls) < 8 else "<s>Now it is known.</s> <answer>Rush</answer>"

    calls: list[str] = []
    ctx, retriever, _ = setup(reasoner)
    result = run_question("flare", "Which band?", ctx)
    assert result["answer"] == "Rush" and result["finished_by"] == "answer" and len(result["trajectory"]) == 4
    assert [s["kept_tokens"] for s in result["trajectory"]] == [5, 5, 5, 5]
    assert all(s["gate"]["retrieved"] for s in result["trajectory"])


def test_flare_token_budget_still_ends_a_chain_of_kept_text():
    sentence = confident("<s>" + " ".join(["sure"] * 99) + " x</s>")  # 100 kept tokens a step
    ctx, _, _ = setup(lambda m: ("<answer>Capped</answer>" if str(m[-1].content).endswith("tags now.") else sentence))
    result = run_question("flare", "Which band?", ctx)
    assert result["answer"] == "Capped" and result["finished_by"] == "cap" and len(result["trajectory"]) == 3


@pytest.mark.parametrize("method", ["ircot", "ircot-notes"])
def test_ircot_retrieval_recall_counts_only_the_paragraphs_it_kept(method):
    # max_paragraphs 7: step 1 keeps its 5, step 2 two of its 5, step 3 none. Plain IRCoT never reads what the cap
    # dropped, so it is not credited; with notes, the writers read every retrieved page.
    ctx, _, _ = setup(lambda m: "<s>More.</s>", max_sentences=3, max_paragraphs=7)
    example = Example(id="q", question="Which band?", answers=["Rush"], supporting_titles=["Page 1.0", "Page 3.0"])
    record = evaluate_one(method, example, ctx)
    steps = record["trajectory"]
    if method == "ircot":
        assert [len(s["retrieved_titles"]) for s in steps] == [5, 2, 0]
        assert steps[1]["capped_titles"] == ["Page 2.2", "Page 2.3", "Page 2.4"] and "capped_titles" not in steps[0]
        assert record["metrics"]["retrieval_recall"] == 0.5
    else:
        assert [len(s["retrieved_titles"]) for s in steps] == [5, 5, 5]
        assert record["metrics"]["retrieval_recall"] == 1.0


def test_answer_is_ends_only_a_positive_sentence():
    assert parse_cot_step("<s>So the answer is: Rush.</s>").answer == "Rush"
    for negative in ("The answer is not in these documents.", "The answer is unknown.", "The answer isn't here.",
                     "I need to find out what the answer is."):
        assert parse_cot_step(f"<s>{negative}</s>").answer == "", negative
    assert parse_cot_step("<s>So the answer is Rush.</s>", answer_is=False).answer == ""
    assert parse_cot_step("<s>So it is.</s> <answer>Rush</answer>", answer_is=False).answer == "Rush"


def test_ircot_goes_on_after_a_negative_answer_is_sentence_and_stops_at_a_positive_one():
    replies = iter(["<s>The answer is not in these documents.</s>", "<s>So the answer is Rush.</s>", "<s>Never.</s>"])
    ctx, retriever, _ = setup(lambda m: next(replies))
    result = run_question("ircot", "Which band?", ctx)
    assert result["answer"] == "Rush" and result["finished_by"] == "answer" and len(result["trajectory"]) == 2
    assert retriever.queries[1] == "The answer is not in these documents."


@pytest.mark.parametrize("method", ["flare", "flare-notes"])
def test_flare_is_not_ended_by_an_answer_is_sentence(method):
    # FLARE's original code has no "answer is" exit; with Figure 4's prompt its chain ends at <answer>.
    replies = iter([confident("<s>So the answer is Toronto.</s>"),
                    confident("<s>Rush is from Willowdale.</s> <answer>Rush</answer>")])
    ctx, _, _ = setup(lambda m: next(replies))
    result = run_question(method, "Which band?", ctx)
    assert result["answer"] == "Rush" and [s["thought"] for s in result["trajectory"]] == [
        "So the answer is Toronto.", "Rush is from Willowdale."]
