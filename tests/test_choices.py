"""`answer_choices` (small): a question that names its choices gets one of them, with scripted models."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.choices import choice_grammar, keep_to_choices, matching_choice, named_choices
from hoprag.nodes.rearag import concise as rearag_concise
from hoprag.nodes.resp import generate as resp_generate
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question

from .conftest import fake_roles

FILMS = "Which film whose director is younger, Forbidden Ground or Free Guy?"


@pytest.mark.parametrize(("question", "choices"), [
    (FILMS, ["Forbidden Ground", "Free Guy"]),
    ("Which film has the director born earlier, The Adventures Of Priscilla, Queen Of The Desert or Harvest: 3,000 Years?",
     ["The Adventures Of Priscilla, Queen Of The Desert", "Harvest: 3,000 Years"]),
    ("Which music group has the most members, DC Talk, or Manchester Orchestra?", ["DC Talk", "Manchester Orchestra"]),
    ("Was Jamie Curry or Alyaksey Vasilewski born first?", ["Jamie Curry", "Alyaksey Vasilewski"]),
    ("Which magazine was started first Arthur's Magazine or First for Women?", ["Arthur's Magazine", "First for Women"]),
    ("Are the directors of films Sword Of The Empire and Seven Guns For Timothy both from the same country?", ["yes", "no"]),
    ("Do both films Levity (Film) and I Come With The Rain have the directors that share the same nationality?", ["yes", "no"]),
    # Not choices: "or" between common nouns, a comma clause that is not a list of names, an open question.
    ("Which actor or actress starred in Rush?", []),
    ("Is Lyon a city or a town?", []),
    ("The director of Rush, who was born in 1950, worked with which actor or actress?", []),
    ("Who is the spouse of the director of film Forbidden Ground?", []),
])
def test_the_choices_a_question_names(question, choices):
    assert named_choices(question) == choices


def test_the_choice_grammar_is_valid_gbnf_with_quotes_and_non_ascii():
    from llama_cpp import LlamaGrammar

    grammar = choice_grammar(['Don\'T Freak Me Out', 'The "Quoted" Film', 'Stanisław Gawlik', "yes"])
    assert grammar.count(" | ") == 3 and '\\"Quoted\\"' in grammar
    LlamaGrammar.from_string(grammar, verbose=False)  # raises on a malformed grammar


def test_an_answer_names_a_choice_by_a_shared_content_word():
    films = ["Yohan: The Child Wanderer", "A Nightmare On Elm Street 4: The Dream Master"]
    assert matching_choice("A Nightmare On Elm Street 4", films) == films[1]
    assert matching_choice("Shawn Levy", ["Forbidden Ground", "Free Guy"]) is None
    # A kind word ("film") ties nothing; a word both choices share decides nothing.
    assert matching_choice("Ann Hui (film director)", ["Love In A Fallen City (Film)", "Mummy's Boys"]) is None
    assert matching_choice("Rice", ["Bitter Rice", "Rice Cooker"]) is None
    assert matching_choice("Yes, both are", ["yes", "no"]) == "yes" and matching_choice("Indian", ["yes", "no"]) is None


def choice_ctx(generator, **options) -> tuple[Context, dict[str, ScriptedChatModel]]:
    models = {"generator": ScriptedChatModel(generator)}
    return Context(**fake_roles("choices", models), **{"answer_choices": True, **options}), models


def test_an_off_choice_answer_is_replaced_by_the_choice_the_generator_picks_from_the_evidence():
    state = {"question": FILMS, "trajectory": [{"notes": [
        {"title": "Free Guy", "note": "Free Guy is a 2021 film directed by Shawn Levy.", "relevant": True}]}]}
    ctx, models = choice_ctx(lambda m: "- Free Guy\nbecause Shawn Levy is younger")
    answer, calls = keep_to_choices(state, "Shawn Levy", ctx)
    assert answer == "Free Guy" and len(calls) == 1 and calls[0]["role"] == "generator"
    prompt = models["generator"].prompts[0]
    assert "directed by Shawn Levy" in prompt and "Draft answer: Shawn Levy" in prompt
    # The choices come last, right before the reply, and a grammar holds the reply to them.
    assert prompt.rstrip().endswith("Choices:\n- Forbidden Ground\n- Free Guy\nChoice:")
    assert models["generator"].grammars[0] == 'root ::= "Forbidden Ground" | "Free Guy"\n'
    # An answer that already names a choice, or a question without choices, costs no call.
    assert keep_to_choices(state, "Free Guy", ctx) == ("Free Guy", [])
    assert keep_to_choices({"question": "Who directed Free Guy?"}, "Shawn Levy", ctx) == ("Shawn Levy", [])
    # A reply that names no choice keeps the draft answer rather than an invented one.
    ctx, _ = choice_ctx(lambda m: "I cannot tell.")
    assert keep_to_choices(state, "Shawn Levy", ctx)[0] == "Shawn Levy"


def test_renact_small_with_answer_choices_answers_a_named_choice_and_paper_does_not():
    class Pages:
        def search(self, query: str, k: int) -> list[Document]:
            return [Document(id="d1", title="Free Guy", text="Free Guy is a 2021 film directed by Shawn Levy.")][:k]

    register_retriever("choices-index", Pages())
    replies = ["Thought: who directed it\nAction: search[Free Guy]", "Thought: done\nAction: finish[Shawn Levy]"]

    def run(preset: str, **options):
        models = {"reasoner": ScriptedChatModel(list(replies)),
                  "notes": ScriptedChatModel(lambda m: "YES#Free Guy is directed by Shawn Levy."),
                  "generator": ScriptedChatModel(lambda m: "Free Guy" if "Choice:" in str(m) else "unknown")}
        ctx = Context(index="choices-index", preset=preset, **fake_roles("choices-renact", models), **options)
        return run_question("renact", FILMS, ctx), models

    result, models = run("small", answer_choices=True)
    assert result["answer"] == "Free Guy" and result["finished_by"] == "finish"
    assert any("Choice:" in str(p) for p in models["generator"].prompts)
    result, models = run("paper")
    assert result["answer"] == "Shawn Levy" and models["generator"].prompts == []


def test_rearag_and_resp_keep_their_answer_to_the_named_choices():
    ctx, _ = choice_ctx(lambda m: "Free Guy", preset="small", answer_choices=True)
    runtime = SimpleNamespace(context=ctx)
    state = {"question": FILMS, "finish_answer": "Shawn Levy",
             "trajectory": [{"observation": "Free Guy was directed by Shawn Levy."}]}
    update = rearag_concise(state, runtime)
    assert update["answer"] == "Free Guy" and update["finished_by"] == "finish" and len(update["calls"]) == 1
    ctx, models = choice_ctx(lambda m: "Free Guy" if "Choice:" in str(m) else "Shawn Levy", answer_choices=True)
    update = resp_generate({"question": FILMS, "global_evidence": ["Free Guy was directed by Shawn Levy."]},
                           SimpleNamespace(context=ctx))
    assert update["answer"] == "Free Guy" and len(update["calls"]) == 2
    assert "Free Guy was directed by Shawn Levy." in str(models["generator"].prompts[1])


def test_small_rag_and_cot_keep_their_answer_to_the_named_choices_and_paper_does_not():
    class Pages:
        def search(self, query: str, k: int) -> list[Document]:
            return [Document(id="d1", title="Free Guy", text="Free Guy is a 2021 film directed by Shawn Levy.")][:k]

    register_retriever("choices-rag-index", Pages())
    for method, reply in (("rag", "Shawn Levy"), ("cot", "Shawn Levy directed Free Guy.\nSo the answer is: Shawn Levy.")):
        for preset, expected in (("small", "Free Guy"), ("paper", "Shawn Levy")):
            generator = ScriptedChatModel(lambda m, reply=reply: "Free Guy" if "Choice:" in str(m) else reply)
            ctx = Context(index="choices-rag-index", preset=preset, **fake_roles(f"choices-{method}", {"generator": generator}))
            result = run_question(method, FILMS, ctx)
            assert result["answer"] == expected, (method, preset)
            if preset == "small":  # RAG's passages (or CoT's own reasoning) are the evidence the choice call reads
                assert "directed by Shawn Levy" in str(generator.prompts[-1]) or "directed Free Guy" in str(generator.prompts[-1])
