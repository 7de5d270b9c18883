"""The embedded runtime's saved KV states on one REPLUG question: the same question with them off
(HOPRAG_KV_STATES=0) and on (the default), one after the other in this process, each on a freshly loaded model.
REPLUG calls the generator once per document per answer token, alternating between the documents' prompts, so
without saved states each call evaluates its document's prompt again.

Prints, for each run, the seconds, the prompt tokens evaluated (of those sent), the answer and the ensemble's
chosen tokens with their scores; then whether the answers and the scores are identical, and the size of a saved
state per token. `--max-tokens` bounds the answer (REPLUG's preset: 32) to keep the run short.

    HOPRAG_THREADS=1 .venv/bin/python benchmarks/kv_states.py --max-tokens 8 [--reproducible]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from hoprag import llama_local, llm
from hoprag.context import Context
from hoprag.documents import Document
from hoprag.presets import preset_options
from hoprag.retrievers import register_retriever
from hoprag.run import run_question

QUESTION = "Which river flows through the city where the composer of the opera Rusalka was born?"
# Five passages of about 80 words, scored as a dense retriever would.
PASSAGES = [
    ("Rusalka (opera)", "Rusalka is a lyric fairy tale opera by the Czech composer Antonin Dvorak. The libretto was "
     "written by the poet Jaroslav Kvapil, based on the fairy tales of Karel Jaromir Erben and Bozena Nemcova. "
     "Rusalka was first performed in Prague on 31 March 1901 at the National Theatre and became one of the most "
     "successful Czech operas. The role of the water nymph who falls in love with a prince is among the best "
     "known soprano parts of the Czech repertoire, and its song to the moon is often performed alone."),
    ("Antonin Dvorak", "Antonin Leopold Dvorak was a Czech composer, one of the first to achieve worldwide "
     "recognition. He was born on 8 September 1841 in Nelahozeves, a village near Kralupy nad Vltavou in Bohemia, "
     "then part of the Austrian Empire, where his father was a butcher, innkeeper and professional player of the "
     "zither. He studied in Prague, played the viola in the Provisional Theatre orchestra and later taught at the "
     "Prague Conservatory, and spent three years in the United States as director of a conservatory in New York."),
    ("Nelahozeves", "Nelahozeves is a municipality and village in Melnik District in the Central Bohemian Region "
     "of the Czech Republic. It has about 2,000 inhabitants. The village lies on the left bank of the Vltava river, "
     "about 25 kilometres north of Prague. It is known as the birthplace of the composer Antonin Dvorak, whose "
     "birth house is now a museum, and for the Renaissance castle of Nelahozeves, which belongs to the Lobkowicz "
     "family and houses part of their art collection, open to visitors for most of the year."),
    ("Vltava", "The Vltava is the longest river in the Czech Republic, running southeast along the Bohemian Forest "
     "and then north across Bohemia, through Cesky Krumlov, Ceske Budejovice and Prague, and finally merging with "
     "the Elbe at Melnik. It is commonly referred to as the national river of the Czechs. The river is about 430 "
     "kilometres long and drains a basin of some 28,000 square kilometres. Smetana's symphonic poem Vltava, part of "
     "the cycle Ma vlast, follows its course from two springs to Prague."),
    ("Kralupy nad Vltavou", "Kralupy nad Vltavou is a town in Melnik District in the Central Bohemian Region of "
     "the Czech Republic. It has about 18,000 inhabitants. The town lies on the Vltava river about 20 kilometres "
     "north of Prague and is an industrial centre with a large oil refinery and chemical plants. It was heavily "
     "bombed in March 1945. The town has a railway junction on the line from Prague to Dresden, and its church of "
     "the Nativity of the Virgin Mary was built in the eighteenth century in the Baroque style."),
]
SCORES = [0.71, 0.83, 0.78, 0.74, 0.69]


class FixedPassages:
    """hoprag's retriever interface: the same five scored passages for any query."""

    def search(self, query: str, k: int) -> list[Document]:
        return [Document(id=f"p{i}", title=title, text=text, score=score)
                for i, ((title, text), score) in enumerate(zip(PASSAGES, SCORES, strict=True))][:k]


def run_once(states: bool, model: str, max_tokens: int, reproducible: bool) -> dict[str, Any]:
    """One REPLUG question on a freshly loaded model with saved KV states on or off."""
    os.environ["HOPRAG_KV_STATES"] = "8" if states else "0"
    llm._MODELS.clear()
    llama_local._RUNTIMES.clear()
    options = {**preset_options("small", "replug"), "max_tokens": max_tokens, "reproducible": reproducible}
    ctx = Context(index="kv-states-passages", llm=model, llm_cache=False, **options)
    llm.chat_model(model, "generator", ctx)  # load the model outside the timed run
    started = time.perf_counter()
    result = run_question("replug", QUESTION, ctx)
    seconds = time.perf_counter() - started
    runtime = next(iter(llama_local._RUNTIMES.values()))
    step = result["trajectory"][0]
    usage = result["usage"].get("generator", {})
    saved = list(runtime.kv_states.values())
    return {"kv_states": states, "seconds": round(seconds, 1), "answer": result["answer"],
            "tokens": step["tokens"], "generator_calls": step["generator_calls"],
            "evaluated_tokens": usage.get("evaluated_tokens"), "prompt_tokens": usage.get("evaluated_of"),
            "states_loaded": runtime.kv_state_loads, "states_held": len(saved),
            "state_bytes_per_token": round(sum(s.size for s in saved) / max(1, sum(len(s.input_ids) for s in saved)))
            if saved else None,
            "states_mb": round(sum(s.size for s in saved) / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--max-tokens", type=int, default=8, help="the answer's token bound (REPLUG's preset: 32)")
    parser.add_argument("--reproducible", action="store_true", help="block-aligned prompt evaluation (--reproducible)")
    parser.add_argument("--order", default="off,on", help="the runs, in order: off,on or on,off")
    args = parser.parse_args()
    register_retriever("kv-states-passages", FixedPassages())
    runs = {}
    for mode in args.order.split(","):
        runs[mode] = run_once(mode == "on", args.model, args.max_tokens, args.reproducible)
        print(json.dumps(runs[mode]), flush=True)
    if {"off", "on"} <= runs.keys():
        off, on = runs["off"], runs["on"]
        print(json.dumps({
            "same_answer": off["answer"] == on["answer"],
            "same_tokens_and_scores": off["tokens"] == on["tokens"],
            "largest_score_difference": max((abs(a["score"] - b["score"]) for a, b in zip(off["tokens"], on["tokens"],
                                                                                         strict=False)), default=0.0),
            "seconds_ratio": round(off["seconds"] / max(on["seconds"], 1e-9), 1),
            "evaluated_tokens_ratio": round(off["evaluated_tokens"] / max(on["evaluated_tokens"], 1), 1)}))


if __name__ == "__main__":
    main()
