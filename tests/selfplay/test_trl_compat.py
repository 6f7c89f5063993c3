"""The TRL seam: the one private call (GRPOTrainer._generate_single_turn) and the pinned range."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from osint_selfplay import trl_compat
from osint_selfplay.errors import IncompatibleTRLError

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

    with pytest.raises(IncompatibleTRLError, match=r"NewerTrainer._generate_single_turn\(self, prompt_ids, sampling_params\) "
                                                   r"differs .* install trl>=1.16,<1.17"):
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
