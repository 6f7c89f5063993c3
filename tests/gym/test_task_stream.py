"""Default-mode resets serve tasks verified ahead of use (osint_gym.tasks.TaskStream), in sampler order."""

from __future__ import annotations

import numpy as np
import pytest

from osint_gym.env import OSINTEnv
from osint_gym.errors import ConfigError
from osint_gym.tasks import TaskSampler, TaskStream


def test_stream_serves_sampler_indices_in_order_and_generates_in_doubling_batches(world):
    sampler = TaskSampler(world, 4)
    stream = TaskStream(sampler, 100, max_batch=4)
    served, left = [], []
    for _ in range(8):
        served.append(stream.next().task_id)
        left.append(len(stream))
    assert served == [TaskSampler(world, 4).sample(i).task_id for i in range(100, 108)]
    # batches of 1, 2, 4, 4: what is left after each served task
    assert left == [0, 1, 0, 3, 2, 1, 0, 3]
    assert stream.next().stamp is not None  # verified when generated
    stream.restart(100)
    assert len(stream) == 0 and stream.next().task_id == served[0] and len(stream) == 0


def test_stream_filters_are_the_samplers(world):
    stream = TaskStream(TaskSampler(world, 0), 7, family="network_discovery", difficulty="medium")
    tasks = [stream.next() for _ in range(3)]
    assert {(t.family, t.difficulty) for t in tasks} == {("network_discovery", "medium")}
    assert [t.task_id for t in tasks] == [TaskSampler(world, 0).sample(i, family="network_discovery",
                                                                       difficulty="medium").task_id for i in (7, 8, 9)]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match="max_batch must be an integer >= 1"):
            TaskStream(TaskSampler(world, 0), max_batch=bad)


def test_a_seeded_reset_serves_the_task_it_served_before_streams_and_then_continues_the_stream(world):
    env = OSINTEnv(world=world)
    start = int(np.random.default_rng(11).integers(2**31 - 1))  # the index a seeded reset sampled at
    sampler = TaskSampler(world, 0)
    ids = [env.reset(seed=11)[1]["task_id"]] + [env.reset()[1]["task_id"] for _ in range(4)]
    assert ids == [sampler.sample(start + k).task_id for k in range(5)]
    other = OSINTEnv(world=world)  # the same seed in another env: the same tasks
    assert [other.reset(seed=11)[1]["task_id"]] + [other.reset()[1]["task_id"] for _ in range(4)] == ids
    assert env.reset(seed=11)[1]["task_id"] == ids[0]  # reseeding restarts the stream
    assert env.reset(seed=12)[1]["task_id"] != ids[0]


def test_reset_options_draw_from_their_own_stream_and_task_index_stays_the_sampler_index(world):
    env = OSINTEnv(world=world)
    env.reset(seed=3)
    easy = [env.reset(options={"difficulty": "easy"})[1] for _ in range(3)]
    assert {i["difficulty"] for i in easy} == {"easy"} and len({i["task_id"] for i in easy}) == 3
    assert env.reset(options={"task_index": 9})[1]["task_id"] == TaskSampler(world, 0).sample(9).task_id
