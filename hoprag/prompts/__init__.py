"""The papers' prompts as templates. Static text comes first so llama.cpp can reuse its KV cache."""
