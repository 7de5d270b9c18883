"""Fine-tune a model on ReaRAG chains (`hoprag rearag build-data`) with LoRA, on a GPU.

    pip install 'torch' 'transformers>=4.56' 'peft' 'accelerate'      # on the GPU machine
    python -m hoprag.training.rearag_finetune --chains chains.jsonl --model Qwen/Qwen2.5-7B-Instruct --out rearag-lora

The loss is computed only on the model's thought/action turns (the `train` flag of each turn), as in the
paper's Eq. 2: every other token's label is -100. The script merges the LoRA weights into the base
model and saves it with its tokenizer, so it can be served:

- as `openai:<name>`: `vllm serve rearag-lora/merged --served-model-name rearag`, then
  `OPENAI_BASE_URL=http://127.0.0.1:8000/v1 hoprag ask "..." --method rearag --reasoner-llm openai:rearag`;
- as `local:<file.gguf>`: convert `rearag-lora/merged` with llama.cpp's `convert_hf_to_gguf.py` (and
  quantize it), then `--reasoner-llm local:rearag.gguf`.

The data loading and the masking are plain Python (tested on a tiny example); torch, transformers and peft
are imported only by `main`. The trainer is transformers' `Trainer` with PEFT's LoRA rather than TRL's
`SFTTrainer`: the per-turn `train` flags already give the labels, which is the one thing `SFTTrainer`'s
completion-only masking would add, and the tokenized rows are a plain list, so `datasets` is not needed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Protocol

IGNORE = -100  # the label of tokens the loss skips


class ChatTokenizer(Protocol):
    def apply_chat_template(self, conversation: list[dict[str, str]], tokenize: bool = ..., **kwargs: Any) -> str: ...

    def encode(self, text: str, add_special_tokens: bool = ...) -> list[int]: ...


def load_conversations(path: str | Path) -> list[list[dict[str, Any]]]:
    """The kept chains of a chains.jsonl as conversations; a malformed line is an error that names it."""
    conversations = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON ({error.msg}); was the build interrupted mid-line?") from error
        if not record.get("kept", True):
            continue
        messages = record.get("messages") or []
        if not messages or not all({"role", "content", "train"} <= set(m) for m in messages):
            raise ValueError(f"{path}:{number}: every turn needs role, content and train")
        if not any(m["train"] for m in messages):
            raise ValueError(f"{path}:{number}: no turn is marked for training")
        conversations.append(messages)
    return conversations


def tokenize_conversation(tokenizer: ChatTokenizer, messages: list[dict[str, Any]], max_length: int = 8192
                          ) -> dict[str, list[int]]:
    """input_ids and labels of one conversation: each turn is the text its chat-template rendering adds to
    the one before, and only the turns with `train` keep their token ids as labels, less the turn's header
    (Qwen's `<|im_start|>assistant\n`): the generation prompt supplies it at inference, so the model never
    writes it."""
    input_ids: list[int] = []
    labels: list[int] = []
    rendered = ""
    for index, message in enumerate(messages):
        prefix = [{"role": m["role"], "content": m["content"]} for m in messages[: index + 1]]
        text = tokenizer.apply_chat_template(prefix, tokenize=False)
        stable = text.startswith(rendered)
        piece = text[len(rendered):] if stable else text
        header = ""
        if message["train"] and stable:
            prompt = tokenizer.apply_chat_template(prefix[:-1], tokenize=False, add_generation_prompt=True)
            if prompt.startswith(rendered) and text.startswith(prompt):
                header = prompt[len(rendered):]
        rendered = text
        header_ids = tokenizer.encode(header, add_special_tokens=False) if header else []
        ids = tokenizer.encode(piece[len(header):], add_special_tokens=False)
        input_ids += header_ids + ids
        labels += [IGNORE] * len(header_ids) + (ids if message["train"] else [IGNORE] * len(ids))
    input_ids, labels = input_ids[:max_length], labels[:max_length]
    return {"input_ids": input_ids, "labels": labels, "attention_mask": [1] * len(input_ids)}


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - needs a GPU and the training stack
    parser = argparse.ArgumentParser(description="LoRA fine-tuning on ReaRAG chains (loss on thought/action turns).")
    parser.add_argument("--chains", required=True, help="chains.jsonl from hoprag rearag build-data")
    parser.add_argument("--model", required=True, help="base model on the Hugging Face hub or a local folder")
    parser.add_argument("--out", required=True, help="output folder (adapter, and merged/ for serving)")
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--grad-accum", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=8192)
    parser.add_argument("--lora-rank", type=int, default=16)
    args = parser.parse_args(argv)

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        DataCollatorForSeq2Seq,
        Trainer,
        TrainingArguments,
    )

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    rows = [tokenize_conversation(tokenizer, c, args.max_length) for c in load_conversations(args.chains)]
    trained = sum(label != IGNORE for row in rows for label in row["labels"])
    total = sum(len(row["labels"]) for row in rows)
    print(f"{len(rows)} conversations, {total} tokens, {trained} of them in the loss (thought/action turns)")
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, device_map="auto")
    model = get_peft_model(model, LoraConfig(r=args.lora_rank, lora_alpha=2 * args.lora_rank, lora_dropout=0.05,
                                             target_modules="all-linear", task_type="CAUSAL_LM"))
    trainer = Trainer(
        model=model,
        args=TrainingArguments(output_dir=args.out, num_train_epochs=args.epochs, learning_rate=args.lr,
                               per_device_train_batch_size=args.batch_size, gradient_accumulation_steps=args.grad_accum,
                               bf16=True, logging_steps=10, save_strategy="epoch", report_to=[]),
        train_dataset=rows,  # a list of tokenized rows: Trainer needs only len() and indexing
        # Pads input_ids with the pad token and labels with -100, so padding never counts in the loss.
        data_collator=DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE),
    )
    trainer.train()
    model.save_pretrained(args.out)
    merged = model.merge_and_unload()
    merged.save_pretrained(Path(args.out) / "merged")
    tokenizer.save_pretrained(Path(args.out) / "merged")
    print(f"saved the adapter in {args.out} and the merged model in {Path(args.out) / 'merged'}")


if __name__ == "__main__":  # pragma: no cover
    main()
