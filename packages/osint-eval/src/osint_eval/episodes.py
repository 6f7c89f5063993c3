"""A run's episodes as a Hugging Face ``datasets`` dataset: train or analyse on them directly.

One row per episode of every model of a report: the typed `EpisodeResult` (the question, the answer submitted,
the reward and its breakdown, the env-measured counts, the transcript), the model's name, the conversation as
chat ``messages`` (the user's question, then the model's turns and what it saw: the format TRL's SFT and chat
templates read) and the task's provenance (world, seed, index, benchmark split; JSON, as
``osint_gym.benchmark.to_hf_dataset`` writes it). ``episodes_dataset(report, tasks)`` builds it;
``save_episodes(report, tasks, path)`` writes it with ``save_to_disk`` (``datasets.load_from_disk`` reads it);
``episodes_from_dataset`` gives the report's episodes back, equal to the originals. ``osint-eval run/compare
--episodes-dataset DIR`` writes it next to the report. Needs the optional ``datasets`` package.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from osint_eval.errors import EvalError
from osint_eval.runner import EpisodeResult
from osint_eval.schema import Report
from osint_gym.tasks import Task

_JSON_FIELDS = ("submitted",)  # a string, a list of strings or null: one JSON string in the column


def _datasets() -> Any:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the optional package
        raise EvalError("the episode dataset needs the datasets package: pip install datasets") from exc
    return datasets


def conversation(episode: EpisodeResult, mode: str) -> list[dict[str, str]]:
    """The episode as chat messages: single-turn, the prompt the model read (question and context) and its
    completion; multi-turn, the question, then each action and the observation it got back."""
    if mode == "single_turn":
        turn = episode.transcript[0] if episode.transcript else {"action": "", "observation": ""}
        prompt = f"Question: {episode.question}\n{turn['observation']}"
        return [{"role": "user", "content": prompt}, {"role": "assistant", "content": turn["action"]}]
    messages = [{"role": "user", "content": episode.question}]
    for turn in episode.transcript:
        messages += [{"role": "assistant", "content": turn["action"]}, {"role": "tool", "content": turn["observation"]}]
    return messages


def episode_rows(report: Report, tasks: Iterable[Task]) -> list[dict[str, Any]]:
    """The dataset's rows (see the module docstring), models in the report's order, episodes in run order."""
    provenance = {t.task_id: json.dumps(t.provenance, sort_keys=True) for t in tasks}
    rows = []
    for model, episodes in report.episodes.items():
        for e in episodes:
            row = e.to_dict()
            row.update({k: json.dumps(row[k]) for k in _JSON_FIELDS})
            row.update(model=model, mode=report.mode, messages=conversation(e, report.mode),
                       provenance=provenance.get(e.task_id, "{}"))
            rows.append(row)
    return rows


def episodes_dataset(report: Report, tasks: Iterable[Task]) -> Any:
    """A ``datasets.Dataset`` of the report's episodes (``tasks``: the run's tasks, for their provenance)."""
    rows = episode_rows(report, tasks)
    if not rows:
        raise EvalError("the report holds no episode")
    info = _datasets().DatasetInfo(description=f"osint-eval episodes: {report.title} ({report.mode}, "
                                               f"{report.tasks.source}, {len(rows)} episodes)")
    return _datasets().Dataset.from_list(rows, info=info)


def save_episodes(report: Report, tasks: Sequence[Task], path: str | Path, *, overwrite: bool = False) -> Path:
    """Write `episodes_dataset` to ``path`` (``save_to_disk``); an existing ``path`` is refused unless ``overwrite``."""
    out = Path(path)
    if out.exists() and not overwrite:
        raise EvalError(f"{out} already exists; pass --overwrite to replace it")
    episodes_dataset(report, tasks).save_to_disk(str(out))
    return out


def episodes_from_dataset(dataset: Any) -> dict[str, list[EpisodeResult]]:
    """The episodes of each model, back from the dataset (or a path ``load_from_disk`` reads)."""
    if isinstance(dataset, (str, Path)):
        dataset = _datasets().load_from_disk(str(dataset))
    names = {f.name for f in fields(EpisodeResult)}
    found: dict[str, list[EpisodeResult]] = {}
    for row in dataset:
        values = {k: v for k, v in row.items() if k in names}
        values.update({k: json.loads(values[k]) for k in _JSON_FIELDS})
        found.setdefault(row["model"], []).append(EpisodeResult(**values))
    return found
