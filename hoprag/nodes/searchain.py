"""SearChain (Search-in-the-Chain, Xu et al., WWW 2024): the LLM writes a global Chain-of-Query (`[Query i]` /
`[Answer i]` nodes, `[Unsolved Query]` where it does not know, `[Final Content]` at the end); retrieval verifies each
node: the top-1 passage for its query is read by a reader, and an answer the reader is confident of that the chain's
answer does not contain is a correction, an `[Unsolved Query]` gets the reader's answer as the missing knowledge. The
first such feedback goes back to the LLM, which writes the chain again; rounds go on until the verification finds
nothing to say (`end`) or the official cap of 5 rounds.

The loop, the node parsing, the feedback and the match rule are the official code's (xsc1234/Search-in-the-Chain:
SearChain_w_IR.py, the client; Server/server.py, the verification). The paper's reader is DPR
(`facebook/dpr-reader-multiset-base`, `searchain_reader="dpr"`, which needs transformers and its weights); the
default is an LLM reader that stands in for it (`searchain_reader="llm"`)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from hoprag.answers import normalize_answer
from hoprag.context import Context, context_of, given
from hoprag.errors import HopragError
from hoprag.llm import call_llm
from hoprag.nodes.generate import first_line
from hoprag.nodes.retrieve import search
from hoprag.prompts.searchain import (
    CHAIN_OF_QUERY,
    COMPLETION,
    COMPLETION_MESSAGE,
    CORRECTION,
    CORRECTION_MESSAGE,
    LLM_READER,
    PASSAGE,
    UNANSWERABLE,
)
from hoprag.state import RunState

MAX_ROUNDS = 5  # SearChain_w_IR.py: `while round_count < 5`
DPR_READER = "facebook/dpr-reader-multiset-base"
DPR_RELEVANCE = 1.5  # Server/server.py: a reader answer counts where its relevance logit is above 1.5
LLM_CONFIDENT = 2.0  # the LLM reader's relevance for an answer it gives (0 for "unanswerable"), on DPR's side of 1.5
READER_TOKENS = 32


class SearChainState(RunState, total=False):
    messages: list[dict[str, str]]  # the chat so far: the Chain-of-Query prompt, each chain, each feedback
    rounds: int  # LLM rounds so far (MAX_ROUNDS bounds them)
    chain: str  # the last round's Chain-of-Query
    seen: list[str]  # queries verified so far (the server's query_seen_list)
    feedback: str  # the last verification's feedback prompt; "" where the verification ended the chain
    answer_reply: str


@dataclass
class ChainNode:
    label: str  # the text before the first "]", e.g. "[Query 1" or "[Unsolved Query"
    query: str
    unsolved: bool
    answer_line: str  # the first later line with "Answer" in it: what the chain answered (the server's predict_answer)


def parse_chain(text: Any) -> list[ChainNode]:
    """The query nodes of a Chain-of-Query, read as Server/server.py reads them: every line with "Query" and "]:"; its
    label up to the first "]", its query after it (less the ":"), and the first later line that holds "Answer".
    Never raises; a line that yields no query gives no node."""
    text = text if isinstance(text, str) else str(text or "")
    lines = text.split("\n")
    nodes: list[ChainNode] = []
    for index, line in enumerate(lines):
        if "Query" not in line or "]:" not in line:
            continue
        parts = line.split("]")
        label, query = parts[0], parts[1]
        if ":" in query:
            query = query[1:]
        query = " ".join(query.split())
        if not query:
            continue
        answer_line = next((later for later in lines[index + 1:] if "Answer" in later), "")
        nodes.append(ChainNode(label.strip(), query, "Unsolved" in label, answer_line.strip()))
    return nodes


def chain_problem(text: Any) -> str:
    """Why a round's output is not a Chain-of-Query (no query node and no [Final Content]), or ""."""
    text = text if isinstance(text, str) else str(text or "")
    return "" if parse_chain(text) or "[Final Content]" in text else "no [Query] node and no [Final Content]"


CITATION = re.compile(r"\s*\[\d+\]\s*$")


def chain_answer(outputs: list[str]) -> str:
    """The answer of the chains, newest first: after "answer is" in the last [Final Content] (the prompt's examples
    end "So the final answer is ..."), else that Final Content's last sentence, else the last [Answer i] line."""
    for output in reversed([o if isinstance(o, str) else str(o or "") for o in outputs]):
        if "[Final Content]" not in output:
            continue
        content = output.rsplit("[Final Content]", 1)[1].lstrip(" :")
        said = re.split(r"\banswer is\b:?", content, flags=re.IGNORECASE)
        text = said[-1] if len(said) > 1 else re.split(r"(?<=[.!?])\s+", content.strip())[-1]
        answer = CITATION.sub("", first_line(text).strip().strip('"')).rstrip(".")
        if answer:
            return answer
    for output in reversed([o if isinstance(o, str) else str(o or "") for o in outputs]):
        answers = re.findall(r"\[Answer[^\]]*\]:?\s*(.+)", output)
        if answers:
            return CITATION.sub("", answers[-1].strip()).rstrip(".")
    return ""


def seen_before(query: str, seen: list[str]) -> bool:
    """Whether a query repeats one verified before. The server asks a Quora cross-encoder (duplicate above 0.5);
    hoprag compares the normalized texts."""
    return normalize_answer(query) in {normalize_answer(s) for s in seen}


def matches(prediction: str, ground_truth: str) -> bool:
    """The server's match_or_not: the reader's answer, normalized, occurs in the chain's answer line."""
    return normalize_answer(ground_truth) in normalize_answer(prediction)


@functools.lru_cache(maxsize=1)
def _dpr() -> tuple[Any, Any]:
    """DPR's reader and tokenizer, loaded once (lazily: transformers is an optional dependency)."""
    try:
        from transformers import DPRReader, DPRReaderTokenizer
    except ImportError as error:
        raise HopragError("searchain_reader 'dpr' needs transformers and torch (pip install 'hoprag[st]'); "
                          "or use searchain_reader=llm") from error
    try:
        tokenizer = DPRReaderTokenizer.from_pretrained(DPR_READER)
        model = DPRReader.from_pretrained(DPR_READER)
    except Exception as error:  # offline without the weights in the Hugging Face cache, or a broken download
        raise HopragError(f"searchain_reader 'dpr' needs the {DPR_READER} weights, which could not be loaded "
                          f"({type(error).__name__}); fetch them into the Hugging Face cache where there is network, "
                          "or use searchain_reader=llm") from error
    return tokenizer, model.eval()


def dpr_read(query: str, passage: str) -> tuple[str, float]:
    """The DPR reader as Server/retrieval/reader_model.py runs it (the passage goes in as the title, the text is
    empty): the span between the argmax start and end logits, and the relevance logit."""
    import torch

    tokenizer, model = _dpr()
    encoded = tokenizer(questions=[query], titles=[passage], texts=[""], return_tensors="pt", max_length=510,
                        truncation=True)
    with torch.no_grad():
        outputs = model(**encoded)
    start, end = int(outputs.start_logits.argmax()), int(outputs.end_logits.argmax())
    answer = tokenizer.decode(encoded["input_ids"][0, start: end + 1])
    return answer, float(outputs.relevance_logits.max())


def llm_read(ctx: Context, query: str, passage: str) -> tuple[str, float, dict[str, Any]]:
    """hoprag's LLM reader: a span of the passage that answers the query (greedy), or "unanswerable" (relevance 0)."""
    text, record, _ = call_llm("answerer", LLM_READER.format(passage=passage, query=query),
                               ctx.with_options(temperature=0.0), max_tokens=READER_TOKENS)
    answer = first_line(text)
    answered = bool(normalize_answer(answer)) and UNANSWERABLE not in normalize_answer(answer)
    return (answer if answered else ""), (LLM_CONFIDENT if answered else 0.0), record.to_dict()


def read(ctx: Context, query: str, passage: str) -> tuple[str, float, list[dict[str, Any]]]:
    """The run's reader (`searchain_reader`): its answer, its relevance and the LLM call records."""
    if ctx.searchain_reader == "dpr":
        answer, relevance = dpr_read(query, passage)
        return answer, relevance, []
    answer, relevance, record = llm_read(ctx, query, passage)
    return answer, relevance, [record]


def to_messages(messages: list[dict[str, str]]) -> list[BaseMessage]:
    return [AIMessage(m["content"]) if m["role"] == "assistant" else HumanMessage(m["content"]) for m in messages]


def chain(state: SearChainState, runtime: Any = None) -> dict[str, Any]:
    """One round: the LLM writes the Chain-of-Query (the first round from the official prompt, later ones after the
    feedback), as one step of the trajectory."""
    ctx = context_of(runtime)
    messages = state.get("messages") or [{"role": "user", "content": CHAIN_OF_QUERY.format(question=state["question"])}]
    text, record, _ = call_llm("reasoner", to_messages(messages), ctx)
    rounds = state.get("rounds", 0) + 1
    problem = chain_problem(text)
    step = {"kind": "chain", "round": rounds, "thought": text.strip(), "raw": text, "problem": problem}
    return {"messages": [*messages, {"role": "assistant", "content": text}], "rounds": rounds, "chain": text,
            "trajectory": [step], "calls": [record.parsed(bool(problem), problem)]}


def verify(state: SearChainState, runtime: Any = None) -> dict[str, Any]:
    """The verification of Server/server.py, node by node: a query seen before is skipped (an [Unsolved Query] never
    is); the top-1 passage for the query is read; an [Unsolved Query] gets the reader's answer as missing knowledge, a
    [Query] whose reader answer is confident (relevance above 1.5) and not in the chain's answer gets a correction.
    The first such node stops the check and its feedback goes back to the LLM; none: the chain is verified."""
    ctx = context_of(runtime)
    rounds = state.get("rounds", 0)
    seen = list(state.get("seen", []))
    steps: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    feedback = ""
    for node in parse_chain(state.get("chain", "")):
        step: dict[str, Any] = {"kind": "search", "round": rounds, "query": node.query, "action": node.label + "]",
                                "chain_answer": node.answer_line, "reader": ctx.searchain_reader or "llm"}
        if not node.unsolved and seen_before(node.query, seen):
            steps.append({**step, "kind": "seen", "verdict": "seen before"})
            continue
        seen.append(node.query)
        documents = search(ctx, node.query, k=given(ctx.k, 1))[:1]
        step.update(retrieved_ids=[d.id for d in documents], retrieved_titles=[d.title for d in documents])
        if not documents:
            steps.append({**step, "verdict": "no passage"})
            continue
        passage = PASSAGE.format(title=documents[0].title, text=documents[0].text)
        reader_answer, relevance, records = read(ctx, node.query, passage)
        calls.extend(records)
        step.update(reader_answer=reader_answer, relevance=round(relevance, 3), observation=passage)
        if node.unsolved:
            template, message, verdict = COMPLETION, COMPLETION_MESSAGE, "missing knowledge"
        elif relevance > DPR_RELEVANCE and not matches(node.answer_line, reader_answer):
            template, message, verdict = CORRECTION, CORRECTION_MESSAGE, "corrected"
        else:
            steps.append({**step, "verdict": "verified" if relevance > DPR_RELEVANCE else "reader not confident"})
            continue
        fields = message.format(query=node.query, answer=reader_answer, reference=passage).split("<SEP>")
        feedback = template.format(query=fields[0], answer=fields[1], question=state["question"], reference=fields[2])
        steps.append({**step, "verdict": verdict, "feedback": feedback.strip()})
        break
    update: dict[str, Any] = {"seen": seen, "feedback": feedback, "trajectory": steps, "calls": calls}
    if feedback:  # the official client appends it even after the last round, when no round reads it
        update["messages"] = [*state.get("messages", []), {"role": "user", "content": feedback}]
    if not feedback:
        update["finished_by"] = "verified"
    elif rounds >= given(context_of(runtime).max_iterations, MAX_ROUNDS):
        update["finished_by"] = "cap"
    return update


def answer(state: SearChainState, runtime: Any = None) -> dict[str, Any]:
    """The answer the chains state in their [Final Content]; the concise-answer step follows (small)."""
    outputs = [m["content"] for m in state.get("messages", []) if m["role"] == "assistant"]
    return {"answer": chain_answer(outputs), "finished_by": state.get("finished_by") or "cap",
            "answer_reply": state.get("chain", "")}


def route_after_verify(state: SearChainState, runtime: Any = None) -> str:
    return "answer" if state.get("finished_by") else "chain"
