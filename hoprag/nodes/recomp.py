"""RECOMP (Xu et al., ICLR 2024) as FlashRAG runs it: retrieve the top-k documents for the question, compress them
into a short text, and generate the answer from that text where standard RAG reads the documents.

Three compressors (`recomp_compressor`):
- `abstractive`: a released T5 compressor (FlashRAG's AbstractiveRecompRefiner: the input cut to 1024 tokens, the
  summary at most 512, greedy);
- `extractive`: a released contriever sentence selector (FlashRAG's ExtractiveRefiner: the documents split into
  sentences, the top 5 by inner product with the question, kept in their order);
- `llm`: hoprag's stand-in for machines without the checkpoints: the summarizer role with the prompt the RECOMP
  paper distilled the checkpoint from (Table 8).
transformers and torch are imported only when a checkpoint runs: they are optional dependencies."""

from __future__ import annotations

import functools
import os
import re
from typing import Any

from hoprag.context import Context, context_of
from hoprag.errors import RunUnavailableError
from hoprag.llm import call_llm, resolve_spec
from hoprag.nodes.generate import first_line
from hoprag.prompts.recomp import (
    COMPRESSOR_INPUT,
    LLM_COMPRESS_REASONING,
    LLM_COMPRESS_SUMMARY,
    RECOMP_GENERATE,
)
from hoprag.state import RunState

# The HotpotQA checkpoints: FlashRAG runs the abstractive one on HotpotQA and 2WikiMultihopQA (no 2Wiki checkpoint
# was released); carriex/recomp's README lists them and the NQ/TQA ones (fangyuan/nq_abstractive_compressor, ...).
ABSTRACTIVE_CHECKPOINT = "fangyuan/hotpotqa_abstractive"
EXTRACTIVE_CHECKPOINT = "fangyuan/hotpotqa_extractive_compressor"
INPUT_TOKENS = 1024  # FlashRAG's refiner_max_input_length
OUTPUT_TOKENS = 512  # FlashRAG's refiner_max_output_length (the official script's max_target_length)
TOP_SENTENCES = 5  # FlashRAG's refiner_topk
SENTENCE_TOKENS = 256  # FlashRAG's refiner_encode_max_length
# Sentence ends: after . ! ? unless the period ends a one-letter initial ("J. Smith"). FlashRAG writes
# (?<![A-Za-z]\.), which also refuses every word ending in a letter ("band. It"), so its "sentences" run on to a
# period after a digit or a bracket; the official compressor scores real sentences, so the \b is added.
SENTENCE_END = re.compile(r"(?<!\b[A-Za-z]\.)(?<=[.!?])\s+")
# A checkpoint of NQ or TriviaQA (fangyuan/nq_abstractive_compressor, FlashRAG's model/recomp_tqa_abs): its Table 8
# prompt is the 2-sentence summary; HotpotQA's is the reasoning chain.
SUMMARY_DATASETS = re.compile(r"(?<![a-z])(nq|tqa|triviaqa)(?![a-z])")
EMPTY_SUMMARY = "empty summary"
# What an LLM compressor may wrap its text in: a reasoning model's thinking, an echoed label of the prompt.
THINKING = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
ECHOED_LABEL = re.compile(r"^\s*(\**\s*(compressed documents?|summary|reasoning chain|compressed)\s*\**\s*:\s*)+",
                          re.IGNORECASE)


class RecompState(RunState, total=False):
    documents: list[dict[str, Any]]  # the retrieved documents the compressor reads
    summary: str  # the compressor's output: what the generator reads
    compressor: str  # which compressor wrote it, e.g. "abstractive:fangyuan/hotpotqa_abstractive"


def compressor_documents(documents: list[dict[str, Any]]) -> str:
    """The documents as FlashRAG gives them to a compressor: their texts without titles, one per line."""
    return "\n".join(d["text"] for d in documents)


def compressor_input(question: str, documents: list[dict[str, Any]]) -> str:
    """The T5 compressor's input (the official training script's format, FlashRAG's too)."""
    return COMPRESSOR_INPUT.format(question=question, documents=compressor_documents(documents))


def checkpoint_of(ctx: Context) -> str:
    """The checkpoint the run's compressor loads, or the LLM compressor stands in for."""
    if ctx.recomp_checkpoint:
        return ctx.recomp_checkpoint
    return EXTRACTIVE_CHECKPOINT if ctx.recomp_compressor == "extractive" else ABSTRACTIVE_CHECKPOINT


def llm_prompt_for(checkpoint: str) -> str:
    """Table 8's prompt for the checkpoint's dataset: NQ/TQA's 2-sentence summary, else HotpotQA's reasoning chain."""
    name = checkpoint.rstrip("/").rsplit("/", 1)[-1].lower()
    return LLM_COMPRESS_SUMMARY if SUMMARY_DATASETS.search(name) else LLM_COMPRESS_REASONING


def _transformers(compressor: str) -> Any:
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError as error:
        raise RunUnavailableError(f"recomp_compressor '{compressor}' needs transformers and torch (pip install 'hoprag[st]'); "
                          "or use recomp_compressor=llm") from error
    return transformers


def _hub_reachable(seconds: float = 3.0) -> bool:
    """Whether the Hugging Face hub (HF_ENDPOINT, or huggingface.co) accepts a connection within `seconds`."""
    import socket
    from urllib.parse import urlparse

    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    try:
        socket.create_connection((url.hostname or "", url.port or (443 if url.scheme == "https" else 80)), seconds).close()
    except OSError:
        return False
    return True


def _load(compressor: str, checkpoint: str, model_class: str) -> tuple[Any, Any, str]:
    """A checkpoint's tokenizer and model (on a GPU where there is one): from the Hugging Face cache or a local
    folder first, then downloaded (unless HF_HUB_OFFLINE is set or the hub is out of reach); else one clear line."""
    transformers = _transformers(compressor)
    import torch

    loader = getattr(transformers, model_class)
    error: Exception = RuntimeError("not found")
    for local_only in (True, False):
        # No download try where the hub is off or out of reach: its client retries for a minute before it fails.
        if not local_only and (os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
                               or not _hub_reachable()):
            break
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint, local_files_only=local_only)
            model = loader.from_pretrained(checkpoint, local_files_only=local_only)
        except Exception as caught:  # not in the cache, offline, no such repository, a broken download
            error = caught
            continue
        device = "cuda" if torch.cuda.is_available() else "cpu"
        return tokenizer, model.to(device).eval(), device
    raise RunUnavailableError(
        f"recomp_compressor '{compressor}' needs the {checkpoint} weights, which could not be loaded "
        f"({type(error).__name__}); download them where there is network (huggingface-cli download {checkpoint}) "
        "and copy the Hugging Face cache here, or set recomp_checkpoint to a local folder, or use "
        "recomp_compressor=llm") from error


@functools.lru_cache(maxsize=2)
def _abstractive(checkpoint: str) -> tuple[Any, Any, str]:
    return _load("abstractive", checkpoint, "AutoModelForSeq2SeqLM")


@functools.lru_cache(maxsize=2)
def _extractive(checkpoint: str) -> tuple[Any, Any, str]:
    return _load("extractive", checkpoint, "AutoModel")


def abstractive_compress(checkpoint: str, question: str, documents: list[dict[str, Any]]) -> str:
    """FlashRAG's AbstractiveRecompRefiner for one question: the input truncated to 1024 tokens, generate with
    max_length 512 (the checkpoint's own generation settings otherwise: greedy), special tokens skipped."""
    import torch

    tokenizer, model, device = _abstractive(checkpoint)
    inputs = tokenizer([compressor_input(question, documents)], return_tensors="pt", padding=True, truncation=True,
                       max_length=INPUT_TOKENS).to(device)
    with torch.no_grad():
        outputs = model.generate(**inputs, max_length=OUTPUT_TOKENS)
    return tokenizer.batch_decode(outputs, skip_special_tokens=True, clean_up_tokenization_spaces=False)[0]


def split_sentences(documents: list[dict[str, Any]]) -> list[str]:
    """FlashRAG's ExtractiveRefiner split (its initial rule fixed, see SENTENCE_END): the texts joined by spaces, cut
    at sentence ends, the sentences over 5 characters."""
    text = " ".join(d["text"] for d in documents)
    return [s.strip() for s in SENTENCE_END.split(text) if len(s.strip()) > 5]


def top_sentences(sentences: list[str], scores: list[float], k: int = TOP_SENTENCES) -> str:
    """The k best-scored sentences in their original order, joined by spaces (all of them when there are fewer)."""
    if len(sentences) <= k:
        return " ".join(sentences)
    best = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))[:k]
    return " ".join(sentences[i] for i in sorted(best))


def extractive_compress(checkpoint: str, question: str, documents: list[dict[str, Any]]) -> str:
    """FlashRAG's ExtractiveRefiner (the official run_extractive_compressor.py's contriever scoring): the question and
    each sentence mean-pooled (at most 256 tokens), scored by inner product, the top 5 kept."""
    import torch

    sentences = split_sentences(documents)
    if not sentences:
        return ""
    tokenizer, model, device = _extractive(checkpoint)

    def embed(texts: list[str]) -> Any:
        inputs = tokenizer(texts, padding=True, truncation=True, max_length=SENTENCE_TOKENS, return_tensors="pt").to(device)
        with torch.no_grad():
            hidden = model(**inputs)[0]
        mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(dim=1) / mask.sum(dim=1)

    scores = (embed([question]) @ embed(sentences).T)[0].tolist()
    return top_sentences(sentences, scores)


def llm_summary(text: str) -> str:
    """The LLM compressor's text: its reply without a reasoning model's <think> block or an echoed label
    ("Compressed documents:", "Summary:")."""
    return ECHOED_LABEL.sub("", THINKING.sub("", text)).strip()


def llm_compress(ctx: Context, question: str, documents: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The stand-in compressor: one summarizer call with Table 8's prompt of the checkpoint it replaces, up to the
    checkpoints' 512 output tokens. An empty text is an invalid output (the prompt asks for a summary); the
    generator then reads nothing, as after a checkpoint's empty summary."""
    prompt = llm_prompt_for(checkpoint_of(ctx)).format(question=question, documents=compressor_documents(documents))
    text, record, _ = call_llm("summarizer", prompt, ctx, max_tokens=OUTPUT_TOKENS)
    summary = llm_summary(text)
    return summary, record.parsed(not summary, "" if summary else EMPTY_SUMMARY)


def compressor_name(ctx: Context) -> str:
    """What the run's compressor is, as recorded: the kind and its checkpoint, or `llm:` and the summarizer's model."""
    if ctx.recomp_compressor == "llm":
        return f"llm:{resolve_spec('summarizer', ctx)}"
    return f"{ctx.recomp_compressor or 'abstractive'}:{checkpoint_of(ctx)}"


def recomp_compress(state: RecompState, runtime: Any = None) -> dict[str, Any]:
    """Compress the retrieved documents with the run's compressor; its output is the step's observation."""
    ctx = context_of(runtime)
    question, documents = state["question"], state.get("documents") or []
    calls: list[dict[str, Any]] = []
    if ctx.recomp_compressor == "llm":
        summary, record = llm_compress(ctx, question, documents)
        calls.append(record)
    elif ctx.recomp_compressor == "extractive":
        summary = extractive_compress(checkpoint_of(ctx), question, documents)
    else:
        summary = abstractive_compress(checkpoint_of(ctx), question, documents)
    name = compressor_name(ctx)
    step = {"thought": "", "kind": "search", "entity": "", "query": question, "argument": question,
            "action": f"retrieve[{question}]", "retrieved_ids": [d["id"] for d in documents],
            "retrieved_titles": [d["title"] for d in documents], "compressor": name,
            "document_words": sum(len(d["text"].split()) for d in documents), "observation": summary}
    if not summary.strip():
        step["problem"] = EMPTY_SUMMARY
    return {"summary": summary, "compressor": name, "trajectory": [step], "calls": calls}


def recomp_generate(state: RecompState, runtime: Any = None) -> dict[str, Any]:
    """The answer: FlashRAG's standard RAG prompt with the compressor's output in place of the documents."""
    ctx = context_of(runtime)
    prompt = RECOMP_GENERATE.format(documents=state.get("summary", ""), question=state["question"])
    text, record, _ = call_llm("generator", prompt, ctx)
    return {"answer": first_line(text), "finished_by": "generate", "calls": [record.to_dict()]}


def route_after_generate(state: RecompState, runtime: Any = None) -> str:
    """The end, or (small) the concise-answer / answer-choices step."""
    from hoprag.nodes.reasoner import after_answer

    return after_answer(context_of(runtime))


def counters(result: dict[str, Any]) -> dict[str, int]:
    """RECOMP's own counters for `hoprag eval`: the words the compressor read and wrote, and invalid outputs."""
    steps = [step for step in result.get("trajectory") or [] if step.get("compressor")]
    return {"document_words": sum(int(step.get("document_words") or 0) for step in steps),
            "summary_words": sum(len(str(step.get("observation") or "").split()) for step in steps),
            "invalid_outputs": int(result.get("invalid_outputs") or 0)}
