"""Raw-text calls: a plain-text prompt continued without the chat template, as FlashRAG sends IRCoT's prompt to a vLLM
or Hugging Face model. The embedded model tokenizes the text itself; an endpoint gets it on /v1/completions."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hoprag.context import Context
from hoprag.errors import HopragError
from hoprag.llm import ScriptedChatModel, call_llm, register_fake
from hoprag.nodes.retrieve import register_retriever
from hoprag.run import run_question

from .conftest import FreshDocs
from .openai_stub import openai_stub  # noqa: F401  (fixture)


def ircot_context(**options) -> Context:
    register_retriever("raw-text-index", FreshDocs())
    return Context(llm="openai:stub-model", preset="flashrag", index="raw-text-index", **options)


def test_an_endpoint_gets_flashrag_ircot_as_a_plain_text_completion(openai_stub):  # noqa: F811
    thoughts = iter([" Counterparts is an album by Rush. It was", " So the answer is: Rush"])
    openai_stub.script = lambda body: (next(thoughts), []) if "prompt" in body else None
    ctx = ircot_context()
    result = run_question("ircot", "Which band released Counterparts?", ctx)
    assert result["answer"] == "Rush" and result["finished_by"] == "answer"
    first, second = openai_stub.bodies
    prompts = [body["prompt"] if isinstance(body["prompt"], str) else body["prompt"][0] for body in (first, second)]
    assert "messages" not in first and prompts[0].startswith("You serve as an intelligent assistant")
    assert prompts[0].endswith("Question: Which band released Counterparts?\nThought:")
    # The thought is cut after its period and continued from there: FlashRAG's previous_gen.
    assert prompts[1].endswith("Question: Which band released Counterparts?\nThought: Counterparts is an album by Rush.")
    # No stop sent: the thought is cut after its period here, as vLLM keeps the stop string FlashRAG gives it.
    assert (first["max_tokens"], first["temperature"], first.get("stop")) == (32, 0.0, None)
    usage = result["usage"]["reasoner"]  # the endpoint's token counts, recorded as a chat call's are
    assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (2, 22, 14)


def test_flashrag_chat_sends_chat_messages_to_an_endpoint(openai_stub):  # noqa: F811
    openai_stub.script = lambda body: (" So the answer is: Rush", [])
    ctx = ircot_context(ircot_style="flashrag-chat")
    # The endpoint cut no period here; FlashRAG's OpenAI generator appends one all the same.
    assert run_question("ircot", "Which band released Counterparts?", ctx)["answer"] == "Rush."
    assert [m["role"] for m in openai_stub.bodies[0]["messages"]] == ["system", "user"]
    assert openai_stub.bodies[0]["stop"] == [".", "\n"]  # FlashRAG's stop, cut by the endpoint


def test_an_endpoint_without_plain_text_completions_gets_one_actionable_line(openai_stub):  # noqa: F811
    openai_stub.faults = lambda prompt: "404" if prompt.startswith("You serve") else None
    with pytest.raises(HopragError, match=r"refused a plain-text completion .*ircot_style=flashrag-chat"):
        run_question("ircot", "Which band released Counterparts?", ircot_context(max_retries=0))


class RawLlama:
    """What ChatLlamaCpp reads of llama.cpp to tokenize a raw-text prompt: no model is loaded."""

    def __init__(self, add_bos: bool) -> None:
        self._model = SimpleNamespace(add_bos_token=lambda: add_bos)

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        self.tokenized = (text.decode(), add_bos, special)
        return [1, 2]


class CompletingLlama(RawLlama):
    """Records which llama.cpp entry point a call used and the prompt it got."""

    prompt_start = 0

    def create_completion(self, prompt, **sampling):
        self.completed = (prompt, sampling["stop"])
        return {"choices": [{"text": " Rush.", "finish_reason": "length"}],
                "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}}

    def create_chat_completion(self, **kwargs):
        raise AssertionError("a raw-text call must not go through the chat template")


def test_the_embedded_model_completes_raw_text_through_create_completion_without_a_template():
    from langchain_core.messages import HumanMessage

    from hoprag.llama_local import ChatLlamaCpp

    llama = CompletingLlama(add_bos=False)
    model = ChatLlamaCpp(runtime=SimpleNamespace(llama=llama, activate=lambda role: None), role="reasoner")
    message = model.invoke([HumanMessage("Question: x\nThought:")], raw_text=True, max_tokens=32, temperature=0.0)
    assert llama.completed == ([1, 2], []) and llama.tokenized[0] == "Question: x\nThought:"
    assert message.content == " Rush." and message.usage_metadata["output_tokens"] == 3


@pytest.mark.parametrize("add_bos", [False, True])
def test_the_embedded_model_tokenizes_raw_text_without_a_template_and_with_the_models_own_bos(add_bos):
    from hoprag.llama_local import ChatLlamaCpp

    llama = RawLlama(add_bos)
    model = ChatLlamaCpp(runtime=SimpleNamespace(llama=llama), role="reasoner")
    assert model._raw_prompt("Question: x\nThought: A.") == [1, 2]
    assert llama.tokenized == ("Question: x\nThought: A.", add_bos, True)


def test_a_raw_text_call_takes_one_plain_prompt_and_nothing_chat_only():
    spec = register_fake("fake:raw-text", ScriptedChatModel(lambda messages: "ok"))
    ctx = Context(llm=spec).resolved("rag")
    assert call_llm("generator", "Thought:", ctx, raw_text=True)[0] == "ok"
    for extra in ({"system": "You are"}, {"logprobs": True}, {"grammar": "root ::= \"a\""}, {"continue_reply": True}):
        with pytest.raises(HopragError, match="raw-text call"):
            call_llm("generator", "Thought:", ctx, raw_text=True, **extra)


def test_a_raw_text_prompt_and_a_chat_with_the_same_words_are_cached_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("HOPRAG_LLM_CACHE", str(tmp_path / "responses.sqlite"))
    calls: list[list] = []
    spec = register_fake("fake:raw-text-cache", ScriptedChatModel(lambda m: calls.append(m) or f"reply {len(calls)}"))
    ctx = Context(llm=spec, llm_cache=True).resolved("rag")
    raw = call_llm("generator", "Thought:", ctx, raw_text=True)[0]
    chat = call_llm("generator", "Thought:", ctx)[0]
    again, record, _ = call_llm("generator", "Thought:", ctx, raw_text=True)
    assert (raw, chat, again, record.cached, len(calls)) == ("reply 1", "reply 2", "reply 1", True, 2)
