"""OSINT-v0 over the network: a real ``osint-gym serve`` process on a free loopback port, driven by the
clients and by raw WebSocket frames; stopped by its process id."""

from __future__ import annotations

import asyncio
import json
import random
import time

import gymnasium as gym
import numpy as np
import pytest

from osint_gym.agents import OracleAgent, run_episode
from osint_gym.env import OSINTEnv
from osint_gym.integrations.serve.client import AsyncOSINTClient, OSINTClient, RemoteError, ServerUnavailable
from osint_gym.integrations.serve.process import ServerProcess
from osint_gym.integrations.serve.remote import RemoteToolEnv
from osint_gym.integrations.trl_env import OSINTToolEnv, task_rows
from osint_gym.tasks import names_entity
from tests.gym.test_leakage import _outside_results, _random_action, _secrets

TOKEN = "s3cret-token-for-tests"


@pytest.fixture(scope="module")
def server():
    with ServerProcess(["--benchmark", "v0:test", "--max-sessions", "6", "--rate", "100000"]) as s:
        yield s


@pytest.fixture(scope="module")
def strict_server():
    """Tight limits and auth: 2 sessions, 1.5 s idle timeout, 2 KB frames, 20 frames/s."""
    args = ["--benchmark", "v0:dev", "--max-sessions", "2", "--idle-timeout", "1.5", "--max-message-bytes", "2048",
            "--rate", "20", "--token-env", "OSINT_TEST_TOKEN"]
    with ServerProcess(args, env={"OSINT_TEST_TOKEN": TOKEN}) as s:
        yield s


def _wire(value):
    """What JSON makes of ``value`` (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value))


def _wait_sessions(server, n, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.health()["active_sessions"] == n:
            return True
        time.sleep(0.05)
    return False


def _oracle_actions(task_index, observation_format="json"):
    env = OSINTEnv(benchmark="v0:test", observation_format=observation_format)
    record = run_episode(env, OracleAgent(), seed=task_index, options={"task_index": task_index})
    return [t.action for t in record.turns]


def test_endpoints_describe_the_env(server):
    health = server.health()
    assert health["status"] == "healthy" and health["max_sessions"] == 6 and health["internal_errors"] == 0
    from osint_gym.integrations.serve.process import get_json

    meta = get_json(server.url + "/metadata")
    assert meta["name"] == "OSINT-v0" and meta["benchmark"] == "v0:test" and meta["limits"]["max_sessions"] == 6
    schema = get_json(server.url + "/schema")
    assert set(schema) == {"action", "observation", "state"} and schema["action"]["required"] == ["action"]


def test_same_seeds_give_byte_identical_episodes_over_the_wire(server):
    with OSINTClient(server.url) as client:
        for index in (0, 17, 401):
            actions = _oracle_actions(index) + ["garbage", '{"tool": "no_such_tool", "args": {}}']
            local = OSINTEnv(benchmark="v0:test")
            assert list(client.reset(seed=index, options={"task_index": index})) == \
                _wire(local.reset(seed=index, options={"task_index": index}))
            for action in actions:
                remote = client.step(action)
                here = local.step(action)
                assert remote[:4] == here[:4]  # observation text, reward, terminated, truncated: exact
                assert remote[4] == _wire(here[4])
            assert client.state()["episode_reward"] == local.episode().reward


def test_gym_make_remote_env(server):
    env = gym.make("osint_gym:OSINT-Remote-v0", base_url=server.url)
    local = gym.make("OSINT-v0", benchmark="v0:test")
    obs, info = env.reset(seed=3, options={"task_index": 3})
    assert obs == local.reset(seed=3, options={"task_index": 3})[0] and env.observation_space.contains(obs)
    for action in _oracle_actions(3):
        out = env.step(action)
        assert out[:4] == local.step(action)[:4]
    assert out[2] is True and out[1] > 1.0
    env.close()


def test_async_client_runs_concurrent_isolated_sessions(server):
    async def episode(index):
        async with AsyncOSINTClient(server.url) as env:
            obs, _ = await env.reset(seed=index, options={"task_index": index})
            total = 0.0
            for action in _oracle_actions(index):
                _, reward, *_ = await env.step(action)
                total += reward
            return obs, total, (await env.state())["session_id"]

    async def main():
        return await asyncio.gather(*(episode(i) for i in range(5)))

    results = asyncio.run(main())
    local = OSINTEnv(benchmark="v0:test")
    for index, (obs, total, _) in enumerate(results):
        assert obs == local.reset(seed=index, options={"task_index": index})[0]
        assert total == pytest.approx(sum(local.step(a)[1] for a in _oracle_actions(index)))
    ids = [r[2] for r in results]
    assert len(set(ids)) == 5 and all(len(i) >= 32 for i in ids)


def test_cross_session_probe_gets_nothing(server, request):
    a, b = OSINTClient(server.url), OSINTClient(server.url)
    obs_a, _ = a.reset(seed=1, options={"task_index": 11})
    a_state = a.state()
    request.addfinalizer(a.close), request.addfinalizer(b.close)
    secret_question = obs_a.splitlines()[0]
    replies = [b.send_raw(json.dumps(frame)) for frame in (
        {"type": "state", "data": {"session_id": a_state["session_id"]}},
        {"type": "step", "data": {"action": "answer person_1", "session_id": a_state["session_id"]}},
        {"type": "reset", "data": {"episode_id": a_state["episode_id"], "session_id": a_state["session_id"]}},
        {"type": "reset", "data": {"episode_id": a_state["episode_id"]}},
    )]
    b_state = b.state()
    wire = json.dumps(replies + [b_state])
    assert secret_question not in wire and a_state["session_id"] not in wire
    assert b_state["session_id"] != a_state["session_id"] and b_state["task_id"] != a_state["task_id"]
    assert replies[1]["data"]["code"] == "SESSION_ERROR"  # B has no episode of its own, and A's is not addressable
    assert a.state()["step_count"] == 0 and a.state()["task_id"] == a_state["task_id"]  # A untouched by B


def test_no_gold_answer_or_hidden_evidence_over_the_wire(server):
    from osint_gym.benchmark import benchmark_tasks, benchmark_world

    world, tasks = benchmark_world("v0:test"), benchmark_tasks("v0:test")
    rng = np.random.default_rng(1)
    with OSINTClient(server.url) as client:
        for ep in range(150):
            obs, info = client.reset(seed=ep, options={"task_index": ep})
            task = tasks[ep]
            secrets = _secrets(task)
            frames = [obs, json.dumps({k: v for k, v in info.items() if k != "tools"}), json.dumps(client.state())]
            assert not any(names_entity(world, obs, s) for s in secrets)
            assert not any(s in f for s in secrets for f in frames[1:])
            seen: list[str] = []
            for _ in range(5):
                action = _random_action(rng, world, seen)
                obs, _, terminated, truncated, info = client.step(action)
                seen += [t for t in obs.replace('"', " ").split() if "_" in t]
                visible = _outside_results(obs) + json.dumps({k: v for k, v in info.items() if k != "reward_breakdown"})
                visible += json.dumps(client.state())
                assert all(s in action for s in secrets if s in visible)
                if terminated or truncated:
                    break


def test_malformed_frames_get_errors_and_the_session_goes_on(server):
    with OSINTClient(server.url) as client:
        assert client.send_raw('{"type": "step", "data": {"action": "x"}}')["data"]["code"] == "SESSION_ERROR"
        client.reset(seed=0, options={"task_index": 0})
        cases = {
            "not json": "INVALID_JSON", "[1, 2]": "VALIDATION_ERROR", '{"type": 5}': "VALIDATION_ERROR",
            '{"type": "fly"}': "UNKNOWN_TYPE", '{"type": "step", "data": []}': "VALIDATION_ERROR",
            '{"type": "step", "data": {"action": null}}': "VALIDATION_ERROR",
            '{"type": "reset", "data": {"seed": "x"}}': "VALIDATION_ERROR",
            '{"type": "reset", "data": {"seed": -1}}': "VALIDATION_ERROR",
            '{"type": "reset", "data": {"options": {"task_index": 99999}}}': "VALIDATION_ERROR",
            '{"type": "reset", "data": {"options": {"task": {"question": 1}}}}': "VALIDATION_ERROR",
            '{"type": "reset", "data": {"bogus": 1}}': "VALIDATION_ERROR",
            "[" * 60000: "INVALID_JSON", b"\xff\xfe": "INVALID_JSON", "x" * 70000: "MESSAGE_TOO_LARGE",
        }
        for frame, code in cases.items():
            reply = client.send_raw(frame)
            assert reply["type"] == "error" and reply["data"]["code"] == code, (frame[:40], reply)
            assert "\n" not in reply["data"]["message"]
        obs, reward, *_ = client.step('{"tool": "no_such_tool", "args": {}}')  # the env's own error observation
        assert "unknown tool" in obs and reward < 0
        assert client.state()["step_count"] == 1  # nothing above consumed or broke the episode
    assert server.health()["internal_errors"] == 0


def _fuzz_frame(rng: random.Random) -> str | bytes:
    atoms = [None, True, 0, -1, 2**70, 1.5, float("nan"), "", "x" * rng.randint(0, 300), [], {}, "answer person_1",
             "get_profile @x", {"tool": "get_profile", "args": {"handle_or_id": "person_3"}}]
    kind = rng.choice(["reset", "step", "state", "close", "fly", None, 7])
    field = rng.choice(["seed", "options", "episode_id", "action", "task_index", "data"])
    value = rng.choice(atoms + [{"task_index": rng.choice(atoms)}, {"task": {"question": rng.choice(atoms)}}])
    frame: object = {"type": kind, "data": rng.choice([{field: value}, value, {"action": value}])}
    text = json.dumps(frame, default=str)
    roll = rng.random()
    if roll < 0.1:
        return text[: rng.randint(0, len(text))]
    if roll < 0.15:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 40)))
    return text


def test_ten_thousand_fuzzed_frames_give_no_server_error(server):
    rng = random.Random(0)
    with OSINTClient(server.url, timeout=10) as client:
        client.reset(seed=0)
        kinds = {"observation": 0, "state": 0, "error": 0, "closed": 0}
        for _ in range(10_000):
            frame = _fuzz_frame(rng)
            if isinstance(frame, str) and '"close"' in frame:
                continue  # a valid close ends the session; counted separately below
            reply = client.send_raw(frame)
            kinds[reply["type"]] += 1
            assert reply["type"] != "error" or reply["data"]["code"] != "INTERNAL_ERROR", (frame, reply)
        assert kinds["error"] > 1000 and kinds["observation"] > 100
    assert server.health()["internal_errors"] == 0


def test_client_that_leaves_mid_episode_frees_its_session(server):
    assert _wait_sessions(server, 0)
    client = OSINTClient(server.url)
    client.reset(seed=0)
    client.step("get_profile person_1")
    assert _wait_sessions(server, 1)
    client._ws.socket.close()  # no close frame: the peer just disappears
    assert _wait_sessions(server, 0)


@pytest.mark.slow
def test_capacity_limit_idle_timeout_size_and_rate(strict_server):
    url = strict_server.url
    first, second = OSINTClient(url, token=TOKEN), OSINTClient(url, token=TOKEN)
    third = OSINTClient(url, token=TOKEN)
    with pytest.raises(RemoteError, match="CAPACITY_REACHED"):  # the refusal frame, then the close
        third.state()
    first.reset(seed=0)
    reply = first.send_raw(json.dumps({"type": "step", "data": {"action": "x" * 3000}}))
    assert reply["data"]["code"] == "MESSAGE_TOO_LARGE"
    codes = [first.send_raw('{"type": "state"}')["type"] for _ in range(60)]
    assert "error" in codes and codes[0] == "state"  # 40 frames of burst, then the limit
    time.sleep(1.2)  # the bucket refills: the session goes on
    assert first.state()["step_count"] == 0
    for _ in range(6):  # `second` stays idle: the reaper closes it and frees its slot
        time.sleep(0.5)
        first.state()
    with pytest.raises(RemoteError, match="IDLE_TIMEOUT"):
        second.state()
    with pytest.raises(ServerUnavailable):
        second.state()
    assert OSINTClient(url, token=TOKEN).state()["step_count"] == 0
    first.close()


def test_bearer_token_is_required(strict_server):
    for token in (None, "wrong-token-123"):
        client = OSINTClient(strict_server.url, token=token)
        with pytest.raises(RemoteError, match="UNAUTHORIZED"):
            client.state()
    assert _wait_sessions(strict_server, 0, timeout=5)


def test_remote_tool_env_matches_the_in_process_trl_adapter():
    from osint_gym.benchmark import benchmark_tasks

    with ServerProcess(["--benchmark", "v0:train"]) as server:  # the adapter's budgets are the server's
        row = task_rows(benchmark_tasks("v0:train", limit=2), split="v0:train")[1]
        remote, local = RemoteToolEnv(server.url), OSINTToolEnv(max_observation_chars=16384)
        assert remote.reset(**row) == local.reset(**row)
        assert remote.get_profile(handle_or_id="person_1") == local.get_profile(handle_or_id="person_1")
        assert remote.answer(entity_id="person_0") == local.answer(entity_id="person_0")
        assert remote.get_reward() == local.get_reward()
        with pytest.raises(Exception, match="serves 'v0:train'"):
            remote.reset(**{**row, "world": "v0:test"})


def test_killed_server_gives_every_client_a_clear_error_and_a_restart_serves_again():
    server = ServerProcess(["--benchmark", "v0:test"]).start()
    clients = [OSINTClient(server.url, timeout=5) for _ in range(3)]
    for c in clients:
        c.reset(seed=0)
    server.kill()
    for c in clients:
        t0 = time.monotonic()
        with pytest.raises(ServerUnavailable, match="OSINT-v0 server"):
            c.step("get_profile person_1")
        assert time.monotonic() - t0 < 5.5
    with pytest.raises(ServerUnavailable, match="cannot connect"):
        OSINTClient(server.url, timeout=2)
    restarted = ServerProcess(["--benchmark", "v0:test"], port=server.port).start()
    try:
        with OSINTClient(restarted.url) as client:
            local = OSINTEnv(benchmark="v0:test")
            assert list(client.reset(seed=0, options={"task_index": 0})) == _wire(
                local.reset(seed=0, options={"task_index": 0})
            )
    finally:
        restarted.stop()


def test_serve_cli_rejects_bad_arguments(capsys):
    from osint_gym.cli import main

    assert main(["serve", "--port", "0"]) == 2
    assert "--port must be in 1..65535" in capsys.readouterr().err
    assert main(["serve", "--token-env", "OSINT_NO_SUCH_VARIABLE"]) == 2
    assert "not set" in capsys.readouterr().err
    assert main(["serve", "--max-sessions", "0"]) == 2
    assert "max_sessions" in capsys.readouterr().err


def test_clients_reject_bad_urls_and_timeouts():
    with pytest.raises(Exception, match="base_url must start"):
        OSINTClient("localhost:8000")
    with pytest.raises(Exception, match="timeout must be"):
        OSINTClient("http://127.0.0.1:1", timeout=0)
    with pytest.raises(RemoteError.__mro__[1]):  # an OSINTGymError, one line
        OSINTClient("http://127.0.0.1:1", timeout=1)


def test_reset_frames_set_the_knobs_over_the_wire_as_in_process():
    """A server on sampled tasks: a reset frame's hops and world knobs give the in-process env's episode."""
    from pathlib import Path

    from osint_gym.world import WorldConfig

    config = Path(__file__).resolve().parents[2] / "configs" / "gym" / "world-default.toml"
    options = {"hops": 2, "decoy_density": 0.6, "name_collision_rate": 0.1}
    with ServerProcess(["--world-config", str(config), "--seed", "3"]) as s, OSINTClient(s.url) as client:
        local = OSINTEnv(seed=3, world_config=WorldConfig())
        for seed in (0, 9):
            assert list(client.reset(seed=seed, options=options)) == _wire(local.reset(seed=seed, options=options))
            assert local.task.query.n_hops == 2 and local.world.config.decoy_density == 0.6
            action = json.dumps({"tool": "get_profile", "args": {"handle_or_id": local.task.query.start}})
            assert client.step(action)[:4] == local.step(action)[:4]
        with pytest.raises(RemoteError, match="decoy_density' must be a number in") as info:
            client.reset(seed=1, options={"decoy_density": 2})
        assert info.value.code == "VALIDATION_ERROR" and s.health()["internal_errors"] == 0


def test_protocol_sessions_on_a_world_config_and_settings_checks():
    """The frame semantics without a server: sampled tasks on a world config, the rate bucket, bad settings."""
    from pathlib import Path

    from osint_gym.errors import ConfigError
    from osint_gym.integrations.serve.protocol import ServeSettings, SessionManager
    from osint_gym.world import WorldConfig

    cfg = WorldConfig.from_toml(
        str(Path(__file__).resolve().parents[2] / "configs" / "gym" / "world-hard.toml")
    ).to_dict()
    manager = SessionManager(
        ServeSettings(benchmark=None, world_config=cfg, seed=3, rate_per_session=2.0, max_sessions=1)
    )
    session = manager.open(0.0)
    reply, close = session.handle(json.dumps({"type": "reset", "data": {"seed": 1}}), 0.0)
    local = OSINTEnv(seed=3, world_config=cfg)
    assert not close and reply["data"]["observation"]["text"] == local.reset(seed=1)[0]
    codes = [session.handle('{"type": "state"}', 0.0)[0]["type"] for _ in range(4)]
    assert codes == ["state", "state", "state", "error"]  # 2 s of burst at 2 frames/s, the reset took one
    assert session.handle('{"type": "state"}', 1.0)[0]["type"] == "state"  # refilled
    assert session.handle('{"type": "close"}', 5.0)[1] is True
    with pytest.raises(Exception, match="sessions are in use"):
        manager.open(0.0)
    manager.close(session.id)
    assert manager.health()["active_sessions"] == 0
    for bad, match in (({"max_sessions": 0}, "max_sessions"), ({"rate_per_session": float("inf")}, "rate_per_session"),
                       ({"token": "short"}, "at least 8"), ({"env": {"max_turns": 3}}, "unknown env setting"),
                       ({"world_config": cfg}, "not both")):
        with pytest.raises(ConfigError, match=match):
            ServeSettings(**bad)


def test_a_reset_frame_starts_at_a_depth_over_the_wire_as_in_process(server):
    """The reset frame's ``start_depth`` option: the given steps, the step count and the next observation are the
    in-process env's, byte for byte; a depth the task does not have is a validation error and the session goes on."""
    local = OSINTEnv(benchmark="v0:test")
    options = {"task_index": 3, "start_depth": 1}
    with OSINTClient(server.url) as client:
        remote_obs, remote_info = client.reset(seed=0, options=options)
        local_obs, local_info = local.reset(seed=0, options=options)
        assert remote_obs == local_obs and "\n> " in remote_obs
        assert remote_info["given_turns"] == local_info["given_turns"] and remote_info["step"] == 1
        action = json.dumps({"tool": "get_profile", "args": {"handle_or_id": "person_1"}})
        assert list(client.step(action)[:4]) == _wire(local.step(action)[:4])
        with pytest.raises(RemoteError, match="start_depth must be an integer in") as info:
            client.reset(seed=0, options={"task_index": 3, "start_depth": 99})
        assert info.value.code == "VALIDATION_ERROR"
        assert client.reset(seed=0, options={"task_index": 3})[0] == local.reset(seed=0, options={"task_index": 3})[0]
