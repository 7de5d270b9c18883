"""User-facing errors: the CLI prints their message as one line and exits non-zero."""


class HopragError(Exception):
    """An error caused by input or environment that the user can fix; the message says how."""


class UnknownSpecError(HopragError):
    """A model, source, method or index name that hoprag does not know."""


class EndpointError(HopragError):
    """An LLM endpoint that cannot be reached or keeps failing."""


class ContextOverflowError(HopragError):
    """A prompt that cannot be shortened enough to fit the model's context window."""


class RunUnavailableError(HopragError):
    """Something every question of a run needs is missing (model weights, log-probabilities, a model of the right
    kind, the retrieval backend): `hoprag eval` stops at once with the message (a rerun resumes) instead of recording
    every question as failed, and `hoprag reproduce` skips the run with it."""


class EndpointUnavailableError(EndpointError, RunUnavailableError):
    """An LLM endpoint every call needs that cannot be reached (and has not answered in this process), rejects the
    API key or does not serve the model: `hoprag eval` and `hoprag reproduce` stop (a rerun resumes) instead of
    recording every question as failed."""


class NoPlainCompletionError(EndpointError, RunUnavailableError):
    """An endpoint without plain-text completions (/v1/completions), which one method's calls need: `hoprag eval`
    stops, `hoprag reproduce` skips that method's runs."""


class NoLogprobsError(RunUnavailableError):
    """A method that gates on token confidence (FLARE) got a reply without log-probabilities."""


class RetrievalUnavailableError(RunUnavailableError):
    """The retrieval backend every question needs cannot be reached or answers garbage: `hoprag eval` stops (a rerun
    resumes) instead of recording every later question as failed."""


class ChromaServerError(RetrievalUnavailableError):
    """The Chroma server holding the index cannot be reached or refused a request."""


class RetrievalServerError(RetrievalUnavailableError):
    """A retrieval server (FlashRAG / Search-R1 `/retrieve` protocol) cannot be reached or answers garbage."""
