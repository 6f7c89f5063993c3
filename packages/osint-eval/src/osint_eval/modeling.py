"""Loading Hugging Face causal LMs, and building ``tiny:`` models locally.

``tiny:<hidden>x<layers>[-v<vocab>][-s<seed>]`` (e.g. ``tiny:128x3``) builds a Llama-style model
from a config and a byte-level BPE tokenizer trained on OSINT-v0 text, with a ChatML chat template,
deterministically and without any download; the result is cached on disk as an ordinary model
folder, so everything downstream (TRL, ``from_pretrained``, ``transformers serve``) treats it like
any hub model. LlamaConfig, not Qwen2Config: AutoTokenizer would swap in Qwen2's pre-tokenizer for a
Qwen2 model type and change the token ids.

Requires the ``hf`` extra (torch, transformers, tokenizers); imported lazily.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osint_eval.errors import EvalError
from osint_gym import compact

TINY_PREFIX = "tiny:"
# How a local model decodes: Hugging Face generate, or `osint_eval.decoding.Decoder` in one of its modes.
DECODING_MODES = ("generate", "exact", "prefix")
# Bump when this module changes the tokenizer corpus; `corpus_version` adds osint-gym's compact format version.
CORPUS_REVISION = 13
# Every entity id of a default-sized world gets a token of its own: a model then copies an answer
# from its context as one token instead of spelling it (ids beyond these ranges still tokenize, by BPE).
ID_TOKENS = {"person": 300, "account": 600, "org": 40, "loc": 20, "event": 60, "thread": 80}
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Pre-tokens: an id such as " post_24" whole (with its leading space, instead of GPT-2's post/_/24),
# then words, numbers and punctuation apart, so that a handle splits into the words it is made of
# (" @", "lina", "_", "brandt"; "rusty", "_", "heron", "45") and each word is the token it is
# everywhere else; a made-up two-syllable word splits into its syllables (`pretokenize_pattern`).
# snake_case names of tools, arguments and fields are added tokens (`_identifiers`).
PRETOKENIZE_PATTERN = r" ?[a-z]+_[0-9]+|{syllable}| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+"
# How often the lexicon of generated words enters the BPE corpus: often enough that, with 5,120
# merges, every word of it is one token (`tiny:...-v5120`, the main job's tokenizer; a test checks).
LEXICON_REPEATS = 100
_IDENTIFIER = re.compile(r"(?<![@\w.|])[a-z]+(?:_[a-z]+)+(?!\w)")
# ChatML. The {% generation %} markers (which render nothing) let TRL's SFT train on assistant
# turns only (assistant_only_loss) in multi-turn demonstrations.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}"
    "{{ '<|im_start|>assistant\\n' }}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}{{ '\\n' }}"
    "{% else %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
_SPEC = re.compile(r"^(\d+)x(\d+)((?:-[vs]\d+)*)$")


@dataclass(frozen=True)
class TinySpec:
    hidden: int = 128
    layers: int = 3
    vocab: int = 1536  # BPE vocabulary, on top of the special and entity-id tokens
    seed: int = 0

    @classmethod
    def parse(cls, name: str) -> TinySpec:
        body = name[len(TINY_PREFIX):] if name.startswith(TINY_PREFIX) else name
        if body in ("", "default"):
            return cls()
        m = _SPEC.match(body)
        if not m:
            raise EvalError(
                f"bad tiny model spec {name!r}; expected tiny:<hidden>x<layers>[-v<vocab>][-s<seed>], e.g. tiny:128x3"
            )
        hidden, layers = int(m.group(1)), int(m.group(2))
        extras = dict((part[0], int(part[1:])) for part in m.group(3).split("-") if part)
        spec = cls(hidden, layers, extras.get("v", 1536), extras.get("s", 0))
        if hidden % 32 or not 32 <= hidden <= 2048 or not 1 <= layers <= 48 or not 300 <= spec.vocab <= 65536:
            raise EvalError(
                f"tiny spec {name!r} out of range: hidden a multiple of 32 in 32..2048, layers 1..48, vocab 300..65536"
            )
        return spec

    @property
    def name(self) -> str:
        return f"tiny:{self.hidden}x{self.layers}-v{self.vocab}-s{self.seed}"


def cache_root() -> Path:
    root = os.environ.get("OSINT_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "osint-gym"


def tokenizer_corpus(n_tasks: int = 1500) -> list[str]:
    """Text OSINT-v0 agents read and write: questions, single-turn contexts, generator prompts and
    proposals, env observations. From the benchmark *train* world only (never dev/test)."""
    import json

    from osint_gym import proposals
    from osint_gym.benchmark import benchmark_tasks, benchmark_world
    from osint_gym.single_turn import build_context, gold_completion
    from osint_gym.tools import TOOLS, Notes, tool_schemas

    world = benchmark_world("v0:train")
    texts: list[str] = []
    for task in benchmark_tasks("v0:train", limit=n_tasks):
        for mode in ("triples", "records"):
            ctx = build_context(world, task, mode=mode)
            texts.append(
                f"Question: {task.question}\nContext:\n{ctx.text}\n{gold_completion(task, ctx, cite_evidence=True)}"
            )
    for i in range(n_tasks // 3):
        offer = proposals.make_offer(world, 0, i, mode="fixed" if i % 2 else "generate")
        texts.append(
            proposals.generator_messages(world, offer)[1]["content"] + "\n" + proposals.gold_proposal(world, offer)
        )
    notes = Notes()
    for eid in world.ids("person")[:100] + world.ids("account")[:100]:
        data = TOOLS["get_profile"](world, notes, {"handle_or_id": eid}).data
        texts.append(
            json.dumps(
                {"step": 1, "results": [{"call": "get_profile", "ok": True, "result": data}]}, separators=(",", ":")
            )
        )
        texts.append(json.dumps({"tool_calls": [{"name": "get_profile", "arguments": {"handle_or_id": eid}}]}))
    texts.append(json.dumps(tool_schemas(world)))
    texts += _compact_episodes(world, benchmark_tasks("v0:train", limit=n_tasks))
    texts += ["".join(lexicon())] * LEXICON_REPEATS
    for role in ("system", "user", "assistant", "tool"):  # the chat template's words
        texts += [f"<|im_start|>{role}\n"] * 50
    return texts


def lexicon() -> list[str]:
    """Every word a generated world writes (`osint_gym.world.names.generated_words`), in the forms an
    agent's text shows it: after a space (" Ralven", " Malmo") and, for handles, after "@", "_" or ".".

    Why: a tiny model that copies a made-up name as BPE pieces (" M", "al", "mo") miscopies it
    ("Maldel Aals" for "Malmo"), and most of its failed episodes went wrong there, at the first action;
    one token per word removes that (the figures: benchmarks/RESULTS.md, the investigator's warm start)."""
    from osint_gym.world.names import generated_words

    title, handle = generated_words()
    return [" " + w for w in sorted(title)] + [sep + w for w in sorted(handle) for sep in "@_."]


def pretokenize_pattern() -> str:
    """`PRETOKENIZE_PATTERN` with its syllable branch: the first syllable of a word made of exactly
    two of `osint_gym.world.names.SYLLABLES` (" Ral" of " Ralven", "ven" then matches as a word).

    Why: organisation and event names start with such a word, and the training worlds write only some
    of them; a word the demonstrations never showed is a token whose embedding was never trained, and
    the model copies another name's first word instead ("Raltar Climate Hackathon 2023" for "Elmar ...").
    Split, every such word is two syllable tokens that every demonstration trains (the figures:
    benchmarks/RESULTS.md, the investigator's warm start)."""
    from osint_gym.world.names import SYLLABLES

    first = "|".join(s.capitalize() for s in SYLLABLES)
    return PRETOKENIZE_PATTERN.format(syllable=rf" ?(?:{first})(?=(?:{'|'.join(SYLLABLES)})\b)")


def _identifiers(texts: list[str]) -> list[str]:
    """The snake_case names of the corpus (tools, arguments, relations, record fields): the
    pre-tokenizer splits words at "_", so each of these is added whole (handles, which also hold
    "_", follow "@", "." or a letter and are not matched)."""
    return sorted({m for t in texts for m in _IDENTIFIER.findall(t)})


def _compact_episodes(world: Any, tasks: list[Any]) -> list[str]:
    """Demonstrations in the compact rendering with short actions (the main job's format), each a whole
    transcript served and rendered by an `osint_gym.spec.EpisodeSpec` like every other conversation."""
    from osint_gym.agents import OracleAgent
    from osint_gym.spec import EpisodeSpec
    from osint_gym.tasks import Budgets

    spec = EpisodeSpec(Budgets(observation_format="compact"), action_format="short")
    texts = []
    for task in tasks:
        record = spec.play_one(spec.make_env(world, task), OracleAgent("short", names_first=True))
        texts.append("\n".join(m["content"] for m in spec.conversation(record, last_observation=True)))
    return texts


def _train_tokenizer(vocab: int) -> Any:
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pretokenize_pattern()), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = tokenizer_corpus()
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None,
        padding_side="left", model_max_length=4096,
    )
    # each id and identifier twice: with its leading space (how questions, compact observations and short actions
    # write it: one token, as the notes on tiny models advise) and bare (inside JSON strings). The
    # spaced form is not `single_word`: that check looks at the character before the space, so the
    # second id of " person_14 person_16" would not match (the longest match keeps person_160 whole).
    words = [f"{prefix}_{i}" for prefix, n in ID_TOKENS.items() for i in range(n)] + _identifiers(corpus)
    fast.add_tokens([AddedToken(f"{space}{word}", single_word=not space, lstrip=False, rstrip=False, normalized=False)
                     for word in words for space in (" ", "")])
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny(spec: TinySpec, path: Path) -> None:
    """Write a tiny model + tokenizer folder at ``path`` (deterministic in the spec)."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    tokenizer = _train_tokenizer(spec.vocab)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=spec.hidden, intermediate_size=2 * spec.hidden,
        num_hidden_layers=spec.layers, num_attention_heads=max(1, spec.hidden // 32),
        num_key_value_heads=max(1, spec.hidden // 32), max_position_embeddings=4096, tie_word_embeddings=True,
        bos_token_id=None, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(spec.seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=False, max_new_tokens=32,
    )
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)


def corpus_version() -> str:
    """The tokenizer corpus's version, part of a cached tiny model's folder name: a change of the corpus here
    (`CORPUS_REVISION`) or of osint-gym's compact format (`osint_gym.compact.FORMAT_VERSION`, which the corpus's
    episodes are written in) gives a new one. A sum, because both only grow (so no earlier value comes back) and
    the sum is the hand-kept version 14 this replaced: caches built before it stay valid."""
    return str(CORPUS_REVISION + compact.FORMAT_VERSION)


def tiny_path(name: str) -> Path:
    """The cached folder of a ``tiny:`` model, built on first use (atomically: build, then rename)."""
    spec = TinySpec.parse(name)
    key = hashlib.sha256(f"{spec.name}|corpus{corpus_version()}".encode()).hexdigest()[:12]
    path = cache_root() / "tiny" / f"{spec.hidden}x{spec.layers}-v{spec.vocab}-s{spec.seed}-{key}"
    if (path / "config.json").is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=".building-"))
    try:
        build_tiny(spec, tmp)
        try:
            os.rename(tmp, path)
        except OSError:  # another process finished first: keep theirs
            if not (path / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def resolve_model(name_or_path: str) -> str:
    """A path or hub id that ``from_pretrained`` accepts (``tiny:`` specs and ``.gguf`` files become cached
    folders: `osint_eval.local_models`)."""
    if not isinstance(name_or_path, str) or not name_or_path:
        raise EvalError(f"model must be a non-empty string, got {name_or_path!r}")
    if name_or_path.startswith(TINY_PREFIX):
        return str(tiny_path(name_or_path))
    local = Path(name_or_path).expanduser()
    if local.exists():
        from osint_eval import local_models

        # a .gguf file (or a folder of one) is converted once into a plain folder in the cache
        return str(local_models.converted(local, cache_root())) if local_models.gguf_file(local) else str(local)
    if name_or_path.startswith(("/", "./", "../", "~")) or name_or_path.count("/") > 1 or local.suffix == ".gguf":
        raise EvalError(f"model path {name_or_path!r} does not exist")
    return name_or_path  # a hub id such as Qwen/Qwen2.5-0.5B-Instruct (needs network)


def load_model_and_tokenizer(name_or_path: str, *, dtype: str = "auto", device: str | None = None) -> tuple[Any, Any]:
    """(model in eval mode, tokenizer with left padding) for a hub id, a local folder, a .gguf file or a tiny spec."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise EvalError("model policies need the 'hf' extra: pip install 'osint-eval[hf]'") from exc
    path = resolve_model(name_or_path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype if dtype != "auto" else "auto")
    except OSError as exc:
        raise EvalError(f"cannot load model {name_or_path!r}: {str(exc).splitlines()[0]}") from None
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    model.eval()
    return model, tokenizer
