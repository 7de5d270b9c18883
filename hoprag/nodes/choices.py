"""`answer_choices` (small preset): a question that names its choices gets one of them as its answer.

2Wiki's comparison questions name the two things compared ("Which film whose director is younger, Forbidden
Ground or Free Guy?") and yes/no questions name theirs implicitly. The 1.5B reasoner often finishes with the
bridge entity instead ("Shawn Levy", the director), which scores F1 0 where any of the two films scores 50 on
average. When the final answer matches none of the choices, one generator call picks the choice the draft answer
and the run's evidence point to."""

from __future__ import annotations

from typing import Any

from hoprag.answers import normalize_answer
from hoprag.llm import call_llm
from hoprag.nodes.write_notes import gathered_notes
from hoprag.prompts.react import CHOOSE

YES_NO = ["yes", "no"]
# A question that opens with one of these asks yes or no, unless it names its choices.
_AUXILIARIES = {"is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could", "will", "would",
                "should"}
# Words a question may start with before the first choice ("Was Jamie Curry or Alyaksey Vasilewski born first?").
_QUESTION_WORDS = {"which", "who", "whom", "whose", "what", *_AUXILIARIES}
# Lowercase words that may sit inside a title ("Love In A Fallen City", "Queen of the Desert").
_CONNECTORS = {"of", "the", "a", "an", "and", "for", "in", "on", "to", "at", "de", "la", "le", "von", "van", "&", "-"}
# Words that say what kind of thing a choice is; they do not tie an answer to it ("Ann Hui (film director)").
_KIND_WORDS = {"film", "album", "song", "novel", "band", "movie", "of", "in", "on", "and", "for", "to", "at", "by"}
EVIDENCE_CHARS = 4000  # about 1,000 tokens: notes are short, raw observations are cut from the front


def _title_word(word: str) -> bool:
    return word[:1].isupper() or word[:1].isdigit() or word[:1] in "\"'("


def _title_run(words: list[str]) -> list[str]:
    """The longest run of title words at the start of `words` (connectors inside it, not at its end)."""
    run: list[str] = []
    for word in words:
        if _title_word(word):
            run.append(word)
        elif word.lower() in _CONNECTORS and run:
            run.append(word)
        else:
            break
    while run and not _title_word(run[-1]):
        run.pop()
    return run


def named_choices(question: str) -> list[str]:
    """The choices a question names: "..., A or B?" or "Was A or B born first?" gives [A, B]; a yes/no question
    ("Are the directors of ... from the same country?") gives ["yes", "no"]; any other question none."""
    text = " ".join(question.split()).rstrip(" ?")
    head, comma, tail = text.partition(", ")
    if comma and " or " in tail and _title_word(tail):
        first, _, second = tail.rpartition(" or ")
        choices = [first.strip(" ,;"), second.strip(" ,;")]  # "DC Talk, or Manchester Orchestra"
    elif " or " in text:
        before, _, after = text.rpartition(" or ")
        words = before.split()
        while words and words[0].lower() in _QUESTION_WORDS:
            words = words[1:]
        # The first choice is the title run that ends right before "or" ("... started first Arthur's Magazine").
        first = list(reversed(_title_run(list(reversed(words)))))
        choices = [" ".join(first), " ".join(_title_run(after.split()))]
    else:
        return list(YES_NO) if (text.split() or [""])[0].lower() in _AUXILIARIES else []
    # "Is it a city or a town?" names no title on either side: no choices, and not a yes/no question either.
    if all(choices) and _title_word(choices[1]) and normalize_answer(choices[0]) != normalize_answer(choices[1]):
        return choices
    return []


def _content_words(text: str) -> set[str]:
    return {w for w in normalize_answer(text).split() if w not in _KIND_WORDS}


def matching_choice(answer: str, choices: list[str]) -> str | None:
    """The choice `answer` names: yes/no by its first word, any other choice by a shared content word (the choice
    with most in common wins; "A Nightmare On Elm Street 4" names "A Nightmare On Elm Street 4: The Dream Master")."""
    normalized = normalize_answer(answer)
    if choices == YES_NO:
        first = normalized.split()[:1]
        return first[0] if first and first[0] in YES_NO else None
    words = _content_words(answer)
    overlaps = [len(words & _content_words(choice)) for choice in choices]
    best = max(overlaps, default=0)
    if best == 0 or overlaps.count(best) > 1:
        return None
    return choices[overlaps.index(best)]


def answer_evidence(state: dict[str, Any]) -> str:
    """What a run found, for the choice call: its notes (NotesWriting methods), ReSP's memories, FuRePA's evidence,
    or its observations (ReAct, ReaRAG). The call keeps its last EVIDENCE_CHARS."""
    trajectory = state.get("trajectory", [])
    lines = gathered_notes(trajectory) or list(state.get("notes") or [])
    if not lines and state.get("global_evidence"):
        lines = [*state["global_evidence"],
                 *(f"Q: {item['question']} A: {item['answer'] or 'unknown'}" for item in state.get("local_pathway", []))]
    if not lines and state.get("evidence"):
        lines = [f"{d['title']}: {d['text']}" for d in state["evidence"]]
    if not lines:
        lines = [str(step["observation"]) for step in trajectory if step.get("observation")]
    return "\n".join(line.strip() for line in lines if line.strip())


def choice_grammar(choices: list[str]) -> str:
    """A llama.cpp grammar (GBNF) whose only sentences are the choices, so the embedded model cannot echo the draft."""
    literals = ('"' + c.replace("\\", "\\\\").replace('"', '\\"') + '"' for c in choices)
    return "root ::= " + " | ".join(literals) + "\n"


def keep_to_choices(state: dict[str, Any], answer: str, ctx: Any,
                    evidence: str | None = None) -> tuple[str, list[dict[str, Any]]]:
    """The final-answer step of every method: `answer`, or, when the run's `answer_choices` is on and `answer` names
    none of the question's choices, the one the generator picks; the call's record. `evidence` defaults to what the
    run's state holds (`answer_evidence`)."""
    choices = named_choices(state["question"]) if ctx.answer_choices else []
    if not choices or matching_choice(answer, choices) is not None:
        return answer, []
    prompt = CHOOSE.format(question=state["question"], choices="\n".join(f"- {c}" for c in choices),
                           evidence=(evidence if evidence is not None else answer_evidence(state))[-EVIDENCE_CHARS:] or "None",
                           answer=answer or "none")
    text, record, _ = call_llm("generator", prompt, ctx, max_tokens=32, grammar=choice_grammar(choices))
    reply = text.strip().splitlines()[0] if text.strip() else ""
    chosen = matching_choice(reply.lstrip("- "), choices)
    return (chosen if chosen is not None else answer), [record.to_dict()]
