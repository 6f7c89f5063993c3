"""The ``[grpo_generator]`` and ``[grpo_answerer]`` tables of a run config: TRL's GRPOConfig fields,
passed through (checked against TRL's own dataclass when the run is built, `trl_compat.check_phase`)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from osint_gym.errors import check_type
from osint_selfplay.errors import ConfigError

# Where a phase's defaults differ from TRL's (a tiny model on a CPU learns nothing at TRL's 1e-6),
# and the keys this package itself reads (so they need a value without importing trl).
GRPO_DEFAULTS: dict[str, Any] = {
    "learning_rate": 2e-4, "max_steps": 20, "per_device_train_batch_size": 32, "gradient_accumulation_steps": 1,
    "num_generations": 8, "max_completion_length": 8, "lr_scheduler_type": "constant", "logging_steps": 1,
    "save_strategy": "no",
}
# GRPOConfig fields the run sets itself: one place each, so a phase table may not set them.
GRPO_RUN_KEYS = {"output_dir": "output_dir", "seed": "seed", "use_vllm": "use_vllm", "vllm_mode": "vllm_mode",
                 "report_to": "report_to", "vllm_server_base_url": "vllm_server_base_url",
                 "use_cpu": "the run (from the machine)"}


class GRPOPhaseConfig:
    """A ``[grpo_*]`` table: any field of TRL's ``GRPOConfig``, passed through unchanged.

    Nothing is mirrored: keys are checked against ``dataclasses.fields(GRPOConfig)`` by
    `osint_selfplay.trl_compat.check_phase` when the run is built (importing trl costs ~10 s,
    which ``load_config`` and ``--help`` must not pay). Here: the run's own defaults
    (`GRPO_DEFAULTS`), their types, and GRPO's group rule. Frozen; read values as attributes."""

    def __init__(self, **settings: Any) -> None:
        for key in settings:
            if key in GRPO_RUN_KEYS:
                raise ConfigError(f"{key} is set by the run, not per phase: set {GRPO_RUN_KEYS[key]} at the top level")
        merged = dict(GRPO_DEFAULTS)
        for key, value in settings.items():
            merged[key] = check_type(value, type(GRPO_DEFAULTS[key]), key) if key in GRPO_DEFAULTS else value
        object.__setattr__(self, "_settings", merged)
        self._check_group()

    def _check_group(self) -> None:
        n = self.num_generations
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise ConfigError(f"num_generations must be an integer >= 2 (GRPO needs a group); got {n!r}")
        positive = ("max_steps", "per_device_train_batch_size", "gradient_accumulation_steps", "max_completion_length")
        for name in positive:
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be a number >= 1; got {getattr(self, name)!r}")
        batch = self.per_device_train_batch_size * self.gradient_accumulation_steps
        if batch % n:
            raise ConfigError(
                f"per_device_train_batch_size * gradient_accumulation_steps ({batch}) must be a multiple of "
                f"num_generations ({n}); change one of them"
            )

    @classmethod
    def from_table(cls, data: Any, path: str) -> GRPOPhaseConfig:
        if not isinstance(data, dict):
            raise ConfigError(f"[{path}] must be a table, got {type(data).__name__}")
        try:
            return cls(**data)
        except ConfigError as exc:
            raise ConfigError(f"[{path}] {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        return dict(self._settings)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_settings"][name]
        except KeyError:
            raise AttributeError(f"GRPOPhaseConfig has no {name!r} (not set; TRL's default applies)") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GRPOPhaseConfig) and self._settings == other._settings

    def __hash__(self) -> int:
        return hash(json.dumps(self._settings, sort_keys=True, default=str))

    def __repr__(self) -> str:
        return f"GRPOPhaseConfig({', '.join(f'{k}={v!r}' for k, v in sorted(self._settings.items()))})"
