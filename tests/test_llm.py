"""The provider layer: spec resolution, fakes with usage, OpenAI-compatible endpoints, errors."""

from __future__ import annotations

import pytest

from hoprag.context import Context
from hoprag.errors import EndpointError, HopragError, UnknownSpecError
from hoprag.llm import ScriptedChatModel, call_llm, register_fake, resolve_spec, summarize_usage
from hoprag.local_models import resolve_gguf


def test_spec_precedence(monkeypatch):
    ctx = Context()
    assert resolve_spec("notes", ctx) == "local:qwen2.5-coder-1.5b"
    monkeypatch.setenv("HOPRAG_LLM", "openai:env-all")
    assert resolve_spec("notes", ctx) == "openai:env-all"
    assert resolve_spec("notes", Context(llm="openai:ctx-all")) == "openai:ctx-all"
    monkeypatch.setenv("HOPRAG_NOTES_LLM", "openai:env-notes")
    assert resolve_spec("notes", Context(llm="openai:ctx-all")) == "openai:env-notes"
    assert resolve_spec("notes", Context(notes_llm="openai:ctx-notes")) == "openai:ctx-notes"
    assert resolve_spec("reasoner", Context(llm="openai:ctx-all")) == "openai:ctx-all"


def test_fake_records_usage_per_role():
    spec = register_fake("fake:usage", ScriptedChatModel(["one two three", "four"]))
    ctx = Context(llm=spec)
    text, record, _ = call_llm("reasoner", "a b", ctx)
    assert text == "one two three" and record.input_tokens == 2 and record.output_tokens == 3
    _, second, _ = call_llm("notes", "c", ctx)
    totals = summarize_usage([record.to_dict(), second.to_dict()])
    assert totals["reasoner"]["output_tokens"] == 3 and totals["notes"]["calls"] == 1


def test_unknown_specs_are_clear_errors():
    with pytest.raises(UnknownSpecError, match="unknown model spec"):
        call_llm("reasoner", "x", Context(llm="gpt4"))
    with pytest.raises(UnknownSpecError, match="unknown fake"):
        call_llm("reasoner", "x", Context(llm="fake:nothing-registered"))
    with pytest.raises(UnknownSpecError, match="unknown local model"):
        resolve_gguf("no-such-model")


def test_failing_model_is_retried_then_reported():
    attempts = []

    def flaky(messages):
        attempts.append(1)
        raise RuntimeError("boom")

    spec = register_fake("fake:flaky", ScriptedChatModel(flaky))
    with pytest.raises(EndpointError, match="failed after 3 attempt"):
        call_llm("reasoner", "x", Context(llm=spec, max_retries=2))
    assert len(attempts) == 3


def test_bad_gguf_hash_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("HOPRAG_MODELS", str(tmp_path))
    (tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"not the model")
    with pytest.raises(HopragError, match="not the official"):
        resolve_gguf("smollm2-135m", fetch=False)


def test_openai_compatible_endpoint_runs_renact(openai_stub):
    from hoprag.documents import Document
    from hoprag.nodes.retrieve import register_retriever
    from hoprag.run import run_question

    class One:
        def search(self, query, k):
            return [Document(id="r", title="Rush", text="Rush released Counterparts in 1993.")]

    register_retriever("stub-index", One())
    result = run_question("renact", "Which band?", Context(llm="openai:stub-model", index="stub-index"))
    assert result["answer"] == "Rush"
    assert result["usage"]["reasoner"]["input_tokens"] == 22
    assert result["usage"]["notes"]["calls"] == 1


def test_unreachable_endpoint_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(EndpointError, match="cannot reach"):
        call_llm("reasoner", "x", Context(llm="openai:m", max_retries=0))


@pytest.mark.slow
def test_real_embedded_model_generates():
    text, record, _ = call_llm("reasoner", "What is the capital of France? One word.", Context(max_tokens=8))
    assert "paris" in text.lower()
    assert record.input_tokens > 10 and record.output_tokens >= 1


def test_calls_with_different_seeds_share_one_model_instance(monkeypatch):
    """Sampled candidates and retries vary the seed per call; each must not load the model again."""
    from hoprag import llm

    loaded = []

    class Fake:
        @classmethod
        def load(cls, name, **kwargs):
            loaded.append(kwargs)
            return llm.ScriptedChatModel(lambda m: "ok")

    import hoprag.llama_local as llama_local

    monkeypatch.setattr(llama_local, "ChatLlamaCpp", Fake)
    monkeypatch.setattr(llm, "_MODELS", {})
    for seed in range(5):
        llm.call_llm("reasoner", "hi", Context(llm="local:qwen2.5-coder-1.5b", seed=seed, temperature=0.7, max_tokens=4))
    assert len(loaded) == 1


class _StubLlama:
    """llama_cpp.Llama's surface that ChatLlamaCpp uses, recording what each completion was asked with."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.block_aligned, self.token_logprobs, self.prompt_start = False, None, 0

    def create_chat_completion(self, **kwargs):
        self.sent.append(kwargs)
        return {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@pytest.mark.parametrize("preset", ["paper", "small"])
def test_paper_samples_the_embedded_models_whole_distribution(monkeypatch, preset):
    """llama.cpp truncates sampling by default (top_k 40, top_p 0.95, min_p 0.05); the papers' APIs do not, so
    `paper` turns the truncation off and `small` keeps it (`truncated_sampling`). Greedy calls send neither. The
    embedded runtime itself (ChatLlamaCpp) passes them on to llama.cpp."""
    from hoprag import llm
    from hoprag.llama_local import ChatLlamaCpp

    stub = _StubLlama()

    class Runtime:
        llama = stub

        def activate(self, role):
            pass

    monkeypatch.setattr(ChatLlamaCpp, "load", classmethod(
        lambda cls, name, **kwargs: cls(runtime=Runtime(), role=kwargs["role"], model_path=name, seed=None)))
    monkeypatch.setattr(llm, "_MODELS", {})
    ctx = Context(llm="local:qwen2.5-coder-1.5b", preset=preset, max_tokens=4, llm_cache=False).resolved("renact")
    llm.call_llm("reasoner", "hi", ctx.with_options(temperature=0.7))
    llm.call_llm("reasoner", "hi", ctx.with_options(temperature=0.7, top_p=0.85))
    llm.call_llm("reasoner", "hi", ctx.with_options(temperature=0.0))
    truncation = [{k: kwargs[k] for k in ("top_k", "min_p", "top_p") if k in kwargs} for kwargs in stub.sent]
    if preset == "paper":
        assert truncation == [{"top_k": 0, "min_p": 0.0, "top_p": 1.0}, {"top_k": 0, "min_p": 0.0, "top_p": 0.85}, {}]
    else:
        assert truncation == [{}, {"top_p": 0.85}, {}]


@pytest.mark.parametrize("preset", ["paper", "small"])
def test_paper_samples_a_llama_cpp_servers_whole_distribution(openai_stub, monkeypatch, preset):
    """llama_cpp.server truncates as the embedded runtime does; `paper` sends top_k 0 and min_p 0 in the body."""
    from langchain_openai import ChatOpenAI

    import hoprag.llama_local as llama_local
    from hoprag import llm

    monkeypatch.setattr(llama_local, "local_server_model", lambda name, **kwargs: ChatOpenAI(
        model=name, api_key="test", base_url=f"http://127.0.0.1:{openai_stub.server_port}/v1", max_retries=0))
    monkeypatch.setattr(llm, "_MODELS", {})
    ctx = Context(llm="local-server:qwen2.5-coder-1.5b", preset=preset, max_tokens=4, llm_cache=False).resolved("renact")
    llm.call_llm("reasoner", "hi", ctx.with_options(temperature=0.7))
    llm.call_llm("reasoner", "hi", ctx.with_options(temperature=0.0))
    sent = [{k: body[k] for k in ("top_k", "min_p") if k in body} for body in openai_stub.bodies]
    assert sent == ([{"top_k": 0, "min_p": 0.0}, {}] if preset == "paper" else [{}, {}])


def test_sampled_calls_draw_with_a_seed_of_their_own(openai_stub):
    """One fixed seed on every call replays the same draws at each step; a sampled call's seed is derived from
    the run's seed and its prompt instead."""
    sampled = Context(llm="openai:stub-model", temperature=0.7, max_tokens=8, seed=0)
    for prompt in ("Observation 1: none", "Observation 1: none\nObservation 2: none", "Observation 1: none"):
        call_llm("reasoner", prompt, sampled)
    call_llm("reasoner", "Observation 1: none", sampled.with_options(seed=1))
    call_llm("reasoner", "Observation 1: none", sampled.with_options(temperature=0.0))
    first, longer, again, other_run, greedy = (body["seed"] for body in openai_stub.bodies)
    assert first != longer and first == again  # independent across prompts, reproducible for one prompt
    assert other_run != first  # another run seed draws differently
    assert greedy == 0  # greedy calls send the run's seed unchanged (and keep their cache keys)


def test_the_thread_setting_also_bounds_prompt_processing(tmp_path, monkeypatch):
    """HOPRAG_THREADS caps llama.cpp's prompt (batch) threads as well as its decode threads: its default takes
    every core, so two one-thread runs side by side would contend for them."""
    from hoprag import llama_local

    seen: dict = {}

    class RecordingLlama:
        def __init__(self, **kwargs):
            seen.update(kwargs)

    model_file = tmp_path / "tiny.gguf"
    model_file.write_bytes(b"GGUF")
    monkeypatch.setattr(llama_local, "_llama_class", lambda: RecordingLlama)
    monkeypatch.setattr(llama_local, "_RUNTIMES", {})
    llama_local.local_runtime(str(model_file), n_ctx=512, n_threads=1)
    assert seen["n_threads"] == 1 and seen["n_threads_batch"] == 1


def test_a_local_server_gets_the_same_bound_on_its_prompt_threads(tmp_path, monkeypatch):
    from hoprag import llama_local

    class Started(Exception):
        pass

    def record(command, **_):
        raise Started(command)

    model_file = tmp_path / "tiny.gguf"
    model_file.write_bytes(b"GGUF")
    monkeypatch.setattr(llama_local.subprocess, "Popen", record)
    with pytest.raises(Started) as started:
        llama_local.local_server_model(str(model_file), n_ctx=512, n_threads=1)
    command = started.value.args[0]
    assert command[command.index("--n_threads") + 1] == "1"
    assert command[command.index("--n_threads_batch") + 1] == "1"
