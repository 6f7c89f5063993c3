"""osint-gym: OSINT-v0, a Gymnasium environment where agents investigate a hidden world through tools.

``import osint_gym`` registers OSINT-v0 (and OSINT-Easy/Medium/Hard-v0); ``gym.make("osint_gym:OSINT-v0")``
imports the package itself. ``osint_gym.benchmark`` is the module of the fixed splits
(``osint_gym.benchmark_tasks("v0:test")``, ``osint_gym.benchmark.to_hf_dataset("v0:test")``).

verifiers (``vf-eval osint-gym``) imports this package as the taskset ``osint-gym`` and reads its
taskset, harness and env classes from ``__all__``: where verifiers is installed, ``__all__`` names them
and they load on first access from `osint_gym.integrations.verifiers_env`, so ``import osint_gym`` never imports
verifiers.

The integrations (Inspect AI, TRL, verifiers, the server and its client) live in `osint_gym.integrations`; their
old paths (``osint_gym.trl_env``, ``osint_gym.serve.client``, ...) still import, as the same modules, with a
``FutureWarning`` (`osint_gym._moved`).
"""

import importlib.util
from typing import Any

from osint_gym import benchmark
from osint_gym.__about__ import __version__
from osint_gym._moved import install as _install_moved_paths
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.registration import ENV_IDS, register_envs
from osint_gym.reward import RewardConfig, score_episode
from osint_gym.tasks import Task, TaskSampler, verify_task
from osint_gym.tasks.kg import QAReport, load_metaqa_qa
from osint_gym.world import World, WorldConfig, generate_world
from osint_gym.world.loaders import load_metaqa_kb, load_tsv

register_envs()
_install_moved_paths()  # the integrations' old import paths (osint_gym.trl_env, osint_gym.serve, ...)

# verifiers' plugin loader (`verifiers.v1.utils.loaders`) takes the Taskset, Harness and Env subclasses from
# `__all__`; they are loaded lazily (`__getattr__`) and listed only where verifiers is installed
_VERIFIERS_EXPORTS = ("OSINTHarness", "OSINTTaskset", "OSINTVerifiersEnv", "load_environment")

__all__ = [
    "ENV_IDS", "QAReport", "RewardConfig", "Task", "TaskSampler", "World", "WorldConfig", "__version__", "benchmark",
    "benchmark_tasks", "benchmark_world", "generate_world", "load_metaqa_kb", "load_metaqa_qa", "load_tsv",
    "register_envs", "score_episode", "verify_task",
]
if importlib.util.find_spec("verifiers") is not None:
    __all__ += _VERIFIERS_EXPORTS


def __getattr__(name: str) -> Any:
    if name in _VERIFIERS_EXPORTS:
        from osint_gym.integrations import verifiers_env

        return getattr(verifiers_env, name)
    raise AttributeError(f"module 'osint_gym' has no attribute {name!r}")
