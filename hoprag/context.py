"""The runtime `Context` of every hoprag graph (LangGraph `context_schema`).

Every field carries a description, so LangGraph Studio renders a form. Model specs left empty fall
back, per role, to `HOPRAG_<ROLE>_LLM`, then to `llm`, then to `HOPRAG_LLM`, then to the embedded default.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

ROLES = ("reasoner", "notes", "summarizer", "generator", "judge")
Role = Literal["reasoner", "notes", "summarizer", "generator", "judge"]


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
    judge_llm: str | None = _describe(None, "Model spec of the sufficiency judge / evaluation judge.")
    index: str = _describe("demo", "Name of the hoprag index to retrieve from (see `hoprag index list`).")
    retriever: Literal["dense", "bm25", "hybrid"] = _describe(
        "dense", "Retriever over the index: dense (Chroma + E5 embedder), bm25, or hybrid (RRF of both)."
    )
    k: int = _describe(5, "Documents retrieved per search (top-k).")
    pages: bool = _describe(
        True, "Group retrieved passages by title into one Markdown page per title (NotesWriting reads pages)."
    )
    max_steps: int = _describe(25, "Iteration cap T: reasoning steps before a final answer is forced.")
    notes_mode: Literal["parallel", "iterative"] = _describe(
        "parallel",
        "NotesWriting: one independent note per document in parallel, or iterative notes that each see "
        "the notes written before them (ReNAct).",
    )
    max_iterations: int = _describe(3, "ReSP iteration cap (the paper uses 3).")
    temperature: float = _describe(0.0, "Sampling temperature of every LLM call.")
    seed: int | None = _describe(0, "Sampling seed, for reproducible runs; None leaves sampling unseeded.")
    max_tokens: int = _describe(256, "Maximum tokens generated per LLM call.")
    context_window: int | None = _describe(
        None, "Prompt budget in tokens; defaults to the model's own window (local n_ctx, or 32768)."
    )
    max_retries: int = _describe(2, "Retries of a failing LLM call before the run reports the error.")
    max_concurrency: int = _describe(8, "Upper bound on note writers running at once.")
    llm_cache: bool = _describe(
        False,
        "Serve repeated LLM calls (same model, messages and parameters) from the on-disk response cache; "
        "sampled calls (temperature > 0) are cached only under a fixed seed. `hoprag eval` turns it on.",
    )

    def with_options(self, **options: Any) -> Context:
        """A copy with the given options; None values keep the current value."""
        known = {f.name for f in fields(self)}
        unknown = set(options) - known
        if unknown:
            raise ValueError(f"unknown context option(s): {', '.join(sorted(unknown))}")
        return replace(self, **{k: v for k, v in options.items() if v is not None})


def context_of(runtime: Any) -> Context:
    """The run's context; LangGraph passes None when the caller gave no context."""
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    if ctx is None:
        return Context()
    if isinstance(ctx, dict):
        return Context(**ctx)
    return ctx
