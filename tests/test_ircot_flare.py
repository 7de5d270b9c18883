"""IRCoT and FLARE, with and without NotesWriting, with scripted models and an in-memory retriever."""

from __future__ import annotations

import json

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import NoLogprobsError
from hoprag.eval.runner import aggregate, run_eval
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.cot import parse_cot_step
from hoprag.nodes.flare import masked_query
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question

from .conftest import fake_roles


class FreshDocs:
    """Five new paragraphs per query (ids from the query), and every query it saw."""

    def __init__(self):
        self.queries: list[str] = []

    def search(self, query, k):
        self.queries.append(query)
        n = len(self.queries)
        return [Document(id=f"q{n}-d{i}", title=f"Page {n}.{i}", text=f"Paragraph {i} of search {n}.") for i in range(k)]


def setup(reasoner, notes=None, generator=None, **options):
    retriever = FreshDocs()
    register_retriever("cot-index", retriever)
    models = {"reasoner": ScriptedChatModel(reasoner),
              "notes": ScriptedChatModel(notes or (lambda m: "YES#a note")),
              "generator": ScriptedChatModel(generator or (lambda m: "Reader answer"))}
    specs = fake_roles("cot", models)
    return Context(index="cot-index", **specs, **options), retriever, models


def test_parse_cot_steps():
    assert parse_cot_step("<s>Rush is a band.</s>").sentence == "Rush is a band."
    step = parse_cot_step("<s>So it is Rush.</s> <answer>Rush</answer>")
    assert (step.sentence, step.answer) == ("So it is Rush.", "Rush")
    assert parse_cot_step("<s>Unclosed step with no end").sentence == "Unclosed step with no end"
    assert parse_cot_step("So the answer is Rush.").answer == "Rush"  # IRCoT's own stop rule
    assert parse_cot_step("   ").problem and parse_cot_step("</s></s>").problem


# ---------------------------------------------------------------- IRCoT


def test_ircot_queries_are_the_question_then_the_last_sentence():
    replies = iter(["<s>Rush released Counterparts.</s>", "<s>Neil Peart drummed for Rush.</s>",
                    "<s>He is in the Hall of Fame.</s> <answer>Rush</answer>"])
    ctx, retriever, models = setup(lambda m: next(replies))
    result = run_question("ircot", "Which band?", ctx)
    assert retriever.queries == ["Which band?", "Rush released Counterparts.", "Neil Peart drummed for Rush."]
    assert result["answer"] == "Rush" and result["finished_by"] == "answer" and result["steps"] == 3
    last = models["reasoner"].prompts[-1]
    assert last.startswith("Task: Given a question and relevant documents")  # the static few-shot comes first
    assert last.endswith("Step-by-step reasoning: <s>Rush released Counterparts.</s> <s>Neil Peart drummed for Rush.</s>")
    assert models["generator"].prompts == []  # no reader in the paper preset


def test_ircot_paragraphs_accumulate_up_to_the_cap():
    ctx, retriever, models = setup(lambda m: "<s>More.</s>", max_sentences=3, max_paragraphs=7)
    run_question("ircot", "Which band?", ctx)
    prompt = models["reasoner"].prompts[2]  # the third step: 15 retrieved, 7 kept (the earliest)
    question_part = prompt.split("Question: Which band?")[0].rsplit("DOCUMENTS:", 1)[1]
    assert question_part.count("Paragraph ") == 7 and "search 2" in question_part and "search 3" not in question_part


def test_ircot_paragraphs_are_cut_to_their_word_budget():
    long = Document(id="long", title="Long", text=" ".join(f"w{i}" for i in range(500)))
    register_retriever("long-index", type("R", (), {"search": lambda self, q, k: [long]})())
    model = ScriptedChatModel(lambda m: "<answer>x</answer>")
    ctx = Context(index="long-index", llm=register_fake("fake:cot-long", model))
    run_question("ircot", "Q?", ctx)
    sent = model.prompts[0]
    assert "w349 ..." in sent and "w350" not in sent


def test_ircot_sentence_cap_asks_for_the_answer():
    def reasoner(messages):
        prompt = str(messages[-1].content)
        return "<answer>Capped</answer>" if prompt.endswith("tags now.") else "<s>Still thinking.</s>"

    ctx, retriever, models = setup(reasoner, max_sentences=3)
    result = run_question("ircot", "Which band?", ctx)
    assert result["answer"] == "Capped" and result["finished_by"] == "cap" and len(retriever.queries) == 3


def with_probability(text, probability):
    """A scripted FLARE reply: the text and the same probability for each of its tokens."""
    return text, [(token, probability) for token in text.split(" ")]


def reply_for(method, text):
    """A scripted reasoner reply: FLARE's draft needs token probabilities (unsure ones), IRCoT's does not."""
    return with_probability(text, 0.5) if method.startswith("flare") else text


@pytest.mark.parametrize("method", ["ircot", "ircot-notes", "flare", "flare-notes"])
def test_small_runs_to_the_step_cap_without_a_recursion_error(method):
    # `small` caps the ReAct family at 6 steps; IRCoT/FLARE stop at 10 sentences, or 20 steps when the
    # steps write no sentence. The graph's recursion limit was sized from the 6 steps, and a HotpotQA-hard
    # run whose reasoner kept writing nothing died with GraphRecursionError instead of answering at the cap.
    def reasoner(messages):
        text = "<answer>Capped</answer>" if str(messages[-1].content).endswith("tags now.") else "</s></s>"
        return reply_for(method, text)

    ctx, _, _ = setup(reasoner, preset="small", notes=lambda m: "NO#", stop_on_empty_step=False)
    result = run_question(method, "Which band?", ctx)
    assert result["finished_by"] == "cap" and len(result["trajectory"]) == 20


@pytest.mark.parametrize("method", ["ircot", "ircot-notes", "flare", "flare-notes"])
def test_an_empty_step_ends_the_chain_as_in_the_original_code(method):
    # IRCoT's exit controller and FLARE's loop both stop when a step generates nothing. Without that rule the
    # same prompt gave the same empty step to the 20-step cap (465 s for one HotpotQA-hard question).
    def reasoner(messages):
        prompt = str(messages[-1].content)
        text = ("<answer>Capped</answer>" if prompt.endswith("tags now.")
                else "<s>Rush is a band.</s>" if prompt.removesuffix("<s>").rstrip().endswith("reasoning:") else "</s></s>")
        return reply_for(method, text)

    steps = {}
    for preset, option in (("paper", None), ("small", None), ("paper", False)):
        ctx, _, _ = setup(reasoner, preset=preset, notes=lambda m: "NO#", stop_on_empty_step=option)
        result = run_question(method, "Which band?", ctx)
        steps[preset, option] = len(result["trajectory"])
        assert result["finished_by"] == ("cap" if option is False else "empty_step")
        assert result["answer"] == ("Reader answer" if preset == "small" and method.startswith("ircot") else "Capped")
    assert steps == {("paper", None): 2, ("small", None): 2, ("paper", False): 20}


def test_ircot_reader_answers_from_the_paragraphs_without_the_chain():
    ctx, _, models = setup(lambda m: "<s>Rush is Canadian.</s> <answer>Rush</answer>", ircot_reader=True)
    result = run_question("ircot", "Which band?", ctx)
    assert result["answer"] == "Reader answer"
    reader = models["generator"].prompts[0]
    assert "Paragraph 0 of search 1." in reader and "Rush is Canadian" not in reader


@pytest.mark.parametrize("method", ["ircot", "ircot-notes"])
def test_small_ircot_answers_with_its_reader_and_paper_with_the_chain(method):
    answers = {}
    for preset in ("paper", "small"):
        ctx, _, _ = setup(lambda m: "<s>Rush is Canadian.</s> <answer>Rush</answer>", preset=preset)
        answers[preset] = run_question(method, "Which band?", ctx)["answer"]
    assert answers == {"paper": "Rush", "small": "Reader answer"}


def test_ircot_notes_replace_the_documents_with_the_shared_note_writer():
    replies = iter(["<s>First sentence.</s>", "<s>Second.</s> <answer>Rush</answer>"])
    notes = lambda m: "YES#note from " + str(m[-1].content).split("# ")[1].split("\n")[0]  # noqa: E731
    ctx, retriever, models = setup(lambda m: next(replies), notes=notes)
    result = run_question("ircot-notes", "Which band?", ctx)
    assert result["answer"] == "Rush"
    assert models["notes"].prompts[0].startswith("Extract relevant information")  # ReNAct's prompt, not a copy
    assert len(models["notes"].prompts) == 10  # five pages per step, two steps
    second = models["reasoner"].prompts[1]
    documents = second.split("Question: Which band?")[0].rsplit("DOCUMENTS:", 1)[1]
    assert "note from Page 2.0" in documents and "Paragraph" not in documents
    assert "note from Page 1.0" not in documents  # paper: the step's notes O_t only (Eq. 10)
    assert result["trajectory"][0]["notes"][0]["note"] == "note from Page 1.0"


def test_ircot_notes_accumulate_in_small():
    replies = iter(["<s>First sentence.</s>", "<s>Second.</s> <answer>Rush</answer>"])
    notes = lambda m: "YES#note from " + str(m[-1].content).split("# ")[1].split("\n")[0]  # noqa: E731
    ctx, _, models = setup(lambda m: next(replies), notes=notes, preset="small")
    run_question("ircot-notes", "Which band?", ctx)
    documents = models["reasoner"].prompts[1].split("Question: Which band?")[0].rsplit("DOCUMENTS:", 1)[1]
    assert "note from Page 1.0" in documents and "note from Page 2.0" in documents



@pytest.mark.parametrize("method", ["ircot-notes", "flare-notes"])
def test_small_shows_the_best_segments_when_the_note_writer_refuses_every_page(method):
    reply = "<s>Rush is a band.</s> <answer>Rush</answer>"
    contexts = {}
    for preset in ("paper", "small"):
        ctx, _, models = setup(lambda m: confident(reply) if method == "flare-notes" else reply,
                               notes=lambda m: "NO#", preset=preset)
        result = run_question(method, "Which band?", ctx)
        contexts[preset] = models["reasoner"].prompts[0].split("Question: Which band?")[0].rsplit("DOCUMENTS:", 1)[1]
        contexts[preset + " step"] = result["trajectory"][0]
    assert "No relevant information was found." in contexts["paper"] and "Paragraph" not in contexts["paper"]
    # small: ReNAct's fallback, the pages' top 3 BM25 segments for the query, in place of the placeholder
    assert "No relevant information" not in contexts["small"]
    assert sum(f"Paragraph {i} of search 1." in contexts["small"] for i in range(5)) == 3
    assert contexts["small step"]["notes"] and not any(n["relevant"] for n in contexts["small step"]["notes"])
    if method == "ircot-notes":  # IRCoT's reader, with no note written, reads the paragraphs, not the segments
        assert all(f"Paragraph {i} of search 1." in models["generator"].prompts[0] for i in range(5))


# ---------------------------------------------------------------- FLARE


def confident(text):
    return with_probability(text, 0.95)


def test_flare_keeps_confident_sentences_without_retrieval():
    replies = iter([confident("<s>Rush is a band.</s>"), confident("<s>It is Canadian.</s> <answer>Rush</answer>")])
    ctx, retriever, _ = setup(lambda m: next(replies))
    result = run_question("flare", "Which band?", ctx)
    assert retriever.queries == ["Which band?"]  # step 0 only
    assert result["answer"] == "Rush"
    assert [s["gate"]["retrieved"] for s in result["trajectory"]] == [False, False]


def test_flare_retrieves_with_the_masked_sentence_and_regenerates():
    unsure = ("<s>Rush was founded in Toronto.</s>",
              [("<s>", 0.99), ("Rush", 0.95), (" was", 0.9), (" founded", 0.6), (" in", 0.9), (" Toronto", 0.2), (".</s>", 0.99)])
    replies = iter([unsure, "<s>Rush was founded in Willowdale.</s>", confident("<answer>Rush</answer>")])
    ctx, retriever, models = setup(lambda m: next(replies))
    result = run_question("flare", "Which band?", ctx)
    # Below θ = 0.8 ("founded" 0.6, "Toronto" 0.2) the gate fires; below β = 0.4 ("Toronto") is masked out.
    assert retriever.queries == ["Which band?", "Rush was founded in."]
    first = result["trajectory"][0]
    assert first["thought"] == "Rush was founded in Willowdale."  # the regenerated sentence; the draft is discarded
    assert first["gate"]["retrieved"] and first["gate"]["draft"] == "Rush was founded in Toronto."
    assert first["retrieved_titles"][0] == "Page 2.0"
    # Step 0's pages (the question's) were replaced before a sentence was written: kept for retrieval recall only.
    assert first["earlier_retrieved_titles"][0] == "Page 1.0" and "earlier_retrieved_titles" not in result["trajectory"][1]
    regenerated_prompt = models["reasoner"].prompts[1]
    assert "Paragraph 0 of search 2." in regenerated_prompt and "search 1." not in regenerated_prompt  # replaced
    assert result["answer"] == "Rush"


def test_masked_query():
    assert masked_query([("<s>", 0.9), ("Who", 0.3), (" is", 0.9), (" Rush", 0.5)], 0.4) == "is Rush"
    # The markup goes even when its "<" was the masked token (seen with the 1.5B model).
    assert masked_query([("<", 0.2), ("answer", 0.9), (">", 0.9), ("Tottenham", 0.9), (" Hotspur", 0.9)], 0.4) == "Tottenham Hotspur"


def test_flare_without_logprobs_is_a_clear_error():
    ctx, _, _ = setup(lambda m: "<s>No logprobs here.</s>")
    with pytest.raises(NoLogprobsError, match="returned no token log-probabilities.*FLARE"):
        run_question("flare", "Which band?", ctx)


def test_flare_takes_an_empty_reply_without_logprobs_as_an_empty_step():
    # The embedded 1.5B model sometimes replies with nothing, which has no tokens to score; a MuSiQue
    # FLARE + notes question failed with NoLogprobsError on it.
    replies = iter(["", confident("<s>Rush is a band.</s> <answer>Rush</answer>")])
    ctx, _, _ = setup(lambda m: next(replies))
    result = run_question("flare", "Which band?", ctx)
    assert result["answer"] == "Rush" and result["trajectory"][0]["problem"]


def test_flare_notes_uses_the_shared_note_writer_when_retrieval_fires():
    unsure = ("<s>Rush is from Toronto.</s>", [("<s>Rush is from", 0.9), (" Toronto", 0.3), (".</s>", 0.9)])
    replies = iter([unsure, "<s>Rush is from Willowdale.</s> <answer>Rush</answer>"])
    ctx, retriever, models = setup(lambda m: next(replies))
    result = run_question("flare-notes", "Which band?", ctx)
    assert models["notes"].prompts[0].startswith("Extract relevant information")
    assert len(models["notes"].prompts) == 10  # step 0 and the gated retrieval
    assert "a note" in models["reasoner"].prompts[1] and "Paragraph" not in models["reasoner"].prompts[1]
    assert result["answer"] == "Rush"


def test_flare_retrieval_rate_is_reported(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Which band?", "answers": ["Rush"]}))
    unsure = ("<s>Rush is from Toronto.</s>", [("<s>Rush is from", 0.9), (" Toronto", 0.3)])
    # An empty draft has no tokens, so it passes the gate; it is no sentence and does not count (with the
    # empty-step stop off, so that the chain goes on after it).
    replies = iter([unsure, "<s>Rush is from Willowdale.</s>", confident(""), confident(""),
                    confident("<s>Sure.</s> <answer>Rush</answer>")])
    ctx, _, _ = setup(lambda m: next(replies), stop_on_empty_step=False)
    summary = run_eval("flare", f"jsonl:{data}", tmp_path / "run", ctx, progress=False)
    assert summary["flare_retrieval_rate"] == 50.0 and summary["em"] == 100.0
    assert summary["finish_rate"] == 100.0  # an <answer> is the method's own decision
    assert aggregate([])["questions"] == 0


# ---------------------------------------------------------------- real log-probabilities


def test_flare_gets_logprobs_through_an_openai_compatible_endpoint(openai_stub):
    register_retriever("stub-index", FreshDocs())
    result = run_question("flare", "Which band?", Context(llm="openai:stub", index="stub-index"))
    assert result["answer"] == "Rush"
    gate = result["trajectory"][0]["gate"]
    assert gate["retrieved"] is False and 0.98 < gate["min_probability"] <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["local:qwen2.5-coder-1.5b", "local-server:qwen2.5-coder-1.5b"])
def test_flare_gets_real_logprobs_from_the_embedded_model(spec):
    """In process (llama.cpp with logits_all) and behind llama_cpp.server (an OpenAI-compatible endpoint)."""
    from hoprag.llm import call_llm, token_probabilities

    ctx = Context(llm=spec, temperature=0.0, max_tokens=16)
    _, record, message = call_llm("reasoner", "Name the capital of France in one word.", ctx, logprobs=True)
    probabilities = token_probabilities(message)
    assert len(probabilities) == record.output_tokens > 0
    assert all(0.0 < p <= 1.0 for _, p in probabilities) and any(p > 0.5 for _, p in probabilities)
