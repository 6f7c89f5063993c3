"""The tokenizer corpus's version derives from osint-gym's compact format version, so it cannot lag behind it."""

from __future__ import annotations

import hashlib

from osint_eval import modeling
from osint_gym import compact


def _fake_build(spec, folder):
    (folder / "config.json").write_text("{}")


def test_a_new_compact_format_version_gives_a_new_corpus_version_and_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("OSINT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(modeling, "build_tiny", _fake_build)
    assert modeling.corpus_version() == "14"  # the hand-kept value it replaced: tiny models cached before stay valid
    today = modeling.tiny_path("tiny:64x2")
    assert today.name == "64x2-v1536-s0-cd6109a32f05"  # the folder the hand-kept version 14 gave
    monkeypatch.setattr(compact, "FORMAT_VERSION", compact.FORMAT_VERSION + 1)
    assert modeling.corpus_version() == "15"
    bumped = modeling.tiny_path("tiny:64x2")
    assert bumped != today and bumped.name.endswith(hashlib.sha256(b"tiny:64x2-v1536-s0|corpus15").hexdigest()[:12])
    assert sorted(p.name for p in (tmp_path / "tiny").iterdir()) == sorted([today.name, bumped.name])
