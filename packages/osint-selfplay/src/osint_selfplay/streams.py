"""Named data streams: every random choice of a run draws from ``(run seed, stream, index)``.

Each stream has its own index space, so two streams can never hand out the same item, whatever
their sizes (numeric offsets such as ``seed + 10_000_000`` collide as soon as a stream outgrows
its gap, and nothing checks them). A stream's seed is `stream_seed(seed, stream)`, a hash of
``f"{seed}:{stream}"``; osint-gym's samplers then draw item ``i`` from
``random.Random(f"{stream seed}:{i}")``, and torch / transformers get `stream_seed(seed, stream, round)`.
(Integer seeds, because osint-gym's samplers and worlds accept integers only.)

The streams of a run (tests/selfplay/test_streams.py checks that their items are disjoint):
"""

from __future__ import annotations

from osint_gym.streams import stream_seed as stream_seed  # the one implementation, re-exported for the run's code

TRAIN = "train"  # answerer GRPO seed tasks (index r * tasks_per_round + i)
RELABEL = "relabel"  # seed tasks the answerer plays for expert relabelling (index r * relabel.tasks + i)
TRAIN_FIRST = "train_first"  # seed tasks of the answerer_first phase (answerer_generator_answerer)
WARM_START = "warm_start"  # SFT answerer demonstrations
WARM_START_GENERATOR = "warm_start_generator"  # SFT generator offers
IMITATION = "imitation"  # the imitation reference's hard demonstrations (osint_selfplay.controls)
GENERATOR = "generator"  # generator GRPO offers (index r * prompts_per_round + i)
SAMPLE = "sample"  # offers the trained generator is sampled on (index r * sample_tasks + i)
GENERATE = "generate"  # offers of the `osint-selfplay generate` command
WORLDS = "train_worlds"  # seeds of the training worlds
# Evaluation tasks are the benchmark's held-out split, in its own worlds (never a training world).
