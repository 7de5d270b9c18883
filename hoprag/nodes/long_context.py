"""Long-context reading (ReaRAG's "in-context" baseline): the question's whole closed corpus in one prompt. The
corpus is the question's own paragraphs where the caller gives them (`hoprag eval` on HotpotQA, MuSiQue and 2Wiki:
the record's gold and distractor paragraphs, in the record's order), else the top `long_context_passages`
retrieved passages, best first. A corpus over the generator's window keeps its first paragraphs whole, then as
many words of the next one as fit; what was cut is recorded in the step and the call."""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict  # typing.TypedDict breaks the server's JSON schemas on 3.11

from hoprag.context import Context, context_of
from hoprag.llm import call_llm, context_window, count_tokens, resolve_spec
from hoprag.nodes.generate import first_line
from hoprag.nodes.reasoner import MESSAGE_OVERHEAD
from hoprag.nodes.retrieve import search
from hoprag.prompts.long_context import LONG_CONTEXT, PARAGRAPH, PARAGRAPH_SEPARATOR
from hoprag.state import RunState

EMPTY_GENERATION = "empty generation"


class LongContextInput(TypedDict):
    question: str
    # The question's own corpus, [{title, text}] (a dataset record's paragraphs); absent: retrieved passages.
    paragraphs: NotRequired[list[dict[str, Any]]]


class LongContextState(RunState, total=False):
    paragraphs: list[dict[str, Any]]


def corpus_text(paragraphs: list[dict[str, Any]]) -> str:
    return PARAGRAPH_SEPARATOR.join(PARAGRAPH.format(title=p.get("title", ""), text=p.get("text", ""))
                                    for p in paragraphs)


def prompt_budget(ctx: Context, spec: str) -> int:
    """The prompt's token budget: the generator's window (`context_window`, else the provider's n_ctx) less the
    output tokens and the chat template's."""
    return context_window(spec, ctx) - (ctx.max_tokens or 0) - MESSAGE_OVERHEAD


def fit_corpus(question: str, paragraphs: list[dict[str, Any]], ctx: Context) -> tuple[str, list[dict[str, Any]], int]:
    """The prompt over as much of the corpus as fits the budget, the paragraphs it holds (the last one possibly
    cut), and the tokens cut. Whole paragraphs are kept from the front (binary search on their number), then the
    words of the next one that still fit."""
    spec = resolve_spec("generator", ctx)
    budget = prompt_budget(ctx, spec)

    def prompt(kept: list[dict[str, Any]]) -> str:
        return LONG_CONTEXT.format(context=corpus_text(kept), query=question)

    def fits(kept: list[dict[str, Any]]) -> bool:
        return count_tokens(spec, "generator", ctx, prompt(kept)) <= budget

    full = prompt(paragraphs)
    full_tokens = count_tokens(spec, "generator", ctx, full)
    if full_tokens <= budget:
        return full, list(paragraphs), 0
    low, high = 0, len(paragraphs) - 1  # the most whole paragraphs that fit lie in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(paragraphs[:middle]) else (low, middle - 1)
    kept = list(paragraphs[:low])
    words = str(paragraphs[low].get("text", "")).split()
    shortest, longest = 0, len(words) - 1  # the most words of the next paragraph that fit
    while shortest < longest:
        middle = (shortest + longest + 1) // 2
        partial = {**paragraphs[low], "text": " ".join(words[:middle])}
        shortest, longest = (middle, longest) if fits([*kept, partial]) else (shortest, middle - 1)
    if shortest:
        kept.append({**paragraphs[low], "text": " ".join(words[:shortest]), "cut": True})
    text = prompt(kept)
    return text, kept, max(0, full_tokens - count_tokens(spec, "generator", ctx, text))


def long_context_read(state: LongContextState, runtime: Any = None) -> dict[str, Any]:
    """One generator call over the corpus, fitted to the window; the step records what was read and what was cut."""
    ctx = context_of(runtime)
    question = state["question"]
    given = [p for p in state.get("paragraphs") or [] if isinstance(p, dict)]
    corpus = given or [d.to_dict() for d in search(ctx, question, k=max(1, ctx.long_context_passages))]
    prompt, kept, cut_tokens = fit_corpus(question, corpus, ctx)
    text, record, _ = call_llm("generator", prompt, ctx)
    whole = sum(1 for p in kept if not p.get("cut"))
    cut_paragraphs = len(corpus) - whole
    step: dict[str, Any] = {
        "kind": "read" if given else "search", "corpus": "question" if given else "retrieval",
        "thought": text.strip(), "action": f"read[{len(kept)} of {len(corpus)} paragraphs]",
        "retrieved_titles": [p.get("title", "") for p in kept],
        "paragraphs": len(corpus), "cut_paragraphs": cut_paragraphs, "cut_tokens": cut_tokens,
        "observation": (f"Read {whole} of {len(corpus)} paragraphs whole" + (" and the start of one more" if whole < len(kept)
                        else "") + (f"; cut {cut_paragraphs} paragraph(s), {cut_tokens} tokens, to fit the window."
                                    if cut_paragraphs else "; nothing cut."))}
    if not given:
        step.update(query=question, argument=question, entity="", retrieved_ids=[p.get("id", "") for p in kept])
    if not text.strip():
        step["problem"] = EMPTY_GENERATION
    call = {**record.parsed(not text.strip(), EMPTY_GENERATION if not text.strip() else ""),
            **({"cut_tokens": cut_tokens} if cut_tokens else {})}
    return {"answer": first_line(text), "finished_by": "generate", "trajectory": [step], "calls": [call]}


def counters(result: dict[str, Any]) -> dict[str, int]:
    """Long-context reading's counters for `hoprag eval`: the corpus's paragraphs, those cut (not read whole) and the
    tokens cut to fit the window, and invalid (empty) generations."""
    trajectory = result.get("trajectory") or []
    return {"paragraphs": sum(int(step.get("paragraphs") or 0) for step in trajectory),
            "cut_paragraphs": sum(int(step.get("cut_paragraphs") or 0) for step in trajectory),
            "cut_tokens": sum(int(step.get("cut_tokens") or 0) for step in trajectory),
            "invalid_outputs": int(result.get("invalid_outputs") or 0)}
