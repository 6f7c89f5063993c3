"""Evaluation in a chat template's own tool format: the runner builds tool-call conversations for a
policy whose template renders tools, and HFPolicy passes the env's schemas to its template."""

from __future__ import annotations

import pytest

from osint_eval.policies import HFPolicy, OraclePolicy, PolicyInput
from osint_eval.runner import run_multi_turn
from osint_eval.tasks import load_tasks
from osint_gym import chat
from osint_gym.actions import parse_action
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets

from .native_chat import hermes_calls, qwen_style_tokenizer

TINY = "tiny:64x2"


@pytest.fixture(scope="module")
def dev():
    return load_tasks("v0:dev", limit=6)


@pytest.fixture(scope="module")
def native_dir(tmp_path_factory):
    """The tiny model saved with the Qwen-style tool template."""
    from transformers import AutoModelForCausalLM

    from osint_eval.modeling import tiny_path

    src, out = str(tiny_path(TINY)), tmp_path_factory.mktemp("native-model")
    qwen_style_tokenizer(src).save_pretrained(out)
    AutoModelForCausalLM.from_pretrained(src).save_pretrained(out)
    return str(out)


class HermesOracle(OraclePolicy):
    """The oracle speaking a tool template's format (as an instruct model would); records what it was shown."""

    native_tools = True

    def __init__(self) -> None:
        super().__init__()
        self.shown: dict[int, list[list[dict]]] = {}

    def act(self, batch: list[PolicyInput]) -> list[str]:
        for b in batch:
            self.shown.setdefault(b.episode, []).append([dict(m) for m in b.messages])
        return [hermes_calls(a) for a in super().act(batch)]


def test_runner_builds_tool_call_conversations_for_a_native_policy(dev):
    policy = HermesOracle()
    results = run_multi_turn(policy, dev.world, dev.tasks, batch_size=4)
    assert [r.correct for r in results] == [True] * len(dev.tasks)  # the env parsed every <tool_call> block
    for episode, result in enumerate(results):
        shown = policy.shown[episode]
        assert len(shown) == len(result.transcript)
        last = shown[-1]  # the conversation before the final turn: every earlier turn in the template's format
        assert last[0] == {"role": "system", "content": chat.NATIVE_SYSTEM_PROMPT} and last[1]["role"] == "user"
        for k, step in enumerate(result.transcript[:-1]):
            turn, reply = last[2 + 2 * k], last[3 + 2 * k]
            calls = parse_action(step["action"]).calls
            assert turn == {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": c.name, "arguments": c.args}} for c in calls]}
            assert reply == {"role": "tool", "content": step["observation"]}
        assert len(last) == 2 + 2 * (len(result.transcript) - 1)


def test_plain_policies_keep_the_json_action_conversation(dev):
    class Recording(OraclePolicy):
        def act(self, batch):
            self.last = [list(b.messages) for b in batch]
            return super().act(batch)

    policy = Recording()
    results = run_multi_turn(policy, dev.world, dev.tasks[:1])
    conv = policy.last[0]
    assert conv[0] == {"role": "system", "content": chat.SYSTEM_PROMPT}
    assert all(m["role"] != "tool" and "tool_calls" not in m for m in conv)
    assert [m["content"] for m in conv[2::2]] == [t["action"] for t in results[0].transcript[:-1]]
    assert [m["content"] for m in conv[3::2]] == [t["observation"] for t in results[0].transcript[:-1]]


def test_hf_policy_passes_the_env_schemas_to_a_tool_template(native_dir, dev):
    from osint_eval.modeling import tiny_path

    plain = HFPolicy(str(tiny_path(TINY)), batch_size=4, max_new_tokens=4)
    native = HFPolicy(native_dir, batch_size=4, max_new_tokens=4)
    assert native.native_tools and not plain.native_tools
    results = run_multi_turn(native, dev.world, dev.tasks[:2], spec=EpisodeSpec(Budgets(max_steps=2)))
    # an untrained model: any text is handled; a turn over max_new_tokens ends the episode unanswered
    assert len(results) == 2 and all(len(r.transcript) >= 1 or r.end == "token_budget" for r in results)
    assert not any(r.correct for r in results)

    from osint_gym.env import OSINTEnv

    env = OSINTEnv(world=dev.world, tasks=[dev.tasks[0]])
    obs, info = env.reset(seed=0, options={"task_index": 0})
    action = '{"tool": "get_profile", "args": {"handle_or_id": "person_1"}}'
    step_obs = env.step(action)[0]
    turn = chat.assistant_message(action, native=True)
    conv = chat.start_messages(obs, native=True) + [turn] + chat.result_messages(step_obs, turn, native=True)
    (text,) = native.render([conv], [info["tools"]])
    assert text == native.tokenizer.apply_chat_template(
        conv, tools=env.schemas, add_generation_prompt=True, tokenize=False
    )
    assert "<tools>" in text and all(s["function"]["name"] in text for s in env.schemas)
    assert '<tool_call>\n{"name": "get_profile", "arguments": {"handle_or_id": "person_1"}}\n</tool_call>' in text
    assert f"<tool_response>\n{step_obs}\n</tool_response>" in text
    # act() renders a multi-turn input with the schemas of the input's env; a single-turn input has none
    rendered, render = [], native.render
    native.render = lambda convs, tools=None: rendered.extend(render(convs, tools)) or render(convs, tools)
    native.act([PolicyInput(conv, dev.tasks[0], dev.world, 0, 1, env=env, seen=[obs, step_obs]),
                PolicyInput(conv, dev.tasks[0], dev.world, 1, 0)])
    assert rendered[0] == text and "<tools>" not in rendered[1]
    (single,) = native.render([conv])  # no schemas given (single-turn prompts): no tool section
    assert "<tools>" not in single
