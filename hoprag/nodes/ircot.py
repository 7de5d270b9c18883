"""IRCoT (Trivedi et al.): retrieve with the last chain-of-thought sentence, collect the paragraphs (at
most 15, no duplicates), generate the next sentence from them, until an answer or 10 sentences.

`ircot_style=flashrag` runs FlashRAG's IRCOTPipeline in the same nodes: its one-shot prompt, one thought per call cut
at its first period or newline, every paragraph kept (ordered as FlashRAG orders them), and the chain ended by a
thought with "So the answer is:" or after `max_sentences` thoughts (FlashRAG's max_iter). The prompt goes as plain
text with the thoughts so far appended, as FlashRAG sends it to a vLLM or Hugging Face model (enable_chat=False);
`ircot_style=flashrag-chat` sends it as FlashRAG does to an OpenAI endpoint: chat messages, the thoughts so far as
an earlier assistant turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from hoprag.context import Context, context_of
from hoprag.llm import call_llm, resolve_spec, token_codec
from hoprag.nodes.cot import CoTState, close_cot_step, generate_step, sentence_cap_reached
from hoprag.nodes.reasoner import after_answer
from hoprag.nodes.retrieve import search
from hoprag.prompts.ircot_flashrag import (
    ANSWER_PREFIX,
    IRCOT_SYSTEM,
    IRCOT_USER,
    REFERENCE,
    THOUGHT_STOP,
)


def ircot_query(state: CoTState) -> str:
    """q_1 is the question; q_t is the last generated sentence (NotesWriting Eq. 3)."""
    chain = state.get("chain") or []
    return chain[-1] if chain else state["question"]


def ircot_retrieve(state: CoTState, runtime: Any = None) -> dict[str, Any]:
    ctx = context_of(runtime)
    query = ircot_query(state)
    documents = [d.to_dict() for d in search(ctx, query)]
    pending = {"kind": "search", "query": query, "argument": query, "entity": ""}
    if flashrag_style(ctx):
        collected = flashrag_paragraphs(state.get("paragraphs") or [], documents)
    else:
        collected = list(state.get("paragraphs") or [])
        seen = {p["id"] for p in collected}
        for document in documents:  # retrieved paragraphs accumulate, without duplicates, up to the cap
            if document["id"] not in seen and len(collected) < (ctx.max_paragraphs or 15):
                collected.append(document)
                seen.add(document["id"])
    return {"pending": pending, "documents": documents, "paragraphs": collected,
            "retrievals": (state.get("retrievals") or 0) + 1}


def kept_retrieval(state: CoTState) -> dict[str, Any]:
    """Plain IRCoT: the step's record of what it retrieved, without the paragraphs the cap dropped, which the
    model never read (`retrieval_recall` counts the recorded titles); those are kept as `capped_titles`."""
    collected = {p["id"] for p in state.get("paragraphs") or []}
    documents = state.get("documents") or []
    kept = [d for d in documents if d["id"] in collected]
    record = {"retrieved_ids": [d["id"] for d in kept], "retrieved_titles": [d["title"] for d in kept]}
    if len(kept) < len(documents):
        record["capped_titles"] = [d["title"] for d in documents if d["id"] not in collected]
    return record


def make_ircot_reason(with_notes: bool):
    def ircot_reason(state: CoTState, runtime: Any = None) -> dict[str, Any]:
        """s_t = LM([D or O_t, x, s_<t]): one new sentence, or the answer."""
        ctx = context_of(runtime)
        if flashrag_style(ctx) and not with_notes:
            return flashrag_thought(state, ctx)
        # IRCoT's original code ends the chain at a sentence saying "answer is X" (`answer_is`).
        step, record, _ = generate_step(state, ctx, with_notes, answer_is=True)
        # With notes, the note writers read every retrieved page; without, the model reads the paragraphs kept.
        update = close_cot_step(state, step.sentence, problem=step.problem, **({} if with_notes else kept_retrieval(state)))
        update["calls"] = [record]
        if step.answer:
            update.update(answer=step.answer, finished_by="answer")
        return update

    return ircot_reason


def route_after_ircot_reason(state: CoTState, runtime: Any = None) -> str:
    ctx = context_of(runtime)
    if flashrag_style(ctx) and state.get("finished_by"):  # FlashRAG's chain ended: its answer is written (or empty)
        return "read" if ctx.ircot_reader else after_answer(ctx)
    answered = bool(state.get("answer"))
    if not answered and not sentence_cap_reached(state, ctx):
        return "retrieve"
    if ctx.ircot_reader:  # the reader answers at an <answer> and at the sentence cap alike
        return "read"
    return after_answer(ctx) if answered else "final_answer"


# ---------------------------------------------------------------- FlashRAG's IRCOTPipeline (ircot_style=flashrag)


def flashrag_style(ctx: Context) -> bool:
    return ctx.ircot_style in ("flashrag", "flashrag-chat")


def flashrag_paragraphs(collected: list[dict[str, Any]], documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """FlashRAG's IRCOTPipeline.run_batch: the question's documents as retrieved; after each later retrieval every
    document retrieved so far (no cap), each with its best score, sorted by that score ascending (`reverse=False`),
    so the best-scored paragraphs come last, nearest the question. A retriever without scores keeps each document's
    rank as its score (the first retrieved highest)."""
    if not collected:
        return list(documents)
    best: dict[str, dict[str, Any]] = {}
    for paragraph in [*collected, *documents]:
        scored = {**paragraph, "score": _score(paragraph, [*collected, *documents])}
        if paragraph["id"] not in best or scored["score"] > best[paragraph["id"]]["score"]:
            best[paragraph["id"]] = scored
    return sorted(best.values(), key=lambda p: p["score"])


def _score(paragraph: dict[str, Any], among: list[dict[str, Any]]) -> float:
    score = paragraph.get("score")
    if isinstance(score, (int, float)):
        return float(score)
    return -float(next(i for i, p in enumerate(among) if p is paragraph))  # unscored: earlier retrieved ranks higher


def flashrag_messages(state: CoTState) -> list[BaseMessage]:
    """FlashRAG's prompt to an OpenAI endpoint (`flashrag-chat`): the instruction and one-shot demonstration as the
    system prompt, the paragraphs, question and "Thought:" as the user prompt, and FlashRAG's `previous_gen` (the
    thoughts so far as generated, joined by spaces) as an assistant message, which the next thought answers in a new
    turn."""
    reply = previous_gen(state)
    return [SystemMessage(IRCOT_SYSTEM), HumanMessage(flashrag_user_prompt(state)), *([AIMessage(reply)] if reply else [])]


def flashrag_text(state: CoTState) -> str:
    """FlashRAG's prompt to a vLLM or Hugging Face model (`flashrag`, enable_chat=False): the system and user prompts
    joined by a blank line, as plain text without a chat template, then `previous_gen`."""
    return f"{IRCOT_SYSTEM}\n\n{flashrag_user_prompt(state)}{previous_gen(state)}"


def flashrag_cut_text(prompt: str, limit: int, encode: Callable[[str], list[Any]],
                      decode: Callable[[list[Any]], str]) -> str:
    """FlashRAG's PromptTemplate.truncate_prompt for a plain-text prompt: one of `limit` tokens or more keeps its
    first and last limit / 2 - 20 tokens, the middle dropped."""
    tokens = encode(prompt)
    if len(tokens) < limit:
        return prompt
    half = limit // 2 - 20
    return decode(tokens[:half]) + decode(tokens[-half:])


def flashrag_cut_messages(messages: list[BaseMessage], limit: int, encode: Callable[[str], list[Any]],
                          decode: Callable[[list[Any]], str]) -> list[BaseMessage]:
    """FlashRAG's truncate_prompt for chat messages: messages are kept in order while their tokens fit in `limit`;
    the first that does not fit keeps only its beginning, up to the limit, and the ones after it go."""
    kept: list[BaseMessage] = []
    used = 0
    for message in messages:
        tokens = encode(str(message.content))
        if used + len(tokens) <= limit:
            kept.append(message)
            used += len(tokens)
            continue
        kept.append(message.model_copy(update={"content": decode(tokens[:limit - used])}))
        break
    return kept


def previous_gen(state: CoTState) -> str:
    """FlashRAG's previous_gen: the thoughts so far as generated (with the space the model wrote before each, and
    the period or newline that ended it), joined by spaces; nothing where that is empty or one space."""
    joined = " ".join(state.get("generated") or [])
    return "" if joined in ("", " ") else joined


def flashrag_user_prompt(state: CoTState) -> str:
    reference = "".join(REFERENCE.format(title=p["title"], text=p["text"]) for p in state.get("paragraphs") or [])
    return IRCOT_USER.format(reference=reference, question=state["question"])


def flashrag_generated(text: Any, chat: bool = False) -> str:
    """One thought as FlashRAG's generator returns it. vLLM's (`flashrag`) stops at the first period or newline and
    keeps it (`include_stop_str_in_output`); the OpenAI generator's (`flashrag-chat`) reply ends before it, and
    FlashRAG appends a period (openai_generator.py). Never raises."""
    text = text if isinstance(text, str) else str(text)
    ends = [(text.find(stop), stop) for stop in THOUGHT_STOP if stop in text]
    if ends:
        index, stop = min(ends)
        text = text[:index] if chat else text[:index + len(stop)]
    return f"{text}." if chat else text


def parse_flashrag_thought(text: Any, chat: bool = False) -> str:
    """The thought FlashRAG's generator returns, without surrounding spaces: what the chain keeps and retrieves with."""
    return flashrag_generated(text, chat).strip()


def flashrag_answer(thoughts: list[str]) -> str:
    """FlashRAG's ircot_pred_parse over the thoughts joined by spaces: the text after the first "So the answer is:"
    (up to a second one), stripped; without it, the whole text."""
    prediction = " ".join(thoughts)
    return prediction.split(ANSWER_PREFIX)[1].strip() if ANSWER_PREFIX in prediction else prediction


def flashrag_thought(state: CoTState, ctx: Context) -> dict[str, Any]:
    """One iteration of FlashRAG's loop: a thought of at most `max_tokens` tokens from every paragraph so far. A
    thought with "So the answer is:", or the `max_sentences`-th thought (FlashRAG's max_iter), ends the chain with
    FlashRAG's answer. An empty thought is kept as a step; the next retrieval then uses the last thought written."""
    chat = ctx.ircot_style == "flashrag-chat"
    limit = ctx.max_input_tokens or 0
    # FlashRAG counts a vLLM or HF model's prompt with its tokenizer's encode, which adds the model's BOS.
    codec = token_codec(resolve_spec("reasoner", ctx), "reasoner", ctx, bos=not chat) if limit else None
    if chat:  # an endpoint cuts its stop strings from the reply, as OpenAI's does for FlashRAG
        messages = flashrag_messages(state)
        if codec:
            messages = flashrag_cut_messages(messages, limit, *codec)
        text, record, _ = call_llm("reasoner", messages, ctx, stop=THOUGHT_STOP)
    else:  # no backend stop: the thought is cut here, its period or newline kept, as vLLM keeps it
        prompt, max_tokens = flashrag_text(state), None
        if codec:
            prompt = flashrag_cut_text(prompt, limit, *codec)
            # FlashRAG's vLLM model is as long as the input limit (max_model_len), so the prompt and the thought
            # share it: a prompt just under the limit leaves fewer than max_tokens for the thought.
            max_tokens = max(1, min(ctx.max_tokens or 32, limit - len(codec[0](prompt))))
        text, record, _ = call_llm("reasoner", prompt, ctx, raw_text=True, max_tokens=max_tokens)
    generated = flashrag_generated(text, chat)
    thought = generated.strip()
    empty = not any(character.isalnum() for character in thought)
    update = close_cot_step(state, thought, problem="empty thought" if empty else "", **kept_retrieval(state))
    update["calls"] = [record.parsed(empty, "empty thought" if empty else "")]
    update["generated"] = [*(state.get("generated") or []), generated]
    iterations = len(state.get("trajectory") or []) + 1
    if ANSWER_PREFIX in thought or iterations >= (ctx.max_sentences or 2):
        update.update(answer=flashrag_answer(update["chain"]),
                      finished_by="answer" if ANSWER_PREFIX in thought else "cap")
    return update
