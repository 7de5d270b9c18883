"""RECOMP (`recomp`): what the generator reads is the compressor's output (the LLM stand-in, and the T5 and contriever
code paths on tiny random checkpoints made here), the checkpoint without weights fails in one line, malformed
compressor replies, the presets, and the run's record of its compressor, with scripted models and an in-memory
retriever."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.eval.runner import run_eval
from hoprag.graphs import DIAGRAMS, METHODS, mermaid, method_counters
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes import recomp
from hoprag.nodes.retrieve import register_retriever
from hoprag.presets import preset_options
from hoprag.prompts.recomp import LLM_COMPRESS_REASONING, LLM_COMPRESS_SUMMARY, RECOMP_GENERATE
from hoprag.run import run_question

PASSAGES = [("Rush", "Rush is a Canadian rock band. It released Counterparts in 1993."),
            ("Neil Peart", "Neil Peart was the drummer of Rush. He wrote most of its lyrics.")]


class Passages:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        return [Document(id=f"d{i}", title=t, text=x) for i, (t, x) in enumerate(PASSAGES)][:k]


def setup(script, name: str, **options) -> tuple[Context, Passages, ScriptedChatModel]:
    retriever = Passages()
    register_retriever(f"{name}-index", retriever)
    model = ScriptedChatModel(script)
    return Context(index=f"{name}-index", llm=register_fake(f"fake:{name}", model), **options), retriever, model


def compressor_or_generator(summary: str, answer: str = "Neil Peart"):
    """A scripted model: `summary` to the compressor's prompt, `answer` to the generator's."""
    def reply(messages):
        prompt = str(messages[-1].content)
        return answer if prompt.startswith("Answer the question based on") else summary
    return reply


def test_the_generator_reads_exactly_the_llm_compressors_output():
    summary = "Neil Peart was Rush's drummer and lyricist."
    ctx, retriever, model = setup(compressor_or_generator(f"Compressed documents: {summary}"), "recomp-llm",
                                  recomp_compressor="llm")
    result = run_question("recomp", "Who wrote Rush's lyrics?", ctx)
    assert retriever.queries == ["Who wrote Rush's lyrics?"] and result["answer"] == "Neil Peart"
    compress_prompt, generate_prompt = model.prompts
    # The compressor reads the documents' texts without titles, in the RECOMP paper's HotpotQA prompt (Table 8).
    texts = "\n".join(text for _, text in PASSAGES)
    assert compress_prompt == LLM_COMPRESS_REASONING.format(documents=texts, question="Who wrote Rush's lyrics?")
    # The generator reads the summary, its echoed label removed, where standard RAG reads the documents.
    assert generate_prompt == RECOMP_GENERATE.format(documents=summary, question="Who wrote Rush's lyrics?")
    assert "Counterparts" not in generate_prompt
    step = result["trajectory"][0]
    assert step["observation"] == summary and step["compressor"] == "llm:fake:recomp-llm"
    assert step["retrieved_titles"] == ["Rush", "Neil Peart"] and result["steps"] == 1
    assert result["usage"]["summarizer"]["calls"] == 1 and result["usage"]["generator"]["calls"] == 1


def test_the_llm_compressor_takes_the_prompt_of_the_checkpoint_it_stands_in_for():
    assert recomp.llm_prompt_for("fangyuan/hotpotqa_abstractive") == LLM_COMPRESS_REASONING
    assert recomp.llm_prompt_for("fangyuan/nq_abstractive_compressor") == LLM_COMPRESS_SUMMARY
    assert recomp.llm_prompt_for("model/recomp_tqa_abs") == LLM_COMPRESS_SUMMARY
    ctx, _, model = setup(compressor_or_generator("Peart wrote them."), "recomp-nq", recomp_compressor="llm",
                          recomp_checkpoint="fangyuan/nq_abstractive_compressor")
    run_question("recomp", "Who wrote Rush's lyrics?", ctx)
    assert model.prompts[0].startswith("Compress the information in the retrieved documents into a 2-sentence summary")


def test_an_empty_llm_summary_is_an_invalid_output_and_the_generator_reads_nothing():
    ctx, _, model = setup(compressor_or_generator("<think>hmm</think>\nSummary:  "), "recomp-empty",
                          recomp_compressor="llm")
    result = run_question("recomp", "Who?", ctx)
    assert result["invalid_outputs"] == 1 and result["trajectory"][0]["problem"] == "empty summary"
    assert model.prompts[1] == RECOMP_GENERATE.format(documents="", question="Who?")
    assert result["answer"] == "Neil Peart"


def test_two_hundred_malformed_compressor_replies_never_crash():
    rng = random.Random(94)
    pieces = ["<think>", "</think>", "Summary:", "Compressed documents:", "**Summary:**", "\n", " ", "Rush", ":", "",
              "Question:", "\x00", "{", "}", "Reasoning chain:", "<|im_end|>", "é", "```"]
    replies = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(200)]
    for reply in replies:
        summary = recomp.llm_summary(reply)
        assert isinstance(summary, str) and summary == summary.strip() and "<think>" not in summary.lower()
    # Through the graph: each reply is the compressor's output, and the run always ends with the generator's answer.
    for number, reply in enumerate(replies[:200]):
        ctx, _, model = setup(compressor_or_generator(reply), f"recomp-fuzz-{number}", recomp_compressor="llm")
        result = run_question("recomp", "Who?", ctx)
        assert result["answer"] == "Neil Peart" and result["finished_by"] == "generate"
        assert model.prompts[1] == RECOMP_GENERATE.format(documents=recomp.llm_summary(reply), question="Who?")
        assert result["invalid_outputs"] == (0 if recomp.llm_summary(reply) else 1)


def test_a_checkpoint_without_its_weights_fails_in_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))
    for compressor, checkpoint in [("abstractive", "fangyuan/hotpotqa_abstractive"),
                                   ("extractive", "fangyuan/hotpotqa_extractive_compressor")]:
        options = {} if compressor == "abstractive" else {"recomp_compressor": compressor}
        ctx, _, model = setup(compressor_or_generator("x"), f"recomp-missing-{compressor}", **options)  # paper preset
        with pytest.raises(HopragError) as error:
            run_question("recomp", "Who?", ctx)
        message = str(error.value)
        assert checkpoint in message and "recomp_compressor=llm" in message and "\n" not in message
        assert f"huggingface-cli download {checkpoint}" in message and model.prompts == []
    # Online but with the hub out of reach, no download is tried (its client would retry for a minute).
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert not recomp._hub_reachable()
    ctx, _, _ = setup(compressor_or_generator("x"), "recomp-unreachable")
    with pytest.raises(HopragError, match="fangyuan/hotpotqa_abstractive weights"):
        run_question("recomp", "Who?", ctx)


def test_presets_follow_flashrag_and_small_uses_the_llm_compressor():
    paper = preset_options("paper", "recomp")
    assert (paper["recomp_compressor"], paper["temperature"], paper["k"], paper["max_tokens"]) == ("abstractive", 0.0, 5, 32)
    assert not paper["concise_answer"] and not paper["answer_choices"]
    small = preset_options("small", "recomp")
    assert small["recomp_compressor"] == "llm" and small["concise_answer"] and small["answer_choices"]
    assert (recomp.INPUT_TOKENS, recomp.OUTPUT_TOKENS, recomp.TOP_SENTENCES) == (1024, 512, 5)


def test_small_keeps_the_answer_to_the_questions_choices():
    def reply(messages):
        prompt = str(messages[-1].content)
        if prompt.startswith("Pick the answer"):
            return "Rush"
        return "The band from Toronto" if prompt.startswith("Answer the question based on") else "Rush formed in 1968."

    ctx, _, model = setup(reply, "recomp-small", preset="small")
    result = run_question("recomp", "Which band formed first, Rush or Yes?", ctx)
    assert result["answer"] == "Rush" and model.prompts[-1].startswith("Pick the answer")
    assert result["trajectory"][0]["compressor"] == "llm:fake:recomp-small"


def test_eval_records_the_compressor_in_summary_and_each_record(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Who wrote lyrics {i}?", "answers": ["Neil Peart"]})
                              for i in range(2)))
    ctx, _, _ = setup(compressor_or_generator("Neil Peart wrote Rush's lyrics."), "recomp-eval",
                      recomp_compressor="llm")
    summary = run_eval("recomp", f"jsonl:{data}", tmp_path / "out", ctx, progress=False)
    assert summary["em"] == 100.0 and summary["compressor"] == "llm:fake:recomp-eval"
    assert summary["config"]["recomp_compressor"] == "llm"
    assert summary["counters"]["summary_words"]["mean"] == 5.0
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert record["trajectory"][0]["compressor"] == "llm:fake:recomp-eval"
    words = sum(len(text.split()) for _, text in PASSAGES)
    assert record["counters"] == {"document_words": words, "summary_words": 5, "invalid_outputs": 0}
    from hoprag.eval.html_report import render_html

    page = render_html([tmp_path / "out"])  # the trajectory view shows the compressor and what it wrote
    assert "llm:fake:recomp-eval" in page and "Neil Peart wrote Rush&#x27;s lyrics." in page


def test_extractive_selection_keeps_the_top_sentences_in_their_order():
    sentences = recomp.split_sentences([{"text": t} for _, t in PASSAGES])
    assert sentences == ["Rush is a Canadian rock band.", "It released Counterparts in 1993.",
                         "Neil Peart was the drummer of Rush.", "He wrote most of its lyrics."]
    assert recomp.top_sentences(sentences, [0.1, 0.4, 0.9, 0.2], k=2) == "It released Counterparts in 1993. Neil Peart was the drummer of Rush."
    assert recomp.top_sentences(sentences[:2], [0.0, 1.0], k=5) == " ".join(sentences[:2])
    # FlashRAG's split keeps an initial's period inside the sentence and drops fragments of 5 characters or fewer.
    assert recomp.split_sentences([{"text": "J. R. R. Tolkien wrote it. Yes. Then more text."}]) == [
        "J. R. R. Tolkien wrote it.", "Then more text."]


# --- the checkpoint code paths, on tiny random models made here (no download) -----------------------------------

def checkpoint_libraries() -> tuple[Any, Any]:
    """transformers and torch, or the test is skipped (they are optional dependencies)."""
    reason = "transformers, torch and tokenizers are needed to test the checkpoint paths"
    pytest.importorskip("tokenizers", reason=reason)
    return pytest.importorskip("transformers", reason=reason), pytest.importorskip("torch", reason=reason)


def word_tokenizer(transformers: Any, folder) -> int:
    """A word-level fast tokenizer over the test's words, saved where AutoTokenizer finds it; its vocabulary size."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    words = {w for text in [*(t for _, t in PASSAGES), "Question: Document: Summary: Who wrote Rush's lyrics?"]
             for w in text.replace(":", " : ").replace("?", " ? ").replace(".", " . ").replace("'", " ' ").split()}
    vocab = {w: i for i, w in enumerate(["<pad>", "</s>", "<unk>", *sorted(words)])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>",
                                         unk_token="<unk>").save_pretrained(folder)
    return len(vocab)


def test_the_t5_path_feeds_the_generator_its_summary_with_flashrags_lengths(tmp_path, monkeypatch):
    transformers, torch = checkpoint_libraries()
    folder = tmp_path / "tiny-t5"
    size = word_tokenizer(transformers, folder)
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=size, d_model=16, d_ff=32, d_kv=8, num_layers=1, num_decoder_layers=1,
                                   num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    transformers.T5ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer, model, _ = recomp._abstractive(str(folder))
    seen: dict[str, int] = {}
    generate = model.generate

    def spy(**inputs):
        seen.update(input_tokens=inputs["input_ids"].shape[1], max_length=inputs["max_length"])
        outputs = generate(**{**inputs, "max_length": 8})  # a random model never stops: 8 tokens keep the test quick
        seen["text"] = tokenizer.batch_decode(outputs, skip_special_tokens=True, clean_up_tokenization_spaces=False)[0]
        return outputs

    monkeypatch.setattr(model, "generate", spy)
    ctx, _, generator = setup(compressor_or_generator("unused"), "recomp-t5", recomp_checkpoint=str(folder))
    result = run_question("recomp", "Who wrote Rush's lyrics?", ctx)
    step = result["trajectory"][0]
    assert step["compressor"] == f"abstractive:{folder}" and step["observation"] == seen["text"]
    assert generator.prompts == [RECOMP_GENERATE.format(documents=seen["text"], question="Who wrote Rush's lyrics?")]
    assert seen["max_length"] == 512 and seen["input_tokens"] < 1024
    # A long input is cut to the compressor's 1024 tokens.
    long = [{"id": "x", "title": "t", "text": "Rush " * 3000}]
    recomp.abstractive_compress(str(folder), "Who?", long)
    assert seen["input_tokens"] == 1024


def test_the_contriever_path_keeps_five_sentences_in_order(tmp_path):
    transformers, torch = checkpoint_libraries()
    folder = tmp_path / "tiny-bert"
    size = word_tokenizer(transformers, folder)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=size, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, max_position_embeddings=300, pad_token_id=0)
    transformers.BertModel(config).save_pretrained(folder)
    documents = [{"id": str(i), "title": "Rush", "text": " ".join(f"Rush released Counterparts {i}{j}." for j in range(2))}
                 for i in range(4)]
    sentences = recomp.split_sentences(documents)
    summary = recomp.extractive_compress(str(folder), "Who wrote Rush's lyrics?", documents)
    assert len(sentences) == 8 and len(set(sentences)) == 8
    # Five of the eight sentences, as a subsequence of the split: their order kept.
    kept = [s for s in sentences if s in summary]
    assert len(kept) == 5 and summary == " ".join(kept)


def test_recomp_is_exported_drawn_and_on_the_cli():
    from pathlib import Path

    assert "recomp" in METHODS and "recomp" in DIAGRAMS
    graphs = json.loads((Path(__file__).resolve().parents[1] / "langgraph.json").read_text())["graphs"]
    assert graphs["recomp"] == "./hoprag/graphs/recomp.py:graph"
    drawn = mermaid("recomp")
    assert "compress" in drawn and "generate" in drawn and "concise_answer" in drawn
    assert method_counters("recomp", {"trajectory": [{"compressor": "x", "document_words": 7, "observation": "a b"}]}) == {
        "document_words": 7, "summary_words": 2, "invalid_outputs": 0}


def test_ask_answers_with_the_llm_compressor_and_paper_without_weights_fails_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    from .openai_stub import start_stub

    def hoprag(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hoprag.cli", *args], capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, **env))

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": str(i), "title": t, "text": x}) for i, (t, x) in enumerate(PASSAGES)))
    assert hoprag("index", "build", "recomp-tiny", "--source", f"jsonl:{corpus}").returncode == 0
    stub = start_stub()
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{stub.server_port}/v1", "OPENAI_API_KEY": "x", "HF_HUB_OFFLINE": "1",
           "HF_HOME": str(tmp_path / "no-hf-home")}
    ask = ("ask", "Who wrote Rush's lyrics?", "--index", "recomp-tiny", "--retriever", "bm25", "--llm", "openai:stub",
           "--method", "recomp")
    try:
        missing = hoprag(*ask, "--preset", "paper", **env)
        answered = hoprag(*ask, "--preset", "paper", "--option", "recomp_compressor=llm", **env)
    finally:
        stub.shutdown()
    assert missing.returncode != 0 and "Traceback" not in missing.stdout + missing.stderr
    errors = [line for line in missing.stderr.splitlines() if "fangyuan/hotpotqa_abstractive" in line]
    assert len(errors) == 1 and "recomp_compressor=llm" in errors[0], missing.stderr
    assert answered.returncode == 0 and "Answer:" in answered.stdout, answered.stderr
