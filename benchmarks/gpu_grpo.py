"""GPU figures: GRPO step time and generation tokens/s for a randomly initialised Qwen2-shaped model
of about 0.5B parameters (Qwen2.5-0.5B's shape), with Hugging Face generation (no vLLM).

Self-contained: needs torch, transformers, trl, datasets and tokenizers (ship the last four as wheels
where only torch is installed); downloads nothing. The tokenizer is a byte-level BPE trained here on
synthetic OSINT-like text; the model keeps Qwen2.5-0.5B's vocabulary size.

    python benchmarks/gpu_grpo.py [--steps 5] [--batch 32] [--num-generations 8] [--max-new-tokens 128]

Prints one JSON line (device, parameters, generation tokens/s, GRPO seconds per step).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time


def synthetic_text(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    rels = ["works_at", "lives_in", "alias_of", "knows", "authored", "mentions", "attended"]
    lines = []
    for _ in range(n):
        triples = "\n".join(f"person_{rng.randrange(500)} {rng.choice(rels)} org_{rng.randrange(60)}" for _ in range(8))
        lines.append(f"Question: who works at org_{rng.randrange(60)}?\nContext:\n{triples}")
    return lines


def build(tmp: str) -> tuple[object, object]:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        synthetic_text(2000),
        trainers.BpeTrainer(vocab_size=4000, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"]),
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    fast.chat_template = (
        "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    )
    config = Qwen2Config(
        vocab_size=151936,
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=24,
        num_attention_heads=14,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(tmp)
    fast.save_pretrained(tmp)
    return model, fast


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--num-generations", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    args = ap.parse_args()
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    if not torch.cuda.is_available():
        raise SystemExit("gpu_grpo.py needs a CUDA device")
    tmp = tempfile.mkdtemp()
    model, tok = build(tmp)
    model.cuda().eval()
    prompts = [[{"role": "user", "content": t}] for t in synthetic_text(args.batch, seed=1)]
    texts = [tok.apply_chat_template(p, add_generation_prompt=True, tokenize=False) for p in prompts]
    enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to("cuda")
    with torch.no_grad():
        model.generate(**enc, max_new_tokens=8, do_sample=True)  # warm-up
        gen_runs = []
        for _ in range(3):  # the first full-length call still allocates caches: report every run, use the best
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = model.generate(
                **enc, max_new_tokens=args.max_new_tokens, min_new_tokens=args.max_new_tokens, do_sample=True
            )
            torch.cuda.synchronize()
            gen_runs.append(time.perf_counter() - t0)
    new_tokens = int((out[:, enc["input_ids"].shape[1]:] != tok.pad_token_id).sum())
    gen_s = min(gen_runs)

    def reward(completions, **kw):
        return [float(len(c[0]["content"]) % 7) for c in completions]

    cfg = GRPOConfig(
        output_dir=f"{tmp}/grpo",
        max_steps=args.steps + 1,
        per_device_train_batch_size=args.batch,
        num_generations=args.num_generations,
        max_completion_length=args.max_new_tokens,
        bf16=True,
        gradient_checkpointing=False,
        learning_rate=1e-6,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
    )
    trainer = GRPOTrainer(model=tmp, reward_funcs=[reward], args=cfg, processing_class=tok,
                          train_dataset=Dataset.from_list([{"prompt": p} for p in prompts * 8]))
    times: list[float] = []

    from transformers import TrainerCallback

    class Timer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            torch.cuda.synchronize()
            self.t = time.perf_counter()

        def on_step_end(self, *a, **k):
            torch.cuda.synchronize()
            times.append(time.perf_counter() - self.t)

    trainer.add_callback(Timer())
    trainer.train()
    steady = times[1:] or times
    print(
        json.dumps(
            {
                "device": torch.cuda.get_device_name(0),
                "parameters": sum(p.numel() for p in model.parameters()),
                "generation_tokens_per_s": new_tokens / gen_s,
                "generation_seconds_runs": gen_runs,
                "generation_batch": args.batch,
                "max_new_tokens": args.max_new_tokens,
                "grpo_seconds_per_step": sum(steady) / len(steady),
                "grpo_steps_timed": len(steady),
                "completions_per_step": args.batch,
                "num_generations": args.num_generations,
                "torch": torch.__version__,
                "date": time.strftime("%Y-%m-%d"),
            }
        )
    )


if __name__ == "__main__":
    main()
