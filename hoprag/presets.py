"""Presets: which Context options a method runs with, as data.

- `paper`: the paper's prompts, parameters and control flow, nothing added.
- `small`: the adaptations that make the methods work on small local models. Each adaptation is a
  named Context option, so `--preset small` with one option set back (for example
  `concise_answer=False`) turns that one adaptation off.
- `flashrag`: FlashRAG's benchmark settings for the ten methods its table shares with hoprag, no adaptation on;
  another method asked for under it is an error (PARTIAL_PRESETS).

An option the caller sets explicitly always wins over the preset: preset options are the ones the
Context leaves as None. docs/presets.md lists every preset option with its reason (generated from REASONS).
"""

from __future__ import annotations

from typing import Any

PRESET_NAMES = ("paper", "small", "flashrag")

# The adaptations for small models, all off in `paper`. Keys are Context fields.
ADAPTATIONS_OFF: dict[str, Any] = {
    "concise_answer": False,
    "short_answer_instruction": False,
    "lenient_notes": False,
    "note_stop_sequences": False,
    "resp_on_repeat": "retrieve",
    "notes_accumulate": False,
    "closed_step_tags": False,
    "rearag_invalid_feedback": False,
    "rearag_lenient_actions": False,
    "grounded_notes": False,
    "rearag_concise_long_only": False,
    "partial_notes": False,
    "notes_fallback_segments": 0,
    "resample_repeated_queries": 0,
    "answer_from_notes": False,
    "rearag_shared_concise": False,
    "rearag_finish_on_repeat": False,
    "rearag_forced_finish": False,
    "constrained_actions": False,
    "search_entity_and_query": False,
    "rearag_greedy_answers": False,
    "truncated_sampling": False,
    "answer_choices": False,
    "plain_synthesis": False,
    "search_o1_invalid_feedback": False,
    "search_o1_unboxed_answer": False,
    "self_ask_context_titles": False,
    "self_ask_answer_at_cap": False,
    "sure_unlisted_candidate": False,
    "infogent_lenient_json": False,
}
ADAPTATIONS_ON: dict[str, Any] = {
    # ReAct family: shorten a finish answer of more than a few words with one generator call.
    "concise_answer": True,
    # "The answer is only the few words that answer the question (the specific name, date, number, or yes/no),
    # never a sentence" in the prompts. It said "a name, a date, ..." until the 1.5B model once answered "a name".
    "short_answer_instruction": True,
    # A note without a YES/NO prefix counts as a note unless it reads as a refusal.
    "lenient_notes": True,
    # Stop the note writer at "#NO#" / "\nContext:", where small models start to loop.
    "note_stop_sequences": True,
    # ReSP: a planned sub-question that repeats an earlier one ends the loop (answer now).
    "resp_on_repeat": "end",
    # IRCoT / FLARE + notes: keep earlier steps' notes in the prompt, not only the last step's (Eq. 10-11).
    "notes_accumulate": True,
    # IRCoT / FLARE: close the unclosed <s> of the paper's few-shot examples (11 <s>, 8 </s>).
    "closed_step_tags": True,
    # ReaRAG: a regenerated step is told why the last one was invalid.
    "rearag_invalid_feedback": True,
    # ReaRAG: also read `Action 1: search {"query": ...}`, the call shape the 1.5B model writes in 88% of steps, keyword
    # calls and a value with a stray quote ('Chiang Kai-shek's son'): MuSiQue invalid outputs 24.9% -> 15.9%.
    "rearag_lenient_actions": True,
    # NotesWriting: a YES note less than half of whose content words occur in the page is dropped (the 1.5B
    # writer copies the previous notes into pages that do not contain them).
    "grounded_notes": True,
    # ReaRAG: the concise-answer call only for finish answers of more than 8 words (the official prompt made
    # the 1.5B model answer "Yes" for "Rush").
    "rearag_concise_long_only": True,
    # NotesWriting: leave out "If you don't know how to answer the query - start your answer with NO#"; the 1.5B
    # writer read it as "NO# unless this page alone answers the question" and refused pages naming the answer.
    "partial_notes": True,
    # NotesWriting: a step whose pages all got NO# shows the top 3 BM25 segments of its pages (ReAct + BM25's
    # observation) rather than "No relevant information", which the greedy ReNAct reasoner answered by searching
    # again and FLARE + notes by answering "No relevant information was found." (9 of 30 on HotpotQA-hard).
    "notes_fallback_segments": 3,
    # ReAct family and ReaRAG: sample a repeated search again, at most twice (the greedy 1.5B reasoner repeats the
    # same Thought/Action word for word once an observation repeats; a ReaRAG chain asked one query six times).
    "resample_repeated_queries": 2,
    # ReNAct: after each step that wrote notes, one generator call answers from the notes or says "unknown"; an
    # answer the notes hold ends the run. The 1.5B reasoner searched on with "Lorenzo Monaco - Giotto" in its notes.
    "answer_from_notes": True,
    # ReaRAG: a long finish answer is shortened with the shared concise prompt; with the official one 13 of 30
    # HotpotQA-hard answers were "Yes" ("... was awarded to Tom Hiddleston ..." became "Yes"); F1 27.5 -> 39.7 with
    # this option, `rearag_finish_on_repeat` and 5 retries.
    "rearag_shared_concise": True,
    # ReaRAG: a repeat left after resampling ends the chain with the forced finish (a chain resampled the same
    # query twice at each of its 7 later steps, the same answer each time, to the bound).
    "rearag_finish_on_repeat": True,
    # ReaRAG: at the step bound without `finish`, ask for it once, else answer with the last observation; the official
    # `run()` returns no answer there (`paper`).
    "rearag_forced_finish": True,
    # ReAct family, ReaRAG and FuRePA: the reasoner's turn under a llama.cpp grammar, so every action parses (issue 13
    # asks for it). Off: on ReaRAG small (30 HotpotQA-hard questions) invalid outputs went 17.3% -> 0 and F1 49.4 -> 38.9,
    # the constrained model finishing after one search in 16 of 30 questions.
    "constrained_actions": False,
    # ReAct family: retrieve with "entity query" joined and write notes for "entity; query", so a search finds what
    # its query asks about, not only the entity's page; `paper` retrieves with the entity and writes notes for the
    # query (003, Step 2 and Algorithm 1).
    "search_entity_and_query": True,
    # ReaRAG: the answer model (the RAG engine and the concise answer) decodes greedily with short caps (128 and 32
    # tokens), since a small answer model's sampled long answers drift; the official code samples it at 0.95 /
    # top_p 0.7, up to 1024 tokens.
    "rearag_greedy_answers": True,
    # Sampled calls of the embedded model keep llama.cpp's default truncation (top_k 40, top_p 0.95, min_p 0.05),
    # which keeps a small model's samples away from its unlikely tail; 'paper' samples the whole distribution, as the
    # papers' APIs do.
    "truncated_sampling": True,
    # Every method, RAG and CoT too: a final answer that names none of the question's named choices ("..., A or B?",
    # yes/no) is replaced by the choice one grammar-held generator call picks from the run's evidence. ReNAct answered
    # 2Wiki's "Which film whose director is younger, A or B?" with a director's name in 11 of its 16; replayed on the
    # a6addbb runs it changed no right answer and raised 2Wiki F1 by 6.0 (ReNAct), 8.0 (FuRePA), 10.0 (ReaRAG).
    "answer_choices": True,
    # ReAct family: the answer at the cap from a plain transcript, not after the reasoner's chat turns, where the 1.5B
    # model went on in ReAct format and its thought became the answer ("I need to find where the place of death of the
    # director of ... is"; "No valid action (no valid Action found)", its copy of the parser's feedback): 12 of 47 cap
    # answers in twelve ReNAct `small` runs; replayed, right answers at the cap 7 -> 11.
    "plain_synthesis": True,
    # Search-o1: a turn with malformed special tokens gets a note saying what was wrong and the reasoning goes on; the
    # official loop ends the chain there (a small reasoner's slip would end most chains without an answer).
    "search_o1_invalid_feedback": True,
    # Search-o1: a final turn without \boxed{} is answered from its last "answer is ..." (the official evaluation reads
    # only \boxed{}, which small models often leave out).
    "search_o1_unboxed_answer": True,
    # Self-Ask: the prompt's passages carry their titles, as the few-shot examples' "Context1: Title: text" do; FlashRAG
    # drops them, leaving a small model to guess which page a passage is from.
    "self_ask_context_titles": True,
    # Self-Ask: a chain at the round cap without "So the final answer is:" is continued once with that line; FlashRAG
    # answers nothing there.
    "self_ask_answer_at_cap": True,
    # SuRe: a candidate reply without the (a)/(b) form is one candidate; FlashRAG answers nothing there.
    "sure_unlisted_candidate": True,
    # Infogent: the three agents' JSON is also read inside code fences or prose, commands and actions in any case and
    # spacing; the official parsers (json.loads, exact regexes) turn a small model's near-misses into errors.
    "infogent_lenient_json": True,
}

# Per method: the paper's parameters (sources on each method's page in docs/methods; each value's reason in
# METHOD_REASONS below). Methods not listed here take only the shared part of the preset.
# IRCoT's and FLARE's own settings, the same in both presets (reference/methods.md). Both original codes end
# generation at a step that generates nothing (IRCoT's exit controller on an empty sentence, FLARE's loop on an
# empty completion): `stop_on_empty_step`.
_COT_SETTINGS = {"max_sentences": 10, "max_paragraphs": 15, "paragraph_words": 350, "ircot_reader": False,
                 "flare_theta": 0.8, "flare_beta": 0.4, "stop_on_empty_step": True}
_REACT_FAMILY_PAPER = {"temperature": 0.7, "max_steps": 25, "k": 5}  # NotesWriting §4.2, ReNAct Alg. 1
_COT_PAPER = {"temperature": 0.7, "k": 5}
_FUREPA = {"furepa_n": 5, "furepa_theta": 0.6, "furepa_eps": 2.0, "furepa_plan_assessor": True,
           "max_iterations": 6}
# FlashRAG's settings, the same in both presets: Iter-RetGen's iter_num 3 (run_exp.py) and Self-Ask's max_iter 5 and
# 100 output tokens (Ret-Robust, baseline_details.md); greedy, top-5, 32 output tokens are FlashRAG's global setting.
_ITER_RETGEN = {"temperature": 0.0, "k": 5, "max_tokens": 32, "iter_retgen_rounds": 3}
_SELF_ASK = {"temperature": 0.0, "k": 5, "max_tokens": 100, "self_ask_max_rounds": 5}
# REPLUG as FlashRAG's REPLUGPipeline ran it (ReSP's Table 1 row): greedy, top-5, 32 output tokens, its logits mix;
# 20 top log-probabilities per position, the most vLLM serves by default.
_REPLUG = {"temperature": 0.0, "k": 5, "max_tokens": 32, "replug_weighting": "flashrag", "top_logprobs": 20}
# Self-RAG's official short-form run (run_short_form.py, README): threshold 0.2, 10 passages, 100 output tokens,
# temperature 0, top_p 1 (FlashRAG's SelfRAGPipeline uses the same decoding).
_SELF_RAG = {"temperature": 0.0, "top_p": 1.0, "k": 10, "max_tokens": 100, "self_rag_threshold": 0.2,
             "top_logprobs": 20}
# RECOMP as FlashRAG's benchmark ran it (run_exp.py `recomp`, baseline_details.md): the released abstractive compressor,
# then greedy, top-5, 32 output tokens; `small` compresses with the LLM stand-in (no checkpoint needed).
_RECOMP = {"temperature": 0.0, "k": 5, "max_tokens": 32}
# SuRe as FlashRAG's SuRePipeline ran (ReSP's Table 1 row): FlashRAG's global setting, greedy, top-5, 32 output tokens.
_SURE = {"temperature": 0.0, "k": 5, "max_tokens": 32}
# ReaRAG's "in-context" rows: no setting is published; the official code's answer model (GLM-4, the RAG engine that
# reads passages) samples at temperature 0.95, top_p 0.7, up to 1024 tokens.
_LONG_CONTEXT_PAPER = {"temperature": 0.95, "top_p": 0.7, "max_tokens": 1024}
# Search-o1's official code for multi-hop QA (run_search_o1.py): temperature 0.7, top_p 0.8, 8192 output tokens (models
# other than QwQ), top-10 results, MAX_TURN 15, MAX_SEARCH_LIMIT 10. SearChain's (SearChain_w_IR.py, Server/server.py):
# gpt-3.5-turbo at the API's default temperature (1.0), the top-1 passage per query, 5 rounds.
_SEARCH_O1_PAPER = {"temperature": 0.7, "top_p": 0.8, "max_tokens": 8192, "k": 10, "max_steps": 15,
                    "search_o1_max_searches": 10}
_SEARCHAIN_PAPER = {"temperature": 1.0, "k": 1, "max_tokens": 1024, "max_iterations": 5, "searchain_reader": "llm"}
# Infogent's official direct-API code for FRAMES (run_frames.py): Navigator and Aggregator at temperature 0.7, top-5
# search results, num_iterations 15 and the Navigator's AutoGPT cap 2 x 15; num_to_aggregate is declared, never used.
_INFOGENT_PAPER = {"temperature": 0.7, "k": 5, "max_tokens": 2000, "max_steps": 30, "infogent_iterations": 15,
                   "infogent_max_aggregated": 0}
# ChatCoT's official HotpotQA code (solve_turbo_chatcot.py): gpt-3.5-turbo at temperature 0, 128 output tokens a turn,
# max_hop 5 reasoning hops, at most five documents shown per tool call. The same in both presets.
_CHATCOT = {"temperature": 0.0, "max_tokens": 128, "k": 5, "max_iterations": 5}
_PAPER: dict[str, dict[str, Any]] = {
    "renact": _REACT_FAMILY_PAPER,
    "react": _REACT_FAMILY_PAPER,
    "react-bm25": _REACT_FAMILY_PAPER,
    "cot": {"temperature": 0.7},  # the NotesWriting/ReNAct papers' CoT baseline, same sampling
    "resp": {"temperature": 0.0, "max_iterations": 3, "k": 5, "max_tokens": 200, "resp_local_input": "memory"},
    "rag": {"temperature": 0.0, "k": 5},  # FlashRAG's standard RAG (the ReSP paper's baseline), greedy
    "rearag": {"temperature": 1.0, "top_p": 0.85, "max_tokens": 1024, "max_steps": 15, "k": 3, "rearag_engine_prompt": "comparison",
               "rearag_invalid_retries": 20},
    # FuRePA §4.1: n = 5, theta = 0.6, DBSCAN eps 2, T = 6. The paper lists tp0 0.2/1.0 and dtp 0.8/0.5 without
    # saying which goes where; `paper` takes 1.0/0.5 (five candidates at 0.2 are near copies, which leaves the
    # vote and the filter nothing to decide), `small` the other pair, 0.2/0.8 (small models garble at 1.0+).
    # §3.2.2: an empty query set "ends the iteration with the temperature increasing" (no cap; the raise counts toward T).
    "furepa": _FUREPA | {"furepa_tp0": 1.0, "furepa_dtp": 0.5, "furepa_raise_cap": 0},
    "ircot": _COT_PAPER,
    "ircot-notes": _COT_PAPER,
    "flare": _COT_PAPER,
    "flare-notes": _COT_PAPER,
    "search-o1": _SEARCH_O1_PAPER,
    "searchain": _SEARCHAIN_PAPER,
    "infogent": _INFOGENT_PAPER,
    "chatcot": _CHATCOT,
    "iter-retgen": _ITER_RETGEN,
    "self-ask": _SELF_ASK,
    "replug": _REPLUG,
    "self-rag": _SELF_RAG,
    "recomp": _RECOMP | {"recomp_compressor": "abstractive"},
    "sure": _SURE,
    "long-context": _LONG_CONTEXT_PAPER,
}
# `small`: greedy decoding and a short step cap (the 1.5B model rarely finishes after 6 steps).
_SMALL_COMMON = {**_COT_SETTINGS, "temperature": 0.0, "max_steps": 6, "max_tokens": 256, "max_iterations": 3, "k": 5, "resp_local_input": "memory"}
# IRCoT's own reader (IRCoT QA) answers over the collected paragraphs or notes: with Figure 4's few-shot prompt
# the 1.5B model writes <answer> at its first step (27 of 30 HotpotQA-hard questions), and without the reader it
# scored 25 F1 where standard RAG, reading the same five passages, scored 60.
_IRCOT_SMALL = {"ircot_reader": True}
_SMALL: dict[str, dict[str, Any]] = {  # each value's reason in METHOD_REASONS["small"]
    "furepa": _FUREPA | {"furepa_tp0": 0.2, "furepa_dtp": 0.8, "furepa_raise_cap": 2},
    # ReaRAG: 5 invalid-step retries, not 20: in 30 HotpotQA-hard questions no chain that recovered needed more than 2,
    # and the two that spent 20 never recovered (a loop of "(Alternative Title)"), a quarter of the run's time.
    "rearag": {"k": 3, "max_steps": 8, "rearag_engine_prompt": "comparison", "rearag_invalid_retries": 5},
    "ircot": _IRCOT_SMALL,
    "ircot-notes": _IRCOT_SMALL,
    # Search-o1: sized for an 8K window; the official turn and search limits.
    "search-o1": {"k": 5, "max_tokens": 1024, "max_steps": 15, "search_o1_max_searches": 10},
    "searchain": {"k": 1, "max_tokens": 512, "max_iterations": 5, "searchain_reader": "llm"},
    "infogent": {"k": 5, "max_tokens": 512, "max_steps": 10, "infogent_iterations": 5, "infogent_max_aggregated": 5},
    "chatcot": _CHATCOT,
    "iter-retgen": _ITER_RETGEN,
    "self-ask": _SELF_ASK,
    "replug": _REPLUG,
    "self-rag": _SELF_RAG,
    "recomp": _RECOMP | {"recomp_compressor": "llm"},
    "sure": _SURE,
}
# `flashrag`: the methods of FlashRAG's benchmark table as FlashRAG runs them (docs/original_docs/baseline_details.md
# "Global Setting": greedy, top-5, at most 32 output tokens; examples/methods/run_exp.py; flashrag/pipeline/), no
# adaptation on. Only these methods have it: another method asked for under it is refused.
_FLASHRAG_COMMON = {"temperature": 0.0, "k": 5, "max_tokens": 32, **ADAPTATIONS_OFF}
_FLASHRAG: dict[str, dict[str, Any]] = {
    # SequentialPipeline with PromptTemplate's default (base_system_prompt / base_user_prompt).
    "rag": {"rag_prompt": "flashrag"},
    # IRCOTPipeline: its own prompt and loop; max_iter 2 (baseline_details.md "IRCoT"; run_exp.py passes 5 since
    # 67fd74f, after the benchmark table), one thought per iteration; no reader, an empty thought does not end the chain.
    # Prompts cut at generator_max_input_len 2048 (baseline_details.md: "a maximum input length of 2048").
    "ircot": {"ircot_style": "flashrag", "max_sentences": 2, "ircot_reader": False, "stop_on_empty_step": False,
              "max_input_tokens": 2048},
    # FLAREPipeline's defaults (run_exp.py `flare` passes none): threshold 0.2 both to retrieve and to mask the query,
    # max_iter_num 5 rounds; its 64 look-ahead tokens and 256-token budget are the flare graph's own.
    "flare": {"flare_theta": 0.2, "flare_beta": 0.2, "max_sentences": 5, "stop_on_empty_step": True},
    # The `paper` values already follow FlashRAG's runs of these (the comments on the shared dicts above).
    "iter-retgen": _ITER_RETGEN,
    "self-ask": _SELF_ASK,
    "sure": _SURE,
    "recomp": _PAPER["recomp"],
    "replug": _REPLUG,
    "self-rag": _SELF_RAG,
    # ReaRAGPipeline (flashrag/pipeline/reasoning_pipeline.py) as run_exp.py `rearag` runs it: both models greedy
    # (temperature 0), 1024 output tokens, max_iter_num 15, FlashRAG's top-5, the RAG-engine prompt with "comparison".
    # An invalid step restarts its chain from the question, which greedy decoding writes again to the bound: no
    # answer, as no retry gives at once.
    "rearag": {"max_tokens": 1024, "max_steps": 15, "rearag_engine_prompt": "comparison", "rearag_invalid_retries": 0,
               "rearag_greedy_answers": True},
}

PRESETS: dict[str, tuple[dict[str, Any], dict[str, dict[str, Any]]]] = {
    "paper": ({**_COT_SETTINGS, "temperature": 0.7, "max_steps": 25, "max_tokens": 256, "max_iterations": 3, "k": 5, "resp_local_input": "memory",
               **ADAPTATIONS_OFF}, _PAPER),
    "small": ({**_SMALL_COMMON, **ADAPTATIONS_ON}, _SMALL),
    "flashrag": (_FLASHRAG_COMMON, _FLASHRAG),
}
# Presets that hold only the methods they list: running another method under one is an error, not the shared part.
PARTIAL_PRESETS = frozenset({"flashrag"})

# Method names that share another method's preset (the name only picks an option such as notes_mode).
PRESET_METHOD = {"renact-iterative": "renact", "furepa-no-pa": "furepa"}


def preset_has(preset: str, method: str | None) -> bool:
    """Whether `preset` runs `method` (None: the shared part, which every preset has)."""
    method = PRESET_METHOD.get(method or "", method or "")
    return not method or preset not in PARTIAL_PRESETS or method in PRESETS[preset][1]


def preset_options(preset: str, method: str | None) -> dict[str, Any]:
    """The options `preset` sets for `method` (its shared part, then the method's own)."""
    if preset not in PRESETS:
        from hoprag.errors import UnknownSpecError

        raise UnknownSpecError(f"unknown preset '{preset}'; use one of: {', '.join(PRESET_NAMES)}")
    common, per_method = PRESETS[preset]
    if not preset_has(preset, method):
        from hoprag.errors import UnknownSpecError

        raise UnknownSpecError(f"preset {preset} has no setting for method '{method}'; it has: {', '.join(per_method)}")
    method = PRESET_METHOD.get(method or "", method or "")
    return {**common, **per_method.get(method, {})}


_REACT = {"renact", "renact-iterative", "react", "react-bm25"}
_NOTES = {"renact", "renact-iterative", "ircot-notes", "flare-notes"}
_COT = {"ircot", "ircot-notes", "flare", "flare-notes"}
# Which methods each adaptation changes (`hoprag ask`'s preset line, `hoprag presets show --method`).
ADAPTATION_METHODS = {
    "concise_answer": _REACT | _COT | {"recomp", "furepa", "furepa-no-pa", "iter-retgen", "self-ask", "search-o1", "searchain", "infogent",
                                       "chatcot", "sure", "long-context"},
    "short_answer_instruction": _REACT | _COT | {"cot"},
    "lenient_notes": _NOTES,
    "note_stop_sequences": _NOTES,
    "resp_on_repeat": {"resp"},
    "notes_accumulate": {"ircot-notes", "flare-notes"},
    "closed_step_tags": _COT,
    "rearag_invalid_feedback": {"rearag"},
    "rearag_lenient_actions": {"rearag"},
    "grounded_notes": _NOTES,
    "rearag_concise_long_only": {"rearag"},
    "partial_notes": _NOTES,
    "notes_fallback_segments": _NOTES,
    "resample_repeated_queries": _REACT | {"rearag"},
    "answer_from_notes": {"renact", "renact-iterative"},
    "rearag_shared_concise": {"rearag"},
    "rearag_finish_on_repeat": {"rearag"},
    "rearag_forced_finish": {"rearag"},
    "constrained_actions": _REACT | {"rearag", "furepa", "furepa-no-pa"},
    "search_entity_and_query": _REACT,
    "rearag_greedy_answers": {"rearag"},
    "truncated_sampling": _REACT | {"rearag", "furepa", "furepa-no-pa"},  # the methods whose `small` runs sample
    "plain_synthesis": _REACT,
    "search_o1_invalid_feedback": {"search-o1"},
    "search_o1_unboxed_answer": {"search-o1"},
    "self_ask_context_titles": {"self-ask"},
    "self_ask_answer_at_cap": {"self-ask"},
    "sure_unlisted_candidate": {"sure"},
    "infogent_lenient_json": {"infogent"},
    "answer_choices": _REACT | _COT | {"recomp", "furepa", "furepa-no-pa", "rearag", "resp", "rag", "cot", "iter-retgen", "self-ask", "search-o1", "searchain", "infogent",
                       "chatcot", "sure", "long-context"},
}
# Which methods read each shared option that is not an adaptation and not read by every method, from where their code
# reads it (nodes/cot.py, ircot.py, flare.py, reasoner.py, ...). Options in neither table are read by every method
# (temperature, top_p, max_tokens, seed: every LLM call), except as SHARED_OPTION_UNREAD_BY says.
SHARED_OPTION_METHODS: dict[str, set[str]] = {
    "max_sentences": _COT,
    "max_paragraphs": {"ircot", "ircot-notes"},  # with notes, the reader falls back on the collected paragraphs
    "paragraph_words": {"ircot", "flare"},  # the prompt's paragraphs; with notes it shows the notes instead
    "ircot_reader": {"ircot", "ircot-notes"},
    "flare_theta": {"flare", "flare-notes"},
    "flare_beta": {"flare", "flare-notes"},
    "stop_on_empty_step": _COT,
    "max_steps": _REACT | {"rearag", "search-o1", "infogent"},
    "max_iterations": {"resp", "furepa", "furepa-no-pa", "searchain", "chatcot"},
    "resp_local_input": {"resp"},
}
SHARED_OPTION_UNREAD_BY: dict[str, set[str]] = {"k": {"cot"}}  # closed-book CoT never retrieves


def reads_option(method: str, option: str) -> bool:
    """Whether `method`'s code reads the shared option `option` (`hoprag presets show --method` lists only those)."""
    readers = SHARED_OPTION_METHODS.get(option, ADAPTATION_METHODS.get(option))
    return (readers is None or method in readers) and method not in SHARED_OPTION_UNREAD_BY.get(option, set())


def describe_preset(preset: str, method: str, ctx: Any = None) -> str:
    """One line for `hoprag ask`: the method's own parameters and the small-model adaptations turned on
    (as `ctx`, the run's Context, sets them, where given)."""
    options = preset_options(preset, method)
    if ctx is not None:
        resolved = ctx.resolved(method)
        options = {k: getattr(resolved, k) for k in options}
    own = PRESETS[preset][1].get(PRESET_METHOD.get(method, method), {})
    shown = {k: options[k] for k in ("temperature", "k", "max_steps", "max_iterations", "max_sentences")
             if k in options and reads_option(method, k)}
    # The values this run has (an option the caller set wins over the method's preset value), and max_tokens wherever
    # it is not the preset's shared value: set by the method (ReSP 200, ReaRAG 1024) or by the caller.
    own = {k: options.get(k, v) for k, v in own.items()}
    if options.get("max_tokens") != PRESETS[preset][0].get("max_tokens"):
        shown["max_tokens"] = options["max_tokens"]
    parameters = ", ".join(f"{k}={v}" for k, v in {**shown, **own}.items())
    adaptations = [k for k, v in options.items()
                   if k in ADAPTATIONS_OFF and v != ADAPTATIONS_OFF[k] and method in ADAPTATION_METHODS.get(k, set())]
    return f"preset {preset} ({method}): {parameters}" + (f"; adaptations: {', '.join(adaptations)}" if adaptations else "")


# Why each preset sets each option, one sentence each, as data (`hoprag presets show`, docs/presets.md). A method's
# own value has its reason in METHOD_REASONS; every other option a preset sets has one in REASONS.
_PAPER_ADDS_NOTHING = "Off: an adaptation for small models, and `paper` adds nothing to the paper."
_BOTH_REASONS = {
    "max_sentences": "IRCoT's original code: at most 10 reasoning sentences before the answer.",
    "max_paragraphs": "IRCoT's original code: at most 15 paragraphs collected across the steps.",
    "paragraph_words": "IRCoT's original code: each paragraph cut to 350 words in the prompt.",
    "ircot_reader": "The chain's own <answer> is the answer, as the NotesWriting paper runs IRCoT.",
    "flare_theta": "FLARE's original code: retrieve when a look-ahead token's probability is below 0.8.",
    "flare_beta": "FLARE's original code: query with the look-ahead sentence less its tokens below 0.4.",
    "stop_on_empty_step": "Both original codes (IRCoT and FLARE) end the chain at a step that generates nothing.",
    "max_tokens": "A cap on each call's output where a paper gives none (ReSP and ReaRAG set their own).",
    "max_iterations": "ReSP §4.1: at most 3 iterations (FuRePA sets its own T).",
    "k": "Top-5 documents per search, as NotesWriting (§4.2) and ReSP (§4.1) retrieve (a method whose paper or code "
         "retrieves another number sets its own).",
    "resp_local_input": "ReSP's Table 4 prompt: the local pathway summarizes the combined memory queues.",
}
REASONS: dict[str, dict[str, str]] = {
    "paper": {
        **{option: _PAPER_ADDS_NOTHING for option in ADAPTATIONS_OFF},
        **_BOTH_REASONS,
        "temperature": "NotesWriting §4.2 samples at 0.7, for its ReAct, IRCoT, FLARE and CoT runs alike.",
        "max_steps": "NotesWriting §4.2 and ReNAct's Algorithm 1: at most T = 25 steps.",
        "resp_on_repeat": "ReSP has no check for a repeated sub-question: it is retrieved like any other.",
    },
    "small": {
        **_BOTH_REASONS,
        "temperature": "Greedy decoding: a small model's most likely output, the same on every run.",
        "max_steps": "A short step cap: a small model that has not finished after 6 steps rarely finishes later.",
        "concise_answer": "A finish answer of more than a few words is shortened by one generator call, since small "
                          "models answer in sentences.",
        "short_answer_instruction": "The prompts say an answer is only the few words that answer the question, "
                                    "never a sentence, which small models otherwise write.",
        "lenient_notes": "Small note writers often leave out the YES/NO prefix; such a note still counts unless it "
                         "reads as a refusal.",
        "note_stop_sequences": "Small note writers start to loop at '#NO#' and '\\nContext:', so generation stops "
                               "there.",
        "resp_on_repeat": "A small planner repeats its sub-questions; a repeat ends the loop and the answer is "
                          "written from what was gathered.",
        "notes_accumulate": "The notes of every step stay in the prompt, so a small model does not lose what an "
                            "earlier step found.",
        "closed_step_tags": "The paper's few-shot examples leave some <s> tags unclosed, which small models copy.",
        "rearag_invalid_feedback": "A regenerated step is told why the last one was invalid, so a small model "
                                   "does not repeat the same mistake.",
        "rearag_lenient_actions": "The action shapes small models write (`Action 1: search {...}`, keyword calls, "
                                  "a stray quote) are read as the call they mean.",
        "grounded_notes": "Small note writers copy earlier notes into pages that do not hold them; such a note is "
                          "dropped.",
        "rearag_concise_long_only": "The official concise-answer prompt turns short right answers into 'Yes', so "
                                    "it runs only on long ones.",
        "partial_notes": "Small note writers read Figure 5's NO# rule as 'unless this page alone answers' and "
                         "refuse pages that hold part of the answer.",
        "notes_fallback_segments": "When every page of a step got NO#, the best BM25 segments stand in for 'No "
                                   "relevant information', on which small reasoners only search again.",
        "resample_repeated_queries": "A greedy small reasoner repeats a search word for word; sampling it again "
                                     "leaves the loop.",
        "answer_from_notes": "A small reasoner searches on with the answer already in its notes; one call checks "
                             "the notes after each step.",
        "rearag_shared_concise": "The other methods' concise-answer prompt, since the official one makes small "
                                 "models answer 'Yes'.",
        "rearag_finish_on_repeat": "A repeat left after resampling would be repeated to the step bound, so it ends "
                                   "the chain with the forced finish.",
        "rearag_forced_finish": "A chain at the step bound still gets an answer: one call asks for `finish`, else the "
                                "last observation answers.",
        "constrained_actions": "Off in both presets: the grammar makes every action parse but leads small models to "
                               "finish after too few searches, so it is left to users whose models write malformed "
                               "actions.",
        "search_entity_and_query": "Retrieve with the entity and the query joined, so a search finds what the query "
                                   "asks about rather than only the entity's page, and the note writer sees both.",
        "rearag_greedy_answers": "The answer model decodes greedily with short caps, since sampled long answers "
                                 "from small models drift.",
        "truncated_sampling": "Sampled calls keep llama.cpp's default truncation, which keeps small models' "
                              "samples away from their unlikely tail.",
        "answer_choices": "A question that names its choices gets one of them, since small models answer such "
                          "questions with something else.",
        "plain_synthesis": "The answer at the cap comes from a plain transcript, since after the reasoner's chat "
                           "turns small models go on in ReAct format.",
        "search_o1_invalid_feedback": "A small reasoner's malformed special token would end its Search-o1 chain; a "
                                      "note says what was wrong and the reasoning goes on.",
        "search_o1_unboxed_answer": "Small models often state Search-o1's answer without \\boxed{}; the final turn's "
                                    "'answer is ...' is read instead.",
        "self_ask_context_titles": "Self-Ask's passages carry their titles, as its few-shot examples show them, so a "
                                   "small model sees which page each one is from.",
        "self_ask_answer_at_cap": "A Self-Ask chain at the round cap still gets an answer: the transcript is continued "
                                  "once with 'So the final answer is:'.",
        "sure_unlisted_candidate": "Small models often answer SuRe's candidate prompt with a bare answer; it is read as "
                                   "one candidate instead of leaving none.",
        "infogent_lenient_json": "Small models wrap Infogent's JSON in code fences or prose and vary its commands and "
                                 "actions; they are read as meant rather than as errors.",
    },
}
REASONS["flashrag"] = {
    **{option: "Off: an adaptation for small models, and FlashRAG's benchmark runs none." for option in ADAPTATIONS_OFF},
    "temperature": "FlashRAG's global setting: greedy decoding (vLLM without sampling).",
    "k": "FlashRAG's global setting: the top-5 documents per query.",
    "max_tokens": "FlashRAG's global setting: at most 32 output tokens per generation.",
}
_REACT_FAMILY_REASONS = {
    "temperature": "NotesWriting §4.2: the ReAct family samples at 0.7.",
    "max_steps": "NotesWriting §4.2 and ReNAct's Algorithm 1: at most T = 25 steps.",
    "k": "NotesWriting §4.2: top-5 pages per search.",
}
_COT_FAMILY_REASONS = {
    "temperature": "NotesWriting §4.2 runs IRCoT and FLARE at 0.7.",
    "k": "Top-5 paragraphs per retrieval, as the NotesWriting paper runs IRCoT and FLARE.",
}
_FUREPA_REASONS = {
    "furepa_n": "FuRePA §4.1: n = 5 candidate plans per iteration.",
    "furepa_theta": "FuRePA §4.1: θ = 0.6, the share of answer plans that ends the loop.",
    "furepa_eps": "FuRePA §4.1: DBSCAN eps 2 over the candidate queries.",
    "furepa_plan_assessor": "FuRePA with its plan assessor (furepa-no-pa is the paper's 'w/o PA' ablation).",
    "max_iterations": "FuRePA §4.1: T = 6 iterations.",
}
_REARAG_REASONS = {
    "k": "ReaRAG's official code: top-3 passages per search.",
    "rearag_engine_prompt": "The RAG-engine prompt ReaRAG's released training data was built with.",
}
_IRCOT_SMALL_REASONS = {
    "ircot_reader": "IRCoT's own reader (IRCoT QA) answers over the collected paragraphs, since small models write "
                    "<answer> at the first step.",
}
_ITER_RETGEN_REASONS = {
    "temperature": "FlashRAG decodes greedily, as its Iter-RetGen row (ReSP's Table 1 baseline) ran.",
    "k": "FlashRAG retrieves the top-5 passages per query.",
    "max_tokens": "FlashRAG's benchmark setting: at most 32 output tokens per generation.",
    "iter_retgen_rounds": "FlashRAG's Iter-RetGen benchmark runs iter_num = 3 rounds.",
}
_REPLUG_REASONS = {
    "temperature": "FlashRAG decodes greedily, as its REPLUG row (ReSP's Table 1 baseline) ran.",
    "k": "FlashRAG retrieves the top-5 passages, each prepended separately.",
    "max_tokens": "FlashRAG's benchmark setting: at most 32 output tokens.",
    "replug_weighting": "FlashRAG's REPLUG logits processor: retrieval scores over their sum weight the mixed logits.",
    "top_logprobs": "20 most likely tokens per step, the most a vLLM endpoint serves by default.",
}
_SELF_RAG_REASONS = {
    "temperature": "Self-RAG's official short-form code decodes with temperature 0.",
    "top_p": "Self-RAG's official short-form code decodes with top_p 1.0.",
    "k": "Self-RAG's official README runs short-form QA with --ndocs 10.",
    "max_tokens": "Self-RAG's official README runs short-form QA with --max_new_tokens 100 (FlashRAG too).",
    "self_rag_threshold": "Self-RAG's official README runs adaptive retrieval with --threshold 0.2 (FlashRAG too).",
    "top_logprobs": "20 most likely tokens per position, the most a vLLM endpoint serves by default.",
}
_SELF_ASK_REASONS = {
    "temperature": "FlashRAG decodes greedily, as its Self-Ask (Ret-Robust) row ran.",
    "k": "FlashRAG retrieves the top-5 passages per query.",
    "max_tokens": "FlashRAG's Ret-Robust setting: at most 100 output tokens per round.",
    "self_ask_max_rounds": "FlashRAG's Ret-Robust setting: at most 5 interaction rounds.",
}
_SURE_REASONS = {
    "temperature": "FlashRAG decodes greedily, as its SuRe row (ReSP's Table 1 baseline) ran.",
    "k": "FlashRAG retrieves the top-5 passages, which every SuRe step reads.",
    "max_tokens": "FlashRAG's benchmark setting: at most 32 output tokens per generation, summaries included.",
}
_LONG_CONTEXT_REASONS = {
    "temperature": "ReaRAG gives no in-context setting; its official answer model samples at temperature 0.95.",
    "top_p": "ReaRAG gives no in-context setting; its official answer model samples with top_p 0.7.",
    "max_tokens": "ReaRAG's official answer model generates up to 1024 tokens.",
}
_RECOMP_REASONS = {
    "temperature": "FlashRAG decodes greedily, as its RECOMP row (ReSP's Table 1 baseline) ran.",
    "k": "FlashRAG's RECOMP compresses the top-5 retrieved passages.",
    "max_tokens": "FlashRAG's benchmark setting: at most 32 output tokens for the answer.",
}
_SEARCH_O1_REASONS = {
    "temperature": "Search-o1's official code samples at temperature 0.7.",
    "top_p": "Search-o1's official code samples with top_p 0.8.",
    "max_tokens": "Search-o1's official code: 8192 output tokens per generation for models other than QwQ.",
    "k": "Search-o1's official code: the top 10 results per search.",
    "max_steps": "Search-o1's official code: at most 15 generations (MAX_TURN) on multi-hop QA.",
    "search_o1_max_searches": "Search-o1's official code: at most 10 searches (MAX_SEARCH_LIMIT) on multi-hop QA.",
}
_CHATCOT_REASONS = {
    "temperature": "ChatCoT's official code calls gpt-3.5-turbo at temperature 0.",
    "max_tokens": "ChatCoT's official code: at most 128 output tokens per chat turn.",
    "k": "ChatCoT's official code shows at most five documents per tool call, one at a time.",
    "max_iterations": "ChatCoT's official code: at most max_hop = 5 reasoning hops before the answer is asked for.",
}
_INFOGENT_REASONS = {
    "temperature": "Infogent's official code samples its Navigator and Aggregator at 0.7 (Extractor and answer greedy).",
    "k": "Infogent's official FRAMES code shows the Navigator the top 5 search results.",
    "max_tokens": "Infogent's official Extractor and answer calls take up to 2000 output tokens (the Aggregator 1000).",
    "max_steps": "Infogent's official code caps the Navigator at 2 x num_iterations = 30 replies.",
    "infogent_iterations": "Infogent's official FRAMES code: num_iterations 15, as the Aggregator's prompt says.",
    "infogent_max_aggregated": "No limit: the official code declares num_to_aggregate 5 but never enforces it.",
}
_SEARCHAIN_REASONS = {
    "temperature": "SearChain's official code calls gpt-3.5-turbo with no temperature: the API's default, 1.0.",
    "k": "SearChain's verification reads the top-1 passage of each query (Server/server.py).",
    "max_tokens": "SearChain's official call sets no output cap; 1024 tokens hold a Chain-of-Query.",
    "max_iterations": "SearChain's official code: at most 5 rounds (SearChain_w_IR.py).",
    "searchain_reader": "The paper's reader is DPR, whose weights hoprag does not bundle; an LLM reader stands in "
                        "(searchain_reader=dpr runs DPR).",
}
METHOD_REASONS: dict[str, dict[str, dict[str, str]]] = {
    "paper": {
        "renact": _REACT_FAMILY_REASONS,
        "react": _REACT_FAMILY_REASONS,
        "react-bm25": _REACT_FAMILY_REASONS,
        "cot": {"temperature": "The NotesWriting and ReNAct papers' CoT baseline samples as their other methods do."},
        "resp": {"temperature": "ReSP gives no temperature and ran in FlashRAG, whose default generation is greedy.",
                 "max_iterations": "ReSP §4.1: at most 3 iterations.",
                 "k": "ReSP §4.1: top-5 passages per retrieval.",
                 "max_tokens": "ReSP §4.1: output at most 200 tokens.",
                 "resp_local_input": "ReSP's Table 4 prompt: the local pathway summarizes the memory queues."},
        "rag": {"temperature": "FlashRAG's standard RAG (ReSP's baseline) decodes greedily.",
                "k": "FlashRAG's standard RAG reads the top-5 passages."},
        "rearag": {**_REARAG_REASONS,
                   "temperature": "ReaRAG's official code samples the reasoner at temperature 1.0.",
                   "top_p": "ReaRAG's official code samples the reasoner with top_p 0.85.",
                   "max_tokens": "ReaRAG's official code: up to 1024 tokens per reasoner call.",
                   "max_steps": "ReaRAG's official code: a chain of at most 15 steps.",
                   "rearag_invalid_retries": "ReaRAG's official code regenerates up to 20 invalid steps per question."},
        "furepa": {**_FUREPA_REASONS,
                   "furepa_tp0": "The paper lists 0.2 and 1.0 unassigned; 1.0 gives the vote and the filter candidates "
                                 "that differ.",
                   "furepa_dtp": "The raise the paper lists beside 1.0 (0.5).",
                   "furepa_raise_cap": "FuRePA §3.2.2: an empty query set ends the iteration with the temperature "
                                       "raised, with no cap."},
        "ircot": _COT_FAMILY_REASONS,
        "ircot-notes": _COT_FAMILY_REASONS,
        "flare": _COT_FAMILY_REASONS,
        "flare-notes": _COT_FAMILY_REASONS,
        "search-o1": _SEARCH_O1_REASONS,
        "searchain": _SEARCHAIN_REASONS,
        "infogent": _INFOGENT_REASONS,
        "chatcot": _CHATCOT_REASONS,
        "iter-retgen": _ITER_RETGEN_REASONS,
        "self-ask": _SELF_ASK_REASONS,
        "replug": _REPLUG_REASONS,
        "self-rag": _SELF_RAG_REASONS,
        "recomp": {**_RECOMP_REASONS,
                   "recomp_compressor": "FlashRAG's RECOMP row ran the released abstractive compressor (the HotpotQA "
                                        "checkpoint for HotpotQA and 2Wiki)."},
        "sure": _SURE_REASONS,
        "long-context": _LONG_CONTEXT_REASONS,
    },
    "small": {
        "furepa": {**_FUREPA_REASONS,
                   "furepa_tp0": "The paper's other listed start temperature, 0.2: small models garble at 1.0 and above.",
                   "furepa_dtp": "The raise the paper lists beside 0.2 (0.8).",
                   "furepa_raise_cap": "Two raises within the iteration, then the answer is forced, so a filter that "
                                       "stays empty ends the run early."},
        "rearag": {**_REARAG_REASONS,
                   "max_steps": "A shorter step bound than the official 15: a small model's chain that has not "
                                "finished by then rarely does.",
                   "rearag_invalid_retries": "Chains that recover from invalid steps need only a few retries; more "
                                             "only spend time on chains that never recover."},
        "ircot": _IRCOT_SMALL_REASONS,
        "ircot-notes": _IRCOT_SMALL_REASONS,
        "search-o1": {**_SEARCH_O1_REASONS,
                      "k": "Five documents per search, so Reason-in-Documents fits a small model's window.",
                      "max_tokens": "1024 tokens per generation, so the reasoning fits a small model's window."},
        "searchain": {**_SEARCHAIN_REASONS, "max_tokens": "512 tokens hold a small model's Chain-of-Query."},
        "infogent": {**{k: v for k, v in _INFOGENT_REASONS.items() if k != "temperature"},
                     "max_tokens": "512 tokens hold an Infogent agent's JSON reply from a small model.",
                     "max_steps": "10 Navigator replies: five pages read, each a search and an extract.",
                     "infogent_iterations": "Five iterations, as the 10-reply cap allows, so the Aggregator is told "
                                            "what the run can do.",
                     "infogent_max_aggregated": "At most 5 aggregated entries (the official code's declared "
                                                "num_to_aggregate), so the prompts fit a small model's window."},
        "chatcot": _CHATCOT_REASONS,
        "iter-retgen": _ITER_RETGEN_REASONS,
        "self-ask": _SELF_ASK_REASONS,
        "replug": _REPLUG_REASONS,
        "self-rag": _SELF_RAG_REASONS,
        "recomp": {**_RECOMP_REASONS,
                   "recomp_compressor": "The LLM compressor with the RECOMP paper's prompt stands in for the T5 "
                                        "checkpoints, which a small-model machine may not have."},
        "sure": _SURE_REASONS,
    },
}

# A method whose `paper` values follow FlashRAG's run of it has the same reasons under `flashrag`.
METHOD_REASONS["flashrag"] = {
    **{method: METHOD_REASONS["paper"][method]
       for method in ("iter-retgen", "self-ask", "sure", "recomp", "replug", "self-rag")},
    "rag": {"rag_prompt": "FlashRAG's SequentialPipeline sends its standard prompt as a system and a user message "
                          "(PromptTemplate's base_system_prompt and base_user_prompt)."},
    "ircot": {
        "ircot_style": "FlashRAG's IRCOTPipeline as it runs on vLLM: the one-shot prompt as plain text, one thought a "
                       "call, 'So the answer is:' to end.",
        "max_sentences": "FlashRAG's IRCoT benchmark setting (baseline_details.md): max_iter 2 thoughts.",
        "ircot_reader": "FlashRAG's IRCoT answers from its own thoughts (ircot_pred_parse), with no reader.",
        "stop_on_empty_step": "FlashRAG's IRCoT loop runs on after an empty thought, to max_iter.",
        "max_input_tokens": "FlashRAG's benchmark setting (baseline_details.md): a maximum input length of 2048 "
                            "tokens, a longer prompt cut as FlashRAG's PromptTemplate cuts it.",
    },
    "flare": {
        "flare_theta": "FlashRAG's FLAREPipeline: retrieve when a look-ahead token's probability is at most 0.2.",
        "flare_beta": "FlashRAG's FLAREPipeline: query with the look-ahead sentence's tokens above the same 0.2.",
        "max_sentences": "FlashRAG's FLAREPipeline: at most max_iter_num = 5 rounds, one sentence each.",
        "stop_on_empty_step": "FlashRAG's FLARE keeps no text from an empty round, and greedy decoding repeats it.",
    },
    "rearag": {
        "max_tokens": "FlashRAG's ReaRAG run (run_exp.py): generation_params max_tokens 1024.",
        "max_steps": "FlashRAG's ReaRAGPipeline: max_iter_num 15 steps.",
        "rearag_engine_prompt": "FlashRAG's ReaRAGPipeline answers each search with the 'comparison' RAG-engine prompt.",
        "rearag_invalid_retries": "FlashRAG restarts a chain at an invalid step, which greedy decoding repeats to the "
                                  "bound: no answer, as no retry gives.",
        "rearag_greedy_answers": "FlashRAG's ReaRAGPipeline decodes the RAG engine and the short answer at "
                                 "temperature 0.",
    },
}

def option_reason(preset: str, method: str | None, option: str) -> str:
    """Why `preset` sets `option` for `method` (None: the shared part), in one sentence; "" where none is written."""
    own = METHOD_REASONS.get(preset, {}).get(PRESET_METHOD.get(method or "", method or ""), {})
    return own.get(option) or REASONS.get(preset, {}).get(option, "")


def preset_rows(preset: str, method: str | None) -> list[tuple[str, Any, bool, str]]:
    """Every option `preset` sets for `method` (None: the part every method shares) as (option, value, whether the
    method sets it itself, why), the shared options the method reads first, then the method's own."""
    options = preset_options(preset, method)
    own = PRESETS[preset][1].get(PRESET_METHOD.get(method or "", method or ""), {}) if method else {}
    ordered = [k for k in options if k not in own and (method is None or reads_option(method, k))] + list(own)
    return [(k, options[k], k in own, option_reason(preset, method, k)) for k in ordered]


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def presets_show_text(preset: str | None = None, method: str | None = None) -> str:
    """`hoprag presets show`: every option the preset (every preset, where None) sets, its value and why; for one
    method only the options it reads, its own values marked `*`; without a method each method's own values follow the
    shared part."""
    lines: list[str] = []
    # Without a preset, a method is shown under the presets that have it (flashrag holds only its ten).
    for name in [preset] if preset else [name for name in PRESET_NAMES if preset_has(name, method)]:
        if name not in PRESETS:
            from hoprag.errors import UnknownSpecError

            raise UnknownSpecError(f"unknown preset '{name}'; use one of: {', '.join(PRESET_NAMES)}")
        rows = preset_rows(name, method)
        width = max(len(option) for option, *_ in rows) + 2
        title = f"preset {name}" + (f", method {method}: the options it reads (* its own value)" if method
                                    else ", the options every method shares")
        lines += ([""] if lines else []) + [title]
        lines += [f"  {'*' if own else ' '} {option:<{width}}{_shown(value):<14}{reason}" for option, value, own, reason in rows]
        if method is None:
            for each, values in PRESETS[name][1].items():
                lines += ["", f"preset {name}, method {each}: its own values"]
                lines += [f"  * {option:<{width}}{_shown(value):<14}{option_reason(name, each, option)}"
                          for option, value in values.items()]
    return "\n".join(lines)
