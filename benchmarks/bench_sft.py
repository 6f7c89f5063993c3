"""Warm-start SFT throughput: osint-selfplay's packed loop against TRL's SFTTrainer, same run.

Run: ``python benchmarks/bench_sft.py [--demos 600] [--steps 20] [--model tiny:128x3-v2048]``.
Both train the same tiny model on the same compact oracle demonstrations (loss on the assistant turns)
with about the same tokens per step (SFTTrainer: padded batches of ``--batch`` conversations, its own
``padding_free`` off as on the CPU; the packed loop: rows of ``--max-length`` tokens holding as many
conversations); the figure of merit is *demonstration tokens trained per second* (padding excluded),
and the target is the packed loop >= 2x SFTTrainer. Prints both and the ratio, then a JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def _demos(n: int) -> list[dict]:
    from osint_selfplay import data
    from osint_selfplay.config import config_from_dict
    from osint_selfplay.worlds import WorldPool

    cfg = config_from_dict(
        {
            "answerer": {
                "mode": "multi_turn",
                "observation_format": "compact",
                "action_format": "short",
                "max_turns": 8,
                "max_observation_chars": 4000,
            },
            "warm_start": {"answerer_examples": n},
        }
    )
    rows, _ = data.sft_multi_turn_rows(WorldPool.for_run(cfg), cfg)
    return rows


def packed(path: str, rows: list[dict], steps: int, max_length: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from osint_selfplay import sft

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    p = sft.pack(sft.tokenize(tok, [r["messages"] for r in rows]), max_length)
    real = sum(len(ids) for ids in p.input_ids)
    rows_per_step = max(1, 4096 // max_length)
    s = sft.SFTSettings(learning_rate=2e-3, batch_size=rows_per_step,
                        epochs=steps * rows_per_step / len(p), warmup_steps=5)
    t0 = time.perf_counter()
    out, _ = sft.train_packed(model, p, s, pad_id=tok.pad_token_id)
    seconds = time.perf_counter() - t0
    tokens = (out.rows or 0) * real / len(p)  # demonstration tokens (packing leaves little padding)
    return {"steps": out.steps, "seconds": seconds, "tokens_per_second": tokens / seconds}


def trl_sft(path: str, rows: list[dict], steps: int, batch: int) -> dict:
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    tok = AutoTokenizer.from_pretrained(path)
    with tempfile.TemporaryDirectory() as tmp:
        args = SFTConfig(
            output_dir=tmp,
            per_device_train_batch_size=batch,
            max_steps=steps,
            learning_rate=2e-3,
            warmup_steps=5,
            max_length=1024,
            logging_steps=steps,
            save_strategy="no",
            assistant_only_loss=True,
            use_cpu=True,
            bf16=False,
            report_to="none",
            disable_tqdm=True,
        )
        trainer = SFTTrainer(model=path, args=args, train_dataset=Dataset.from_list(rows), processing_class=tok)
        t0 = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - t0
        tokens = sum(len(ids) for ids in trainer.train_dataset[: steps * batch]["input_ids"])
    return {"steps": steps, "seconds": seconds, "tokens_per_second": tokens / seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--demos", type=int, default=600)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=10, help="SFTTrainer conversations per step (~4,000 tokens)")
    ap.add_argument("--max-length", type=int, default=768)
    ap.add_argument("--model", default="tiny:128x3-v2048")
    args = ap.parse_args()
    from osint_eval.modeling import resolve_model

    path = resolve_model(args.model)
    rows = _demos(args.demos)
    a = packed(path, rows, args.steps, args.max_length)
    b = trl_sft(path, rows, args.steps, args.batch)
    ratio = a["tokens_per_second"] / b["tokens_per_second"]
    print(
        f"packed loop:     {a['tokens_per_second']:8.0f} demonstration tokens/s "
        f"({a['steps']} steps, {a['seconds']:.1f} s)"
    )
    print(
        f"TRL SFTTrainer:  {b['tokens_per_second']:8.0f} demonstration tokens/s "
        f"({b['steps']} steps, {b['seconds']:.1f} s)"
    )
    print(f"ratio: {ratio:.2f}x (target >= 2x: {'met' if ratio >= 2 else 'missed'})")
    print(json.dumps({"packed": a, "trl": b, "ratio": ratio, "model": args.model, "demos": len(rows)}))


if __name__ == "__main__":
    main()
