"""Atomic writes (`osint_gym.files`): a write either replaces the file whole or leaves the old one."""

from __future__ import annotations

import json

import pytest

from osint_gym.files import (
    atomic_dir,
    atomic_write_json,
    atomic_write_jsonl,
    atomic_write_text,
    clean_partials,
    read_jsonl,
)


class Unserialisable:
    def __str__(self) -> str:
        raise RuntimeError("cannot render")


def test_a_write_that_fails_midway_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "summary.json"
    atomic_write_json(path, {"round": 1})
    old = path.read_bytes()

    def fail_on_rename(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("osint_gym.files.os.replace", fail_on_rename)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_json(path, {"round": 2})
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


def test_an_exception_while_rendering_writes_nothing(tmp_path):
    path = tmp_path / "rows.jsonl"
    atomic_write_jsonl(path, [{"a": 1}])
    with pytest.raises(RuntimeError, match="cannot render"):
        atomic_write_json(path, {"bad": Unserialisable()})
    assert read_jsonl(path) == [{"a": 1}]
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]


def test_json_and_jsonl_round_trip_with_their_key_order(tmp_path):
    atomic_write_json(tmp_path / "a.json", {"b": 1, "a": "é"})
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == '{\n  "a": "é",\n  "b": 1\n}\n'
    atomic_write_json(tmp_path / "b.json", {"b": 1, "a": 2}, indent=1, sort_keys=False)
    assert list(json.loads((tmp_path / "b.json").read_text())) == ["b", "a"]
    atomic_write_jsonl(tmp_path / "c.jsonl", [{"z": 1, "y": 2}, {"x": 3}], sort_keys=False)
    assert (tmp_path / "c.jsonl").read_text() == '{"z": 1, "y": 2}\n{"x": 3}\n'
    atomic_write_text(tmp_path / "sub" / "d.txt", "text")
    assert (tmp_path / "sub" / "d.txt").read_text() == "text"


def test_a_folder_whose_build_fails_leaves_the_old_folder(tmp_path):
    folder = tmp_path / "model"
    atomic_dir(folder, lambda d: (d / "weights").write_text("v1"))

    def broken(d):
        (d / "weights").write_text("v2, half")
        raise ValueError("build failed")

    with pytest.raises(ValueError, match="build failed"):
        atomic_dir(folder, broken)
    assert (folder / "weights").read_text() == "v1"
    assert [p.name for p in tmp_path.iterdir()] == ["model"]
    atomic_dir(folder, lambda d: (d / "weights").write_text("v2"))
    assert (folder / "weights").read_text() == "v2"


def test_clean_partials_removes_only_temporary_names(tmp_path):
    (tmp_path / "keep.json").write_text("{}")
    (tmp_path / ".keep.json.abc").write_text("half")
    (tmp_path / "round_000" / ".model.xyz").mkdir(parents=True)
    clean_partials(tmp_path)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["keep.json", "round_000"]
