"""The Hugging Face Hub side of a run: mirror its artifacts (``osint-selfplay push``) and submit it
as a Hugging Face Job (``osint-selfplay launch``), both through huggingface_hub's own API
(``HfApi.upload_folder``, ``HfApi.run_job``). Checkpoints pushed during training are TRL's:
``push_to_hub``, ``hub_model_id`` and ``hub_strategy`` in a ``[grpo_*]`` table reach GRPOConfig.

Nothing here imports torch or TRL; errors are one line (`ConfigError`, `SelfPlayError`).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError, SelfPlayError

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
DEFAULT_IMAGE = "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime"
# the job installs the three packages from the user's own checkout (its git remote at one commit), never by
# bare name from an index: the names are not published there, and whoever later published them would run
# their code with the job's HF_TOKEN
PACKAGES = (("osint-gym", ""), ("osint-eval", "[hf]"), ("osint-selfplay", "[vllm,wandb]"))
# what a job needs to run: checkpoints, reports and records, not TRL's scratch folders
IGNORE = ["**/trainer/**", "**/checkpoint-*/**", "**/.building-*/**", "**/wandb/**"]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:300]}" if text else type(exc).__name__


def check_repo_id(repo_id: str) -> str:
    if not isinstance(repo_id, str) or not _REPO_ID.match(repo_id):
        raise ConfigError(f"--repo-id must look like 'user-or-org/name', got {repo_id!r}")
    return repo_id


def push_run(run_dir: str, repo_id: str, *, private: bool = False, revision: str | None = None,
             token: str | None = None) -> str:
    """Upload a run folder (its ``run.json``, summaries, reports and final models) to a Hub model
    repo, created if missing. Returns the commit URL."""
    folder = Path(run_dir)
    if not (folder / "run.json").is_file():
        raise ConfigError(f"{run_dir!r} is not an osint-selfplay run folder (no run.json)")
    check_repo_id(repo_id)
    from huggingface_hub import HfApi
    from huggingface_hub.errors import OfflineModeIsEnabled

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, private=private, exist_ok=True)
        info = api.upload_folder(repo_id=repo_id, folder_path=str(folder), revision=revision, ignore_patterns=IGNORE,
                                 commit_message=f"osint-selfplay run {folder.name}")
    except OfflineModeIsEnabled:
        raise SelfPlayError("cannot push: HF_HUB_OFFLINE is set (unset it on a machine with network access)") from None
    except Exception as exc:  # HTTP errors, and the HTTP client's own (not OSErrors): one line, whatever the transport
        raise SelfPlayError(f"cannot push {run_dir} to {repo_id}: {_first_line(exc)}") from None
    return str(getattr(info, "commit_url", info))


@dataclass(frozen=True)
class Source:
    """Where a job gets the code: a git URL it can clone and the full commit it installs."""

    url: str
    commit: str

    def requirements(self) -> list[str]:
        """The three packages as PEP 508 direct references pinned to the commit, with their extras."""
        return [
            f"{name}{extras} @ git+{self.url}@{self.commit}#subdirectory=packages/{name}" for name, extras in PACKAGES
        ]


def _git(root: Path, *args: str) -> str | None:
    """``git -C root args`` (stdout, stripped), or ``None`` when git fails or is missing."""
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _https_url(remote: str) -> str:
    """A remote a job can clone without this machine's keys: https as it is, ssh forms rewritten to https."""
    if remote.startswith("https://"):
        return remote
    ssh = re.match(r"^(?:ssh://)?git@([^:/]+)[:/](.+)$", remote)
    if ssh:
        return f"https://{ssh.group(1)}/{ssh.group(2)}"
    raise ConfigError(f"the job cannot clone the git remote {remote!r}: pass --repo-url https://... (a public or "
                      "token-readable repository holding the commit)")


def checkout_source(repo_url: str | None = None, commit: str | None = None, root: Path | None = None) -> Source:
    """The user's own code for a job: ``repo_url`` (default: the checkout's ``origin``, as https) at ``commit``
    (default: ``HEAD``, which must hold every change under ``packages/`` and be on a remote branch)."""
    root = root if root is not None else Path(__file__).resolve().parent
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        if repo_url is None or commit is None or not _SHA.match(commit):
            raise ConfigError("osint-selfplay is not installed from a git checkout: pass --repo-url https://... and "
                              "--commit with the full 40-character commit the job should install")
        return Source(_https_url(repo_url), commit)
    sha = _git(Path(top), "rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}")
    if sha is None:
        raise ConfigError(f"--commit {commit!r} is not a commit of the checkout {top}")
    if commit is None and _git(Path(top), "status", "--porcelain", "--", "packages"):
        raise ConfigError(f"packages/ has uncommitted changes the job would not see: commit and push them "
                          f"(it installs {sha[:12]}), or pass --commit")
    url = repo_url or _git(Path(top), "remote", "get-url", "origin")
    if not url:
        raise ConfigError(f"the checkout {top} has no 'origin' remote: pass --repo-url https://...")
    if repo_url is None and not _git(Path(top), "branch", "-r", "--contains", sha):
        raise ConfigError(f"commit {sha[:12]} is on no remote branch of this checkout: push it first "
                          "(the job clones the remote), or pass --repo-url")
    return Source(_https_url(url), sha)


def job_spec(config_path: str, overrides: list[str], *, flavor: str, source: Source, image: str = DEFAULT_IMAGE,
             timeout: str = "8h", repo_id: str | None = None) -> dict[str, Any]:
    """The Hugging Face Job that runs ``osint-selfplay train`` on this config: the config travels in
    the job's environment (base64), the packages are installed from ``source`` (the user's repository
    at one commit), and with ``repo_id`` the run folder is pushed when training ends. ``HF_TOKEN`` (and
    ``WANDB_API_KEY`` if set) are secrets."""
    cfg = load_config(config_path, overrides)  # a bad config fails here, not on the rented machine
    if not isinstance(flavor, str) or not flavor:
        raise ConfigError("--flavor must name a Hugging Face Jobs hardware flavor, e.g. a10g-large or h100")
    if repo_id is not None:
        check_repo_id(repo_id)
    text = Path(config_path).read_bytes()
    train = ["osint-selfplay", "train", "--config", "run.toml", *[a for o in overrides for a in ("--set", o)]]
    script = ["(command -v git >/dev/null || (apt-get update -qq && apt-get install -y -qq git))",
              shlex.join(["pip", "install", "--no-cache-dir", *source.requirements()]),
              'echo "$OSINT_SELFPLAY_CONFIG" | base64 -d > run.toml', shlex.join(train)]
    if repo_id is not None:
        script.append(shlex.join(["osint-selfplay", "push", cfg.output_dir, "--repo-id", repo_id]))
    return {
        "image": image, "command": ["bash", "-c", " && ".join(script)], "flavor": flavor, "timeout": timeout,
        "env": {"OSINT_SELFPLAY_CONFIG": base64.b64encode(text).decode()},
        "secrets": ["HF_TOKEN", "WANDB_API_KEY"],
        "labels": {"osint-selfplay": "train", "config": Path(config_path).stem[:60], "commit": source.commit[:12]},
    }


def submit(spec: dict[str, Any], token: str | None = None) -> str:
    """Submit ``spec`` with huggingface_hub's jobs API; returns the job's URL (or id)."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import OfflineModeIsEnabled

    secrets = {name: os.environ[name] for name in spec["secrets"] if os.environ.get(name)}
    if "HF_TOKEN" not in secrets and token is None:
        raise ConfigError("HF_TOKEN is not set: the job needs it to run and to push (export HF_TOKEN=hf_...)")
    kwargs = {k: v for k, v in spec.items() if k not in ("secrets",)}
    try:
        job = HfApi(token=token).run_job(**kwargs, secrets=secrets)
    except OfflineModeIsEnabled:
        raise SelfPlayError("cannot launch: HF_HUB_OFFLINE is set") from None
    except Exception as exc:  # as in push_run
        raise SelfPlayError(f"cannot launch the job: {_first_line(exc)}") from None
    return str(getattr(job, "url", None) or getattr(job, "id", job))


def spec_json(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=2, sort_keys=True)
