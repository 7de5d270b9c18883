"""Presets (`paper` / `small`) and the paper behaviour of each method, with scripted models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.eval.datasets import Example
from hoprag.eval.judge import JudgeCache
from hoprag.eval.report import table
from hoprag.eval.runner import aggregate, judge_gold, judge_record, run_eval, run_eval_seeds
from hoprag.graphs.renact import graph as renact_graph
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever
from hoprag.presets import preset_options
from hoprag.run import run_question

from .conftest import fake_roles


class Recorder:
    def __init__(self, documents: list[Document]):
        self.documents, self.queries = documents, []

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        return self.documents[:k]


DOCS = [Document(id=f"d{i}", title=f"Title {i}", text=f"Fact number {i}.") for i in range(5)]
SENTENCE = "The band that released Counterparts is the Canadian rock band Rush from Toronto"


def react_ctx(reasoner, *, generator="Rush", docs=DOCS, **options) -> tuple[Context, dict[str, ScriptedChatModel]]:
    register_retriever("preset-index", Recorder(docs))
    models = {"reasoner": ScriptedChatModel(reasoner), "notes": ScriptedChatModel(lambda m: "YES#note"),
              "generator": ScriptedChatModel(lambda m: generator)}
    specs = fake_roles("preset", models)
    return Context(index="preset-index", **specs, **options), models


# ---------------------------------------------------------------- the presets as data


def test_paper_and_small_set_the_documented_options():
    paper = Context().resolved("renact")
    assert (paper.temperature, paper.max_steps, paper.k, paper.pages) == (0.7, 25, 5, True)
    assert not (paper.concise_answer or paper.short_answer_instruction or paper.lenient_notes or paper.note_stop_sequences)
    small = Context(preset="small").resolved("renact")
    assert (small.temperature, small.max_steps) == (0.0, 6)
    assert small.concise_answer and small.short_answer_instruction and small.lenient_notes and small.note_stop_sequences
    resp = Context().resolved("resp")
    assert (resp.temperature, resp.max_iterations, resp.max_tokens, resp.pages) == (0.0, 3, 200, False)
    assert resp.resp_on_repeat == "retrieve" and Context(preset="small").resolved("resp").resp_on_repeat == "end"
    assert Context().resolved("rag").pages is False and Context().resolved("react-bm25").pages is True


def test_the_preset_line_lists_only_the_adaptations_that_are_on():
    from hoprag.presets import describe_preset

    line = describe_preset("small", "renact")
    assert "grounded_notes" in line and "lenient_notes" in line and "constrained_actions" not in line
    turned = Context(preset="small", grounded_notes=False, constrained_actions=True)
    line = describe_preset("small", "renact", turned)
    assert "grounded_notes" not in line and "constrained_actions" in line
    assert "adaptations" not in describe_preset("paper", "renact")


def test_an_option_set_by_the_user_wins_over_the_preset():
    ctx = Context(preset="small", concise_answer=False, temperature=0.3).resolved("renact")
    assert ctx.concise_answer is False and ctx.temperature == 0.3 and ctx.lenient_notes


def test_unknown_preset_is_a_clear_error():
    from hoprag.errors import HopragError

    with pytest.raises(HopragError, match="unknown preset 'tiny'"):
        preset_options("tiny", "renact")


# ---------------------------------------------------------------- ReAct / ReNAct


def test_paper_answer_is_the_finish_argument_as_written():
    ctx, models = react_ctx(["Thought: search\nAction: search[Rush; band]", f"Thought: done\nAction: finish[{SENTENCE}]"])
    result = run_question("renact", "Which band?", ctx)
    assert result["answer"] == SENTENCE and result["finished_by"] == "finish"
    assert models["generator"].prompts == []  # no concise-answer pass in the paper
    assert "never a sentence" not in models["reasoner"].prompts[0]


def test_small_shortens_a_long_finish_answer_and_asks_for_short_answers():
    ctx, models = react_ctx(["Thought: search\nAction: search[Rush; band]", f"Thought: done\nAction: finish[{SENTENCE}]"],
                            preset="small")
    result = run_question("renact", "Which band?", ctx)
    assert result["answer"] == "Rush" and len(models["generator"].prompts) == 1
    assert "never a sentence" in models["reasoner"].prompts[0]
    ctx, models = react_ctx(["Thought: s\nAction: search[Rush; band]", f"Thought: d\nAction: finish[{SENTENCE}]"],
                            preset="small", concise_answer=False)
    assert run_question("renact", "Which band?", ctx)["answer"] == SENTENCE


def test_the_graph_applies_the_preset_when_invoked_directly():
    """LangGraph server, Studio and LangChain apps call the compiled graph, not run_question."""
    ctx, models = react_ctx(["Thought: s\nAction: search[Rush; band]", f"Thought: d\nAction: finish[{SENTENCE}]"],
                            preset="small")
    final = renact_graph.invoke({"question": "Which band?"}, context=ctx, config={"recursion_limit": 50})
    assert final["answer"] == "Rush" and len(models["generator"].prompts) == 1
    ctx, models = react_ctx(["Thought: s\nAction: search[Rush; band]", f"Thought: d\nAction: finish[{SENTENCE}]"])
    final = renact_graph.invoke({"question": "Which band?"}, context=ctx.__dict__, config={"recursion_limit": 50})
    assert final["answer"] == SENTENCE  # a dict context (as the server sends) gets the paper preset


def test_cap_synthesis_sees_the_full_history_and_the_notes():
    replies = [f"Thought: step {i}\nAction: search[topic {i}]" for i in range(3)]
    ctx, models = react_ctx(replies, max_steps=3)
    result = run_question("renact", "Which band?", ctx)
    assert result["finished_by"] == "cap"
    messages: list[BaseMessage] = models["generator"].prompts
    prompt = messages[0]
    for i in range(3):
        assert f"Thought {i + 1}: step {i}" in prompt and f"Observation {i + 1}:" in prompt
    assert "full history above and the collected notes" in prompt and "Title 0 - note" in prompt


def test_cap_synthesis_fits_a_small_window_without_crashing():
    long_docs = [Document(id=f"l{i}", title=f"Long {i}", text="word " * 3000) for i in range(3)]
    replies = [f"Thought: step {i}\nAction: search[topic {i}]" for i in range(4)]
    ctx, models = react_ctx(replies, docs=long_docs, max_steps=4, context_window=1500)
    result = run_question("react", "Which band?", ctx)
    assert result["finished_by"] == "cap" and result["answer"] == "Rush"
    assert len(models["generator"].prompts[0]) // 3 < 1500  # the fake counts ~3 characters a token


def test_small_synthesizes_the_cap_answer_from_a_plain_transcript():
    """`plain_synthesis`: one user message, no ReAct chat turns to continue; an invalid step keeps its thought, not the
    parser's feedback (the 1.5B model copied "Invalid action (no valid Action found)" into its cap answer)."""
    replies = iter(["Thought 1: find the author\nAction 1: search[Blast; Who wrote it?]", "Thought 2: John Knox died in 1572.",
                    "Thought 3: s\nAction 3: search[Knox; When did Knox die?]"])
    ctx, models = react_ctx(lambda m: next(replies), generator="Thought 4: I need to search again.\nAnswer: 1572",
                            preset="small", max_steps=3, answer_from_notes=False, grounded_notes=False)
    result = run_question("renact", "When did the author of Blast die?", ctx)
    assert result["finished_by"] == "cap" and result["answer"] == "1572"
    prompt = models["generator"].prompts[0]
    assert isinstance(prompt, str) and prompt.startswith("The search for the question below has reached its step limit.")
    assert "Step 2: John Knox died in 1572." in prompt and "Searched: Knox; When did Knox die?" in prompt
    assert "Found: (Result 1) Title 0 - note" in prompt and "Title 0 - note" in prompt.split("Collected notes:")[1]
    assert "Invalid action" not in prompt and "Observation" not in prompt
    paper_ctx, paper_models = react_ctx([f"Thought: step {i}\nAction: search[topic {i}]" for i in range(3)], max_steps=3)
    assert run_question("renact", "Which band?", paper_ctx)["finished_by"] == "cap"
    assert "Observation 1:" in paper_models["generator"].prompts[0]  # paper: the reasoner's chat turns, as before


def test_the_plain_synthesis_fits_a_small_window():
    long_docs = [Document(id=f"l{i}", title=f"Long {i}", text="word " * 3000) for i in range(3)]
    replies = [f"Thought: step {i}\nAction: search[topic {i}]" for i in range(4)]
    ctx, models = react_ctx(replies, docs=long_docs, max_steps=4, context_window=1500, plain_synthesis=True)
    result = run_question("react", "Which band?", ctx)
    prompt = models["generator"].prompts[0]
    assert result["finished_by"] == "cap" and result["answer"] == "Rush"
    assert len(prompt) // 3 < 1500 and "Which band?" in prompt and "Step 4: step 3" in prompt


def test_a_repeated_search_is_counted_and_retrieved_again():
    replies = iter(["Thought 1: t\nAction 1: search[Rush; Who is Rush?]", "Thought 2: t\nAction 2: search[rush; who is rush]",
                    "Thought 3: t\nAction 3: finish[Rush]"])
    ctx, models = react_ctx(lambda m: next(replies), preset="small", concise_answer=False, resample_repeated_queries=0)
    retriever = Recorder(DOCS)
    register_retriever("preset-index", retriever)
    result = run_question("renact", "Which band?", ctx)
    assert result["answer"] == "Rush" and result["repeated_queries"] == 1
    assert retriever.queries == ["Rush Who is Rush?", "rush who is rush"]


def test_grounded_notes_drop_a_note_the_page_does_not_contain():
    from hoprag.nodes.write_notes import grounded

    page = "Rush was a Canadian rock band formed in Toronto in 1968."
    assert grounded("Rush is a Canadian rock band from Toronto.", page)
    assert not grounded("Neil Peart was inducted into the Modern Drummer Hall of Fame in 1983.", page)
    for preset, kept in (("paper", 5), ("small", 0)):
        replies = iter(["Thought 1: t\nAction 1: search[Rush; Who is Rush?]", "Thought 2: t\nAction 2: finish[Rush]"])
        ctx, models = react_ctx(lambda m, r=replies: next(r), preset=preset)
        models["notes"].script = lambda m: "YES#Neil Peart joined the Modern Drummer Hall of Fame in 1983."
        result = run_question("renact", "Which band?", ctx)
        notes = result["trajectory"][0]["notes"]
        assert sum(n["relevant"] for n in notes) == kept and all(n.get("ungrounded") for n in notes) == (kept == 0)


@pytest.mark.parametrize("resample", [0, 2])
def test_a_repeated_search_is_sampled_again_only_with_the_option(resample):
    same = "Thought 2: t\nAction 2: search[Rush; Who is Rush?]"
    replies = iter(["Thought 1: t\nAction 1: search[Rush; Who is Rush?]", same, same,
                    "Thought 2: u\nAction 2: search[Neil Peart; drummer]", "Thought 3: t\nAction 3: finish[Rush]"])
    if not resample:
        replies = iter(["Thought 1: t\nAction 1: search[Rush; Who is Rush?]", same, "Thought 3: t\nAction 3: finish[Rush]"])
    ctx, models = react_ctx(lambda m: next(replies), preset="small", concise_answer=False,
                            resample_repeated_queries=resample)
    retriever = Recorder(DOCS)
    register_retriever("preset-index", retriever)
    result = run_question("renact", "Which band?", ctx)
    assert result["answer"] == "Rush"
    if resample:  # the repeat was asked again (same prompt) twice; the second sample searched something new
        assert retriever.queries == ["Rush Who is Rush?", "Neil Peart drummer"]
        assert models["reasoner"].prompts[1] == models["reasoner"].prompts[2] == models["reasoner"].prompts[3]
        assert result["trajectory"][1]["resampled"] == 2 and result["repeated_queries"] == 0
    else:
        assert retriever.queries == ["Rush Who is Rush?", "Rush Who is Rush?"] and result["repeated_queries"] == 1


@pytest.mark.parametrize("constrained", [False, True])
def test_constrained_actions_send_each_step_its_grammar(constrained):
    """`constrained_actions`: every reasoner turn of the ReAct family is asked under a grammar naming its step."""
    replies = iter(["Thought 1: t\nAction 1: search[Rush; Who is Rush?]", "Thought 2: t\nAction 2: finish[Rush]"])
    ctx, models = react_ctx(lambda m: next(replies), preset="small", constrained_actions=constrained)
    assert run_question("react-bm25", "Which band?", ctx)["answer"] == "Rush"
    grammars = models["reasoner"].grammars
    if not constrained:
        assert grammars == [None, None]
        return
    assert [g.splitlines()[0] for g in grammars] == ['root ::= "Thought 1: " line "\\n"+ "Action 1: " action',
                                                     'root ::= "Thought 2: " line "\\n"+ "Action 2: " action']
    assert 'action ::= ("search" | "finish") "[" argument "]"' in grammars[0]
    assert models["generator"].grammars == [] or set(models["generator"].grammars) == {None}


def test_the_resample_temperature_and_seeds(monkeypatch):
    from hoprag.llm import draw_seed
    from hoprag.nodes import reasoner

    seen: list[tuple[float, int]] = []
    real = reasoner.call_llm

    def spy(role, messages, ctx, **kwargs):
        seen.append((ctx.temperature, ctx.seed))
        return real(role, messages, ctx, **kwargs)

    monkeypatch.setattr(reasoner, "call_llm", spy)
    same = "Thought: t\nAction: search[Rush; Who is Rush?]"
    ctx, _ = react_ctx([same, same, same, same, "Thought: t\nAction: finish[Rush]"], preset="small", concise_answer=False)
    run_question("renact", "Which band?", ctx)
    # Greedy first; each resample of the repeat at 0.7 with its own seed; a repeat left after two runs.
    assert seen == [(0.0, 0), (0.0, 0), (0.7, draw_seed(0, 1)), (0.7, draw_seed(0, 2)), (0.0, 0)]


def test_partial_notes_leave_out_the_answer_rule_only_in_small():
    rule = "If you don't know how to answer the query"
    for preset, has_rule in (("paper", True), ("small", False)):
        replies = iter(["Thought 1: t\nAction 1: search[Rush; Who is Rush?]", "Thought 2: t\nAction 2: finish[Rush]"])
        ctx, models = react_ctx(lambda m, r=replies: next(r), preset=preset)
        run_question("renact", "Which band?", ctx)
        assert all((rule in p) == has_rule for p in models["notes"].prompts) and models["notes"].prompts
        assert all("If the text is not related to the query - start your answer with NO#" in p for p in models["notes"].prompts)


def test_a_step_whose_pages_all_got_no_shows_their_best_segments_in_small():
    pages = [Document(id="p1", title="Lorenzo Monaco", text="Lorenzo Monaco was an Italian painter. " * 20 +
                      "He was influenced by Giotto and his followers."),
             Document(id="p2", title="Florence", text="Florence is a city in Tuscany. " * 30)]
    for preset in ("paper", "small"):
        replies = iter(["Thought 1: t\nAction 1: search[Lorenzo Monaco; Who influenced Lorenzo Monaco?]",
                        "Thought 2: t\nAction 2: finish[Giotto]"])
        ctx, models = react_ctx(lambda m, r=replies: next(r), preset=preset, docs=pages)
        models["notes"].script = lambda m: "NO#No relevant context."
        result = run_question("renact", "Who influenced Lorenzo Monaco?", ctx)
        observation = result["trajectory"][0]["observation"]
        if preset == "paper":
            assert observation == "No relevant information was found. Try a different search term."
        else:
            assert observation.startswith("No notes were written from these pages")
            assert observation.count("(Result ") == 3 and "Giotto" in observation.split("(Result 2)")[0]
            assert "Giotto" in models["reasoner"].prompts[-1]


@pytest.mark.parametrize(("preset", "reply", "ended"), [("small", "Fact number 3", "notes"), ("small", "1976", "finish"),
                                                      ("small", "unknown", "finish"), ("small", "Which fact", "finish"),
                                                      ("paper", "Fact number 3", "finish")])
def test_small_renact_ends_when_the_notes_hold_the_answer(preset, reply, ended):
    ask_small_renact_with_notes(preset, reply, ended, "Which fact?")


@pytest.mark.parametrize(("reply", "ended"), [("Fact number 3", "notes"), ("Fact", "finish")])
def test_an_early_answer_to_a_question_for_a_number_needs_a_digit(reply, ended):
    ask_small_renact_with_notes("small", reply, ended, "How many facts?")


def ask_small_renact_with_notes(preset, reply, ended, question):
    replies = iter(["Thought 1: t\nAction 1: search[Rush; Who is Rush?]", "Thought 2: t\nAction 2: finish[Rush]"])
    ctx, models = react_ctx(lambda m: next(replies), preset=preset, concise_answer=False)
    models["notes"].script = lambda m: "YES#Fact number 3. Which fact is it?"
    models["generator"].script = lambda m: reply
    result = run_question("renact", question, ctx)
    asked = [p for p in models["generator"].prompts if "Answer the question using only the notes" in p]
    assert len(asked) == (preset == "small") and result["finished_by"] == ended
    if asked:
        assert f"Question: {question}\nNotes:\nTitle 0 - Fact number 3. Which fact is it?\nTitle 1 - Fact" in asked[0]
    # An answer the notes hold ends the run after one step; "unknown", a year no note holds, or words of the
    # question (which the notes hold too) let it go on.
    assert (result["answer"], len(models["reasoner"].prompts)) == (("Fact number 3", 1) if ended == "notes" else ("Rush", 2))


def test_react_bm25_observes_the_top_bm25_segments_of_the_pages():
    pages = [Document(id="p1", title="Rush (band)", text="# Rush (band)\n\n" + " ".join(
        f"Sentence {i} is filler about touring and albums." for i in range(40)) +
        " Neil Peart joined Rush as drummer in 1974 and was inducted into the Modern Drummer Hall of Fame."),
        Document(id="p2", title="Toronto", text="Toronto is a city. " * 60)]
    ctx, models = react_ctx(["Thought: s\nAction: search[Rush; Modern Drummer Hall of Fame drummer]",
                             "Thought: d\nAction: finish[Neil Peart]"], docs=pages)
    result = run_question("react-bm25", "Who?", ctx)
    observation = result["trajectory"][0]["observation"]
    assert observation.count("(Result ") == 5
    assert observation.startswith("(Result 1) Rush (band) -") and "Modern Drummer Hall of Fame" in observation.split("(Result 2)")[0]
    assert len(observation.split()) < 5 * 80  # short segments, not whole pages


def test_invalid_outputs_are_counted():
    ctx, _ = react_ctx(["I think the answer is Rush", "Thought: d\nAction: finish[Rush]"])
    result = run_question("react", "Which band?", ctx)
    assert result["invalid_outputs"] == 1 and result["parsed_outputs"] == 2
    # the refused reply is kept with the parser's reason, so it can be read and not only counted
    assert result["invalid_replies"] == [{"role": "reasoner", "problem": "no valid Action found",
                                          "reply": "I think the answer is Rush"}]


# ---------------------------------------------------------------- ReSP


def resp_ctx(judge_replies, plan_replies, **options):
    retriever = Recorder(DOCS)
    register_retriever("resp-preset-index", retriever)

    def reasoner(messages):  # the paper's Reasoner both judges and plans
        prompt = str(messages[-1].content)
        return judge_replies.pop(0) if prompt.startswith("Judging based solely") else plan_replies.pop(0)

    models = {"summarizer": ScriptedChatModel(lambda m: "Yes, local" if "respond completely" in str(m[-1].content) else "evidence [DONE]"),
              "reasoner": ScriptedChatModel(reasoner), "generator": ScriptedChatModel(lambda m: "Final")}
    specs = fake_roles("resp-preset", models)
    return Context(index="resp-preset-index", **specs, **options), retriever, models


def test_resp_paper_retrieves_a_repeated_sub_question_and_goes_on():
    ctx, retriever, _ = resp_ctx(["No", "No"], ["Sub one?", "sub ONE"])
    result = run_question("resp", "Who?", ctx)
    assert retriever.queries == ["Who?", "Sub one?", "sub ONE"]
    assert result["finished_by"] == "cap"  # the third iteration goes to the generator unjudged (ReSP §4.1)


def test_resp_small_ends_on_a_repeat():
    ctx, retriever, _ = resp_ctx(["No", "No", "No"], ["Sub one?", "sub ONE"], preset="small")
    result = run_question("resp", "Who?", ctx)
    assert retriever.queries == ["Who?", "Sub one?"] and result["finished_by"] == "repeated"


def test_resp_replan_asks_the_planner_again():
    ctx, retriever, models = resp_ctx(["No", "No", "No"], ["Sub one?", "sub ONE", "Sub two?"], resp_on_repeat="replan")
    result = run_question("resp", "Who?", ctx)
    assert retriever.queries == ["Who?", "Sub one?", "Sub two?"] and result["finished_by"] == "cap"


def test_resp_judge_and_planner_are_the_reasoner_and_the_eval_judge_is_not_used(monkeypatch):
    monkeypatch.setenv("HOPRAG_JUDGE_LLM", "fake:never-registered")
    ctx, _, _ = resp_ctx(["No", "Yes"], ["Sub?"])
    result = run_question("resp", "Who?", ctx)
    assert set(result["usage"]) == {"summarizer", "reasoner", "generator"}


def test_resp_local_pathway_input_option():
    ctx, _, models = resp_ctx(["No", "Yes"], ["Sub?"], resp_local_input="documents")
    run_question("resp", "Who?", ctx)
    local = [p for p in models["summarizer"].prompts if "respond completely" in p]
    assert "[Retrieved documents]\nTitle 0 - Fact number 0." in local[0]
    ctx, _, models = resp_ctx(["No", "Yes"], ["Sub?"])
    run_question("resp", "Who?", ctx)
    assert "[Retrieved documents]" not in [p for p in models["summarizer"].prompts if "respond completely" in p][0]


def test_the_resp_generator_reads_the_memory_queues_not_the_passages():
    ctx, _, models = resp_ctx(["No", "Yes"], ["Sub?"])
    run_question("resp", "Who?", ctx)
    assert "[Retrieved documents]" not in str(models["generator"].prompts[-1])


# ---------------------------------------------------------------- eval: presets, seeds, judge, commits


def write_dataset(path, n: int) -> str:
    path.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "answers": [f"ans{i}"]})
                              for i in range(n)))
    return f"jsonl:{path}"


def question_number(messages) -> str:
    return "\n".join(str(m.content) for m in messages).split("Question: Question ")[-1].split("?")[0]


def eval_reply(messages) -> str:
    """ReNAct on question N: search once, note every page, then finish with ansN."""
    prompt = "\n".join(str(m.content) for m in messages)
    if "Extract relevant" in prompt:
        return "YES#fact"
    number = question_number(messages)
    return f"Thought: d\nAction: finish[ans{number}]" if "Observation 1" in prompt else "Thought: s\nAction: search[x]"


def eval_ctx(**options) -> Context:
    register_retriever("eval-preset-index", Recorder(DOCS))
    return Context(llm=register_fake("fake:eval-preset", ScriptedChatModel(eval_reply)), index="eval-preset-index",
                   **options)


def test_a_record_keeps_its_invalid_replies_and_a_valid_run_none(tmp_path):
    dataset = write_dataset(tmp_path / "d.jsonl", 2)
    refused: list[str] = []

    def model(messages):  # the run's first call (question 0's reasoner) has no action
        if question_number(messages) == "0" and not refused:
            refused.append("I would search for it.")
            return refused[0]
        return eval_reply(messages)

    ctx = eval_ctx().with_options(llm=register_fake("fake:eval-invalid", ScriptedChatModel(model)))
    run_eval("renact", dataset, tmp_path / "run", ctx, progress=False)
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "results.jsonl").read_text().splitlines())}
    assert records["q0"]["invalid_replies"] == [{"role": "reasoner", "problem": "no valid Action found",
                                                 "reply": "I would search for it."}]
    assert records["q1"]["invalid_replies"] == [] and records["q1"]["invalid_outputs"] == 0


@pytest.mark.parametrize("preset", ["paper", "small"])
def test_summary_records_the_preset_and_its_options(tmp_path, preset):
    dataset = write_dataset(tmp_path / "d.jsonl", 2)
    summary = run_eval("renact", dataset, tmp_path / "run", eval_ctx(preset=preset), progress=False)
    config = json.loads((tmp_path / "run" / "summary.json").read_text())["config"]
    assert config["preset"] == preset and config["preset_options"] == preset_options(preset, "renact")
    assert config["temperature"] == (0.7 if preset == "paper" else 0.0)
    assert summary["em"] == 100.0 and summary["finish_rate"] == 100.0 and summary["invalid_output_rate"] == 0.0
    assert f"| run | renact | {preset} |" in table([tmp_path / "run"])


def test_the_summary_records_the_options_the_method_name_implies(tmp_path):
    dataset = write_dataset(tmp_path / "d.jsonl", 1)
    run_eval("renact-iterative", dataset, tmp_path / "run", eval_ctx(), progress=False)
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["config"]["notes_mode"] == "iterative"


def test_seeds_give_one_run_each_and_a_mean_with_spread(tmp_path):
    dataset = write_dataset(tmp_path / "d.jsonl", 2)
    summary = run_eval_seeds("renact", dataset, tmp_path / "runs", eval_ctx(seed=5), 2, progress=False)
    assert (tmp_path / "runs" / "seed-5" / "results.jsonl").is_file() and (tmp_path / "runs" / "seed-6").is_dir()
    assert summary["seeds"] == [5, 6] and summary["em"] == 100.0 and summary["em_spread"]["std"] == 0.0
    assert json.loads((tmp_path / "runs" / "seed-6" / "summary.json").read_text())["config"]["seed"] == 6
    # the other columns merged over the seeds: ended-by counts summed, tokens per role and seconds the mean
    assert sum(summary["finished_by"].values()) == 4 and set(summary["tokens_per_question"]) >= {"reasoner"}
    assert isinstance(summary["avg_seconds"], float) and summary["peak_rss_mb"] > 0
    row = table([tmp_path / "runs"]).splitlines()[2]
    assert "paper, 2 seeds" in row and "| 100 ± 0 |" in row


def test_seeds_run_apart_merge_like_one_seeds_run(tmp_path, monkeypatch):
    from hoprag.eval.html_report import render_html
    from hoprag.eval.runner import merge_seed_runs

    dataset = write_dataset(tmp_path / "d.jsonl", 2)
    apart = [tmp_path / "day1" / "seed-10", tmp_path / "day2" / "seed-20"]
    for seed, out in zip((10, 20), apart, strict=True):
        run_eval("renact", dataset, out, eval_ctx(seed=seed), progress=False)
    together = run_eval_seeds("renact", dataset, tmp_path / "together", eval_ctx(seed=10), 2, progress=False)
    # what does not decide answers may differ: another commit, the concurrency, the cache
    set_config(apart[1], git_commit=["abc", "def"], concurrency=4, llm_cache=False)
    monkeypatch.chdir(tmp_path)  # relative paths, as typed on a command line
    merged = merge_seed_runs([Path("day2/seed-20"), Path("day1/seed-10")], Path("merged"))
    assert merged["seeds"] == [10, 20] and merged["config"]["seeds"] == [10, 20] and "seed" not in merged["config"]
    assert merged["config"]["seed_runs"] == {"seed-10": "../day1/seed-10", "seed-20": "../day2/seed-20"}
    assert merged["config"]["concurrency"] == 1 and {"abc", "def"} <= set(merged["config"]["git_commit"])
    for key in ("em", "f1", "questions", "finished_by"):  # the same merge as --seeds
        assert merged[key] == together[key], key
    assert merged["em_spread"] == {"std": 0.0, "min": 100.0, "max": 100.0}
    assert json.loads((tmp_path / "merged" / "summary.json").read_text())["seeds"] == [10, 20]
    row = table([tmp_path / "merged"]).splitlines()[2]
    assert "paper, 2 seeds" in row and "| 100 ± 0 |" in row
    html = render_html([tmp_path / "merged"])  # each seed's answers are a column, found where the seed ran
    assert "merged/seed-10" in html and "merged/seed-20" in html and "ans1" in html
    assert merge_seed_runs(apart, tmp_path / "merged")["seeds"] == [10, 20]  # an earlier merge may be replaced
    (tmp_path / "day2").rename(tmp_path / "elsewhere")
    with pytest.raises(HopragError, match=r"seeds whose folders are gone \(seed-20 at ../day2/seed-20"):
        render_html([tmp_path / "merged"])


def test_each_record_and_the_summary_name_the_machine_the_answers_came_from(tmp_path, monkeypatch):
    import hoprag.eval.runner as runner

    dataset = write_dataset(tmp_path / "d.jsonl", 2)
    here = runner.machine_fingerprint()
    architecture, cpu, features, runtime = here.split(" · ")  # the fake models run in process: this machine's line
    assert architecture and cpu and features and runtime.startswith(("llama-cpp-python 0.", "no llama-cpp-python"))
    run_eval("renact", dataset, tmp_path / "run", eval_ctx(seed=1), limit=1, progress=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert [r["machine"] for r in records] == [here]
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["config"]["machine"] == here
    # resumed on another kind of machine: both are named, since greedy tokens may differ between them
    monkeypatch.setattr(runner, "machine_fingerprint", lambda: "x86_64 · other CPU · avx avx2 avx512f · none")
    run_eval("renact", dataset, tmp_path / "run", eval_ctx(seed=1), limit=2, progress=False)
    config = json.loads((tmp_path / "run" / "summary.json").read_text())["config"]
    assert config["machine"] == sorted([here, "x86_64 · other CPU · avx avx2 avx512f · none"])
    first, second = (tmp_path / "run" / "results.jsonl").read_text().splitlines()  # the first from before machines
    (tmp_path / "run" / "results.jsonl").write_text(json.dumps({**json.loads(first), "machine": None}) + "\n" + second
                                                    + "\n")
    run_eval("renact", dataset, tmp_path / "run", eval_ctx(seed=1), limit=2, progress=False)
    config = json.loads((tmp_path / "run" / "summary.json").read_text())["config"]
    assert config["machine"] == ["unknown", "x86_64 · other CPU · avx avx2 avx512f · none"]
    run_eval("renact", dataset, tmp_path / "other", eval_ctx(seed=2), limit=2, progress=False)
    merged = runner.merge_seed_runs([tmp_path / "run", tmp_path / "other"], tmp_path / "merged")  # machines may differ
    assert merged["seeds"] == [1, 2] and len(merged["config"]["machine"]) == 2


def test_a_served_model_leaves_the_machine_unknown_unless_a_role_runs_in_process(tmp_path, openai_stub):
    import dataclasses

    import hoprag.eval.runner as runner

    dataset = write_dataset(tmp_path / "d.jsonl", 1)
    served = dataclasses.replace(eval_ctx(seed=1), llm="openai:stub")  # the server decodes: its machine is not known
    run_eval("renact", dataset, tmp_path / "served", served, limit=1, progress=False)
    record = json.loads((tmp_path / "served" / "results.jsonl").read_text())
    assert openai_stub.prompts and record["prediction"] == "Rush" and record["machine"] == runner.UNKNOWN_MACHINE
    assert json.loads((tmp_path / "served" / "summary.json").read_text())["config"]["machine"] == "unknown"
    # one role decoded here (the note writer) is enough to name this machine
    mixed = dataclasses.replace(served, notes_llm="fake:eval-preset")
    run_eval("renact", dataset, tmp_path / "mixed", mixed, limit=1, progress=False)
    record = json.loads((tmp_path / "mixed" / "results.jsonl").read_text())
    assert record["machine"] == runner.machine_fingerprint()


def test_the_machine_line_names_the_cpu_features_and_those_the_llama_cpp_build_uses():
    from hoprag.machine import build_features, describe_machine

    x86 = "processor\t: 0\nmodel name\t: AMD EPYC  7B13\nflags\t\t: fpu sse2 avx2 fma avx f16c avx512f avx512_vnni ht\n"
    assert describe_machine(x86 * 2, "x86_64", "0.3.36") == (
        "x86_64 · AMD EPYC 7B13 · avx avx2 avx512_vnni avx512f f16c fma · llama-cpp-python 0.3.36")
    arm = "processor\t: 0\nFeatures\t: fp asimd asimddp sve i8mm cpuid\nCPU implementer\t: 0x41\n"
    assert describe_machine(arm, "aarch64", None).endswith(" · asimd asimddp i8mm sve · no llama-cpp-python")
    assert "features unknown" in describe_machine("", "arm64", "0.3.36")  # no /proc/cpuinfo (macOS)
    assert "no vector features" in describe_machine("model name: old\nflags: fpu sse2\n", "x86_64", "0.3.36")
    # the build's own set: a wheel built without AVX-512 on a CPU that has it computes as the AVX2 machines do
    info = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 0 | FMA = 1 | OPENMP = 1 | "
    assert build_features(info) == "CPU AVX AVX2 FMA OPENMP SSE3" and build_features("") == ""
    assert describe_machine(x86, "x86_64", "0.3.36", build_features(info)).endswith(
        "· llama-cpp-python 0.3.36 (build: CPU AVX AVX2 FMA OPENMP SSE3)")
    # several backends stay apart, and a setting's value is kept; the old format has no sections
    gpu = "CUDA : ARCHS = 890 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 0 | CPU : AVX2 = 1 | BF16 = 1 | SVE_CNT = 16 | "
    assert build_features(gpu) == "CUDA ARCHS=890 USE_GRAPHS; CPU AVX2 BF16 SVE_CNT=16"
    assert build_features("AVX = 1 | AVX2 = 1 | AVX512 = 0 | ") == "AVX AVX2"


def test_the_machine_line_keeps_the_cpu_part_when_llama_cpp_cannot_be_imported(monkeypatch):
    import sys

    from hoprag.machine import machine_fingerprint

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # an import of it raises ImportError
    line = machine_fingerprint.__wrapped__()
    assert "(build:" not in line and len(line.split(" · ")) == 4


def set_config(run, **changes) -> None:
    summary = json.loads((run / "summary.json").read_text())
    summary["config"].update(changes)
    (run / "summary.json").write_text(json.dumps(summary))


def test_merging_seeds_refuses_what_is_not_one_finished_cell(tmp_path):
    from hoprag.eval.runner import merge_seed_runs

    dataset = write_dataset(tmp_path / "d.jsonl", 2)
    runs = {name: tmp_path / name for name in ("s1", "s2", "s1-again", "small", "seeds", "first-one")}
    run_eval("renact", dataset, runs["s1"], eval_ctx(seed=1), progress=False)
    run_eval("renact", dataset, runs["s2"], eval_ctx(seed=2), progress=False)
    run_eval("renact", dataset, runs["s1-again"], eval_ctx(seed=1), progress=False)
    run_eval("renact", dataset, runs["small"], eval_ctx(seed=3, preset="small"), progress=False)
    run_eval_seeds("renact", dataset, runs["seeds"], eval_ctx(seed=4), 2, progress=False)
    run_eval("renact", dataset, runs["first-one"], eval_ctx(seed=5), limit=1, progress=False)
    odd = {}
    for name, summary in [("unfinished", {"partial": True}), ("unseeded", {"config": {"seed": None}}),
                          ("corrupt", None), ("k3", {"config": {"k": 3}}), ("no-trunc", {"config": {}})]:
        odd[name] = tmp_path / name
        odd[name].mkdir()
        base = json.loads((runs["s2"] / "summary.json").read_text())
        if summary is None:
            (odd[name] / "summary.json").write_text("{not json")
            continue
        config = {**base["config"], "seed": 10 + len(odd), **summary.get("config", {})}
        if name == "no-trunc":  # written before truncated_sampling was recorded: it sampled truncated
            config.pop("truncated_sampling")
        (odd[name] / "summary.json").write_text(json.dumps({**base, **summary, "config": config}))
    paths = {**runs, **odd}
    for given, out, fragment in [
        (["s1"], "m", "at least two runs"),
        (["s1", "s2"], "s2", "is one of the runs"),
        (["s1", "s2"], "first-one", "holds a run of hoprag eval"),
        (["s1", "s1-again"], "m", r"s1 and .*s1-again both ran seed 1"),
        (["s1", "seeds"], "m", "is the merged folder of several seeds"),
        (["s1", "nowhere"], "m", "is not a folder"),
        (["s1", "unfinished"], "m", "is unfinished"),
        (["s1", "unseeded"], "m", "records no seed"),
        (["s1", "corrupt"], "m", "is unreadable"),
        (["s1", "k3"], "m", "different cells \\(k 5 / 3\\)"),
        (["s1", "first-one"], "m", "different cells \\(limit None / 1\\)"),
    ]:
        with pytest.raises(HopragError, match=fragment):
            merge_seed_runs([paths[name] if name in paths else tmp_path / name for name in given], tmp_path / out)
    assert not (tmp_path / "m").exists()  # a refused merge writes nothing
    message = str(pytest.raises(HopragError, merge_seed_runs, [runs["s1"], runs["small"]], tmp_path / "m").value)
    # what names the cell first, then the options it sets, each once (three at most)
    assert "(preset 'paper' / 'small'; answer_choices False / True; " in message and message.count("preset ") == 1
    set_config(runs["s2"], truncated_sampling=False)
    assert "truncated_sampling False / True" in str(  # s2 (seed 2) is named first
        pytest.raises(HopragError, merge_seed_runs, [odd["no-trunc"], runs["s2"]], tmp_path / "m").value)
    set_config(runs["s2"], truncated_sampling=True)
    assert merge_seed_runs([odd["no-trunc"], runs["s2"]], tmp_path / "m")["seeds"] == [2, 15]


def test_reaggregating_keeps_the_commit_that_produced_the_records(tmp_path):
    dataset = write_dataset(tmp_path / "d.jsonl", 2)
    out = tmp_path / "run"
    run_eval("renact", dataset, out, eval_ctx(), progress=False)
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    (out / "results.jsonl").write_text("".join(json.dumps({**r, "git_commit": "abc123"}) + "\n" for r in records))
    run_eval("renact", dataset, out, eval_ctx(), progress=False)  # nothing left to run: re-aggregates
    assert json.loads((out / "summary.json").read_text())["config"]["git_commit"] == "abc123"


def test_cot_retrieval_recall_is_not_applicable(tmp_path):
    data = tmp_path / "h.json"
    data.write_text(json.dumps([{"_id": "h1", "question": "Q?", "answer": "A", "type": "bridge", "level": "hard",
                                 "supporting_facts": [["T", 0]], "context": [["T", ["A is here."]]]}]))
    register_fake("fake:cot", ScriptedChatModel(lambda m: "So the answer is: A"))
    summary = run_eval("cot", f"hotpotqa:{data}", tmp_path / "cot", Context(llm="fake:cot", index="x"), progress=False)
    assert summary["retrieval_recall"] is None and summary["em"] == 100.0
    assert "| n/a |" in table([tmp_path / "cot"])


def judged(reply_text: str, tmp_path) -> dict:
    register_fake("fake:judge-unreadable", ScriptedChatModel(lambda m: reply_text))
    record = {"question": "Q?", "prediction": "x", "gold": ["y"], "metrics": {"em": 0.0}}
    judge_record(record, Context(judge_llm="fake:judge-unreadable"), JudgeCache(tmp_path / "j.jsonl"))
    return record


def test_an_unreadable_judge_verdict_is_asked_again_then_scored_wrong_and_counted(tmp_path):
    record = judged("I am not sure what to say.", tmp_path)
    assert record["metrics"]["judge"] == 0.0 and record["judge"]["unreadable"] and record["judge"]["attempts"] == 2
    good = judged("Explanation: same.\nDecision: TRUE", tmp_path)
    summary = aggregate([record, good])
    assert summary["judge"] == 50.0 and summary["judge_unreadable"] == 1  # the denominator keeps both


def test_fanoutqa_judge_needs_every_gold_item():
    example = Example(id="f", question="Q?", answers=["A", "B"], dataset="fanoutqa",
                      raw={"answer": {"Alice": "Harvard", "Bob": "Yale"}})
    gold = judge_gold(example)
    assert "every item is required" in gold and "Alice: Harvard; Bob: Yale" in gold and " | " not in gold
    assert judge_gold(Example(id="h", question="Q?", answers=["A", "a."], dataset="hotpotqa")) == "A | a."


@pytest.mark.parametrize(("reply", "answer"), [
    ("Thought 7: Sutera is not a type of shrub.\nAction 7: finish[no]", "no"),
    ("Thought 7: Sutera is not a type of shrub.", "Sutera is not a type of shrub"),
    ("Answer: Rush", "Rush"),
    ("Observation 6: Invalid action (no valid Action found)\nRush", "Rush"),
    ("Observation 6: Invalid action (no valid Action found)", ""),
    ("Collected notes:\nPanglao Island", "Panglao Island"),
    ("Collected notes:\n- Panglao Island is in Bohol.\nAnswer: Panglao Island", "Panglao Island"),
])
def test_the_synthesized_answer_survives_a_reply_in_react_format(reply, answer):
    from hoprag.nodes.generate import synthesized_answer

    assert synthesized_answer(reply) == answer
