"""The runtime `Context` of every hoprag graph (LangGraph `context_schema`).

Every field carries a description, so LangGraph Studio renders a form. Model specs left empty fall
back, per role, to `HOPRAG_<ROLE>_LLM`, then to `llm`, then to `HOPRAG_LLM`, then to the embedded default.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from hoprag.errors import HopragError
from hoprag.graphs import METHOD_METADATA, reads_pages  # the method table: no hoprag import of its own

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
    notes_llm: str | None = _describe(None, "Model spec of the note writer (NotesWriting; Infogent's Extractor).")
    summarizer_llm: str | None = _describe(
        None, "Model spec of the summarizer (ReSP; Search-o1's Reason-in-Documents; Infogent's Aggregator).")
    generator_llm: str | None = _describe(None, "Model spec of the final answer generator.")
    answerer_llm: str | None = _describe(
        None, "Model spec of ReaRAG's RAG-engine answer model (it answers each search from the top passages) and of "
        "SearChain's LLM reader."
    )
    judge_llm: str | None = _describe(
        None, "Model spec of the evaluation judge (hoprag eval --judge); no method calls it."
    )
    preset: Literal["paper", "small", "flashrag"] = _describe(
        "paper",
        "paper: the paper's prompts, parameters and control flow, nothing added. small: the adaptations for "
        "small local models, each a named option below that you can set back. flashrag: the methods FlashRAG's "
        "benchmark runs (rag, ircot, flare, iter-retgen, self-ask, sure, recomp, replug, self-rag, rearag) with "
        "FlashRAG's settings, no adaptation on. Options left empty come from the preset.",
    )
    index: str = _describe("demo", "Name of the hoprag index to retrieve from (see `hoprag index list`).")
    retriever: str = _describe(
        "auto",
        "Retriever over the index: dense (the index's embedder), bm25, hybrid (RRF of both), or auto: dense "
        "where the index has dense vectors, else bm25 (with HOPRAG_RETRIEVER_URL set: that retrieval server). "
        "wikipedia: the live MediaWiki API, whole pages as Markdown (needs network). Also an index name, a "
        "registered retriever's name (hoprag.retrievers.register_retriever), an http(s) retrieval server URL "
        "(FlashRAG / Search-R1 /retrieve) or py:MODULE:ATTR (a LangChain retriever); the last two are not "
        "index-based. A served graph accepts only the server URLs it was started with, and no py: path.",
    )
    k: int | None = _describe(None, "Documents retrieved per search (top-k); the preset sets 5 for most methods (docs/presets.md lists each). FuRePA retrieves one more than its evidence holds, and ignores it.")
    pages: bool | None = _describe(
        None,
        "Group retrieved passages by title into one Markdown page per title. Each method declares what it "
        "reads: NotesWriting and ReAct read pages, ReSP and standard RAG read passages.",
    )
    max_steps: int | None = _describe(
        None, "Step cap: ReAct family T, steps before a final answer is forced (paper 25, small 6); ReaRAG's step bound (paper 15, small 8); "
        "Search-o1's reasoner generations (MAX_TURN, 15); Infogent's Navigator replies (paper 30, small 10)."
    )
    notes_mode: Literal["parallel", "iterative"] = _describe(
        "parallel",
        "NotesWriting: one independent note per document in parallel, or iterative notes that each see "
        "the notes written before them (ReNAct).",
    )
    max_iterations: int | None = _describe(
        None, "Iteration cap of ReSP (its paper: 3) and FuRePA (its paper: T = 6); SearChain's rounds (its code: 5); "
        "ChatCoT's reasoning hops before the answer is asked for (its code's max_hop: 5).")
    max_sentences: int | None = _describe(
        None, "IRCoT / FLARE: reasoning sentences (steps) before the answer is asked for (IRCoT's 10)."
    )
    max_paragraphs: int | None = _describe(None, "IRCoT: cap on the paragraphs collected across steps (IRCoT's 15).")
    paragraph_words: int | None = _describe(None, "IRCoT / FLARE: each paragraph cut to this many words in the prompt (350).")
    ircot_reader: bool | None = _describe(
        None, "IRCoT: answer with a separate reader call over the collected paragraphs (IRCoT QA), not the chain's <answer>."
    )
    rag_prompt: Literal["single", "flashrag"] | None = _describe(
        None, "Standard RAG's prompt. single (empty): FlashRAG's standard prompt text as one user message, documents "
        "'Doc i (Title: t) text', up to 48 output tokens, the answer the reply's first line. flashrag: as FlashRAG's "
        "code sends it: its system prompt verbatim (with the documents 'Doc i(Title: t) text'), the user prompt "
        "'Question: ...', max_tokens output tokens, the answer the whole reply.",
    )
    ircot_style: Literal["figure4", "flashrag", "flashrag-chat"] | None = _describe(
        None, "IRCoT: which IRCoT runs. figure4 (empty): the NotesWriting paper's Figure 4 few-shot prompt with <s> steps "
        "and an <answer>. flashrag: FlashRAG's IRCOTPipeline: its one-shot 2WikiMultihopQA prompt, one thought per call "
        "stopped at its first period or newline, every retrieved paragraph kept, the chain ended by a thought with "
        "'So the answer is:' or after max_sentences thoughts, the answer the text after that phrase (else every thought); "
        "the prompt is plain text without the chat template, the thoughts so far appended, as FlashRAG sends it to a "
        "vLLM or Hugging Face model. flashrag-chat: the same as chat messages, the thoughts so far an earlier assistant "
        "turn, as FlashRAG sends it to an OpenAI endpoint.",
    )
    max_input_tokens: int | None = _describe(
        None, "IRCoT's flashrag styles: FlashRAG's generator_max_input_len. A longer prompt is cut as FlashRAG cuts it: "
        "plain text keeps its first and last max_input_tokens / 2 - 20 tokens; chat messages are kept in order until "
        "the budget is spent, the last one cut at its end. Counted with the model file's tokenizer (local, local-server), "
        "estimated at 4 characters a token for an endpoint. Empty: no cut.",
    )
    flare_theta: float | None = _describe(None, "FLARE: retrieve when any token of the look-ahead sentence has probability below this (0.8).")
    flare_beta: float | None = _describe(None, "FLARE: the query is the look-ahead sentence without tokens below this probability (0.4).")
    notes_accumulate: bool | None = _describe(
        None,
        "IRCoT / FLARE with notes: the notes of earlier retrievals stay in the reasoner's prompt, and the note writer "
        "gets them as its Previous Context (the notes prompt's 'already extracted'). paper: no (Eq. 10-11: the notes "
        "O_t of each retrieval replace the earlier ones, and the writer gets no earlier notes); yes reads the paper's "
        "'accumulating only the most relevant information at each reasoning step' (small).",
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
    search_entity_and_query: bool | None = _describe(
        None, "ReAct family, small: a search[entity; query] retrieves with the entity and the query joined ('entity "
        "query') and the note writer gets the whole 'entity; query'. Off (paper): it retrieves with the entity alone and "
        "the note writer gets the query (003, Step 2 and Algorithm 1); a search without an entity retrieves with its query.",
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
        "official one (whose 'For yes, or no answer, only answer it short' can turn a named answer into 'Yes').",
    )
    rearag_finish_on_repeat: bool | None = _describe(
        None, "ReaRAG, small: a search that still repeats an earlier one after `resample_repeated_queries` ends the chain "
        "with the forced finish instead of running again (the greedy model then repeats it to the step bound).",
    )
    rearag_forced_finish: bool | None = _describe(
        None, "ReaRAG, small: at the step bound without `finish`, ask the reasoner once for it, else answer with the "
        "last observation. paper: off, the chain ends without an answer (ended by 'cap_no_answer', empty answer), "
        "as the official code does.",
    )
    constrained_actions: bool | None = _describe(
        None, "ReAct family, ReaRAG and FuRePA: the reasoner's turn is generated under a llama.cpp grammar (GBNF), so it "
        "is always one `Thought N:` line and one well-formed `Action N:` (search/finish), or FuRePA's `[Analysis]` line "
        "and `[Search]`/`[Answer]` line; local and local-server models only, other backends get the prompt alone. Off in "
        "both presets; a feature for models that often write malformed actions.",
    )
    stop_on_empty_step: bool | None = _describe(
        None, "IRCoT and FLARE: a step that generates neither a sentence nor an <answer> ends the chain, and the reader "
        "or the answer at the cap follows, as in both original codes (on in both presets). Off, such steps run on to "
        "twice the sentence cap; the same prompt then gives the same empty step.",
    )
    iter_retgen_rounds: int | None = _describe(
        None, "Iter-RetGen: rounds T of retrieve-then-generate; round t > 1 retrieves with the question and round t-1's "
        "generation, and the last round's generation is the answer (FlashRAG's iter_num 3 in both presets; set the T "
        "of the Iter-RetGen paper's row you compare with).",
    )
    self_ask_max_rounds: int | None = _describe(
        None, "Self-Ask: generation rounds (each writes a follow-up question or its intermediate answer) before the chain "
        "stops without 'So the final answer is:' (FlashRAG's Ret-Robust max_iter 5).",
    )
    self_ask_context_titles: bool | None = _describe(
        None, "Self-Ask, small: each passage in the prompt is 'Context{i}: {title}: {text}', the few-shot examples' "
        "layout; off (paper) it is 'Context{i}: {text}', as FlashRAG formats it.",
    )
    self_ask_answer_at_cap: bool | None = _describe(
        None, "Self-Ask, small: at the round cap without a final answer, the transcript is continued once with 'So the "
        "final answer is:' and its first line is the answer; off (paper) the answer is empty, as in FlashRAG.",
    )
    replug_weighting: Literal["flashrag", "softmax"] | None = _describe(
        None, "REPLUG: how the per-document next-token distributions are ensembled. flashrag (paper): weights are the "
        "retrieval scores divided by their sum and the log-probabilities are mixed, as FlashRAG's REPLUG logits "
        "processor does; softmax: weights are the softmax of the scores and the probabilities are mixed (the REPLUG "
        "paper's Eq. 1-2).",
    )
    top_logprobs: int | None = _describe(
        None, "REPLUG and Self-RAG: how many most likely tokens each generated position reports with its "
        "log-probability (an endpoint's top_logprobs; the embedded model ranks its whole vocabulary). vLLM serves at "
        "most 20 unless started with a larger --max-logprobs.",
    )
    self_rag_threshold: float | None = _describe(
        None, "Self-RAG: retrieve when p([Retrieval]) / (p([Retrieval]) + p([No Retrieval])) at the first generated "
        "token exceeds this (0.2, the official short-form setting); 0 always retrieves, 1 never.",
    )
    sure_unlisted_candidate: bool | None = _describe(
        None, "SuRe, small: a candidate reply without the '(a) xx, (b) yy' form is read as one candidate, its first "
        "line; off (paper) it gives no candidate and an empty answer, as in FlashRAG.",
    )
    long_context_passages: int = _describe(
        100, "Long-context reading: where the question has no closed corpus of its own (a dataset record's paragraphs), "
        "the top this many retrieved passages stand in for it; the prompt is then cut to the generator's window.",
    )
    furepa_n: int | None = _describe(None, "FuRePA: candidate plans per iteration (5).")
    furepa_tp0: float | None = _describe(None, "FuRePA: initial sampling temperature (paper preset 1.0, small 0.2).")
    furepa_dtp: float | None = _describe(None, "FuRePA: temperature raise when the filter leaves no query (paper 0.5, small 0.8).")
    furepa_theta: float | None = _describe(None, "FuRePA: share of answer plans that ends the loop (0.6).")
    furepa_eps: float | None = _describe(None, "FuRePA: DBSCAN eps over bag-of-words query vectors (2).")
    furepa_raise_cap: int | None = _describe(
        None, "FuRePA: a query filter that leaves no query raises the temperature. 0 (paper, §3.2.2): the raise ends the "
        "iteration and counts toward T, with no cap. N > 0 (small: 2): the same iteration plans again, at most N times, "
        "then the answer is forced.",
    )
    furepa_plan_assessor: bool | None = _describe(
        None, "FuRePA: the plan assessor (vote, query filter, scorer); off is the paper's 'w/o PA' ablation (one sample)."
    )
    furepa_scorer: str | None = _describe(
        None, "FuRePA: folder of a query scorer trained by `hoprag furepa train-scorer`; empty: the training-free stand-in."
    )
    search_o1_max_searches: int | None = _describe(
        None, "Search-o1: searches per question (MAX_SEARCH_LIMIT, 10 for multi-hop QA); a search past it gets the "
        "official 'The maximum search limit is exceeded' in place of results.",
    )
    search_o1_invalid_feedback: bool | None = _describe(
        None, "Search-o1, small: after a turn with malformed special tokens (a begin token with no end, an empty query, "
        "...) the reasoning goes on with a note saying what was wrong; off (paper) the chain ends there, as the "
        "official loop does. Either way the turn counts as an invalid output.",
    )
    search_o1_unboxed_answer: bool | None = _describe(
        None, "Search-o1, small: a final turn without \\boxed{} is answered from its last 'answer is ...' or last line; "
        "off (paper) it has no answer, as the official evaluation reads only \\boxed{}.",
    )
    searchain_reader: Literal["llm", "dpr"] | None = _describe(
        None, "SearChain: the reader that verifies each Chain-of-Query node from its top-1 passage. 'dpr': the paper's "
        "DPR reader (facebook/dpr-reader-multiset-base; needs transformers, torch and the weights in the Hugging Face "
        "cache); 'llm' (both presets): the answerer role reads the passage and answers or says it cannot.",
    )
    infogent_iterations: int | None = _describe(
        None, "Infogent: the iterations its Aggregator is told it has (num_iterations: 15 for FRAMES, 10 for FanOutQA); "
        "the Navigator's reply cap is max_steps.",
    )
    infogent_max_aggregated: int | None = _describe(
        None, "Infogent: most entries in the aggregated list; an ADD past it is skipped (REPLACE still works). 0 (paper): "
        "no limit, as the official code declares num_to_aggregate 5 but never enforces it; small: 5.",
    )
    infogent_lenient_json: bool | None = _describe(
        None, "Infogent, small: the Navigator's, Extractor's and Aggregator's JSON is also read inside code fences or "
        "prose, command names and ADD/REPLACE actions in any case and spacing, and extract finds a page by its title; "
        "off (paper) they are read as the official code reads them.",
    )
    recomp_compressor: Literal["abstractive", "extractive", "llm"] | None = _describe(
        None, "RECOMP: what compresses the retrieved documents before the generator reads them. 'abstractive' (paper): "
        "the released T5 compressor of recomp_checkpoint (input cut to 1024 tokens, summary up to 512); 'extractive': "
        "the released contriever sentence selector, the top 5 sentences in their order (both need transformers, torch "
        "and the weights); 'llm' (small): a stand-in for machines without the checkpoints, the summarizer role with "
        "the RECOMP paper's prompt for the checkpoint's dataset.",
    )
    recomp_checkpoint: str | None = _describe(
        None, "RECOMP: the compressor checkpoint, a Hugging Face id or a local folder; empty: the HotpotQA one of the "
        "chosen compressor (fangyuan/hotpotqa_abstractive or fangyuan/hotpotqa_extractive_compressor, which FlashRAG "
        "also runs on 2Wiki); fangyuan/nq_abstractive_compressor for NQ. The LLM compressor takes the prompt of the "
        "checkpoint's dataset (NQ/TQA: a 2-sentence summary; otherwise HotpotQA's reasoning chain).",
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




def context_of(runtime: Any) -> Context:
    """The run's context with its preset applied; LangGraph passes None when the caller gave none."""
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    if ctx is None:
        ctx = Context()
    elif isinstance(ctx, dict):
        ctx = Context(**ctx)
    return ctx.resolved(graph_method())
