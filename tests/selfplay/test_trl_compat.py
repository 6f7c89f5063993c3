"""The TRL seam: the one private call (GRPOTrainer._generate_single_turn) and the pinned range."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from osint_selfplay import trl_compat
from osint_selfplay.errors import ConfigError, IncompatibleTRLError

ROOT = Path(__file__).resolve().parents[2]


def test_installed_trl_generate_signature_is_the_one_the_adapter_calls():
    from trl import GRPOTrainer

    # fails loudly when a TRL upgrade changes the private method the multi-turn rollout needs
    assert tuple(inspect.signature(GRPOTrainer._generate_single_turn).parameters) == trl_compat.GENERATE_PARAMETERS
    trl_compat.check_generate_signature()  # no error on the installed TRL


def test_a_trainer_with_another_generate_signature_is_refused_with_the_fix():
    class NewerTrainer:
        def _generate_single_turn(self, prompt_ids, sampling_params):  # a hypothetical later TRL
            raise AssertionError("must not be called")

    with pytest.raises(
        IncompatibleTRLError,
        match=r"NewerTrainer._generate_single_turn\(self, prompt_ids, sampling_params\) "
        r"differs .* install trl>=1.16,<1.17",
    ):
        trl_compat.generate_turn(NewerTrainer(), [[1, 2]])

    class NoGenerator:
        pass

    with pytest.raises(IncompatibleTRLError, match=r"_generate_single_turn \(missing\)"):
        trl_compat.check_generate_signature(NoGenerator)


def test_generate_turn_passes_token_ids_and_returns_lists():
    calls = []

    class FakeTrainer:
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            calls.append((prompt_ids, images, multimodal_fields, num_generations))
            return [(7, 8), (9,)], None

    assert trl_compat.generate_turn(FakeTrainer(), [[1, 2], [3]]) == [[7, 8], [9]]
    assert calls == [([[1, 2], [3]], None, {}, 1)]


def test_package_pins_trl_to_the_checked_minor_version():
    import tomllib
    from packaging.requirements import Requirement
    from packaging.version import Version

    deps = tomllib.loads((ROOT / "packages/osint-selfplay/pyproject.toml").read_text())["project"]["dependencies"]
    (trl,) = [Requirement(d) for d in deps if Requirement(d).name == "trl"]
    import trl as installed

    assert Version(installed.__version__) in trl.specifier
    assert Version("1.17.0") not in trl.specifier and Version("1.15.0") not in trl.specifier


def _patched_pair(tiny_path, temperature):
    """The tiny model twice, both with TRL's fused LM head; the second with the plain CPU head on top."""
    from types import SimpleNamespace

    from transformers import AutoModelForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    models = []
    for plain in (False, True):
        model = AutoModelForCausalLM.from_pretrained(tiny_path)
        add_fused_lm_head(model, temperature=temperature, outputs=("log_probs", "entropy"))
        if plain:
            assert trl_compat.plain_lm_head(SimpleNamespace(model=model, temperature=temperature, ref_model=None))
        models.append(model)
    return models


def test_the_plain_cpu_lm_head_gives_trls_log_probs_entropies_and_gradients(tiny_path):
    import torch

    torch.manual_seed(0)
    trl_model, plain_model = _patched_pair(tiny_path, 0.7)
    ids = torch.randint(0, trl_model.config.vocab_size, (3, 17))
    mask = torch.ones_like(ids)
    mask[0, :5] = 0  # left padding, as GRPO batches are
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :9] = -100  # only the completion is scored
    outs = [m(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True) for m in (trl_model, plain_model)]
    scored = outs[0].label_mask
    assert torch.equal(scored, outs[1].label_mask) and int(scored.sum()) == 3 * 8
    assert torch.allclose(outs[0].log_probs, outs[1].log_probs, atol=1e-5)
    assert torch.allclose(outs[0].entropy, outs[1].entropy, atol=1e-5)
    assert torch.allclose(outs[0].loss, outs[1].loss, atol=1e-5)
    assert torch.all(outs[1].log_probs[~scored] == 0) and torch.all(outs[1].log_probs[scored] < 0)
    for out in outs:
        (out.log_probs.sum() + 0.1 * out.entropy.sum()).backward()
    for (name, a), (_, b) in zip(trl_model.named_parameters(), plain_model.named_parameters()):
        assert torch.allclose(a.grad, b.grad, atol=1e-5, rtol=1e-4), name
    plain = plain_model(input_ids=ids, attention_mask=mask)  # without the fused head: the model's own forward
    assert plain.logits.shape == (3, 17, trl_model.config.vocab_size)


def test_the_plain_head_is_not_applied_where_trls_is_needed(tiny_path):
    from types import SimpleNamespace

    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    assert trl_compat.plain_lm_head(SimpleNamespace(model=model, temperature=1.0, ref_model=object())) is False
    model.config.final_logit_softcapping = 30.0
    assert trl_compat.plain_lm_head(SimpleNamespace(model=model, temperature=1.0, ref_model=None)) is False


def test_the_lm_head_switch_keeps_trls_head_when_off(tiny_path):
    """``model.plain_lm_head = false`` leaves the model TRL patched as it is; on, the plain head replaces it (on a
    device without Triton, checked against the installed TRL's own internals)."""
    from types import SimpleNamespace

    from transformers import AutoModelForCausalLM
    from trl.kernels.chunked_logprob import _use_triton
    from trl.trainer.utils import add_fused_lm_head

    from osint_selfplay.config import load_config

    for plain, expected in ((False, "trl"), (True, "plain")):
        model = AutoModelForCausalLM.from_pretrained(tiny_path)
        add_fused_lm_head(model, temperature=1.0, outputs=("log_probs", "entropy"))
        assert not _use_triton(model.device)  # the CPU these tests run on
        fused = model.forward
        cfg = load_config(None, [f"model.plain_lm_head={str(plain).lower()}"])
        assert trl_compat.lm_head(SimpleNamespace(model=model, temperature=1.0, ref_model=None), cfg) == expected
        assert (model.forward == fused) is not plain
    with pytest.raises(ConfigError, match="plain_lm_head"):
        load_config(None, ["model.plain_lm_head='yes'"])
