"""Presets: which Context options a method runs with, as data.

- `paper`: the paper's prompts, parameters and control flow, nothing added.
- `small`: the adaptations that make the methods work on small local models. Each adaptation is a
  named Context option, so `--preset small` with one option set back (for example
  `concise_answer=False`) turns that one adaptation off.

An option the caller sets explicitly always wins over the preset: preset options are the ones the
Context leaves as None. Every preset option is documented in BENCHMARKS.md with its source.
"""

from __future__ import annotations

from typing import Any

PRESET_NAMES = ("paper", "small")

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
    "rearag_prose_actions": False,
    "refuse_repeated_queries": False,
    "grounded_notes": False,
    "rearag_concise_long_only": False,
    "partial_notes": False,
    "notes_fallback_segments": 0,
    "resample_repeated_queries": 0,
    "answer_from_notes": False,
    "rearag_shared_concise": False,
    "rearag_finish_on_repeat": False,
    "ircot_min_sentences": 0,
    "constrained_actions": False,
    "search_question_first": False,
    "rearag_greedy_answers": False,
    "truncated_sampling": False,
    "resp_reader": False,
    "answer_choices": False,
    "plain_synthesis": False,
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
    # calls and a value with a stray quote ('Chiang Kai-shek's son'): MuSiQue invalid outputs 24.9% -> 15.9% (BENCHMARKS.md).
    "rearag_lenient_actions": True,
    # ReaRAG: an action written as a sentence is a search for its rest. Off in `small` too: on 50 MuSiQue questions
    # invalid outputs went 15.9% -> 10.1% but F1 15.88 -> 12.03, the vague queries ending runs in repeats and the cap.
    "rearag_prose_actions": False,
    # ReAct family and ReaRAG: a search repeating an earlier one is not run; its observation says so. Off in
    # `small` too: the greedy 1.5B reasoner asked the refused query again and again, and ReNAct small scored
    # F1 10 with it (and grounded_notes) against 30 without on 10 questions (BENCHMARKS.md, issue 13).
    "refuse_repeated_queries": False,
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
    # this option, `rearag_finish_on_repeat` and 5 retries (BENCHMARKS.md).
    "rearag_shared_concise": True,
    # ReaRAG: a repeat left after resampling ends the chain with the forced finish (a chain resampled the same
    # query twice at each of its 7 later steps, the same answer each time, to the bound).
    "rearag_finish_on_repeat": True,
    # IRCoT: the first step must write a sentence (its prompt ends with an opened <s>), to retrieve with before it
    # answers. Off in `small` too: the 1.5B model closed the opened <s> at once (30 of 60 questions) or wrote a plan
    # ("To determine ..., I'll follow these steps"), and F1 went 59.1 -> 52.4 on HotpotQA-hard, 22.5 -> 23.4 on
    # MuSiQue, at 1.7x the reasoner input tokens (30 questions each, BENCHMARKS.md, issue 13).
    "ircot_min_sentences": 0,
    # ReAct family, ReaRAG and FuRePA: the reasoner's turn under a llama.cpp grammar, so every action parses (issue 13
    # asks for it). Off: on ReaRAG small (30 HotpotQA-hard questions) invalid outputs went 17.3% -> 0 and F1 49.4 -> 38.9,
    # the constrained model finishing after one search in 16 of 30 questions (BENCHMARKS.md, issue 13).
    "constrained_actions": False,
    # ReAct family and ReaRAG: the first step searches the question itself, without a reasoner call. Off: on 30
    # HotpotQA-hard questions ReNAct F1 49.5 -> 43.5 and ReaRAG 49.4 -> 31.6, though retrieval recall rose (BENCHMARKS.md).
    "search_question_first": False,
    # ReaRAG: the answer model (the RAG engine and the concise answer) decodes greedily with short caps (128 and 32
    # tokens), as every 'small' run of ReaRAG measured; the official code samples it at 0.95 / top_p 0.7, up to 1024 tokens.
    "rearag_greedy_answers": True,
    # Sampled calls of the embedded model keep llama.cpp's default truncation (top_k 40, top_p 0.95, min_p 0.05), as
    # every 'small' run measured; 'paper' samples the whole distribution, as the papers' APIs do.
    "truncated_sampling": True,
    # Every method, RAG and CoT too: a final answer that names none of the question's named choices ("..., A or B?",
    # yes/no) is replaced by the choice one grammar-held generator call picks from the run's evidence. ReNAct answered
    # 2Wiki's "Which film whose director is younger, A or B?" with a director's name in 11 of its 16; replayed on the
    # a6addbb runs it changed no right answer and raised 2Wiki F1 by 6.0 (ReNAct), 8.0 (FuRePA), 10.0 (ReaRAG).
    "answer_choices": True,
    # ReAct family: the answer at the cap from a plain transcript, not after the reasoner's chat turns, where the 1.5B
    # model went on in ReAct format and its thought became the answer ("I need to find where the place of death of the
    # director of ... is"; "No valid action (no valid Action found)", its copy of the parser's feedback): 12 of 47 cap
    # answers in twelve ReNAct `small` runs; replayed, right answers at the cap 7 -> 11 (BENCHMARKS.md, "`plain_synthesis`").
    "plain_synthesis": True,
}

# Per method: the paper's parameters (sources in BENCHMARKS.md, "Presets"). Methods not listed here
# take only the shared part of the preset.
# IRCoT's and FLARE's own settings, the same in both presets (reference/methods.md). Both original codes end
# generation at a step that generates nothing (IRCoT's exit controller on an empty sentence, FLARE's loop on an
# empty completion): `stop_on_empty_step`.
_COT_SETTINGS = {"max_sentences": 10, "max_paragraphs": 15, "paragraph_words": 350, "ircot_reader": False,
                 "flare_theta": 0.8, "flare_beta": 0.4, "stop_on_empty_step": True}
_REACT_FAMILY_PAPER = {"temperature": 0.7, "max_steps": 25, "k": 5}  # NotesWriting §4.2, ReNAct Alg. 1
_COT_PAPER = {"temperature": 0.7, "k": 5}
_FUREPA = {"furepa_n": 5, "furepa_theta": 0.6, "furepa_eps": 2.0, "furepa_max_raises": 2, "furepa_plan_assessor": True,
           "max_iterations": 6}
_PAPER: dict[str, dict[str, Any]] = {
    "renact": _REACT_FAMILY_PAPER,
    "react": _REACT_FAMILY_PAPER,
    "react-bm25": _REACT_FAMILY_PAPER,
    "cot": {"temperature": 0.7},  # the NotesWriting/ReNAct papers' CoT baseline, same sampling
    # ReSP §4.1: top-5, at most 3 iterations, output at most 200 tokens; no temperature is given and the
    # experiments ran in FlashRAG, whose default generation is greedy.
    "resp": {"temperature": 0.0, "max_iterations": 3, "k": 5, "max_tokens": 200, "resp_local_input": "memory"},
    "rag": {"temperature": 0.0, "k": 5},  # FlashRAG's standard RAG (the ReSP paper's baseline), greedy
    # IRCoT and FLARE as the NotesWriting paper runs them (temperature 0.7, §4.2) with the original code's
    # settings (reference/methods.md): IRCoT 15 paragraphs of at most 350 words, 10 sentences, no reader;
    # FLARE θ = 0.8, β = 0.4.
    # ReaRAG's official code: reasoner temperature 1.0 and top_p 0.85, 1024 tokens, 15 steps,
    # top-3 passages, 20 invalid-step retries, the RAG-engine prompt of its released training data.
    "rearag": {"temperature": 1.0, "top_p": 0.85, "max_tokens": 1024, "max_steps": 15, "k": 3, "rearag_engine_prompt": "comparison",
               "rearag_invalid_retries": 20},
    # FuRePA §4.1: n = 5, theta = 0.6, DBSCAN eps 2, T = 6. The paper lists tp0 0.2/1.0 and dtp 0.8/0.5 without
    # saying which goes where; `paper` takes 1.0/0.5 (five candidates at 0.2 are near copies, which leaves the
    # vote and the filter nothing to decide), `small` the other pair, 0.2/0.8 (small models garble at 1.0+).
    "furepa": _FUREPA | {"furepa_tp0": 1.0, "furepa_dtp": 0.5},
    "ircot": _COT_PAPER,
    "ircot-notes": _COT_PAPER,
    "flare": _COT_PAPER,
    "flare-notes": _COT_PAPER,
}
# `small`: greedy decoding and a short step cap (the 1.5B model rarely finishes after 6 steps).
_SMALL_COMMON = {**_COT_SETTINGS, "temperature": 0.0, "max_steps": 6, "max_tokens": 256, "max_iterations": 3, "k": 5, "resp_local_input": "memory"}
# IRCoT's own reader (IRCoT QA) answers over the collected paragraphs or notes: with Figure 4's few-shot prompt
# the 1.5B model writes <answer> at its first step (27 of 30 HotpotQA-hard questions), and without the reader it
# scored 25 F1 where standard RAG, reading the same five passages, scored 60 (BENCHMARKS.md, issue 10).
_IRCOT_SMALL = {"ircot_reader": True}
_SMALL: dict[str, dict[str, Any]] = {
    "furepa": _FUREPA | {"furepa_tp0": 0.2, "furepa_dtp": 0.8},
    # ReaRAG: 5 invalid-step retries, not 20: in 30 HotpotQA-hard questions no chain that recovered needed more than 2,
    # and the two that spent 20 never recovered (a loop of "(Alternative Title)"), a quarter of the run's time.
    "rearag": {"k": 3, "max_steps": 8, "rearag_engine_prompt": "comparison", "rearag_invalid_retries": 5},
    "ircot": _IRCOT_SMALL,
    "ircot-notes": _IRCOT_SMALL,
}

PRESETS: dict[str, tuple[dict[str, Any], dict[str, dict[str, Any]]]] = {
    "paper": ({**_COT_SETTINGS, "temperature": 0.7, "max_steps": 25, "max_tokens": 256, "max_iterations": 3, "k": 5, "resp_local_input": "memory",
               **ADAPTATIONS_OFF}, _PAPER),
    "small": ({**_SMALL_COMMON, **ADAPTATIONS_ON}, _SMALL),
}

# Method names that share another method's preset (the name only picks an option such as notes_mode).
PRESET_METHOD = {"renact-iterative": "renact", "furepa-no-pa": "furepa"}


def preset_options(preset: str, method: str | None) -> dict[str, Any]:
    """The options `preset` sets for `method` (its shared part, then the method's own)."""
    if preset not in PRESETS:
        from hoprag.errors import UnknownSpecError

        raise UnknownSpecError(f"unknown preset '{preset}'; use one of: {', '.join(PRESET_NAMES)}")
    common, per_method = PRESETS[preset]
    method = PRESET_METHOD.get(method or "", method or "")
    return {**common, **per_method.get(method, {})}


_REACT = {"renact", "renact-iterative", "react", "react-bm25"}
_NOTES = {"renact", "renact-iterative", "ircot-notes", "flare-notes"}
_COT = {"ircot", "ircot-notes", "flare", "flare-notes"}
# Which methods each adaptation changes (for the one-line description only; the options are shared).
ADAPTATION_METHODS = {
    "concise_answer": _REACT | _COT | {"furepa", "furepa-no-pa"},
    "short_answer_instruction": _REACT | _COT | {"cot"},
    "lenient_notes": _NOTES,
    "note_stop_sequences": _NOTES,
    "resp_on_repeat": {"resp"},
    "resp_reader": {"resp"},
    "notes_accumulate": {"ircot-notes", "flare-notes"},
    "closed_step_tags": _COT,
    "rearag_invalid_feedback": {"rearag"},
    "rearag_lenient_actions": {"rearag"},
    "rearag_prose_actions": {"rearag"},
    "refuse_repeated_queries": _REACT | {"rearag"},
    "grounded_notes": _NOTES,
    "rearag_concise_long_only": {"rearag"},
    "partial_notes": _NOTES,
    "notes_fallback_segments": _NOTES,
    "resample_repeated_queries": _REACT | {"rearag"},
    "answer_from_notes": {"renact", "renact-iterative"},
    "rearag_shared_concise": {"rearag"},
    "rearag_finish_on_repeat": {"rearag"},
    "ircot_min_sentences": {"ircot", "ircot-notes"},
    "constrained_actions": _REACT | {"rearag", "furepa", "furepa-no-pa"},
    "search_question_first": _REACT | {"rearag"},
    "rearag_greedy_answers": {"rearag"},
    "truncated_sampling": _REACT | {"rearag", "furepa", "furepa-no-pa"},  # the methods whose `small` runs sample
    "plain_synthesis": _REACT,
    "answer_choices": _REACT | _COT | {"furepa", "furepa-no-pa", "rearag", "resp", "rag", "cot"},
}


def describe_preset(preset: str, method: str, ctx: Any = None) -> str:
    """One line for `hoprag ask`: the method's own parameters and the small-model adaptations turned on
    (as `ctx`, the run's Context, sets them, where given)."""
    options = preset_options(preset, method)
    if ctx is not None:
        resolved = ctx.resolved(method)
        options = {k: getattr(resolved, k) for k in options}
    own = PRESETS[preset][1].get(PRESET_METHOD.get(method, method), {})
    caps = {"max_steps": _REACT | {"rearag"}, "max_iterations": {"resp", "furepa", "furepa-no-pa"}, "max_sentences": _COT}
    shown = {k: options[k] for k in ("temperature", "k", *caps) if k in options and method in caps.get(k, {method})}
    parameters = ", ".join(f"{k}={v}" for k, v in {**shown, **own}.items())
    adaptations = [k for k, v in options.items()
                   if k in ADAPTATIONS_OFF and v != ADAPTATIONS_OFF[k] and method in ADAPTATION_METHODS.get(k, set())]
    return f"preset {preset} ({method}): {parameters}" + (f"; adaptations: {', '.join(adaptations)}" if adaptations else "")
