"""`osint_eval.decoding.Decoder` against Hugging Face ``generate``: the same tokens under greedy decoding
(per-row end tokens, per-row limits, a prompt that extends an earlier sequence), seeded sampling, and
one-line errors for what it does not cover."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from osint_eval.decoding import Decoder
from osint_eval.errors import EvalError
from osint_eval.modeling import load_model_and_tokenizer
from osint_eval.policies import HFPolicy
from osint_eval.runner import run_multi_turn
from osint_eval.tasks import load_tasks
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets

TINY = "tiny:64x2"


@pytest.fixture(scope="module")
def tiny():
    from osint_eval.modeling import tiny_path

    path = str(tiny_path(TINY))
    model, tokenizer = load_model_and_tokenizer(path, dtype="float32")
    return path, model, tokenizer


@pytest.fixture(scope="module")
def prompts(tiny):
    _, _, tokenizer = tiny
    tasks = load_tasks("v0:dev", limit=10).tasks
    # prompts of different lengths (left padding differs per row)
    return [tokenizer(t.question * (1 + i % 3), add_special_tokens=False)["input_ids"] for i, t in enumerate(tasks)]


def _reference(model, prompts, eos, max_new_tokens, pad):
    """Hugging Face ``generate`` on one left-padded batch, each row cut after its first end token."""
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    with torch.no_grad():
        gen = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens, do_sample=False,
                             eos_token_id=eos, pad_token_id=pad, temperature=None, top_p=None, top_k=None)
    out = []
    for row in gen[:, width:].tolist():
        cut = next((k for k, t in enumerate(row) if t in eos), len(row) - 1)
        out.append(row[: cut + 1])
    return out


@pytest.fixture(scope="module")
def eos(tiny, prompts):
    """An end token this untrained model emits part-way through some rows (so rows finish at different steps)."""
    _, model, tokenizer = tiny
    free = _reference(model, prompts, [tokenizer.vocab_size + 1], 12, tokenizer.pad_token_id)
    counts = Counter(t for row in free for t in row[2:])
    token = counts.most_common(1)[0][0]
    ends = {next((k for k, t in enumerate(row) if t == token), None) for row in free}
    assert len(ends) >= 2, "the end token must end rows at different steps"
    return [token]


@pytest.mark.parametrize("mode", ["exact", pytest.param("prefix", marks=pytest.mark.slow)])
def test_greedy_tokens_equal_generate(tiny, prompts, eos, mode):
    _, model, tokenizer = tiny
    pad = tokenizer.pad_token_id
    ref = _reference(model, prompts, eos, 12, pad)
    assert any(len(r) < 12 for r in ref) and any(len(r) == 12 for r in ref)  # some rows end early, some run out
    decoder = Decoder(model, eos_token_ids=eos, pad_token_id=pad, mode=mode)
    assert decoder.generate(prompts, max_new_tokens=12) == ref
    # the next turn: each prompt extended by what it generated and a few more tokens (a multi-turn episode)
    turn2 = [p + r + p[:5] for p, r in zip(prompts, ref)]
    before = decoder.reused_tokens
    assert decoder.generate(turn2, max_new_tokens=12) == _reference(model, turn2, eos, 12, pad)
    reused = decoder.reused_tokens - before
    if mode == "prefix":  # every row prefilled only what is new: its first turn came back from the store
        assert reused == sum(len(p) + len(r) - 1 for p, r in zip(prompts, ref))
    else:
        assert reused == 0


def test_per_row_limits_and_a_bounded_store(tiny, prompts, eos):
    _, model, tokenizer = tiny
    decoder = Decoder(model, eos_token_ids=eos, pad_token_id=tokenizer.pad_token_id, mode="prefix", max_entries=3)
    limits = [1 + i % 4 for i in range(len(prompts))]
    out = decoder.generate(prompts, max_new_tokens=limits)
    ref = _reference(model, prompts, eos, 4, tokenizer.pad_token_id)
    assert out == [r[:n] for r, n in zip(ref, limits)]  # each row stops at its own limit (or its end token)
    assert len(decoder.store.entries) == 3  # the oldest finished rows left the store
    decoder.clear()
    assert not decoder.store.entries and decoder.store.longest(prompts[0]) == (0, [], [])


def test_seeded_sampling_is_reproducible_and_top_k_1_is_greedy(tiny, prompts, eos):
    _, model, tokenizer = tiny
    decoder = Decoder(model, eos_token_ids=eos, pad_token_id=tokenizer.pad_token_id)

    def sample(seed, **kw):
        generator = torch.Generator().manual_seed(seed)
        return decoder.generate(prompts, max_new_tokens=8, temperature=1.0, generator=generator, **kw)

    assert sample(1) == sample(1) and sample(1) != sample(2)
    assert sample(3, top_k=1) == decoder.generate(prompts, max_new_tokens=8)


@pytest.mark.slow
def test_multi_turn_episodes_are_the_same_in_every_decoding_mode(tiny):
    path, _, _ = tiny
    dev = load_tasks("v0:dev", limit=6)
    runs = {}
    for mode in ("generate", "exact", "prefix"):
        policy = HFPolicy(path, batch_size=4, max_new_tokens=10, decoding=mode)
        assert policy.describe()["decoding"] == mode
        episodes = run_multi_turn(policy, dev.world, dev.tasks, spec=EpisodeSpec(Budgets(max_steps=3)))
        runs[mode] = [(r.transcript, r.end, r.reward) for r in episodes]
    assert runs["exact"] == runs["generate"] and runs["prefix"] == runs["generate"]


def test_what_the_decoder_does_not_cover_is_a_one_line_error(tiny, prompts):
    path, model, tokenizer = tiny
    pad = tokenizer.pad_token_id
    with pytest.raises(EvalError, match="'exact' or 'prefix'"):
        Decoder(model, eos_token_ids=[0], pad_token_id=pad, mode="generate")
    with pytest.raises(EvalError, match="decoding must be one of generate, exact, prefix; got 'fast'"):
        HFPolicy(path, decoding="fast")
    decoder = Decoder(model, eos_token_ids=[0], pad_token_id=pad)
    with pytest.raises(EvalError, match="at least one token"):
        decoder.generate([prompts[0], []], max_new_tokens=4)
    with pytest.raises(EvalError, match="one positive limit per prompt"):
        decoder.generate(prompts[:2], max_new_tokens=[4])
    with pytest.raises(EvalError, match="one positive limit per prompt"):
        decoder.generate(prompts[:2], max_new_tokens=0)
    assert decoder.generate([], max_new_tokens=4) == []
    config = model.config
    try:  # a model with sliding-window layers (Gemma, Mistral) keeps Hugging Face generate
        model.config = type(config).from_dict({**config.to_dict(), "sliding_window": 4})
        with pytest.raises(EvalError, match="full attention in every layer.*a sliding window.*use decoding='generate'"):
            Decoder(model, eos_token_ids=[0], pad_token_id=pad)
    finally:
        model.config = config
