"""Packed SFT (`osint_selfplay.sft`): the loss falls on the model's turns only, packed conversations
do not attend to each other, and training runs by epochs or by wall time, continuing where it stopped."""

from __future__ import annotations

import pytest

from osint_selfplay import sft
from osint_selfplay.errors import ConfigError

CONVERSATIONS = [
    [
        {"role": "system", "content": "You investigate."},
        {"role": "user", "content": "Who is @singho?"},
        {"role": "assistant", "content": "get_profile @singho"},
        {"role": "user", "content": "step 1/8\nget_profile ok\naccount account_46"},
        {"role": "assistant", "content": "answer account_46"},
    ],
    [
        {"role": "system", "content": "You investigate."},
        {"role": "user", "content": "Where does person_3 live?"},
        {"role": "assistant", "content": "answer loc_2"},
    ],
]


@pytest.fixture(scope="module")
def tokenizer(tiny_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path)


def test_the_mask_covers_exactly_the_assistant_turns(tokenizer):
    (ids, mask), _ = sft.tokenize(tokenizer, CONVERSATIONS)
    assert ids == tokenizer.apply_chat_template(CONVERSATIONS[0], tokenize=True, return_dict=True)["input_ids"]
    trained = tokenizer.decode([t for t, m in zip(ids, mask) if m])
    assert trained == "get_profile @singho<|im_end|>answer account_46<|im_end|>"
    untrained = tokenizer.decode([t for t, m in zip(ids, mask) if not m])
    assert "Who is @singho?" in untrained and "get_profile ok" in untrained and "account_46" in untrained


def test_packing_restarts_positions_and_drops_what_does_not_fit(tokenizer):
    tokenized = sft.tokenize(tokenizer, CONVERSATIONS * 3)
    lengths = [len(ids) for ids, _ in tokenized]
    width = lengths[0] + lengths[1]
    packed = sft.pack(tokenized, width)
    assert len(packed) == 3 and packed.conversations == 6 and packed.dropped_too_long == 0
    for ids, pos, labels in zip(packed.input_ids, packed.position_ids, packed.labels):
        assert len(ids) == len(pos) == len(labels) == width
        assert pos == list(range(lengths[0])) + list(range(lengths[1]))  # first-fit decreasing: the long one first
        assert sum(1 for x in labels if x != -100) == sum(sum(m) for _, m in tokenized[:2])
    short = sft.pack(tokenized, lengths[1])
    assert short.dropped_too_long == 3 and short.conversations == 3


def test_packed_conversations_do_not_attend_to_each_other(tokenizer, tiny_path):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path).eval()
    tokenized = sft.tokenize(tokenizer, CONVERSATIONS)
    packed = sft.pack(tokenized, 10_000)
    batch = sft._batch(packed, [0], tokenizer.pad_token_id)
    with torch.no_grad():
        together = model(input_ids=batch["input_ids"], position_ids=batch["position_ids"], use_cache=False).logits[0]
        first_len = len(tokenized[0][0])
        alone = [model(input_ids=torch.tensor([ids]), use_cache=False).logits[0] for ids, _ in tokenized]
    assert torch.allclose(together[:first_len], alone[0], atol=1e-4)
    assert torch.allclose(together[first_len:], alone[1], atol=1e-4)  # would differ if it saw the first conversation


def test_the_loss_on_labelled_positions_equals_the_full_forward_and_its_gradients(tokenizer, tiny_path):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 3), 200)
    batch = sft._batch(packed, list(range(len(packed))), tokenizer.pad_token_id)
    full = model(**batch, use_cache=False).loss
    full.backward()
    full_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    fast = sft._loss(model, batch)
    fast.backward()
    assert fast.item() == pytest.approx(full.item(), rel=1e-5) and full.item() > 1.0
    assert all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(full_grads, model.parameters()))


def _settings(**kw):
    return sft.SFTSettings(**{"learning_rate": 5e-3, "batch_size": 2, "warmup_steps": 2, "logging_steps": 2,
                              **kw})


def test_training_lowers_the_loss_and_changes_parameters(tokenizer, tiny_path):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    before = [p.detach().clone() for p in model.parameters()]
    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 8), 256)
    result, result_log = sft.train_packed(model, packed, _settings(epochs=12.0), pad_id=tokenizer.pad_token_id)
    assert result.stopped_by == "epochs" and result.steps == -(-int(len(packed) * 12) // 2)
    assert result_log[-1]["loss"] < 0.5 * result_log[0]["loss"]
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert result.tokens > 0 and result.next_row == (len(packed) * 12) % len(packed)


def test_a_time_budget_stops_training_and_a_continuation_starts_where_it_stopped(tokenizer, tiny_path):
    from transformers import AutoModelForCausalLM

    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 8), 128)
    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    stopped, _ = sft.train_packed(model, packed, _settings(epochs=None, max_seconds=0.5), pad_id=tokenizer.pad_token_id)
    assert stopped.stopped_by == "max_seconds" and stopped.steps > 0 and stopped.seconds < 10
    order = [r for batch in sft._epoch_stream(packed, _settings(epochs=2.0)) for r in batch]
    later = [r for batch in sft._epoch_stream(packed, _settings(epochs=2.0, skip_rows=3)) for r in batch]
    assert len(order) == len(later) == 2 * len(packed) and later[: len(order) - 3] == order[3:]


def test_the_learning_rate_warms_up_holds_then_decays_to_zero_at_the_end_of_the_budget(tokenizer, tiny_path):
    from transformers import AutoModelForCausalLM

    timed = _settings(epochs=None, max_seconds=100.0, warmup_steps=10, decay_fraction=0.25)
    assert sft.lr_scale(timed, 0, 0.0, None) == pytest.approx(0.1)  # warm-up
    assert sft.lr_scale(timed, 50, 70.0, None) == 1.0  # stable
    assert sft.lr_scale(timed, 80, 87.5, None) == pytest.approx(0.5)  # half-way through the last 25 s
    assert sft.lr_scale(timed, 90, 100.0, None) == 0.0
    by_steps = _settings(epochs=1.0, warmup_steps=1, decay_fraction=0.5)
    assert sft.lr_scale(by_steps, 75, 0.0, 100) == pytest.approx(0.5)  # the epochs' steps bound it
    assert (
        sft.lr_scale(_settings(epochs=None, max_seconds=100.0, warmup_steps=1), 99, 99.0, None) == 1.0
    )  # off by default
    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 8), 256)
    _, logs = sft.train_packed(model, packed, _settings(epochs=4.0, warmup_steps=1, decay_fraction=0.5),
                               pad_id=tokenizer.pad_token_id)
    rates = [e["learning_rate"] for e in logs]
    steps = -(-int(len(packed) * 4) // 2)
    assert rates[0] == pytest.approx(5e-3) and rates == sorted(rates, reverse=True) and rates[-1] < 5e-3
    assert logs[-1]["learning_rate"] == pytest.approx(5e-3 * (1 - (logs[-1]["step"] - 1) / steps) / 0.5)


def test_nothing_to_train_is_a_clear_error(tokenizer, tiny_path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    with pytest.raises(ConfigError, match="max_length"):
        sft.train_packed(model, sft.pack(sft.tokenize(tokenizer, CONVERSATIONS), 4), _settings(), pad_id=0)


def test_a_template_without_assistant_markers_gets_the_same_mask_rendered_prefix_by_prefix(tokenizer, tiny_path):
    """Most hub templates (SmolLM2's, Qwen's) have no {% generation %} markers: the mask derived by rendering each
    assistant turn's prefix equals, token for token, the one the markers give."""
    from transformers import AutoTokenizer

    marked = sft.tokenize(tokenizer, CONVERSATIONS)
    tok = AutoTokenizer.from_pretrained(tiny_path)
    tok.chat_template = tok.chat_template.replace("{% generation %}", "").replace("{% endgeneration %}", "")
    assert not sft.marks_assistant(tok.chat_template) and sft.marks_assistant(tokenizer.chat_template)
    assert sft.tokenize(tok, CONVERSATIONS) == marked


def test_a_template_that_is_not_prefix_stable_or_shows_no_assistant_text_is_refused(tiny_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_path)
    tok.chat_template = "{% for m in messages|reverse %}{{ m['content'] }}{% endfor %}"  # the last message first
    with pytest.raises(ConfigError, match="prefix by prefix"):
        sft.tokenize(tok, CONVERSATIONS)
    tok.chat_template = ("{% for m in messages %}{% if m['role'] != 'assistant' %}{{ m['content'] }}{% endif %}"
                         "{% endfor %}")
    with pytest.raises(ConfigError, match="marks no assistant tokens"):
        sft.tokenize(tok, CONVERSATIONS)


def test_a_stretched_schedule_is_the_warm_start_with_the_extra_seconds_added():
    # 370 s warm start decaying over its last 25% (from 277.5 s), 27 s more: 119.5 s from the branch,
    # the decay 25% of 397 s = 99.25 s, so 20.25 s more of the stable phase first
    seconds, decay = sft.stretched(370.0, 277.5, 27.0)
    assert seconds == pytest.approx(119.5) and decay * seconds == pytest.approx(0.25 * 397.0)
    assert sft.stretched(100.0, 75.0, 0.0) == pytest.approx((25.0, 1.0))  # nothing added: the same decay again
    stretched = sft.SFTSettings(learning_rate=1.0, batch_size=1, epochs=None, warmup_steps=0, max_seconds=seconds,
                                decay_fraction=decay)
    assert sft.lr_scale(stretched, 10, 20.0, None) == 1.0 and sft.lr_scale(stretched, 99, 119.5, None) == 0.0


def test_the_warm_start_saves_its_state_where_the_decay_begins_and_a_control_resumes_from_it(
    tokenizer, tiny_path, tmp_path
):
    import torch
    from transformers import AutoModelForCausalLM

    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 8), 256)
    settings = _settings(epochs=4.0, warmup_steps=1, decay_fraction=0.5)
    total = -(-int(len(packed) * 4) // 2)
    warm = AutoModelForCausalLM.from_pretrained(tiny_path)
    result, _ = sft.train_packed(warm, packed, settings, pad_id=tokenizer.pad_token_id,
                                 branch_path=tmp_path / "decay.pt")
    state = torch.load(tmp_path / "decay.pt", weights_only=True)
    k = result.decay_start.step
    assert k == state["step"] == next(i for i in range(total) if i / total > 0.5) and state["next_row"] == (
        2 * k
    ) % len(packed)
    assert state["optimizer"]["state"] and not torch.equal(
        state["model"]["lm_head.weight"], warm.state_dict()["lm_head.weight"]
    )
    # the same schedule without a decay, stopped at that step, is that state exactly: nothing differs before the decay
    plain = AutoModelForCausalLM.from_pretrained(tiny_path)
    sft.train_packed(
        plain, packed, _settings(epochs=2 * k / len(packed), warmup_steps=1), pad_id=tokenizer.pad_token_id
    )
    assert all(torch.equal(v, plain.state_dict()[n]) for n, v in state["model"].items())
    # resumed with nothing added, it decays to 0 again from there on the rows the warm start read next
    resumed = AutoModelForCausalLM.from_pretrained(tiny_path)
    again, again_log = sft.train_packed(
        resumed,
        packed,
        _settings(
            epochs=(2 * (total - k)) / len(packed), warmup_steps=0, decay_fraction=1.0, skip_rows=state["next_row"]
        ),
        pad_id=tokenizer.pad_token_id,
        start=state,
    )
    last = again_log[-1]
    assert again.steps == total - k and last["learning_rate"] == pytest.approx(
        5e-3 * (1 - (last["step"] - 1) / (total - k))
    )
    assert not torch.equal(resumed.state_dict()["lm_head.weight"], state["model"]["lm_head.weight"])


def test_a_relabelled_conversation_trains_the_teachers_turns_only(tokenizer):
    """``masked_turns``: the student's own first turns are context; the loss falls on the teacher's after them."""
    (ids, mask), _ = sft.tokenize(tokenizer, CONVERSATIONS, masked_turns=[1, 0])
    trained = tokenizer.decode([t for t, m in zip(ids, mask) if m])
    assert trained == "answer account_46<|im_end|>"
    (_, full), (_, second) = sft.tokenize(tokenizer, CONVERSATIONS)
    assert sum(mask) < sum(full) and sft.tokenize(tokenizer, CONVERSATIONS, masked_turns=[1, 0])[1][1] == second


def test_mask_first_turns_counts_runs_of_the_assistant_mask():
    mask = [0, 1, 1, 0, 0, 1, 0, 1, 1, 1]
    assert sft.mask_first_turns(mask, 0) == mask
    assert sft.mask_first_turns(mask, 1) == [0, 0, 0, 0, 0, 1, 0, 1, 1, 1]
    assert sft.mask_first_turns(mask, 2) == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1]
    assert sft.mask_first_turns(mask, 5) == [0] * 10


def test_a_second_set_fills_its_share_of_every_step_and_the_main_stream_keeps_its_own_count(tokenizer, tiny_path,
                                                                                           monkeypatch):
    from transformers import AutoModelForCausalLM

    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 8), 128)
    extra = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS[1:] * 3, masked_turns=[0] * 3), 128)
    seen: list[list[int]] = []
    real = sft._batch

    def spy(p, rows, pad_id):
        seen.append(list(rows))
        return real(p, rows, pad_id)

    monkeypatch.setattr(sft, "_batch", spy)
    settings = _settings(batch_size=3, epochs=1.0, extra_rows=1)
    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    result, _ = sft.train_packed(model, packed, settings, pad_id=tokenizer.pad_token_id, extra=extra)
    main = [r for batch in sft._epoch_stream(packed, settings) for r in batch]
    assert [r for rows in seen for r in rows if r < len(packed)] == main  # the main stream, unchanged, 2 rows a step
    assert all(sum(r >= len(packed) for r in rows) == 1 for rows in seen)  # one row of the second set every step
    taken = [r - len(packed) for rows in seen for r in rows if r >= len(packed)]
    assert sorted(taken[: len(extra)]) == list(range(len(extra)))  # each of its rows once before any repeats
    assert result.steps == len(seen) == -(-len(packed) // 2) and result.next_row == 0
    with pytest.raises(ConfigError, match="extra_rows must be in"):
        sft.train_packed(model, packed, _settings(batch_size=2, epochs=1.0, extra_rows=2), pad_id=0, extra=extra)
    with pytest.raises(ConfigError, match="needs a non-empty second set"):
        sft.train_packed(model, packed, _settings(epochs=1.0, extra_rows=1), pad_id=0)


def test_a_share_of_a_step_is_at_least_one_row_and_leaves_the_main_stream_one():
    from osint_selfplay.phases import extra_rows

    assert (
        extra_rows(8, 0.25) == 2 and extra_rows(8, 0.01) == 1 and extra_rows(8, 0.99) == 7 and extra_rows(8, 0.0) == 0
    )


def test_a_step_budget_stops_training_there_and_bounds_the_decay(tokenizer, tiny_path):
    from transformers import AutoModelForCausalLM

    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 8), 128)
    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    settings = _settings(epochs=None, max_steps=7, warmup_steps=1, decay_fraction=0.5, logging_steps=1)
    result, result_log = sft.train_packed(model, packed, settings, pad_id=tokenizer.pad_token_id)
    assert result.stopped_by == "max_steps" and result.steps == 7
    rates = [e["learning_rate"] for e in result_log]
    # the decay runs over the last half of the 7 steps (progress step / 7 past 0.5), down towards 0
    assert rates[:4] == [5e-3] * 4 and rates[4] == pytest.approx(5e-3 * (1 - 4 / 7) / 0.5) and rates[-1] < rates[4]
    fewer, _ = sft.train_packed(AutoModelForCausalLM.from_pretrained(tiny_path), packed,
                             _settings(epochs=1.0, max_steps=100), pad_id=tokenizer.pad_token_id)
    assert fewer.stopped_by == "epochs" and fewer.steps == -(-len(packed) // 2)  # whichever ends first
    with pytest.raises(ConfigError, match="needs epochs, max_steps or max_seconds"):
        sft.train_packed(model, packed, _settings(epochs=None), pad_id=tokenizer.pad_token_id)


def test_bfloat16_autocast_trains_float32_weights_and_lowers_the_loss(tokenizer, tiny_path):
    import torch
    from transformers import AutoModelForCausalLM

    from osint_selfplay.precision import native_bfloat16

    # where torch emulates bfloat16 (no AVX512-BF16 / AMX-BF16 / ARM BF16) a product runs ~100x slower than in
    # float32: the test shrinks to a third of the epochs there and asks only that the loss falls
    native, evidence = native_bfloat16("cpu")
    epochs, drop = (12.0, 0.5) if native else (4.0, 0.9)
    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 8), 256)
    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    result, result_log = sft.train_packed(model, packed, _settings(epochs=epochs, autocast="bfloat16"),
                                          pad_id=tokenizer.pad_token_id)
    assert result_log[-1]["loss"] < drop * result_log[0]["loss"], evidence
    assert all(p.dtype == torch.float32 for p in model.parameters())
    # under autocast the loss is the float32 one up to bfloat16 rounding of the products
    batch = sft._batch(packed, [0, 1], tokenizer.pad_token_id)
    exact = float(sft._loss(model, batch))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = float(sft._loss(model, batch))
    assert mixed == pytest.approx(exact, rel=0.05) and mixed != exact
    with pytest.raises(ConfigError, match="autocast must be one of"):
        sft.train_packed(model, packed, _settings(epochs=1.0, autocast="fp8"), pad_id=tokenizer.pad_token_id)


def test_a_measurement_every_n_steps_sees_the_model_then_and_costs_no_training_time(tokenizer, tiny_path, monkeypatch):
    import time
    import types

    from transformers import AutoModelForCausalLM

    packed = sft.pack(sft.tokenize(tokenizer, CONVERSATIONS * 8), 128)
    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    seen: list[tuple[int, bool]] = []

    def measure(step, m):
        m.eval()
        seen.append((step, m is model))
        time.sleep(0.3)

    t0 = time.perf_counter()
    result, _ = sft.train_packed(model, packed, _settings(epochs=None, max_steps=10), pad_id=tokenizer.pad_token_id,
                              every=4, on_step=measure)
    wall = time.perf_counter() - t0
    assert seen == [(4, True), (8, True)] and result.steps == 10 and model.training is False
    assert wall - result.seconds >= 0.6  # the two 0.3 s measurements are not in the training time
    # a clock that a measurement moves 1000 s ahead: were its time counted, a 100 s budget would end after step 1
    offset = [0.0]
    monkeypatch.setattr(sft, "time", types.SimpleNamespace(perf_counter=lambda: time.perf_counter() + offset[0]))
    timed, _ = sft.train_packed(AutoModelForCausalLM.from_pretrained(tiny_path), packed,
                             _settings(epochs=None, max_seconds=100, max_steps=4), pad_id=tokenizer.pad_token_id,
                             every=1, on_step=lambda step, m: offset.__setitem__(0, offset[0] + 1000))
    assert (timed.steps, timed.stopped_by) == (4, "max_steps") and timed.seconds < 100
