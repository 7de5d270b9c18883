"""Answer normalization shared by the methods (comparing answers, choices and queries) and the evaluation metrics,
so that nodes never import from `hoprag.eval`."""

from __future__ import annotations

import re
import string

_PUNCTUATION = set(string.punctuation)


def normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace (official HotpotQA)."""

    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        return "".join(ch for ch in text if ch not in _PUNCTUATION)

    return white_space_fix(remove_articles(remove_punc(str(s).lower())))
