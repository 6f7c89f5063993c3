from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from osint_eval.errors import EvalError
from osint_eval.modeling import TinySpec, build_tiny, resolve_model


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        h.update((folder / name).read_bytes())
    return h.hexdigest()


@pytest.mark.slow
def test_tiny_build_is_deterministic(tmp_path):
    spec = TinySpec.parse("tiny:32x1-v400-s3")
    build_tiny(spec, tmp_path / "a")
    build_tiny(spec, tmp_path / "b")
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")


def test_tiny_model_reloads_offline_with_its_chat_template(tiny_path):
    code = (
        "import os; os.environ['HF_HUB_OFFLINE']='1'\n"
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        f"tok = AutoTokenizer.from_pretrained({tiny_path!r}); m = AutoModelForCausalLM.from_pretrained({tiny_path!r})\n"
        "text = tok.apply_chat_template([{'role': 'user', 'content': 'hi'}], "
        "add_generation_prompt=True, tokenize=False)\n"
        "print(repr(text)); print(tok.tokenize(' person_12 account_7 person_120')); "
        "print(m.config.model_type, tok.eos_token, tok.padding_side)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "'<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'" in out
    assert (
        "[' person_12', ' account_7', ' person_120']" in out
    )  # entity ids are single tokens, with their leading space
    assert "llama <|im_end|> left" in out


def test_tiny_spec_and_model_errors():
    assert TinySpec.parse("tiny:128x3") == TinySpec(128, 3, 1536, 0)
    assert TinySpec.parse("tiny:64x2-v800-s5") == TinySpec(64, 2, 800, 5)
    for bad in ("tiny:big", "tiny:100x2", "tiny:64x0", "tiny:64x2-v10"):
        with pytest.raises(EvalError, match="tiny"):
            TinySpec.parse(bad)
    with pytest.raises(EvalError, match="does not exist"):
        resolve_model("./no/such/checkpoint")
    assert resolve_model("Qwen/Qwen2.5-0.5B-Instruct") == "Qwen/Qwen2.5-0.5B-Instruct"  # hub ids pass through


@pytest.mark.slow
def test_main_job_tokenizer_keeps_ids_identifiers_and_every_generated_word_whole():
    """The main job's tokenizer (5,120 merges): each word a generated world writes is one token, so
    a name is copied word by word, except a made-up two-syllable word, which is its two syllables (so
    a word no training world wrote is still made of trained tokens); a handle splits into its words;
    ids, post ids and snake_case tool, argument and field names stay whole."""
    from osint_eval.modeling import _train_tokenizer, lexicon
    from osint_gym.world.names import SYLLABLES

    tok = _train_tokenizer(5120)

    def pieces(text: str) -> list[str]:
        return [tok.decode([i]) for i in tok(text, add_special_tokens=False)["input_ids"]]

    words = lexicon()
    assert len(words) > 2000
    two = {" " + (a + b).capitalize(): [" " + a.capitalize(), b] for a in SYLLABLES for b in SYLLABLES}
    assert len(two) == len(SYLLABLES) ** 2 == 1369 and set(two) <= set(words)
    # a two-syllable word is its syllables; any other spaced word is one token; a handle word after
    # its separator is two ("@" and the word)
    assert [w for w in two if pieces(w) != two[w]] == []
    split = [w for w in words if w not in two and len(pieces(w)) != (1 if w.startswith(" ") else 2)]
    assert split == []
    assert pieces(" Malmo Selin Elmar") == [" Malmo", " Selin", " El", "mar"]  # cities and names stay whole
    assert pieces('get_profile handle_or_id=" Ralven AI Summit 2025"') == \
        ["get_profile", " handle_or_id", '="', " Ral", "ven", " AI", " Summit", " 2025", '"']
    assert pieces("get_profile @lina_brandt @rusty_heron45") == \
        ["get_profile", " @", "lina", "_", "brandt", " @", "rusty", "_", "heron", "45"]
    assert pieces("add_edge account_33 alias_of person_23\nanswer post_24") == \
        ["add_edge", " account_33", " alias_of", " person_23", "\n", "answer", " post_24"]
    assert "search_people" in pieces('{"tool": "search_people", "args": {"name": "Freya Engel"}}')  # JSON too
