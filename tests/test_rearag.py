"""ReaRAG: the graph, its action parser, the data construction and its filter, the fine-tuning masks."""

from __future__ import annotations

import json

import pytest

from hoprag.context import Context
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.parsing import parse_rearag_action
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question
from hoprag.training.rearag_finetune import IGNORE, load_conversations, tokenize_conversation

from .conftest import Passages, fake_roles


def search(n: int, query: str) -> str:
    return f"Thought {n}: I need to look up {query}.\nAction {n}: {{'function': 'search', 'parameters': {{'query': '{query}'}}}}"


def finish(n: int, answer: str) -> str:
    return f"Thought {n}: Done.\nAction {n}: {{'function': 'finish', 'parameters': {{'answer': '{answer}'}}}}"




def setup(reasoner, answerer=None, generator=None, **options):
    retriever = Passages()
    register_retriever("rearag-index", retriever)
    models = {"reasoner": ScriptedChatModel(reasoner),
              "answerer": ScriptedChatModel(answerer or (lambda m: "Thomas Nabbes")),
              "generator": ScriptedChatModel(generator or (lambda m: "Exeter College"))}
    specs = fake_roles("rearag", models)
    return Context(index="rearag-index", **specs, **options), retriever, models


# ---------------------------------------------------------------- the action parser


@pytest.mark.parametrize("text", [
    "Thought 1: t\nAction 1: {'function': 'search', 'parameters': {'query': 'Who wrote it?'}}",
    'Thought 1: t\nAction 1:\n```json\n{"function": "search", "parameters": {"query": "Who wrote it?"}}\n```',
    "Thought 1: t\nAction 1: ```\n{'function': 'search', 'parameters': {'query': 'Who wrote it?'}}\n``` and some trailing text {x}",
])
def test_actions_parse_as_data(text):
    call = parse_rearag_action(text)
    assert (call.function, call.argument, call.number, call.problem) == ("search", "Who wrote it?", 1, "")


@pytest.mark.parametrize(("text", "problem"), [
    ("Thought 1: no action", "no 'Action N:'"),
    ("Action 1: search for it", "no {...} function call"),
    ("Action 1: {'function': 'lookup', 'parameters': {'query': 'x'}}", "unknown function 'lookup'"),
    ("Action 1: {'function': 'finish', 'parameters': {}}", "finish needs parameters.answer"),
    ("Action 1: {'function': __import__('os').getcwd()}", "not a dict"),  # never evaluated
])
def test_invalid_actions_are_problems(text, problem):
    call = parse_rearag_action(text)
    assert call.invalid and problem in call.problem


# The shapes the embedded 1.5B model writes in 88% of its steps: read in `small` only.
@pytest.mark.parametrize(("text", "function", "argument"), [
    ('Thought 1: t\nAction 1: search\n{\n    "query": "Who wrote it?"\n}', "search", "Who wrote it?"),
    ("Thought 2: t\nAction 2: finish {'answer': 'Thomas Nabbes'}", "finish", "Thomas Nabbes"),
    ('Thought 1: t\nAction 1: **search**({"query": "Who wrote it?"})', "search", "Who wrote it?"),
    ('Thought 1: t\nAction 1: {"query": "Who wrote it?"}', "search", "Who wrote it?"),
    ('Thought 3: t\nAction 3: {"parameters": {"answer": "Exeter"}}', "finish", "Exeter"),
    # a quote of the value's own inside the official object, and keyword calls (a6addbb's MuSiQue records)
    ("Thought 1: t\nAction 1: {'function': 'search', 'parameters': {'query': 'Chiang Kai-shek's son'}}",
     "search", "Chiang Kai-shek's son"),
    ("Thought 2: t\nAction 2: {'function': 'finish', 'parameters': {'answer': 'O'Leary'}}\nThe end.", "finish", "O'Leary"),
    ('Thought 1: t\nAction 1: search(query="Miracle on 34th Street 1947 actress")', "search",
     "Miracle on 34th Street 1947 actress"),
    ("Thought 4: t\nAction 4: finish('Exeter College')", "finish", "Exeter College"),
])
def test_small_models_call_shapes_parse_only_when_lenient(text, function, argument):
    assert parse_rearag_action(text).invalid  # paper: the official format only, so the step is regenerated
    call = parse_rearag_action(text, lenient=True)
    assert (call.function, call.argument) == (function, argument)


def test_lenient_parsing_still_refuses_what_is_not_a_call():
    assert parse_rearag_action("Action 1: Search for information about Lorenzo Monaco.", lenient=True).invalid
    assert parse_rearag_action('Action 2: search(answer="Exeter")', lenient=True).invalid  # a search needs a query
    assert parse_rearag_action('Action 1: lookup {"term": "x"}', lenient=True).problem == "unknown function None"
    assert "needs parameters.answer" in parse_rearag_action('Action 1: finish {"query": "x"}', lenient=True).problem


@pytest.mark.parametrize(("action", "query"), [
    ("Search for the Tamworth manifesto.", "the Tamworth manifesto"),
    ('Search for "top PC manufacturer from 1994"', "top PC manufacturer from 1994"),
    ("I'll use the search function to find Adam Hammill's current team.", "Adam Hammill's current team"),
    ("I will search for information about Empress Wang's husband", "information about Empress Wang's husband"),
])
def test_prose_actions_are_invalid_even_when_lenient(action, query):
    # A sentence that asks to search is no call: small regenerates it with feedback rather than guess a query.
    text = f"Thought 2: t\nAction 2: {action}"
    assert parse_rearag_action(text, lenient=True).invalid and parse_rearag_action(text).invalid


# ---------------------------------------------------------------- the graph


def test_search_then_finish_with_the_engine_answer_as_observation():
    replies = iter([search(1, "Who is the author of Hannibal and Scipio?"), finish(2, "Thomas Nabbes was educated at Exeter College, Oxford.")])
    ctx, retriever, models = setup(lambda m: next(replies))
    result = run_question("rearag", "Where was the author of Hannibal and Scipio educated?", ctx)
    assert retriever.queries == ["Who is the author of Hannibal and Scipio?"]
    assert result["trajectory"][0]["observation"] == "Thomas Nabbes"  # the engine's answer, not the passages
    engine_prompt = models["answerer"].prompts[0]
    assert engine_prompt.startswith("If the Question is comparison type") and "Passage 2 about" in engine_prompt
    assert "Passage 3" not in engine_prompt  # top-3 passages in the paper preset
    # The reasoner's chat: the official system prompt, the bare question, its turn, the observation.
    assert models["reasoner"].prompts[1].startswith("Your task is to solve a question answering task.")
    assert "Observation 1: Thomas Nabbes" in models["reasoner"].prompts[1]
    # Concise answer by the answer model, with the official prompt.
    assert result["answer"] == "Exeter College" and result["finished_by"] == "finish"
    assert "[Reference answer]\nThomas Nabbes was educated at Exeter College, Oxford." in models["generator"].prompts[0]
    assert set(result["usage"]) == {"reasoner", "answerer", "generator"}


@pytest.mark.parametrize(("preset", "answer", "concise_calls"), [("paper", "Yes", 1), ("small", "Rush", 0)])
def test_small_keeps_a_short_finish_answer_as_written(preset, answer, concise_calls):
    """The official concise prompt turned "Rush" into "Yes" on the 1.5B model; small skips it for short answers."""
    ctx, _, models = setup([finish(1, "Rush")], generator=lambda m: "Yes", preset=preset)
    result = run_question("rearag", "Which band released Counterparts?", ctx)
    assert result["answer"] == answer and len(models["generator"].prompts) == concise_calls


def test_an_invalid_action_is_regenerated_and_counted():
    replies = iter(["I think I should search.", search(1, "author"), finish(2, "X")])
    ctx, retriever, _ = setup(lambda m: next(replies))
    result = run_question("rearag", "Q?", ctx)
    assert result["finished_by"] == "finish" and retriever.queries == ["author"]
    assert result["invalid_outputs"] == 1 and result["parsed_outputs"] == 3
    assert [r["reply"] for r in result["invalid_replies"]] == ["I think I should search."]
    assert len(result["trajectory"]) == 2  # the invalid turn was rolled back, not kept in the chain


def test_too_many_invalid_actions_give_no_answer():
    ctx, retriever, _ = setup(lambda m: "no action here", rearag_invalid_retries=3)
    result = run_question("rearag", "Q?", ctx)
    assert result["answer"] == "" and result["finished_by"] == "invalid" and result["invalid_outputs"] == 4


@pytest.mark.parametrize(("preset", "retries", "outputs"), [("paper", None, 21), ("small", None, 6), ("paper", 0, 1)])
def test_the_invalid_step_budget_is_20_retries_in_paper_and_5_in_small(preset, retries, outputs):
    # An explicit 0 means no retry (not the default 20).
    ctx, _, _ = setup(lambda m: "(Alternative Title) (Alternative Title)", preset=preset, rearag_invalid_retries=retries)
    result = run_question("rearag", "Q?", ctx)
    assert result["finished_by"] == "invalid" and result["invalid_outputs"] == outputs


def test_the_step_bound_forces_an_answer_with_its_option():
    def reasoner(messages):
        last = str(messages[-1].content)
        if last.startswith("You have reached the maximum number of steps"):
            return finish(4, "Forced")
        return search(len([m for m in messages if m.type == "ai"]) + 1, "again")

    ctx, _, models = setup(reasoner, max_steps=3, rearag_forced_finish=True)  # off in `paper`: no answer there
    result = run_question("rearag", "Q?", ctx)
    assert result["finished_by"] == "cap" and result["steps"] == 3
    assert "[Reference answer]\nForced" in models["generator"].prompts[0]


def test_small_runs_a_repeated_search_again_and_reads_a_lenient_forced_finish():
    def reasoner(messages):
        if str(messages[-1].content).startswith("You have reached the maximum number of steps"):
            return 'Thought 4: t\nAction 4: finish {"answer": "Forced"}'
        return search(len([m for m in messages if m.type == "ai"]) + 1, "again")

    ctx, retriever, models = setup(reasoner, max_steps=3, preset="small", rearag_finish_on_repeat=False,
                                   resample_repeated_queries=0)
    result = run_question("rearag", "Q?", ctx)
    assert retriever.queries == ["again"] * 3  # a repeat is run like any search
    assert result["answer"] == "Forced" and result["finished_by"] == "cap" and not models["generator"].prompts


@pytest.mark.parametrize("preset", ["paper", "small"])
def test_small_samples_a_repeated_search_again(preset):
    """The greedy 1.5B reasoner asked one query six times; small samples a repeat again (0.7, new seed)."""
    replies = iter([search(1, "again"), search(2, "again"), search(2, "again"), search(2, "other"), finish(3, "X")])

    def reasoner(messages):
        return next(replies)

    ctx, retriever, models = setup(reasoner, preset=preset, rearag_concise_long_only=True)
    result = run_question("rearag", "Q?", ctx)
    if preset == "small":
        assert retriever.queries == ["again", "other"] and result["trajectory"][1]["resampled"] == 2
        assert models["reasoner"].prompts[1] == models["reasoner"].prompts[2] == models["reasoner"].prompts[3]
    else:  # paper: the repeat runs (the official code has no such check); then "again" once more, "other"
        assert retriever.queries == ["again", "again", "again", "other"]
    assert result["answer"] == "X"


@pytest.mark.parametrize("preset", ["paper", "small"])
def test_small_ends_a_chain_on_a_repeat_left_after_resampling(preset):
    def reasoner(messages):
        if str(messages[-1].content).startswith("You have reached the maximum number of steps"):
            return finish(3, "Forced")
        return search(sum(1 for m in messages if m.type == "ai") + 1, "again")

    ctx, retriever, models = setup(reasoner, max_steps=4, preset=preset)
    result = run_question("rearag", "Q?", ctx)
    if preset == "small":  # step 2 repeats step 1, twice more when resampled: the forced finish follows step 1
        assert retriever.queries == ["again"] and result["finished_by"] == "repeated" and result["steps"] == 1
        assert len(models["reasoner"].prompts) == 1 + 3 + 1
        assert result["answer"] == "Forced"
    else:  # paper: the repeats run to the step bound, where the chain ends without an answer
        assert retriever.queries == ["again"] * 4 and result["finished_by"] == "cap_no_answer"
        assert result["answer"] == "" and not models["generator"].prompts


@pytest.mark.parametrize(("preset", "marker"), [("paper", "[Reference answer]"), ("small", "Long answer:")])
def test_small_shortens_a_long_finish_answer_with_the_shared_prompt(preset, marker):
    """The official concise prompt answered "Yes" for a sentence on the 1.5B model."""
    long = "The Laurence Olivier Award went to Tom Hiddleston for his role in the 2011 film The Deep Blue Sea."
    ctx, _, models = setup([finish(1, long)], generator=lambda m: "Tom Hiddleston", preset=preset)
    result = run_question("rearag", "Which play?", ctx)
    assert result["answer"] == "Tom Hiddleston" and marker in models["generator"].prompts[0]


def test_small_preset_tells_a_retry_what_was_wrong():
    seen = []

    def reasoner(messages):
        seen.append(str(messages[-1].content))
        return "no action" if len(seen) == 1 else finish(1, "X")

    ctx, _, _ = setup(reasoner, preset="small")
    run_question("rearag", "Q?", ctx)
    assert seen[1].startswith("Your last output had no valid action (no 'Action N:')")


# ---------------------------------------------------------------- data construction


def write_train(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in [
        {"id": "good", "question": "Where was the author educated?", "answers": ["Exeter College"]},
        {"id": "wrong", "question": "Who won?", "answers": ["Alice"]},
        {"id": "nofinish", "question": "Loop?", "answers": ["x"]},
    ]))
    return f"jsonl:{data}"


def data_reasoner(messages):
    question = str(messages[1].content)
    turns = sum(1 for m in messages if m.type == "ai")
    if "Where was the author" in question:
        return search(1, "Who is the author?") if turns == 0 else finish(2, "Exeter College, Oxford")
    if "Who won" in question:
        return finish(1, "Bob")
    return search(turns + 1, "more")


def test_build_data_keeps_only_well_formed_chains_with_f1_above_zero_and_resumes(tmp_path, monkeypatch):
    import hoprag.training.rearag_data as data

    monkeypatch.setattr(data, "MAX_STEPS", 4)
    from hoprag.training.rearag_data import build_data, rejected_path, summary_path

    ctx, _, models = setup(data_reasoner)
    out = tmp_path / "chains.jsonl"
    summary = build_data(write_train(tmp_path), out, ctx.resolved("rearag"), progress=False)
    assert (summary["questions"], summary["kept"], summary["f1_zero"], summary["no_finish"]) == (3, 1, 1, 1)
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert [k["id"] for k in kept] == ["good"] and kept[0]["f1"] > 0
    roles = [(m["role"], m["train"]) for m in kept[0]["messages"]]
    assert roles == [("system", False), ("user", False), ("assistant", True), ("user", False), ("assistant", True)]
    assert kept[0]["messages"][1]["content"].endswith("Reasoning process with function call:")
    assert kept[0]["messages"][3]["content"] == "Observation 1: Thomas Nabbes"
    assert {json.loads(line)["id"] for line in rejected_path(out).read_text().splitlines()} == {"wrong", "nofinish"}
    assert json.loads(summary_path(out).read_text())["kept"] == 1
    calls = len(models["reasoner"].prompts)
    again = build_data(write_train(tmp_path), out, ctx.resolved("rearag"), progress=False)  # resumes: nothing to do
    assert len(models["reasoner"].prompts) == calls and again["kept"] == 1


def test_build_data_draws_each_question_from_its_position_when_resumed_and_for_a_repeated_question(tmp_path,
                                                                                              monkeypatch):
    """A question's draw seed is its position in the file: a resumed build draws what an uninterrupted one would, and
    a question that appears twice (as in a train file with a duplicate) gets two draws, not the first one's twice."""
    import hoprag.training.rearag_data as data
    from hoprag.llm import draw_seed

    rows = [{"id": "a", "question": "A?", "answers": ["x"]}, {"id": "a", "question": "A?", "answers": ["x"]},
            {"id": "b", "question": "B?", "answers": ["y"]}]
    source = tmp_path / "train.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows))
    seeds: list[tuple[str, int | None]] = []

    def fake_chain(example, ctx, seed=None):
        seeds.append((example.id, seed))
        if example.id == "b" and len(seeds) == 3:
            raise RuntimeError("interrupted")  # the first build stops at b; the second resumes there
        return {"id": example.id, "kept": True, "reason": "kept", "steps": 1}

    monkeypatch.setattr(data, "build_chain", fake_chain)
    ctx, _, _ = setup(data_reasoner)
    ctx = ctx.resolved("rearag")
    data.build_data(f"jsonl:{source}", tmp_path / "chains.jsonl", ctx, progress=False)
    data.build_data(f"jsonl:{source}", tmp_path / "chains.jsonl", ctx, progress=False)

    assert seeds == [("a", draw_seed(ctx.seed, 0)), ("a", draw_seed(ctx.seed, 1)), ("b", draw_seed(ctx.seed, 2)),
                     ("b", draw_seed(ctx.seed, 2))]


@pytest.mark.parametrize("preset", ["paper", "small"])
def test_small_data_construction_reads_lenient_calls_and_stores_them_in_the_official_format(tmp_path, preset):
    """The 1.5B model writes `Action 1: search {"query": ...}`; small keeps such a chain, its turns rewritten."""
    from hoprag.training.rearag_data import build_data

    def reasoner(messages):
        turns = sum(1 for m in messages if m.type == "ai")
        return ('Thought 1: Who wrote it?\nAction 1: search {"query": "Who is the author?"}' if turns == 0 else
                'Thought 2: Done.\nAction 2: finish\n{"answer": "Exeter College"}')

    ctx, _, _ = setup(reasoner, preset=preset)
    out = tmp_path / "chains.jsonl"
    summary = build_data(write_train(tmp_path), out, ctx.resolved("rearag"), limit=1, progress=False)
    if preset == "paper":
        assert summary["kept"] == 0 and summary["invalid"] == 1
        return
    assert summary["kept"] == 1 and summary["rewritten_turns"] == 2
    turns = [m["content"] for m in json.loads(out.read_text())["messages"] if m["role"] == "assistant"]
    assert turns == ["Thought 1: Who wrote it?\nAction 1: {'function': 'search', 'parameters': {'query': 'Who is the author?'}}",
                     "Thought 2: Done.\nAction 2: {'function': 'finish', 'parameters': {'answer': 'Exeter College'}}"]
    assert all(not parse_rearag_action(turn).invalid for turn in turns)  # the official parser reads them


# ---------------------------------------------------------------- fine-tuning data and masks


class TinyTokenizer:
    """One token per character, with a visible chat template."""

    def apply_chat_template(self, conversation, tokenize=False, add_generation_prompt=False, **kwargs):
        text = "".join(f"<{m['role']}>{m['content']}\n" for m in conversation)
        return text + "<assistant>" if add_generation_prompt else text

    def encode(self, text, add_special_tokens=False):
        return [ord(c) for c in text]


def test_masks_keep_only_the_thought_action_turns(tmp_path):
    chains = tmp_path / "chains.jsonl"
    messages = [{"role": "system", "content": "S", "train": False}, {"role": "user", "content": "Q", "train": False},
                {"role": "assistant", "content": "T1", "train": True}, {"role": "user", "content": "O1", "train": False},
                {"role": "assistant", "content": "T2", "train": True}]
    chains.write_text(json.dumps({"id": "a", "kept": True, "messages": messages}) + "\n")
    conversations = load_conversations(chains)
    row = tokenize_conversation(TinyTokenizer(), conversations[0])
    text = "".join(chr(i) for i in row["input_ids"])
    assert text == "<system>S\n<user>Q\n<assistant>T1\n<user>O1\n<assistant>T2\n"
    trained = "".join(chr(i) for i, label in zip(row["input_ids"], row["labels"], strict=True) if label != IGNORE)
    assert trained == "T1\nT2\n"  # the turn header is the generation prompt's, not the model's
    assert len(row["labels"]) == len(row["input_ids"]) == len(row["attention_mask"])


def test_malformed_chains_are_named(tmp_path):
    chains = tmp_path / "chains.jsonl"
    chains.write_text('{"id": "a", "messages": [{"role": "user", "content": "x"}]}\n')
    with pytest.raises(ValueError, match="chains.jsonl:1: every turn needs role, content and train"):
        load_conversations(chains)


def test_constrained_actions_ask_for_the_official_call_shape():
    replies = iter([search(1, "author"), finish(2, "X")])
    ctx, _, models = setup(lambda m: next(replies), constrained_actions=True)
    assert run_question("rearag", "Q?", ctx)["finished_by"] == "finish"
    first, second = models["reasoner"].grammars
    assert first.startswith('root ::= "Thought 1: "') and second.startswith('root ::= "Thought 2: "')
    assert "'parameters': {'query': \" text \"}}" in first and "'parameters': {'answer': \" text" in first
    assert set(models["answerer"].grammars) == {None}


def test_an_openai_endpoint_gets_no_grammar(openai_stub):
    """OpenAI-compatible endpoints have no GBNF; the option leaves their requests as they were."""
    register_retriever("rearag-stub-index", Passages())
    run_question("rearag", "Which band released Counterparts?",
                 Context(llm="openai:stub-model", index="rearag-stub-index", constrained_actions=True))
    assert openai_stub.bodies and not any("grammar" in body for body in openai_stub.bodies)


@pytest.mark.parametrize("preset", ["paper", "small"])
def test_paper_samples_the_reasoner_at_the_official_top_p(openai_stub, preset):
    """The official code samples the reasoner at temperature 1.0 with top_p 0.85 and the answer model at 0.95 with
    top_p 0.7 (`small`: greedy answers, `rearag_greedy_answers`)."""
    register_retriever("rearag-stub-index", Passages())
    result = run_question("rearag", "Which band released Counterparts?",
                          Context(llm="openai:stub-model", index="rearag-stub-index", preset=preset))
    assert result["answer"] == "Rush"
    sampling = {(b["messages"][0]["content"][:40], b.get("temperature"), b.get("top_p")) for b in openai_stub.bodies}
    reasoner = {(t, p) for prompt, t, p in sampling if prompt.startswith("Your task is to solve")}
    others = {(t, p) for prompt, t, p in sampling if not prompt.startswith("Your task is to solve")}
    assert reasoner == ({(1.0, 0.85)} if preset == "paper" else {(0.0, None)})
    assert others == ({(0.95, 0.7)} if preset == "paper" else {(0.0, None)})
    # Output caps: the official 1024 for the engine and the concise answer; `small` 128 (and 32, but it keeps the
    # short finish answer "Rush" without the concise call).
    caps = {b["messages"][0]["content"][:20]: b.get("max_completion_tokens", b.get("max_tokens"))
            for b in openai_stub.bodies}
    engine, concise = caps["If the Question is c"], caps.get("The Reference Answer")
    assert (engine, concise) == ((1024, 1024) if preset == "paper" else (128, None))
    # The engine reads each passage as the official corpus writes it: its quoted title line, then its text.
    engine_prompt = next(p for p in openai_stub.prompts if p.startswith("If the Question is comparison type"))
    assert '"T0"\nPassage 0 about' in engine_prompt


def test_an_over_long_chain_keeps_its_first_and_last_halves():
    """The official agent cuts the middle of a prompt over its budget (window - max_tokens - 2), so a long chain
    still runs: the system prompt and the question stay, and so does the newest step; nothing overflows."""
    replies = iter([*(search(n, f"query {n}") for n in range(1, 7)), finish(7, "Done")])
    observation = " ".join(f"fact{i}" for i in range(250))  # ~1,700 characters, ~570 tokens on the estimate
    ctx, _, models = setup(lambda m: next(replies), answerer=lambda m: observation, context_window=3000,
                           max_tokens=1024, max_steps=10)
    result = run_question("rearag", "Which one?", ctx)
    assert result["finished_by"] == "finish" and result["steps"] == 6
    budget = 3000 - 1024 - 2
    prompts = models["reasoner"].prompts
    assert "[...]" not in prompts[1]  # a prompt that fits is sent whole
    last = prompts[-1]
    assert last.startswith("Your task is to solve") and "Which one?" in last
    assert "Observation 6: fact0" in last and " [...] " in last and "Observation 3:" not in last
    assert all(len(prompt) // 3 < budget for prompt in prompts)  # the fake models' token estimate
    assert result["cut_calls"] >= 1 and result["cut_tokens"] > 0


def test_the_window_fit_keeps_one_message_whole_in_shape_and_refuses_a_window_too_small():
    """A message across both cuts keeps its start and end as one message; a budget with no room raises the
    overflow error (the question's error) instead of sending an empty prompt."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from hoprag.errors import ContextOverflowError
    from hoprag.nodes.rearag import keep_first_and_last_halves

    ctx, _, _ = setup(["unused"], context_window=1200, max_tokens=200)
    messages = [SystemMessage("sys"), HumanMessage("start " + "middle " * 2000 + "end")]
    fitted, cut = keep_first_and_last_halves(messages, ctx.resolved("rearag"), "reasoner", 200)
    assert [m.type for m in fitted] == ["system", "human"] and cut > 0
    assert fitted[1].content.startswith("start middle") and fitted[1].content.endswith("middle end")
    assert fitted[1].content.count("[...]") == 1
    with pytest.raises(ContextOverflowError, match="lower max_tokens"):
        keep_first_and_last_halves(messages, ctx.resolved("rearag"), "reasoner", 1190)
    # A model with a longer window still gets the official budget, 8192 - 2 - max_tokens.
    wide = setup(["unused"], context_window=32768)[0].resolved("rearag")
    fitted, _ = keep_first_and_last_halves([SystemMessage("sys"), HumanMessage("word " * 40000)], wide, "reasoner", 200)
    assert sum(len(str(m.content)) // 3 + 1 for m in fitted) <= 8192 - 2 - 200


@pytest.mark.slow
def test_the_window_fit_holds_under_the_embedded_models_chat_template():
    """With the real tokenizer and chat template, a cut chain's prompt fits beside its output tokens, and a
    `paper` call samples the whole distribution (top_k 0, min_p 0) without error."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from hoprag.llm import call_llm
    from hoprag.nodes.rearag import keep_first_and_last_halves
    from hoprag.prompts.rearag import REARAG_SYSTEM

    ctx = Context(preset="paper", context_window=2048, llm_cache=False).resolved("rearag")
    messages = [SystemMessage(REARAG_SYSTEM), HumanMessage("Which one?")]
    for n in range(1, 9):
        messages += [AIMessage(search(n, f"query {n}")), HumanMessage(f"Observation {n}: " + "A long answer. " * 60)]
    fitted, cut = keep_first_and_last_halves(messages, ctx, "reasoner", 256)
    assert cut > 0 and fitted[0].content == REARAG_SYSTEM and fitted[-1].content.startswith("Observation 8:")
    text, record, _ = call_llm("reasoner", fitted, ctx.with_options(max_tokens=8))
    assert record.input_tokens <= 2048 - 256 and record.output_tokens >= 1
