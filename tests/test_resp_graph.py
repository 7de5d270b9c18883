"""ReSP behaviour with scripted per-role models."""

from __future__ import annotations

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.llm import ScriptedChatModel
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question

from .conftest import fake_roles


class Recorder:
    def __init__(self):
        self.queries: list[str] = []

    def search(self, query, k):
        self.queries.append(query)
        return [Document(id=f"{query}-{i}", title=f"T{i}", text=f"text {i}") for i in range(k)]


def setup(judge_replies, plan_replies, **options):
    retriever = Recorder()
    register_retriever("resp-index", retriever)
    judge_replies, plan_replies = list(judge_replies), list(plan_replies)

    def reasoner(messages):  # the paper's Reasoner judges sufficiency and plans
        prompt = str(messages[-1].content)
        return judge_replies.pop(0) if prompt.startswith("Judging based solely") else plan_replies.pop(0)

    models = {
        "summarizer": ScriptedChatModel(lambda m: "Yes, local" if "respond completely" in str(m[-1].content) else "evidence [DONE]"),
        "reasoner": ScriptedChatModel(reasoner),
        "generator": ScriptedChatModel(lambda m: "Final"),
    }
    specs = fake_roles("resp", models)
    return Context(index="resp-index", k=3, **specs, **options), retriever, models


def test_sufficient_at_first_iteration():
    ctx, retriever, models = setup(["Yes"], [])
    result = run_question("resp", "Who?", ctx)
    assert result["answer"] == "Final" and result["finished_by"] == "sufficient"
    assert retriever.queries == ["Who?"]  # iteration 1 retrieves the question itself
    assert len(result["trajectory"]) == 1
    assert result["trajectory"][0]["local_answer"] is None  # no local pathway in iteration 1
    assert result["trajectory"][0]["judgement"] == "Yes"
    assert len(models["reasoner"].prompts) == 1  # the judge only: the planner was bypassed


def test_cap_reached_after_three_iterations():
    ctx, retriever, models = setup(["no.", "Maybe"], ["Sub one?", "Sub two?"])
    result = run_question("resp", "Who?", ctx)
    assert result["finished_by"] == "cap"
    assert retriever.queries == ["Who?", "Sub one?", "Sub two?"]
    # "Maybe" counts as No; the third iteration goes to the generator unjudged (§4.1)
    assert [s.get("judgement") for s in result["trajectory"]] == ["No", "No", None]
    assert result["trajectory"][1]["local_answer"] == "local"
    # The generator saw both memory queues.
    assert "[Local pathway]\nQ: Sub one? A: local" in models["generator"].prompts[0]


def test_a_plan_label_alone_on_its_line_keeps_the_sub_question_below_it():
    ctx, retriever, _ = setup(["No", "No"], ["[You Thought]:\nWho directed Big Stone Gap?"], max_iterations=2)
    run_question("resp", "Who?", ctx)
    assert retriever.queries == ["Who?", "Who directed Big Stone Gap?"]


def test_repeated_sub_question_is_not_retrieved_again_in_small():
    ctx, retriever, _ = setup(["No", "No", "No"], ["Sub one?", "sub ONE"], max_iterations=5, preset="small")
    result = run_question("resp", "Who?", ctx)
    assert retriever.queries == ["Who?", "Sub one?"]
    assert result["finished_by"] == "repeated"


def test_per_role_models_are_used():
    ctx, _, models = setup(["No", "Yes"], ["Sub?"])
    result = run_question("resp", "Who?", ctx)
    assert set(result["usage"]) == {"summarizer", "reasoner", "generator"}
    assert all(m.prompts for m in models.values())
    assert models["reasoner"].prompts[0].startswith("Judging based solely")


def test_the_generator_writes_up_to_the_presets_output_cap(monkeypatch):
    """ReSP §4.2: "the maximum output length is set to 200" (`paper`); the generator had a fixed 48."""
    import hoprag.nodes.resp as resp

    caps: list[int] = []
    real = resp.call_llm

    def recording(role, prompt, ctx, **kwargs):
        if role == "generator":
            caps.append(kwargs.get("max_tokens") or ctx.max_tokens)
        return real(role, prompt, ctx, **kwargs)

    monkeypatch.setattr(resp, "call_llm", recording)
    for preset, cap in (("paper", 200), ("small", 256)):
        ctx, _, _ = setup(["Yes"], [], preset=preset)
        run_question("resp", "Who?", ctx)
        assert caps.pop() == cap, preset
