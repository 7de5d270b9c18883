"""The runtime `Context` of every hoprag graph (LangGraph `context_schema`).

Every field carries a description, so LangGraph Studio renders a form. Model specs left empty fall
back, per role, to `HOPRAG_<ROLE>_LLM`, then to `llm`, then to `HOPRAG_LLM`, then to the embedded default.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from hoprag.errors import HopragError

# "judge" is the evaluation judge of `hoprag eval --judge`; no method calls it, so its spec never
# changes what a method does (ReSP's sufficiency judge is the paper's Reasoner).
ROLES = ("reasoner", "notes", "summarizer", "generator", "answerer", "judge")
Role = Literal["reasoner", "notes", "summarizer", "generator", "answerer", "judge"]
METHOD_ROLES = ROLES[:-1]  # the roles a method may call


def _describe(default: Any, description: str) -> Any:
    return field(default=default, metadata={"description": description})


@dataclass(kw_only=True)
class Context:
    """Options of one run: models per role, retrieval, and the method's loop limits."""

    llm: str | None = _describe(
        None,
        "Model spec for every role that has no spec of its own: 'local:qwen2.5-coder-1.5b' (embedded "
        "default), 'local:<file.gguf>', 'local-server:<name>', 'openai:<model>' (honours OPENAI_API_KEY "
        "and OPENAI_BASE_URL, so vLLM/Ollama work too).",
    )
    reasoner_llm: str | None = _describe(None, "Model spec of the reasoner (thoughts, actions, plans).")
    notes_llm: str | None = _describe(None, "Model spec of the note writer (NotesWriting).")
    summarizer_llm: str | None = _describe(None, "Model spec of the summarizer (ReSP).")
    generator_llm: str | None = _describe(None, "Model spec of the final answer generator.")
    answerer_llm: str | None = _describe(
        None, "Model spec of ReaRAG's RAG-engine answer model (it answers each search from the top passages)."
    )
    judge_llm: str | None = _describe(
        None, "Model spec of the evaluation judge (hoprag eval --judge); no method calls it."
    )
    preset: Literal["paper", "small"] = _describe(
        "paper",
        "paper: the paper's prompts, parameters and control flow, nothing added. small: the adaptations for "
        "small local models, each a named option below that you can set back. Options left empty come "
        "from the preset.",
    )
    index: str = _describe("demo", "Name of the hoprag index to retrieve from (see `hoprag index list`).")
    retriever: Literal["auto", "dense", "bm25", "hybrid", "wikipedia"] = _describe(
        "auto",
        "Retriever over the index: dense (Chroma + E5 embedder), bm25, hybrid (RRF of both), or auto: dense "
        "where the index has dense vectors, else bm25. wikipedia: the live MediaWiki API, whole pages as "
        "Markdown (the NotesWriting papers' setting; needs network; the index is not used).",
    )
    k: int | None = _describe(None, "Documents retrieved per search (top-k); preset: 5, ReaRAG 3 (FuRePA retrieves one more than its evidence holds, and ignores it).")
    pages: bool | None = _describe(
        None,
        "Group retrieved passages by title into one Markdown page per title. Each method declares what it "
        "reads: NotesWriting and ReAct read pages, ReSP and standard RAG read passages.",
    )
    max_steps: int | None = _describe(
        None, "Step cap: ReAct family T, steps before a final answer is forced (paper 25, small 6); ReaRAG's step bound (paper 15, small 8)."
    )
    notes_mode: Literal["parallel", "iterative"] = _describe(
        "parallel",
        "NotesWriting: one independent note per document in parallel, or iterative notes that each see "
        "the notes written before them (ReNAct).",
    )
    max_iterations: int | None = _describe(None, "Iteration cap of ReSP (its paper: 3) and FuRePA (its paper: T = 6).")
    max_sentences: int | None = _describe(
        None, "IRCoT / FLARE: reasoning sentences (steps) before the answer is asked for (IRCoT's 10)."
    )
    max_paragraphs: int | None = _describe(None, "IRCoT: cap on the paragraphs collected across steps (IRCoT's 15).")
    paragraph_words: int | None = _describe(None, "IRCoT / FLARE: each paragraph cut to this many words in the prompt (350).")
    ircot_reader: bool | None = _describe(
        None, "IRCoT: answer with a separate reader call over the collected paragraphs (IRCoT QA), not the chain's <answer>."
    )
    flare_theta: float | None = _describe(None, "FLARE: retrieve when any token of the look-ahead sentence has probability below this (0.8).")
    flare_beta: float | None = _describe(None, "FLARE: the query is the look-ahead sentence without tokens below this probability (0.4).")
    notes_accumulate: bool | None = _describe(
        None,
        "IRCoT / FLARE with notes: the notes of earlier steps stay in the prompt. paper: no (Eq. 10-11: the "
        "step's notes O_t replace the documents); small: yes.",
    )
    rearag_engine_prompt: Literal["comparison", "strict"] | None = _describe(
        None,
        "ReaRAG's RAG-engine prompt: 'comparison' (the one its released training data was built with) or "
        "'strict' (a later revision: answer only from the context).",
    )
    rearag_invalid_retries: int | None = _describe(
        None, "ReaRAG: invalid steps regenerated per question before it gives up (the official 20)."
    )
    rearag_invalid_feedback: bool | None = _describe(
        None, "small: a regenerated ReaRAG step sees why the last output was invalid (paper: a silent resample)."
    )
    rearag_lenient_actions: bool | None = _describe(
        None, "ReaRAG, small: also read `Action N: search {\"query\": ...}`, a bare parameters object, a keyword call (`search(query=\"...\")`) and a value with a stray quote as a call."
    )
    rearag_prose_actions: bool | None = _describe(
        None, "ReaRAG, small: an action written as a sentence ('Action 2: Search for the Tamworth manifesto.') is a "
        "search for its words after 'search for'."
    )
    refuse_repeated_queries: bool | None = _describe(
        None, "ReAct family and ReaRAG: a search that repeats an earlier one is not run; its observation says so. Off in both presets (measured in small: the greedy reasoner asked the refused query again)."
    )
    grounded_notes: bool | None = _describe(
        None, "NotesWriting, small: drop a YES note unless half of its content words occur in the page it was written from."
    )
    partial_notes: bool | None = _describe(
        None, "NotesWriting, small: the note writer's prompt leaves out Figure 5's rule 'If you don't know how to "
        "answer the query - start your answer with NO#', so a page holding part of the answer is noted.",
    )
    notes_fallback_segments: int | None = _describe(
        None, "NotesWriting (ReNAct, IRCoT/FLARE + notes), small: when the writer says NO# for every page of a step, the "
        "observation (the step's notes) is this many top BM25 segments of those pages for the query instead of 'No "
        "relevant information' (0: off).",
    )
    resample_repeated_queries: int | None = _describe(
        None, "ReAct family and ReaRAG, small: a search that repeats an earlier one is sampled again (temperature 0.7, a new "
        "seed) up to this many times, to leave a greedy loop; a repeat left after that runs (0: off).",
    )
    search_question_first: bool | None = _describe(
        None, "ReAct family and ReaRAG: the first step searches the question itself, as IRCoT, FLARE and ReSP begin, with "
        "no reasoner call, written as the reasoner's own first turn; the reasoner starts from that observation. Off in both "
        "presets (measured on ReNAct and ReaRAG small: F1 -6.0 and -17.8).",
    )
    answer_from_notes: bool | None = _describe(
        None, "ReNAct, small: after a step that wrote notes, answer from the notes gathered so far (or 'unknown'); an "
        "answer the notes hold, that is more than the question's words, ends the run (the reasoner often searches on "
        "with the answer in its notes).",
    )
    plain_synthesis: bool | None = _describe(
        None, "ReAct family, small: the answer at the step cap comes from one user message that holds the question, the "
        "run as a plain transcript (each step's thought, search and what it found) and the notes; off (paper) the "
        "synthesis request follows the reasoner's own chat turns, after which small models go on in ReAct format and "
        "a thought ('I need to find ...') becomes the answer.",
    )
    rearag_greedy_answers: bool | None = _describe(
        None, "ReaRAG, small: the answer model (the RAG engine's answer and the concise answer) decodes greedily with short "
        "caps (128 and 32 tokens); off (paper) it samples as the official code does (temperature 0.95, top_p 0.7, up to 1024 "
        "tokens). The answer model follows this option alone: temperature, top_p and max_tokens set the reasoner.",
    )
    truncated_sampling: bool | None = _describe(
        None, "Embedded model and llama.cpp server, small: sampled calls keep llama.cpp's default truncation (top_k 40, "
        "top_p 0.95, min_p 0.05); off (paper) they sample the model's whole distribution (top_k 0, min_p 0, top_p 1 unless "
        "top_p is set), as the papers' APIs do.",
    )
    rearag_concise_long_only: bool | None = _describe(
        None, "ReaRAG, small: run the concise-answer call only for finish answers of more than 8 words."
    )
    rearag_shared_concise: bool | None = _describe(
        None, "ReaRAG, small: shorten a long finish answer with the prompt the other methods' concise step uses, not the "
        "official one (whose 'For yes, or no answer, only answer it short' made the 1.5B model answer 'Yes').",
    )
    rearag_finish_on_repeat: bool | None = _describe(
        None, "ReaRAG, small: a search that still repeats an earlier one after `resample_repeated_queries` ends the chain "
        "with the forced finish instead of running again (the greedy model then repeats it to the step bound).",
    )
    ircot_min_sentences: int | None = _describe(
        None, "IRCoT (and IRCoT + notes): the first this many steps must write a reasoning sentence, which becomes the "
        "next retrieval query: the step's prompt ends with an opened <s>, and an <answer> written with the sentence "
        "waits for a later step. 0 (both presets; measured, no gain with the 1.5B model): the paper's loop.",
    )
    constrained_actions: bool | None = _describe(
        None, "ReAct family, ReaRAG and FuRePA: the reasoner's turn is generated under a llama.cpp grammar (GBNF), so it "
        "is always one `Thought N:` line and one well-formed `Action N:` (search/finish), or FuRePA's `[Analysis]` line "
        "and `[Search]`/`[Answer]` line; local and local-server models only, other backends get the prompt alone. Off in "
        "both presets (measured on ReaRAG small: no invalid outputs, but F1 -10.4 from early finishes).",
    )
    stop_on_empty_step: bool | None = _describe(
        None, "IRCoT and FLARE: a step that generates neither a sentence nor an <answer> ends the chain, and the reader "
        "or the answer at the cap follows, as in both original codes (on in both presets). Off, such steps run on to "
        "twice the sentence cap; the same prompt then gives the same empty step.",
    )
    furepa_n: int | None = _describe(None, "FuRePA: candidate plans per iteration (5).")
    furepa_tp0: float | None = _describe(None, "FuRePA: initial sampling temperature (paper preset 1.0, small 0.2).")
    furepa_dtp: float | None = _describe(None, "FuRePA: temperature raise when the filter leaves no query (paper 0.5, small 0.8).")
    furepa_theta: float | None = _describe(None, "FuRePA: share of answer plans that ends the loop (0.6).")
    furepa_eps: float | None = _describe(None, "FuRePA: DBSCAN eps over bag-of-words query vectors (2).")
    furepa_max_raises: int | None = _describe(None, "FuRePA: temperature raises per iteration before the answer is forced (2).")
    furepa_plan_assessor: bool | None = _describe(
        None, "FuRePA: the plan assessor (vote, query filter, scorer); off is the paper's 'w/o PA' ablation (one sample)."
    )
    furepa_scorer: str | None = _describe(
        None, "FuRePA: folder of a query scorer trained by `hoprag furepa train-scorer`; empty: the training-free stand-in."
    )
    closed_step_tags: bool | None = _describe(
        None, "IRCoT / FLARE: close the unclosed <s> tags of the paper's few-shot examples (three: 11 <s>, 8 </s>) (small)."
    )
    temperature: float | None = _describe(
        None, "Sampling temperature of every LLM call (paper: the paper's, e.g. 0.7 for ReNAct; small: 0)."
    )
    top_p: float | None = _describe(
        None, "Nucleus sampling (top-p) of sampled calls; None leaves the runtime's default (llama.cpp's is 0.95). "
        "ReaRAG paper: 0.85, the official code's."
    )
    seed: int | None = _describe(
        0, "Sampling seed, for reproducible runs: each sampled call draws with a seed derived from it and the call's "
        "prompt, so steps sample independently; None leaves sampling unseeded."
    )
    reproducible: bool = _describe(
        False,
        "Embedded model: a prompt gives the same output whatever ran before it. The KV cache is reused only in "
        "whole 64-token blocks evaluated as one batch, since llama.cpp's arithmetic depends on the batch a token "
        "was evaluated in; costs re-processing up to 63 prompt tokens a call, and smaller batches.",
    )
    max_tokens: int | None = _describe(None, "Maximum tokens generated per LLM call (preset: 256; paper: ReSP 200, ReaRAG 1024).")
    concise_answer: bool | None = _describe(
        None, "small: shorten a final answer of more than 8 words with one generator call (ReAct family finish, IRCoT / FLARE answers, FuRePA's answer)."
    )
    answer_choices: bool | None = _describe(
        None, "small: a question that names its choices ('..., A or B?', or a yes/no question) gets one of them as its "
        "answer: when the final answer names none, one generator call (held to the choices by a grammar on the embedded "
        "model) picks the choice the draft answer and the run's evidence point to (every method, RAG and CoT too; not the "
        "ReAct family's synthesis at the cap)."
    )
    short_answer_instruction: bool | None = _describe(
        None, "small: tell the reasoner and generator that an answer is only the specific name, date, number or yes/no, never a sentence."
    )
    lenient_notes: bool | None = _describe(
        None, "small: a note without a YES/NO prefix counts as a note unless it reads as a refusal."
    )
    note_stop_sequences: bool | None = _describe(
        None, "small: stop the note writer at '#NO#' and '\\nContext:', where small models start to loop."
    )
    resp_on_repeat: Literal["retrieve", "replan", "end"] | None = _describe(
        None,
        "ReSP, a planned sub-question that repeats an earlier one. paper 'retrieve': the paper has no such check "
        "(its prompt alone asks for new sub-questions), so it is retrieved and the loop goes on until the judge "
        "says Yes or the cap; 'replan': ask the planner again, sampled, at most resp_replans times, then "
        "retrieve; small 'end': answer now.",
    )
    resp_replans: int = _describe(2, "ReSP 'replan': how often the planner is asked again after a repeat.")
    resp_local_input: Literal["memory", "documents"] | None = _describe(
        None,
        "ReSP local-pathway summarizer input: 'memory' (Table 4: the combined memory queues, which hold this "
        "round's global evidence) or 'documents' (§3.1: the retrieved documents too).",
    )
    resp_reader: bool | None = _describe(
        None,
        "small, ReSP: the generator also reads the passages retrieved over the iterations (the question's own first), "
        "before the memory queues; the 1.5B summarizer writes its own, often wrong, answer into the global evidence.",
    )
    context_window: int | None = _describe(
        None, "Prompt budget in tokens; defaults to the model's own window (local n_ctx, or 32768)."
    )
    window_headroom: float = _describe(
        0.25,
        "ReAct family: when the transcript no longer fits the window, the oldest observations are dropped until this "
        "share of the prompt budget is free, and stay dropped, so the next steps append to a kept prefix (KV-cache "
        "reuse) instead of each dropping one more and re-reading the transcript (0 <= share < 1; 0: drop one at a time). Not a method "
        "option: the papers' models never filled their windows.",
    )
    max_retries: int = _describe(2, "Retries of a failing LLM call before the run reports the error.")
    max_concurrency: int = _describe(
        8, "Upper bound on note writers running at once, applied by hoprag ask and eval (it becomes LangGraph's "
        "max_concurrency); a graph run through Studio, a server or LangChain takes max_concurrency from its run config.",
    )
    llm_cache: bool = _describe(
        False,
        "Serve repeated LLM calls (same model, messages and parameters) from the on-disk response cache; "
        "sampled calls (temperature > 0) are cached only under a fixed seed. `hoprag eval` turns it on.",
    )

    def __post_init__(self) -> None:
        if not 0.0 <= self.window_headroom < 1.0:
            raise HopragError(f"window_headroom is a share of the prompt budget, from 0 up to (not including) 1; "
                              f"got {self.window_headroom}")

    def resolved(self, method: str | None) -> Context:
        """This context with every option it leaves empty taken from its preset for `method`."""
        from hoprag.presets import preset_options

        filled = {k: v for k, v in preset_options(self.preset, method).items() if getattr(self, k) is None}
        if self.pages is None:
            from hoprag.graphs import reads_pages

            filled["pages"] = reads_pages(method)
        return replace(self, **filled) if filled else self

    def action_grammar(self, grammar: str) -> str | None:
        """`grammar` when `constrained_actions` is on, else None: the one switch every node's grammar passes."""
        return grammar if self.constrained_actions else None

    def with_options(self, **options: Any) -> Context:
        """A copy with the given options; None values keep the current value."""
        known = {f.name for f in fields(self)}
        unknown = set(options) - known
        if unknown:
            raise ValueError(f"unknown context option(s): {', '.join(sorted(unknown))}")
        return replace(self, **{k: v for k, v in options.items() if v is not None})


def given(value: Any, default: Any) -> Any:
    """`value` unless it is None: an option set to 0 means 0 (`value or default` would read it as unset)."""
    return default if value is None else value


def graph_method() -> str | None:
    """The method of the graph running this node: each compiled graph carries it in its metadata."""
    try:
        from langgraph.config import get_config

        return get_config().get("metadata", {}).get(METHOD_METADATA)
    except RuntimeError:  # called outside a graph run
        return None


METHOD_METADATA = "hoprag_method"


def context_of(runtime: Any) -> Context:
    """The run's context with its preset applied; LangGraph passes None when the caller gave none."""
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    if ctx is None:
        ctx = Context()
    elif isinstance(ctx, dict):
        ctx = Context(**ctx)
    return ctx.resolved(graph_method())
