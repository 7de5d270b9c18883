"""The `flashrag` preset: the methods of FlashRAG's benchmark table with FlashRAG's settings. IRCoT as FlashRAG's
IRCOTPipeline runs it (`ircot_style=flashrag`), standard RAG with FlashRAG's prompt as its code sends it, and a method
FlashRAG does not run refused in one line."""

from __future__ import annotations

import json
import random
import string
from dataclasses import replace

import pytest
from langchain_core.messages import AIMessage, SystemMessage

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import UnknownSpecError
from hoprag.eval.runner import run_eval
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.ircot import flashrag_answer, flashrag_paragraphs, parse_flashrag_thought
from hoprag.nodes.retrieve import register_retriever
from hoprag.presets import PRESET_NAMES, PRESETS, option_reason, preset_options
from hoprag.prompts.baselines import FLASHRAG_SYSTEM
from hoprag.prompts.ircot_flashrag import IRCOT_EXAMPLE, IRCOT_INSTRUCTION
from hoprag.reproduce.tables import load_tables, row_status
from hoprag.run import run_question

from .conftest import FreshDocs
from .test_cli import assert_one_line_error, hoprag
from .test_presets_show import shown

QUESTION = "Which band released Counterparts?"


class ScoredDocs(FreshDocs):
    """FreshDocs with falling scores (the first retrieved highest), as a BM25 or dense retriever gives them."""

    def search(self, query: str, k: int) -> list[Document]:
        n = len(self.queries) + 1
        return [replace(d, score=float(10 * n - i)) for i, d in enumerate(super().search(query, k))]


def ircot_run(replies: list[str], preset: str = "flashrag", **options):
    """IRCoT over ScoredDocs with one scripted model; returns the result, the retriever and every call's messages."""
    retriever = ScoredDocs()
    register_retriever("flashrag-index", retriever)
    seen: list[list] = []
    script = iter(replies)

    def reply(messages):
        seen.append(list(messages))
        return next(script)

    spec = register_fake("fake:flashrag-ircot", ScriptedChatModel(reply))
    ctx = Context(index="flashrag-index", llm=spec, preset=preset, **options)
    return run_question("ircot", QUESTION, ctx), retriever, seen


# ---------------------------------------------------------------- IRCoT as FlashRAG's IRCOTPipeline


def test_flashrag_ircot_retrieves_with_the_question_then_the_thought_and_ends_at_so_the_answer_is():
    result, retriever, seen = ircot_run([" Counterparts is an album by Rush", " So the answer is: Rush"])
    assert retriever.queries == [QUESTION, "Counterparts is an album by Rush"]
    assert result["answer"] == "Rush" and result["finished_by"] == "answer"
    assert len(seen) == 2
    # Plain text, no chat messages: the second prompt is the first with FlashRAG's previous_gen appended.
    assert [len(prompt) for prompt in seen] == [1, 1]
    first, second = seen[0][0].content, seen[1][0].content
    assert first.endswith(f"Question: {QUESTION}\nThought:") and not isinstance(seen[0][0], SystemMessage)
    assert second.endswith(f"Question: {QUESTION}\nThought: Counterparts is an album by Rush")


def test_flashrag_chat_sends_the_thoughts_so_far_as_an_earlier_assistant_turn_ended_by_a_period():
    result, _, seen = ircot_run([" Counterparts is an album by Rush", " So the answer is: Rush"],
                                ircot_style="flashrag-chat")
    assert isinstance(seen[0][0], SystemMessage) and not isinstance(seen[0][-1], AIMessage)
    # FlashRAG's OpenAI generator appends the period the endpoint cut as a stop string.
    assert isinstance(seen[1][-1], AIMessage) and seen[1][-1].content == " Counterparts is an album by Rush."
    assert result["answer"] == "Rush."


def test_flashrag_text_prompt_is_system_and_user_joined_then_previous_gen_as_flashrag_joins_it():
    from hoprag.nodes.ircot import flashrag_text

    state = {"question": QUESTION, "paragraphs": [{"title": "Rush", "text": "A band."}],
             "generated": [" Counterparts is an album.", " Rush made it\n"]}
    # FlashRAG: "\n\n".join([system, user]) + " ".join(thoughts as generated, each with its stop kept).
    assert flashrag_text(state) == (f"{IRCOT_INSTRUCTION}\n\n{IRCOT_EXAMPLE}\n\nWikipedia Title: Rush\nA band.\n\n"
                                    f"Question: {QUESTION}\nThought: Counterparts is an album.  Rush made it\n")
    assert flashrag_text({**state, "generated": [" "]}).endswith("Thought:")  # FlashRAG skips a blank previous_gen


def test_a_thought_that_ends_at_a_newline_or_is_empty_goes_on_as_generated():
    _, retriever, seen = ircot_run([" Rush is a band\nSo the answer is: x", "unused"])
    assert seen[1][0].content.endswith("Thought: Rush is a band\n") and retriever.queries[1] == "Rush is a band"
    _, _, seen = ircot_run(["\n", "unused"])
    assert seen[1][0].content.endswith("Thought:\n")  # FlashRAG's previous_gen is the newline


def test_flashrag_ircot_prompt_is_the_one_shot_2wiki_demonstration_and_wikipedia_titles():
    _, _, seen = ircot_run(["So the answer is: Rush"], ircot_style="flashrag-chat")
    system, user = seen[0][0], seen[0][1]
    assert isinstance(system, SystemMessage) and system.content == f"{IRCOT_INSTRUCTION}\n\n{IRCOT_EXAMPLE}"
    assert "Question: Are both Kurram Garhi and Trojkrsti located in the same country?" in system.content
    assert "So the answer is: no." in system.content and "<s>" not in system.content
    assert user.content == ("Wikipedia Title: Page 1.0\nPassage 0 of search 1.\n\n"
                            "Wikipedia Title: Page 1.1\nPassage 1 of search 1.\n\n"
                            f"Question: {QUESTION}\nThought:")
    _, _, seen = ircot_run(["So the answer is: Rush"])
    assert seen[0][0].content == f"{system.content}\n\n{user.content}"


def test_figure4_style_is_the_default_and_differs():
    """The option is what changes the method: `paper` runs the NotesWriting paper's Figure 4 prompt."""
    result, _, seen = ircot_run(["<s>Rush released Counterparts.</s> <answer>Rush</answer>"], preset="paper")
    assert "Step-by-step reasoning:" in seen[0][-1].content and "Kurram Garhi" not in seen[0][-1].content
    assert result["answer"] == "Rush"


def test_flashrag_ircot_stops_after_max_iter_thoughts_and_answers_with_every_thought():
    result, retriever, seen = ircot_run(["Counterparts is an album", "It was released by Rush", "unused"])
    assert len(seen) == 2  # max_iter 2: no third thought, and no retrieval after the last one
    assert retriever.queries == [QUESTION, "Counterparts is an album"]
    assert result["finished_by"] == "cap"
    assert result["answer"] == "Counterparts is an album It was released by Rush"  # ircot_pred_parse without the prefix


def test_flashrag_ircot_max_iter_is_max_sentences():
    result, retriever, seen = ircot_run(["One", "Two", "Three", "So the answer is: Rush"],
                                        max_sentences=5)
    assert len(seen) == 4 and retriever.queries == [QUESTION, "One", "Two", "Three"]
    assert result["answer"] == "Rush"


def test_a_thought_is_cut_after_its_first_period_or_at_its_newline():
    # The thought is FlashRAG's one sentence, its period kept as FlashRAG's vLLM generator keeps its stop string (so
    # the next call continues after the period); the "So the answer is:" after it does not count.
    result, retriever, seen = ircot_run([" Rush made it. So the answer is: Rush", " Rush is a band\nSo the answer is: x"])
    assert retriever.queries == [QUESTION, "Rush made it."]
    assert seen[1][-1].content.endswith("Thought: Rush made it.")  # the prompt continued ends with the period
    assert result["finished_by"] == "cap" and result["answer"] == "Rush made it. Rush is a band"


def test_flashrag_paragraphs_keep_every_document_sorted_by_best_score_ascending():
    result, _, seen = ircot_run([" Counterparts is an album", " So the answer is: Rush"])
    second = seen[1][0].content
    order = [line for line in second.splitlines() if line.startswith("Wikipedia Title: Page")]
    # Search 1 scored 10, 9; search 2 scored 20, 19: all four kept, lowest score first (FlashRAG's reverse=False).
    assert order == ["Wikipedia Title: Page 1.1", "Wikipedia Title: Page 1.0", "Wikipedia Title: Page 2.1",
                     "Wikipedia Title: Page 2.0"]
    again = flashrag_paragraphs([{"id": "a", "score": 1.0}], [{"id": "a", "score": 5.0}, {"id": "b", "score": 3.0}])
    assert [(p["id"], p["score"]) for p in again] == [("b", 3.0), ("a", 5.0)]  # a paragraph keeps its best score


def test_flashrag_answer_is_ircot_pred_parse():
    assert flashrag_answer(["Rush made it", "So the answer is: Rush"]) == "Rush"
    assert flashrag_answer(["no prefix here"]) == "no prefix here"
    assert flashrag_answer(["So the answer is:"]) == ""
    assert flashrag_answer([]) == ""


def test_two_hundred_malformed_thoughts_never_crash_the_parsers_or_the_graph():
    rng = random.Random(95)
    alphabet = string.printable + "<>/.:\u00e9\u4e2d"
    texts = ["", " ", ".", "\n", "So the answer is:", "So the answer is: .", "....", "\n\nSo the answer is: x"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(192)]
    for text in texts:
        thought = parse_flashrag_thought(text)
        assert "." not in thought.rstrip(".") and "\n" not in thought and thought == thought.strip()
        assert thought.count(".") <= 1
        assert isinstance(flashrag_answer([thought, thought]), str)
        chat = parse_flashrag_thought(text, chat=True)  # FlashRAG's OpenAI generator: cut before the stop, "." added
        assert chat.endswith(".") and "\n" not in chat and chat.count(".") == 1 + thought.rstrip(".").count(".")
    assert parse_flashrag_thought(None) == "None"  # not a string: read as its text
    for start in range(0, 40, 2):
        result, _, _ = ircot_run(texts[start:start + 2])
        assert isinstance(result["answer"], str) and result["finished_by"] in ("answer", "cap")


# ---------------------------------------------------------------- standard RAG with FlashRAG's prompt


def rag_run(preset: str):
    retriever = ScoredDocs()
    register_retriever("flashrag-rag-index", retriever)
    seen: list[list] = []

    def reply(messages):
        seen.append(list(messages))
        return "Rush\nand more words"

    spec = register_fake("fake:flashrag-rag", ScriptedChatModel(reply))
    return run_question("rag", QUESTION, Context(index="flashrag-rag-index", llm=spec, preset=preset)), seen


def test_flashrag_rag_sends_flashrags_system_and_user_prompts_verbatim():
    result, seen = rag_run("flashrag")
    system, user = seen[0]
    assert system.content == FLASHRAG_SYSTEM.format(
        reference="Doc 1(Title: Page 1.0) Passage 0 of search 1.\nDoc 2(Title: Page 1.1) Passage 1 of search 1.\n")
    assert system.content.startswith("Answer the question based on the given document.Only give me the answer")
    assert user.content == f"Question: {QUESTION}"
    assert result["answer"] == "Rush\nand more words"  # FlashRAG scores the whole reply
    paper, seen = rag_run("paper")
    assert len(seen[0]) == 1 and "Doc 1 (Title: Page 1.0)" in seen[0][0].content and paper["answer"] == "Rush"


# ---------------------------------------------------------------- the preset's values and the methods it has


FLASHRAG_METHODS = {"rag", "ircot", "flare", "iter-retgen", "self-ask", "sure", "recomp", "replug", "self-rag", "rearag"}


def test_flashrag_is_a_preset_with_flashrags_global_setting_and_no_adaptation():
    assert "flashrag" in PRESET_NAMES and set(PRESETS["flashrag"][1]) == FLASHRAG_METHODS
    shared = preset_options("flashrag", None)
    assert (shared["temperature"], shared["k"], shared["max_tokens"]) == (0.0, 5, 32)
    assert not shared["concise_answer"] and not shared["answer_choices"] and not shared["short_answer_instruction"]
    ircot = Context(preset="flashrag").resolved("ircot")
    assert (ircot.ircot_style, ircot.max_sentences, ircot.ircot_reader) == ("flashrag", 2, False)
    flare = Context(preset="flashrag").resolved("flare")
    assert (flare.flare_theta, flare.flare_beta, flare.max_sentences) == (0.2, 0.2, 5)
    rearag = Context(preset="flashrag").resolved("rearag")
    assert (rearag.temperature, rearag.k, rearag.max_steps, rearag.max_tokens) == (0.0, 5, 15, 1024)
    assert Context(preset="flashrag").resolved("rag").rag_prompt == "flashrag"


def test_methods_whose_paper_values_follow_flashrag_share_them():
    for method in ("iter-retgen", "self-ask", "sure", "recomp", "replug", "self-rag"):
        assert PRESETS["flashrag"][1][method] is PRESETS["paper"][1][method], method
        for option in PRESETS["flashrag"][1][method]:
            assert option_reason("flashrag", method, option) == option_reason("paper", method, option)
    assert PRESETS["flashrag"][1]["recomp"]["recomp_compressor"] == "abstractive"


def test_a_method_flashrag_does_not_run_is_refused():
    with pytest.raises(UnknownSpecError, match="preset flashrag has no setting for method 'renact'; it has: rag, ircot"):
        Context(preset="flashrag").resolved("renact")
    assert Context(preset="flashrag").resolved(None).temperature == 0.0  # the shared part alone is fine


def test_ask_and_eval_with_flashrag_for_a_method_without_it_fail_in_one_line(tmp_path):
    for method in ("renact", "resp", "furepa"):
        assert_one_line_error(hoprag("ask", "Who?", "--method", method, "--preset", "flashrag"),
                              f"preset flashrag has no setting for method '{method}'; it has: rag, ircot, flare")
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Which band?", "answers": ["Rush"]}))
    with pytest.raises(UnknownSpecError, match="no setting for method 'resp'"):
        run_eval("resp", f"jsonl:{data}", tmp_path / "run", Context(preset="flashrag"), progress=False)
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_presets_show_flashrag():
    done = hoprag("presets", "show", "--preset", "flashrag", "--method", "ircot")
    assert done.returncode == 0, done.stderr
    rows = shown(done.stdout)
    assert rows["ircot_style"] == ("*", "'flashrag'", option_reason("flashrag", "ircot", "ircot_style"))
    assert rows["max_tokens"][1] == "32" and "FlashRAG" in rows["temperature"][2]
    everything = hoprag("presets", "show")
    assert "preset flashrag, method rearag: its own values" in everything.stdout
    # A method without it is shown under the other presets only, and refused when flashrag is named.
    assert "preset flashrag" not in hoprag("presets", "show", "--method", "renact").stdout
    assert_one_line_error(hoprag("presets", "show", "--preset", "flashrag", "--method", "renact"),
                          "preset flashrag has no setting for method 'renact'")


def test_every_table_row_naming_flashrag_is_runnable():
    rows = [(table.id, row) for table in load_tables() for row in table.rows if row.preset == "flashrag"]
    assert len(rows) >= 15
    assert all(row_status(row)[0] == "runnable" for _, row in rows), [(t, r.label, row_status(r)) for t, r in rows]


# ---------------------------------------------------------------- FlashRAG's prompt cut (generator_max_input_len)


def characters(text: str) -> list[str]:
    return list(text)


def test_a_plain_text_prompt_at_the_limit_keeps_its_first_and_last_half_minus_twenty_tokens():
    from hoprag.nodes.ircot import flashrag_cut_text

    prompt = "".join(string.ascii_letters[i % 52] for i in range(300))
    assert flashrag_cut_text(prompt[:99], 100, characters, "".join) == prompt[:99]  # under the limit: unchanged
    cut = flashrag_cut_text(prompt[:100], 100, characters, "".join)  # FlashRAG cuts at the limit itself (>=)
    assert cut == prompt[:30] + prompt[70:100]
    assert flashrag_cut_text(prompt, 100, characters, "".join) == prompt[:30] + prompt[-30:]


def test_chat_messages_are_kept_until_the_limit_and_the_one_that_overflows_keeps_its_beginning():
    from langchain_core.messages import HumanMessage

    from hoprag.nodes.ircot import flashrag_cut_messages

    messages = [SystemMessage("s" * 40), HumanMessage("u" * 50), AIMessage("a" * 10)]
    assert flashrag_cut_messages(messages, 100, characters, "".join) == messages
    cut = flashrag_cut_messages(messages, 60, characters, "".join)
    assert [type(m) for m in cut] == [SystemMessage, HumanMessage] and cut[1].content == "u" * 20
    assert messages[1].content == "u" * 50  # the caller's messages are not changed


def test_flashrag_ircot_cuts_a_long_prompt_in_the_middle_and_still_ends_with_the_question():
    result, _, seen = ircot_run([" So the answer is: Rush"], max_input_tokens=200)
    prompt = seen[0][0].content
    # An endpoint's tokens are estimated as 4-character pieces: 2 x (200 / 2 - 20) of them (the last one may be
    # shorter), the middle gone.
    assert 636 < len(prompt) <= 640 and prompt.startswith(IRCOT_INSTRUCTION[:100]) and prompt.endswith("\nThought:")
    assert result["answer"] == "Rush"
    _, _, seen = ircot_run([" So the answer is: Rush"])
    assert IRCOT_EXAMPLE in seen[0][0].content  # the preset's 2048 leaves a short prompt whole
    assert preset_options("flashrag", "ircot")["max_input_tokens"] == 2048


def test_a_llama_cpp_servers_prompt_is_cut_with_its_model_files_own_tokenizer(monkeypatch):
    import hoprag.llm as llm

    class Vocabulary:  # one token per character, as bytes; a model that adds a BOS (1)
        _model = type("Model", (), {"add_bos_token": staticmethod(lambda: True)})()

        def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
            assert special  # special-token text read as the special tokens
            return [1, *text] if add_bos else list(text)

        def detokenize(self, tokens: list[int], special: bool) -> bytes:
            return bytes(tokens)

    monkeypatch.setattr(llm, "_vocabulary", lambda name: Vocabulary())
    encode, decode = llm.token_codec("local-server:some-model", "reasoner", Context())
    assert encode("abc") == [97, 98, 99] and decode(encode("abc")) == "abc"
    # The plain-text form counts the BOS, as a Hugging Face tokenizer's encode adds it for FlashRAG.
    encode, _ = llm.token_codec("local-server:some-model", "reasoner", Context(), bos=True)
    assert encode("abc") == [1, 97, 98, 99]
    encode, decode = llm.token_codec("openai:gpt", "reasoner", Context())
    assert encode("abcdefghi") == ["abcd", "efgh", "i"] and decode(encode("abcdefghi")) == "abcdefghi"


def test_a_prompt_just_under_the_limit_leaves_the_thought_only_what_remains_of_it(monkeypatch):
    """FlashRAG's vLLM model is max_input_len tokens long (max_model_len): prompt and thought share it."""
    import hoprag.nodes.ircot as ircot

    asked: list[int | None] = []
    real_call = ircot.call_llm

    def recording_call(role, prompt, ctx, **kwargs):
        asked.append(kwargs.get("max_tokens"))
        return real_call(role, prompt, ctx, **kwargs)

    monkeypatch.setattr(ircot, "call_llm", recording_call)
    _, _, seen = ircot_run([" So the answer is: Rush"], max_input_tokens=100_000)
    pieces = (len(seen[0][0].content) + 3) // 4  # an endpoint's tokens are 4-character pieces
    assert asked == [32]  # far under the limit: FlashRAG's 32 output tokens
    _, _, seen = ircot_run([" So the answer is: Rush"], max_input_tokens=pieces + 10)
    assert (len(seen[0][0].content) + 3) // 4 == pieces and asked[-1] == 10  # whole prompt, ten tokens left
