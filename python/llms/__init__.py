"""Small decoder LMs of real architectures (Llama with grouped-query attention, GPT-2, Qwen2, Phi-3) built with
transformers from seed 0 on the byte LM's local text, and their exports: see python/generate_llms.py."""
