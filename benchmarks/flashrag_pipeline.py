"""FlashRAG's own IRCoT and standard-RAG pipelines on hoprag's model and retrieval: the other column of the
`flashrag` parity rows in docs/results.md.

FlashRAG's `IRCOTPipeline` and `SequentialPipeline` run unchanged: their prompt templates, `max_iter` loop, document
merging, prompt truncation (`generator_max_input_len`), answer parsing (`ircot_pred_parse`) and metrics (`ExactMatch`,
`F1_Score`). Only the backends are hoprag's, so that the comparison isolates the method's logic:
- retrieval: hoprag's retriever (default BM25 over the dataset file's pooled paragraphs, `--index auto`), adapted to
  FlashRAG's `search` / `batch_search`, scores included;
- `--form text` (FlashRAG's vLLM and HF form): the prompt FlashRAG builds goes to the embedded model as plain text
  through hoprag's provider layer (greedy, at most 32 tokens); IRCoT's has no chat template (`enable_chat=False`),
  RAG's is templated with the GGUF's chat template, as FlashRAG templates a chat model's. An IRCoT thought is cut
  after its first stop string, which it keeps, as vLLM's `include_stop_str_in_output` does;
- `--form chat` (FlashRAG's `openai` framework): FlashRAG's own `OpenaiGenerator` against a llama.cpp server of the
  embedded model on 127.0.0.1, with temperature 0 (FlashRAG's documented greedy setting; its OpenAI generator
  drops `do_sample`, so the server's default would otherwise sample).
Prompt lengths are counted with the model's own tokenizer (FlashRAG counts with the HF tokenizer, or with tiktoken
for `openai`, which needs a download).

Needs a FlashRAG checkout on PYTHONPATH (the results were measured with commit 1ee5249; PyPI's flashrag-dev 0.1.2
predates the IRCoT stop strings) and its `datasets` dependency. Resumes an interrupted run. Writes one JSON line a question and a summary:

    python benchmarks/flashrag_pipeline.py --method ircot --form text --max-iter 2 --limit 20 \
        --dataset hotpotqa:../shared/data/hotpotqa/hotpot_dev_distractor_hard_100.json --out runs/fr-ircot-text-2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

STOPS = [".", "\n"]


class ModelTokenizer:
    """The embedded model's tokenizer behind the two interfaces FlashRAG's PromptTemplate calls: a Hugging Face
    tokenizer's `encode(..., return_tensors="pt")` / `decode`, and tiktoken's `encode` / `decode`."""

    def __init__(self, llama: Any, hf_style: bool) -> None:
        self.llama, self.hf_style = llama, hf_style

    def encode(self, text: str, **kwargs: Any) -> Any:
        # A Hugging Face tokenizer's encode adds the model's BOS (Qwen has none); tiktoken's adds nothing.
        add_bos = self.hf_style and bool(self.llama._model.add_bos_token())
        ids = self.llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)
        if self.hf_style:
            import torch

            return torch.tensor([ids])  # FlashRAG reads `[0]` when `.input_ids` is missing
        return ids

    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        ids = [int(i) for i in ids]
        return self.llama.detokenize(ids, special=not skip_special_tokens).decode("utf-8", errors="replace")

    def apply_chat_template(self, messages: list[dict[str, str]], tokenize: bool = False,
                            add_generation_prompt: bool = True) -> str:
        """The GGUF's own chat template, as FlashRAG applies the HF tokenizer's for a chat model's prompt."""
        from hoprag.llama_local import chat_formatter

        return chat_formatter(self.llama, add_generation_prompt)(messages=messages).prompt


class HopragRetriever:
    """hoprag's retriever behind FlashRAG's retriever interface; a document's `contents` is "title\\ntext"."""

    def __init__(self, retriever: Any, k: int) -> None:
        self.retriever, self.k = retriever, k

    def search(self, query: str, num: int | None = None, return_score: bool = False) -> Any:
        documents = self.retriever.search(query, num or self.k)
        items = [{"id": d.id, "title": d.title, "text": d.text, "contents": f"{d.title}\n{d.text}"} for d in documents]
        # A retriever without scores ranks its first document highest, as FlashRAG's score order expects.
        scores = [d.score if d.score is not None else -float(i) for i, d in enumerate(documents)]
        return (items, scores) if return_score else items

    def batch_search(self, queries: list[str], num: int | None = None, return_score: bool = False) -> Any:
        results = [self.search(q, num, return_score=True) for q in queries]
        items, scores = [r[0] for r in results], [r[1] for r in results]
        return (items, scores) if return_score else items


class TextGenerator:
    """FlashRAG's vLLM generator contract on the embedded model: a list of plain-text prompts in, one string each
    out, stopped at (and keeping) the first stop string. FlashRAG's vLLM model is `max_model_len` =
    generator_max_input_len tokens long, so a prompt near that limit leaves the output fewer tokens."""

    def __init__(self, ctx: Any, max_tokens: int, max_model_len: int, tokenizer: ModelTokenizer) -> None:
        self.ctx, self.max_tokens, self.max_model_len, self.tokenizer = ctx, max_tokens, max_model_len, tokenizer

    def generate(self, input_list: Any, stop: list[str] | None = None, **_: Any) -> list[str]:
        from hoprag.llm import call_llm

        prompts = [input_list] if isinstance(input_list, str) else list(input_list)
        outputs = []
        for prompt in prompts:
            room = self.max_model_len - len(self.tokenizer.encode(prompt)[0])
            max_tokens = max(1, min(self.max_tokens, room))
            text, _call, _message = call_llm("reasoner", prompt, self.ctx, raw_text=True, max_tokens=max_tokens)
            cuts = [text.find(s) + len(s) for s in (stop or []) if s in text]
            outputs.append(text[: min(cuts)] if cuts else text)
        return outputs


def load_questions(spec: str, limit: int) -> list[Any]:
    from hoprag.eval.datasets import load_dataset

    return load_dataset(spec, limit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", choices=["ircot", "rag"], default="ircot",
                        help="IRCOTPipeline, or SequentialPipeline (standard RAG, FlashRAG's default prompt)")
    parser.add_argument("--form", choices=["text", "chat"], default="text")
    parser.add_argument("--max-iter", type=int, default=2, help="IRCOTPipeline's max_iter (FlashRAG's default: 2)")
    parser.add_argument("--max-input-len", type=int, default=2048, help="generator_max_input_len (FlashRAG's table: 2048)")
    parser.add_argument("--max-tokens", type=int, default=32, help="FlashRAG's table: 32")
    parser.add_argument("--server-sampling", action="store_true",
                        help="--form chat: send FlashRAG's generation parameters as they are (no temperature), so the "
                        "server's default sampling applies, as with FlashRAG's openai framework out of the box")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--retriever", default="bm25", help="hoprag retriever kind over the index (default bm25)")
    parser.add_argument("--index", default="auto", help="hoprag index name; auto: the dataset file's paragraphs")
    parser.add_argument("--dataset", required=True, help="KIND:PATH, as hoprag eval takes it")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)

    try:
        import flashrag.prompt.base_prompt as base_prompt
        from flashrag.dataset import Dataset
        from flashrag.evaluator.metrics import ExactMatch, F1_Score
        from flashrag.pipeline import IRCOTPipeline, SequentialPipeline
        from flashrag.utils import ircot_pred_parse
    except ImportError as error:
        print(f"error: FlashRAG is not importable ({error}); put a FlashRAG checkout on PYTHONPATH and "
              "pip install datasets", file=sys.stderr)
        return 2

    from hoprag.context import Context
    from hoprag.eval.runner import auto_index
    from hoprag.llm import DEFAULT_SPEC, _vocabulary
    from hoprag.local_models import DEFAULT_LOCAL_MODEL, resolve_gguf
    from hoprag.retrievers.retrievers import make_retriever

    examples = load_questions(args.dataset, args.limit)
    index = auto_index(args.dataset) if args.index == "auto" else args.index
    retriever = HopragRetriever(make_retriever(index, args.retriever, k=args.k), args.k)
    ctx = Context(preset="flashrag", llm=DEFAULT_SPEC, reasoner_llm=DEFAULT_SPEC).resolved(args.method)
    llama = _vocabulary(DEFAULT_LOCAL_MODEL)  # the model file's tokenizer, without its weights

    framework = "openai" if args.form == "chat" else "vllm"
    config: dict[str, Any] = {
        "framework": framework, "generator_max_input_len": args.max_input_len, "generator_model": "local",
        "generator_model_path": "local", "generator_batch_size": 1, "is_reasoning": False, "device": "cpu",
        "save_retrieval_cache": False, "dataset_name": "hotpotqa", "metrics": ["em", "f1"], "metric_setting": {},
        "generation_params": {"max_tokens": args.max_tokens}, "save_dir": str(args.out), "save_intermediate_data": False,
        "save_metric_score": False, "use_fid": False, "refiner_name": None,
    }
    # FlashRAG reads the model's HF config only for its name (a chat model: "chat" or "instruct" in it) and counts
    # prompt tokens with the model's tokenizer: both come from the GGUF here. Only FlashRAG's names are rebound.
    model_name = resolve_gguf(DEFAULT_LOCAL_MODEL).name.lower()
    base_prompt.AutoConfig = SimpleNamespace(from_pretrained=lambda *a, **k: SimpleNamespace(_name_or_path=model_name))
    base_prompt.PromptTemplate._get_tokenizer = lambda self: ModelTokenizer(llama, hf_style=not self.is_openai)
    if args.form == "chat":
        import tiktoken

        from hoprag.llama_local import local_server_model

        tiktoken.encoding_for_model = lambda name: ModelTokenizer(llama, hf_style=False)  # no download
        from flashrag.generator.openai_generator import OpenaiGenerator

        server = local_server_model(DEFAULT_LOCAL_MODEL, n_ctx=8192, n_threads=int(os.environ.get("HOPRAG_THREADS", "1")))
        config["openai_setting"] = {"api_key": "local", "base_url": str(server.openai_api_base)}
        if not args.server_sampling:
            config["generation_params"].update(temperature=0.0, extra_body={"repeat_penalty": 1.0})
        generator: Any = OpenaiGenerator(config)
        # IRCOTPipeline still calls generate on an iteration in which no question of the batch is left; vLLM answers
        # an empty batch with nothing, FlashRAG's OpenAI generator fails on it. A one-question batch meets it
        # whenever the first thought answers.
        openai_generate = generator.generate
        generator.generate = lambda input_list, **kw: openai_generate(input_list, **kw) if len(input_list) else []
    else:
        generator = TextGenerator(ctx, args.max_tokens, args.max_input_len, ModelTokenizer(llama, hf_style=True))

    if args.method == "ircot":
        pipeline: Any = IRCOTPipeline(config, retriever=retriever, generator=generator, max_iter=args.max_iter)
        parse: Any = ircot_pred_parse
    else:
        pipeline, parse = SequentialPipeline(config, retriever=retriever, generator=generator), None

    args.out.mkdir(parents=True, exist_ok=True)
    setting = {key: str(value) for key, value in vars(args).items() if key not in ("limit", "out")}
    setting_file = args.out / "setting.json"
    if setting_file.exists() and json.loads(setting_file.read_text()) != setting:
        print(f"error: {args.out} holds a run with another setting ({setting_file}); use another --out",
              file=sys.stderr)
        return 2
    setting_file.write_text(json.dumps(setting, indent=2) + "\n")
    records = args.out / "results.jsonl"
    done = {json.loads(line)["id"] for line in records.read_text().splitlines()} if records.exists() else set()
    em_metric, f1_metric = ExactMatch(config), F1_Score(config)
    for example in examples:
        if example.id in done:  # resumes where an interrupted run stopped
            continue
        started = time.time()
        dataset = Dataset(config, data=[{"id": example.id, "question": example.question, "golden_answers": example.answers}])
        dataset = pipeline.run(dataset, do_eval=False, pred_process_fun=parse)
        item = dataset[0]
        prediction = item.pred
        record = {
            "id": example.id, "question": example.question, "gold": example.answers, "prediction": prediction,
            "raw_prediction": item.output.get("raw_pred", prediction),
            "em": em_metric.calculate_em(prediction, example.answers),
            "f1": f1_metric.token_level_scores(prediction, example.answers)["f1"],
            "thoughts": [item.output[f"intermediate_output_iter{i}"]["new_thought"] for i in range(args.max_iter)
                         if f"intermediate_output_iter{i}" in item.output],
            "seconds": round(time.time() - started, 2),
        }
        with records.open("a") as handle:
            handle.write(json.dumps(record) + "\n")
        print(f"{len(done) + 1}/{len(examples)} f1={record['f1']:.2f} {prediction[:60]!r}", flush=True)
        done.add(example.id)

    rows = [json.loads(line) for line in records.read_text().splitlines()]
    if not rows:
        print("error: no question was run", file=sys.stderr)
        return 2
    summary = {
        "method": args.method, "form": args.form, **({"max_iter": args.max_iter} if args.method == "ircot" else {}),
        "max_input_len": args.max_input_len,
        "questions": len(rows), "em": round(100 * sum(r["em"] for r in rows) / len(rows), 2),
        "f1": round(100 * sum(r["f1"] for r in rows) / len(rows), 2),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
