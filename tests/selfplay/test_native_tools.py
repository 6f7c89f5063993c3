"""Multi-turn rollouts in a chat template's own tool format (a Qwen-style template built locally),
and the plain JSON-action format unchanged, checked token for token against the rendered conversation."""

from __future__ import annotations

import json
from typing import cast

import pytest

from osint_gym import chat
from osint_gym.actions import parse_action
from osint_gym.agents import OracleAgent
from osint_selfplay import data
from osint_selfplay.config import load_config
from osint_selfplay.errors import SelfPlayError
from osint_selfplay.rollout import MultiTurnRollout
from osint_selfplay.worlds import WorldPool
from tests.smollm2 import smollm2_path

from ..eval.native_chat import QWEN_STYLE_TEMPLATE, hermes_calls, qwen_style_tokenizer
from .conftest import micro_overrides

BUDGET = 4096


class ScriptedTrainer:
    """Stands in for GRPOTrainer in a rollout: its generator emits scripted turns (each followed by
    the end-of-turn token), the same turn for every pending episode."""

    def __init__(self, tokenizer, turns):
        self.processing_class, self.turns, self.calls = tokenizer, turns, 0
        self.max_completion_length = BUDGET
        self.eos_token_ids = [tokenizer.eos_token_id]

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        text = self.turns[self.calls]
        self.calls += 1
        ids = self.processing_class(text, add_special_tokens=False)["input_ids"] + [self.processing_class.eos_token_id]
        return [list(ids) for _ in prompt_ids], None


@pytest.fixture(scope="module")
def episode(tmp_path_factory):
    """A multi-turn row, its rollout, and the oracle's episode on it (the scripted model's turns)."""
    overrides = {
        "answerer.mode": "'multi_turn'",
        "episode.max_steps": 6,
        "episode.max_observation_chars": 900,
        "answerer.tasks_per_round": 4,
        "answerer.generated_share": 0.0,
        "answerer.seed_difficulties": "['medium']",
    }
    cfg = load_config(None, micro_overrides(tmp_path_factory.mktemp("native"), **overrides))
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows, _ = data.mix_answerer_rows(pool, cfg, [], 0)
    row = rows[0]
    rollout = MultiTurnRollout(pool, rows, spec=cfg.episode.spec())
    from osint_gym.tasks import Task

    spec = cfg.episode.spec()
    env = spec.make_env(pool.world(cast(int, row["world_seed"])), Task.from_dict(json.loads(row["task"])))
    record = spec.play_one(env, OracleAgent())
    assert record.correct and len(record.turns) >= 2  # at least one observation between model turns
    return row, rollout, record, env.schemas


def _segments(ids, mask):
    out = []
    for t, m in zip(ids, mask):
        if out and out[-1][0] == m:
            out[-1][1].append(t)
        else:
            out.append((m, [t]))
    return out


def _expected(record, native):
    """The conversation the rollout must have produced, written out by hand (not via osint_gym.chat)."""
    first = record.first_observation
    if not native:
        messages = [{"role": "system", "content": chat.SYSTEM_PROMPT}, {"role": "user", "content": first}]
        for k, turn in enumerate(record.turns):
            messages.append({"role": "assistant", "content": turn.action})
            if k + 1 < len(record.turns):
                messages.append({"role": "user", "content": turn.observation})
        return messages, [t.action for t in record.turns]
    messages = [{"role": "system", "content": chat.NATIVE_SYSTEM_PROMPT}, {"role": "user", "content": first}]
    for k, turn in enumerate(record.turns):
        calls = [
            {"type": "function", "function": {"name": c.name, "arguments": c.args}}
            for c in parse_action(turn.action).calls
        ]
        messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        if k + 1 < len(record.turns):
            messages.append({"role": "tool", "content": turn.observation})
    return messages, [hermes_calls(t.action) for t in record.turns]


@pytest.mark.parametrize(("native", "hub"),
                         [(True, False), (False, False), pytest.param(False, True, marks=pytest.mark.slow)],
                         ids=["qwen-style-tools", "plain-chatml", "smollm2"])
def test_env_mask_separates_model_turns_from_template_glue_and_tool_messages(episode, tiny_path, native, hub):
    """Also with a real hub tokenizer and template (SmolLM2's, which splits every id into pieces)."""
    from transformers import AutoTokenizer

    row, rollout, record, schemas = episode
    plain = smollm2_path() if hub else tiny_path
    tok = qwen_style_tokenizer(tiny_path) if native else AutoTokenizer.from_pretrained(plain, padding_side="left")
    assert chat.supports_tools(tok.chat_template) is native
    messages, turns = _expected(record, native)
    trainer = ScriptedTrainer(tok, turns)
    out = rollout([row["prompt"]] * 2, trainer)  # one group of two: both members follow the script
    assert trainer.calls == len(turns)
    assert out["env_reward"] == [record.reward] * 2 and record.reward >= 1.0  # the env scored the same episode
    tools = {"tools": schemas} if native else {}
    rendered = tok.apply_chat_template(messages, tokenize=False, **tools)
    prompt = tok.apply_chat_template(messages[:2], tokenize=False, add_generation_prompt=True, **tools)
    eos = tok.eos_token
    for prompt_ids, ids, mask in zip(out["prompt_ids"], out["completion_ids"], out["env_mask"]):
        assert tok.decode(prompt_ids) == prompt
        assert ("<tools>" in prompt and all(s["function"]["name"] in prompt for s in schemas)) is native
        # the whole trajectory is the rendered conversation (it ends at the model's end-of-turn token)
        assert tok.decode(prompt_ids + ids) + "\n" == rendered
        segments = _segments(ids, mask)
        model = [tok.decode(seg) for flag, seg in segments if flag == 1]
        env = [tok.decode(seg) for flag, seg in segments if flag == 0]
        assert model == [t + eos for t in turns]  # exactly the model's turns are trained
        observations = [t.observation for t in record.turns[:-1]]
        if native:  # exactly the template's glue and the env's observations as tool messages
            assert env == [
                f"\n<|im_start|>user\n<tool_response>\n{o}\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
                for o in observations
            ]
        else:
            assert env == [f"\n<|im_start|>user\n{o}<|im_end|>\n<|im_start|>assistant\n" for o in observations]


def test_native_turns_that_parse_into_no_call_stay_text_and_get_a_user_reply(episode, tiny_path):
    row, rollout, record, schemas = episode
    tok = qwen_style_tokenizer(tiny_path)
    trainer = ScriptedTrainer(tok, ["I will look it up.", hermes_calls(record.turns[-1].action)])
    out = rollout([row["prompt"]], trainer)
    ids, mask = out["completion_ids"][0], out["env_mask"][0]
    env = [tok.decode(seg) for flag, seg in _segments(ids, mask) if flag == 0]
    assert len(env) == 1 and env[0].startswith("\n<|im_start|>user\n{") and "<tool_response>" not in env[0]
    assert '"error"' in env[0] or "no action found" in env[0]
    assert 0 < out["env_reward"][0] < record.reward  # still answered correctly, after an invalid turn's penalty


def test_a_template_that_is_not_prefix_stable_is_refused(episode, tiny_path):
    row, rollout, record, _ = episode
    tok = qwen_style_tokenizer(tiny_path)
    # a template that writes the number of messages first: every rendering changes its own start
    tok.chat_template = "{{ messages | length }}" + QWEN_STYLE_TEMPLATE
    with pytest.raises(SelfPlayError, match="prefix by prefix"):
        rollout([row["prompt"]], ScriptedTrainer(tok, [hermes_calls(t.action) for t in record.turns]))


def test_supports_tools_reads_the_template():
    from trl.chat_template_utils import qwen2_5_chat_template

    from osint_eval.modeling import CHAT_TEMPLATE

    assert chat.supports_tools(QWEN_STYLE_TEMPLATE) and chat.supports_tools(qwen2_5_chat_template)
    assert not chat.supports_tools(CHAT_TEMPLATE) and not chat.supports_tools(None)
    assert chat.supports_tools({"default": CHAT_TEMPLATE, "tool_use": QWEN_STYLE_TEMPLATE})
    assert not chat.supports_tools("{% for tool in tools %}{{ tool }}{% endfor %}")  # schemas but no calls


def test_assistant_message_renders_calls_as_tool_calls_and_keeps_prose():
    text = 'Looking.\n<tool_call>\n{"name": "get_profile", "arguments": {"handle_or_id": "@ann"}}\n</tool_call>'
    msg = chat.assistant_message(text, native=True)
    assert msg == {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_profile", "arguments": {"handle_or_id": "@ann"}}}
        ],
    }
    assert chat.assistant_message('{"answer": "person_3"}', native=True)["tool_calls"] == [
        {"type": "function", "function": {"name": "answer", "arguments": {"entity_id": "person_3"}}}]
    assert chat.assistant_message("no idea", native=True) == {"role": "assistant", "content": "no idea"}
    assert chat.assistant_message(text) == {"role": "assistant", "content": text}  # plain: the text as written
    assert chat.result_messages("obs", msg, native=True) == [{"role": "tool", "content": "obs"}]
    assert chat.result_messages("obs", msg) == [{"role": "user", "content": "obs"}]
    assert (
        chat.template_kwargs([{"x": 1}], True) == {"tools": [{"x": 1}]}
        and chat.template_kwargs([{"x": 1}], False) == {}
    )
    with pytest.raises(ValueError, match="2 actions need 2 or 1 observations, got 0"):
        chat.episode_messages("q", ["a", "b"], [])


@pytest.mark.slow
def test_a_grpo_step_runs_in_the_native_format(episode, tiny_path, tmp_path):
    """The real trainer with a tool template: prompts carry the schemas and the step trains."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOTrainer

    from osint_selfplay import phases
    from osint_selfplay.rewards import EpisodeReward

    row, rollout, _, _ = episode
    model_dir = tmp_path / "model"
    tok = qwen_style_tokenizer(tiny_path)
    tok.save_pretrained(model_dir)
    AutoModelForCausalLM.from_pretrained(tiny_path).save_pretrained(model_dir)
    cfg = load_config(
        None,
        micro_overrides(
            tmp_path,
            **{
                "answerer.mode": "'multi_turn'",
                "grpo_answerer.max_completion_length": 48,
                "grpo_answerer.per_device_train_batch_size": 4,
                "grpo_answerer.num_generations": 4,
                "grpo_answerer.max_steps": 1,
            },
        ),
    )
    seen = []

    def spy(prompts, trainer):
        out = rollout(prompts, trainer)
        seen.append(out)
        return out

    trainer = GRPOTrainer(
        model=str(model_dir),
        reward_funcs=[EpisodeReward(cfg.parl, cfg.grpo_answerer.num_generations)],
        args=phases.grpo_args(cfg.grpo_answerer, cfg, tmp_path, 0),
        train_dataset=Dataset.from_list([row] * 4),
        processing_class=tok,
        rollout_func=spy,
    )
    trainer.train()
    assert trainer.state.global_step == 1 and seen
    for prompt_ids, ids, mask in zip(seen[0]["prompt_ids"], seen[0]["completion_ids"], seen[0]["env_mask"]):
        assert "<tools>" in tok.decode(prompt_ids) and len(ids) == len(mask) <= 48 and mask[0] == 1
        for flag, seg in _segments(ids, mask):
            text = tok.decode(seg)
            if (
                flag == 0
            ):  # the env's reply (a tool message, or a user turn after an unparseable one) and the next header
                assert "<|im_start|>user\n" in text and text.endswith("<|im_start|>assistant\n"), text
            else:
                assert "</tool_response>" not in text


@pytest.mark.parametrize("system", [True, False], ids=["described", "bare"])
def test_a_plain_conversation_converts_to_the_native_one(episode, system):
    """`chat.native_messages` of a plain conversation is the native conversation of the same episode (what the
    demonstrations rely on: their words are renamed as text, then they convert)."""
    _, _, record, _ = episode
    actions, observations = [t.action for t in record.turns], [t.observation for t in record.turns[:-1]]
    plain = chat.episode_messages(record.first_observation, actions, observations, system=system)
    native = chat.episode_messages(record.first_observation, actions, observations, native=True, system=system)
    assert chat.native_messages(plain) == native
    assert [m["role"] for m in native][: 2 if system else 1] == (["system", "user"] if system else ["user"])
    assert sum(m["role"] == "tool" for m in native) == len(observations) and all("tool_calls" in m for m in native
                                                                                  if m["role"] == "assistant")


def test_packed_sft_gives_a_native_rows_schemas_to_the_template(episode, tiny_path):
    """`sft.tokenize` renders a conversation with its ``tools`` through the template, one at a time, and a plain
    one as before, in one batch."""
    from transformers import AutoTokenizer

    from osint_eval.modeling import CHAT_TEMPLATE
    from osint_selfplay import sft

    _, _, record, schemas = episode
    tok = AutoTokenizer.from_pretrained(tiny_path)
    # the tiny template with the Qwen-style tool section in front: tools rendered, assistant turns marked
    tok.chat_template = "{% if tools %}{% for t in tools %}{{ t['function']['name'] }}\n{% endfor %}{% endif %}" + (
        CHAT_TEMPLATE)
    actions = [t.action for t in record.turns]
    conv = chat.episode_messages(record.first_observation, actions, [t.observation for t in record.turns[:-1]])
    (with_tools, mask), (plain, plain_mask) = sft.tokenize(tok, [conv, conv], tools=[schemas, None])
    expected = tok.apply_chat_template(conv, tools=schemas, tokenize=True, return_dict=True)["input_ids"]
    assert with_tools == expected and len(with_tools) > len(plain) and sum(mask) == sum(plain_mask) > 0
    assert sft.tokenize(tok, [conv]) == [(plain, plain_mask)]
    assert tok.decode(with_tools).startswith(schemas[0]["function"]["name"])
