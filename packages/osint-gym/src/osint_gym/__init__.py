"""osint-gym: OSINT-v0, a Gymnasium environment where agents investigate a hidden world through tools.

``import osint_gym`` registers OSINT-v0 (and OSINT-Easy/Medium/Hard-v0); ``gym.make("osint_gym:OSINT-v0")``
imports the package itself. ``osint_gym.benchmark`` is the module of the fixed splits
(``osint_gym.benchmark_tasks("v0:test")``, ``osint_gym.benchmark.to_hf_dataset("v0:test")``).
"""

from osint_gym import benchmark
from osint_gym.__about__ import __version__
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.registration import ENV_IDS, register_envs
from osint_gym.reward import RewardConfig, score_episode
from osint_gym.tasks import Task, TaskSampler, verify_task
from osint_gym.tasks.kg import QAReport, load_metaqa_qa
from osint_gym.world import World, WorldConfig, generate_world
from osint_gym.world.loaders import load_metaqa_kb, load_tsv

register_envs()

__all__ = [
    "ENV_IDS", "QAReport", "RewardConfig", "Task", "TaskSampler", "World", "WorldConfig", "__version__", "benchmark",
    "benchmark_tasks", "benchmark_world", "generate_world", "load_metaqa_kb", "load_metaqa_qa", "load_tsv",
    "register_envs", "score_episode", "verify_task",
]
