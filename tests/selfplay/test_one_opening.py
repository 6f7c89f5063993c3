"""One episode spec, one opening: the training rollout, osint-eval's runner and the demonstrations open an
episode with the same token ids in every serving mode (observation format x action format x template x tool
description), all built by `osint_gym.spec.EpisodeSpec.start_messages`."""

from __future__ import annotations

import itertools
import json

import pytest

from osint_gym import chat
from osint_selfplay import data, sft, streams
from osint_selfplay.config import load_config
from osint_selfplay.rollout import MultiTurnRollout
from osint_selfplay.worlds import WorldPool
from tests.smollm2 import smollm2_path

from ..eval.native_chat import qwen_style_tokenizer
from .conftest import micro_overrides

TEMPLATES = ["tiny", "qwen-style", "smollm2"]
MODES = list(itertools.product(["compact", "json"], ["short", "json"], TEMPLATES, [True, False]))
NATIVE = {"tiny": False, "qwen-style": True, "smollm2": False}  # SmolLM2's own template renders no tools


class _AnswerOnce:
    """Stands in for GRPOTrainer in a rollout: its one turn answers (ending the episode)."""

    max_completion_length = 256

    def __init__(self, tokenizer):
        self.processing_class = tokenizer
        self.eos_token_ids = [tokenizer.eos_token_id]

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        ids = self.processing_class("answer person_0", add_special_tokens=False)["input_ids"]
        return [list(ids) + [self.processing_class.eos_token_id] for _ in prompt_ids], None


@pytest.fixture(scope="module")
def tokenizers(tiny_path):
    from transformers import AutoTokenizer

    return {"tiny": lambda: AutoTokenizer.from_pretrained(tiny_path, padding_side="left"),
            "qwen-style": lambda: qwen_style_tokenizer(tiny_path),
            "smollm2": lambda: AutoTokenizer.from_pretrained(smollm2_path(), padding_side="left")}


@pytest.fixture(scope="module")
def policies(tiny_path):
    """osint-eval's model policy per template, loaded on first use: the tiny model (its own and the Qwen-style
    tokenizer share its vocabulary), or SmolLM2 with its own tokenizer."""
    from osint_eval.policies import HFPolicy

    loaded: dict[str, HFPolicy] = {}

    def get(template: str) -> HFPolicy:
        model = smollm2_path() if template == "smollm2" else tiny_path
        if model not in loaded:
            loaded[model] = HFPolicy(model, batch_size=4, max_new_tokens=1)
        return loaded[model]

    yield get
    for p in loaded.values():
        p.close()


@pytest.mark.parametrize(("observations", "actions", "template", "describe"),
                         [pytest.param(*m, marks=[pytest.mark.slow] if m[2] == "smollm2" else [],
                                       id=f"{m[0]}-{m[1]}-{m[2]}-{'described' if m[3] else 'bare'}") for m in MODES])
def test_training_evaluation_and_demonstrations_open_with_the_same_tokens(
    tmp_path, tokenizers, policies, observations, actions, template, describe
):
    from osint_eval.runner import run_multi_turn_items

    cfg = load_config(None, micro_overrides(tmp_path, **{
        "answerer.mode": "'multi_turn'", "episode.observation_format": f"'{observations}'",
        "episode.action_format": f"'{actions}'", "episode.describe_tools": str(describe).lower(),
        "episode.max_observation_chars": 4000, "warm_start.answerer_examples": 1, "warm_start.workers": 1,
        "warm_start.rename_words": "false"}))
    tok, native = tokenizers[template](), NATIVE[template]
    assert chat.supports_tools(tok.chat_template) is native
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    spec = cfg.episode.spec()
    (world, task), = data.seed_tasks(pool, cfg, 1, 0, streams.WARM_START, difficulties=cfg.warm_start.difficulties)

    # training: the rollout's prompt ids
    rows, dropped = data.multi_turn_rows(pool, cfg, [(world, task, "seed")])
    assert dropped == 0
    out = MultiTurnRollout(pool, rows, spec=spec)([rows[0]["prompt"]], _AnswerOnce(tok))
    training = out["prompt_ids"][0]

    # evaluation: the text osint-eval's model policy renders for the first turn, tokenized as it tokenizes it
    rendered: list[str] = []
    policy = policies(template)
    render, own = policy.render, (policy.tokenizer, policy.native_tools)
    policy.tokenizer, policy.native_tools = tok, native
    policy.render = lambda convs, tools=None: rendered.extend(render(convs, tools)) or render(convs, tools)
    try:
        run_multi_turn_items(policy, [(world, task)], spec=spec, batch_size=1)
    finally:
        del policy.render
        policy.tokenizer, policy.native_tools = own
    evaluation = tok(rendered[0], add_special_tokens=False)["input_ids"]

    # demonstrations: the warm start's first conversation as the chat template renders it for SFT
    demos, counts = data.sft_multi_turn_rows(pool, cfg, native=native)
    assert counts.episodes == 1 and len(demos) == 1
    assert ("tools" in demos[0]) is native
    tools = {"tools": json.loads(demos[0]["tools"])} if native else {}
    demo_ids = tok.apply_chat_template(demos[0]["messages"], tokenize=True, return_dict=True, **tools)["input_ids"]
    # the packed loop's tokenization: the same ids, and a loss on no token of the opening (a template without
    # {% generation %} markers, the Qwen-style one and SmolLM2's, gets its mask rendered prefix by prefix)
    (packed_ids, mask), = sft.tokenize(tok, [demos[0]["messages"]], tools=[tools.get("tools")])
    assert packed_ids == demo_ids and not any(mask[: len(training)]) and any(mask)

    assert training == evaluation
    assert demo_ids[: len(training)] == training
    text = tok.decode(training)
    assert ("OSINT investigator" in text) is describe  # no system message without describe_tools, native or not
    assert ("<tools>" in text) is native  # a native template lists the env's tools in every mode
    assert task.question in text
