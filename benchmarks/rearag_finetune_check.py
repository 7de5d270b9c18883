"""End-to-end check of `hoprag.training.rearag_finetune` on a GPU machine that has no model weights and no network.

It builds a tiny random Qwen2 (2 layers, hidden size 64) around the real Qwen2.5 tokenizer and chat template,
fine-tunes it with the script on a chains.jsonl, then reloads the merged model and reports the mean loss on the
trained (thought/action) tokens before and after, and what the merged model writes after a chain's prompt.
It checks the pipeline (masking, LoRA, Trainer, merge, save, reload), not what the chains teach a real model.

The tokenizer folder comes from the embedded model's GGUF, here, once (needs `pip install gguf`):

    python -c "from transformers import AutoTokenizer as T; T.from_pretrained('MODELS_DIR',
        gguf_file='qwen2.5-coder-0.5b-instruct-q4_k_m.gguf').save_pretrained('qwen-tokenizer')"

then, on the GPU machine (torch, transformers >= 4.56, peft, accelerate):

    python benchmarks/rearag_finetune_check.py --tokenizer qwen-tokenizer --chains chains.jsonl --work /tmp/ft-check
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing hoprag

from hoprag.training.rearag_finetune import IGNORE, load_conversations, tokenize_conversation  # noqa: E402
from hoprag.training.rearag_finetune import main as finetune  # noqa: E402


def main() -> None:  # pragma: no cover - needs a GPU and the training stack
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", required=True, help="folder with the Qwen2.5 tokenizer and chat template")
    parser.add_argument("--chains", required=True, help="chains.jsonl from hoprag rearag build-data")
    parser.add_argument("--work", default="/tmp/rearag-finetune-check", help="folder for the tiny model and the output")
    parser.add_argument("--epochs", type=float, default=10.0)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    work = Path(args.work)
    base, out = work / "tiny", work / "out"
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                         max_position_embeddings=8192)
    torch.manual_seed(0)
    Qwen2ForCausalLM(config).save_pretrained(base)
    tokenizer.save_pretrained(base)

    finetune(["--chains", args.chains, "--model", str(base), "--out", str(out), "--epochs", str(args.epochs),
              "--grad-accum", "1", "--lr", "2e-3"])

    rows = [tokenize_conversation(tokenizer, c) for c in load_conversations(args.chains)]
    for name in (base, out / "merged"):
        model = AutoModelForCausalLM.from_pretrained(name, dtype=torch.float32).cuda().eval()
        with torch.no_grad():
            losses = [model(input_ids=torch.tensor([row["input_ids"]]).cuda(),
                            labels=torch.tensor([row["labels"]]).cuda()).loss.item() for row in rows]
        print(f"{name}: mean loss on the trained tokens {sum(losses) / len(losses):.3f}")
    first = rows[0]
    prompt_length = next(i for i, label in enumerate(first["labels"]) if label != IGNORE)
    output = model.generate(torch.tensor([first["input_ids"][:prompt_length]]).cuda(), max_new_tokens=24,
                            do_sample=False)
    print("the merged model continues the first chain's prompt with:",
          repr(tokenizer.decode(output[0, prompt_length:])))


if __name__ == "__main__":  # pragma: no cover
    main()
