"""The self-play loop: warm start, then rounds of generator and answerer phases, then evaluation.

Every phase writes its artifacts atomically and then a marker; ``resume=True`` skips phases whose
marker exists and continues from the first unfinished one, so nothing is lost or duplicated.
Under ``accelerate launch`` every process runs the loop; trainers synchronise themselves, and
everything else is done by the main process while the others wait and then read its files.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from osint_eval.modeling import resolve_model
from osint_gym.proposals import Offer
from osint_gym.tasks import Task
from osint_selfplay import claims, controls, data, frontier, phases, precision, relabel, streams
from osint_selfplay.artifacts import (
    PhaseMarkers,
    atomic_write_json,
    atomic_write_jsonl,
    clean_partials,
    folder_digest,
    git_sha,
    log_file,
    package_versions,
    pin_determinism,
    read_jsonl,
)
from osint_selfplay.config import RunConfig, config_from_dict
from osint_selfplay.curriculum import FrontierCurriculum
from osint_selfplay.curves import DevProbe
from osint_selfplay.errors import ConfigError
from osint_selfplay.evaluate import check_heldout, evaluate_controls, evaluate_run
from osint_selfplay.results import (
    AnswererResult,
    DevPoint,
    EvaluationResult,
    GeneratorResult,
    PhaseResult,
    SampleResult,
    TaskMix,
    WarmStartResult,
)
from osint_selfplay.rewards import AnswererReward, EpisodeReward, GeneratorReward
from osint_selfplay.rollout import MultiTurnRollout
from osint_selfplay.solver import SolverSampler
from osint_selfplay.state import Models, RoundSummary, RunState, RunSummary
from osint_selfplay.streams import stream_seed
from osint_selfplay.trl_compat import check_run
from osint_selfplay.worlds import WorldPool

log = logging.getLogger("osint_selfplay")
P = TypeVar("P", bound=PhaseResult)

SCHEDULES = {
    "generator_answerer": ("generator", "sample", "answerer"),
    "answerer_generator_answerer": ("answerer_first", "generator", "sample", "answerer"),
    "answerer": ("answerer",),  # the investigator alone, on seed tasks (a hub model's first run: no generator)
}


class _Dist:
    """Main-process helpers; a single process is its own main."""

    def __init__(self) -> None:
        import torch
        from accelerate import PartialState

        self.state = PartialState(cpu=not torch.cuda.is_available())

    @property
    def is_main(self) -> bool:
        return bool(self.state.is_main_process)

    def wait(self) -> None:
        self.state.wait_for_everyone()


class SelfPlayRun:
    def __init__(self, cfg: RunConfig, *, resume: bool = False, overwrite: bool = False) -> None:
        self.cfg = cfg
        self.root = Path(cfg.output_dir)
        self.markers = PhaseMarkers(self.root)
        manifest = self.root / "run.json"
        if manifest.is_file() and not resume and not overwrite:
            raise ConfigError(
                f"{self.root} already holds a run; pass --resume to continue it, --overwrite to replace it, "
                "or choose another output_dir"
            )
        if resume and manifest.is_file():
            saved = config_from_dict(json.loads(manifest.read_text())["config"]).to_dict()
            new = cfg.to_dict()
            saved["output_dir"] = new["output_dir"]  # the same run, wherever its folder now is
            if saved != new:
                diff = sorted(k for k, v in new.items() if saved.get(k) != v)
                raise ConfigError(f"--resume with a different config than {manifest} (differs in: {', '.join(diff)})")
        # every setting TRL will see is checked now, before the run writes anything
        check_run(cfg)
        phases.check_vllm(cfg)
        check_heldout(cfg)
        if cfg.warm_start.control and not cfg.warm_start_on:
            raise ConfigError("warm_start.control continues the warm start, which is off for these models: "
                              "set warm_start.enabled = 'on' or warm_start.control = false")
        self.machine = pin_determinism(cfg.torch_threads, cfg.deterministic)
        self.dist = _Dist()
        if overwrite and manifest.is_file() and self.dist.is_main:
            shutil.rmtree(self.root)  # only a folder holding a run (run.json), and only once the config is valid
        self.dist.wait()
        self.pool = WorldPool.for_run(cfg)
        self.summary = RunSummary()
        self.probe = DevProbe(cfg)

    @classmethod
    def finished(cls, run_dir: str | Path) -> SelfPlayRun:
        """The finished run in ``run_dir`` (its manifest's config, its summary), to add phases to."""
        root = Path(run_dir)
        manifest, summary_path = root / "run.json", root / "summary.json"
        if not manifest.is_file():
            raise ConfigError(f"{str(root)!r} holds no osint-selfplay run (no run.json)")
        if not summary_path.is_file():
            raise ConfigError(f"the run in {str(root)!r} has not finished (no summary.json); finish it with "
                              "`osint-selfplay train --config ... --resume` first")
        try:
            saved = json.loads(manifest.read_text())["config"]
            summary = RunSummary.from_dict(json.loads(summary_path.read_text()))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ConfigError(f"{str(root)!r}: run.json or summary.json is malformed ({e})") from None
        run = cls(config_from_dict({**saved, "output_dir": str(root)}), resume=True)
        # the summary holds the precision the run resolved (None in a run older than that record: its packed SFT
        # phases resolve their explicit warm_start.autocast themselves)
        run.summary = summary
        return run

    # ------------------------------------------------------------------ phases and folders (controls use them too)
    def run_phase(self, round_index: int | None, name: str, fn: Callable[[], P], kind: type[P], *,
                  collective: bool = False) -> P:
        """Run a phase unless its marker exists; its result, a ``kind``, as its marker holds it (the one place a
        phase's result meets its file). ``collective`` phases (trainers) run on every process; the others only on
        the main process."""
        label = name if round_index is None else f"round {round_index} {name}"
        done = self.markers.done(round_index, name)
        if done is not None:
            log.info("skip %s (done)", label)
            return kind.from_dict(done, f"{label}'s marker")
        log.info("%s: started", label)
        t0 = time.perf_counter()
        result = kind()
        if collective or self.dist.is_main:
            result = fn()
            result.wall_seconds = time.perf_counter() - t0
        self.dist.wait()
        if self.dist.is_main:
            self.markers.mark(round_index, name, result.to_dict())
            log.info("%s: %s", label, _one_line(result))
        self.dist.wait()
        marked = self.markers.done(round_index, name)
        return result if marked is None else kind.from_dict(marked, f"{label}'s marker")

    def run_dir(self, round_index: int | None, name: str) -> Path:
        """The folder (or file) ``name`` of round ``round_index``, or of the run when it is None."""
        return self.root / (name if round_index is None else f"round_{round_index:03d}/{name}")

    def _write_manifest(self, bases: Models, chosen: precision.Precision) -> None:
        if self.dist.is_main and not (self.root / "run.json").is_file():
            atomic_write_json(self.root / "run.json", {
                "config": self.cfg.to_dict(), "versions": package_versions(), "git_sha": git_sha(),
                "seeds": {"run": self.cfg.seed}, "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "precision": chosen.precision,  # what the warm start's matrix products run in
                "machine": {**self.machine, "precision_choice": chosen.to_dict()},
                "base_models": {role: {"path": path, "sha256": folder_digest(path)}
                                for role, path in bases.to_dict().items()},
            })
        self.dist.wait()

    # ------------------------------------------------------------------ phases
    def _warm_start(self, bases: Models) -> Models:
        """The warm start of each role from ``bases``; returns the models it trained."""
        cfg = self.cfg
        roles = (cfg.warm_start_role,) if cfg.warm_start_role else ("generator", "answerer")
        if cfg.phase_schedule == "answerer":  # no generator phase: only the answerer is warm-started
            roles = ("answerer",)
        current = dataclasses.replace(bases)
        for role in roles:
            out = self.run_dir(None, f"warm_start/{role}")

            def fn(role: str = role, out: Path = out) -> WarmStartResult:
                src = bases.generator if role in ("shared", "generator") else bases.answerer
                # demonstrations in the format the rollout and evaluation give this model's template
                native = cfg.answerer.mode == "multi_turn" and role != "generator" and phases.renders_tools(
                    resolve_model(src))
                rows, counts = data.warm_start_rows(self.pool, cfg, role, native)
                if self.dist.is_main:
                    atomic_write_jsonl(out / "demonstrations.jsonl", rows)
                name = cfg.model.generator if role != "answerer" else cfg.model.answerer
                sft = phases.run_sft(resolve_model(src), rows, cfg, out, role, name, precision=self.summary.precision)
                return sft.extended(WarmStartResult, demonstration_counts=counts)

            result = self.run_phase(None, f"warm_start_{role}", fn, WarmStartResult, collective=True)
            if role in ("answerer", "shared"):
                self.summary.warm_start = result
            for r in (("generator", "answerer") if role == "shared" else (role,)):
                setattr(current, r, str(out / "final_model"))
        return current

    def _generator_phase(self, r: int, current: Models) -> GeneratorResult:
        """The generator's GRPO on the round's offers, rewarded by the frontier of the frozen answerer: the
        answerer as the round starts (each round's answerer phase refreshes it)."""
        cfg = self.cfg
        out = self.run_dir(r, "generator")
        rows = data.generator_rows(self.pool, cfg, r)
        frozen = current.answerer

        def fn() -> GeneratorResult:
            if self.dist.is_main:
                atomic_write_jsonl(out / "prompts.jsonl", rows)
            solver = None if cfg.dry_run else self._solver(frozen, stream_seed(cfg.seed, "solver", r))
            reward = GeneratorReward(self.pool, cfg.generator, solver)
            try:
                metrics = phases.run_grpo(current.generator, rows, reward, cfg.grpo_generator, cfg, out, "generator",
                                          cfg.model.generator, stream_seed(cfg.seed, "grpo_generator", r))
            finally:
                if solver is not None:
                    solver.close()
            if self.dist.is_main:
                atomic_write_jsonl(out / "steps.jsonl", [step.to_dict() for step in reward.steps])
                atomic_write_jsonl(out / "observations.jsonl", reward.observations)
            return frontier.generator_result(
                metrics, reward, frozen_answerer=frozen, solve_rate_samples=cfg.generator.solver_samples,
                frozen_answerer_unsolvable_under_budget=solver.unsolvable if solver is not None else 0)

        result = self.run_phase(r, "generator", fn, GeneratorResult, collective=True)
        self.advance(current, "generator", out)
        return result

    def _sample_phase(self, r: int, current: Models) -> SampleResult:
        """The trained generator's proposals on the round's sample offers and, with ``generator.curriculum``, the
        scripted curriculum's on the same offers, validated and rated by the frozen answerer (`frontier`)."""
        cfg = self.cfg
        out = self.run_dir(r, "sampled")
        frozen = current.answerer

        def fn() -> SampleResult:
            rows = data.sample_rows(self.pool, cfg, r)
            offers = [Offer.from_json(row["offer"]) for row in rows]
            worlds = [self.pool.world(row["world_seed"]) for row in rows]

            def generate(prompts: list[list[dict[str, str]]]) -> list[str]:
                return phases.sample_completions(
                    current.generator, prompts, temperature=cfg.generator.sample_temperature,
                    seed=stream_seed(cfg.seed, "sample_generation", r),
                    max_new_tokens=cfg.grpo_generator.max_completion_length, decoding=cfg.model.decoding)

            curriculum = None
            if cfg.generator.curriculum:
                observed = self.run_dir(r, "generator") / "observations.jsonl"
                curriculum = FrontierCurriculum.from_observations(read_jsonl(observed) if observed.is_file() else [])
            solver = self._solver(frozen, stream_seed(cfg.seed, "sample_solver", r))
            try:
                figures, files = frontier.sample_round(
                    worlds, offers, generate, solver.rate, max_hops=cfg.generator.max_hops, round_index=r,
                    curriculum=curriculum, seed=cfg.seed,
                    worlds_of=lambda t: self.pool.world(t.provenance["world_seed"]))
            finally:
                solver.close()
            for name, rows_ in files.items():
                atomic_write_jsonl(out / name, rows_)
            figures = dataclasses.replace(figures, solve_rate_samples=cfg.generator.solver_samples,
                                          frozen_answerer=frozen)
            atomic_write_json(out / "validation.json", figures.to_dict())
            return figures

        return self.run_phase(r, "sample", fn, SampleResult)

    def _solver(self, answerer: str, seed: int, temperature: float | None = None) -> SolverSampler:
        """The frozen answerer's sampler (`SolverSampler.from_config`)."""
        return SolverSampler.from_config(self.cfg, answerer, seed, temperature)

    def answerer_phase(self, r: int, current: Models, name: str, *, generated_from: str | None = "tasks.jsonl",
                       as_step: str | None = None, reverse: bool = False) -> AnswererResult:
        """The answerer's GRPO phase ``name`` of round ``r`` from ``current.answerer``, on the round's generated
        tasks in ``generated_from`` (a file of its sample phase; None: none) that the frontier band admits, and
        seed tasks. ``as_step``: the step whose seed tasks, stream and GRPO seed it repeats (the controls of
        `osint_selfplay.controls`, each into its own folder: the uniform-task control without generated tasks,
        the curriculum arm on the curriculum's). ``reverse``: R3's fixed schedule, its seed tasks started at the
        stage's rung (`data.reverse_rungs`) and played in order."""
        cfg = self.cfg
        out = self.run_dir(r, name)
        step = as_step or name
        generated: list[Task] = []
        sampled = self.run_dir(r, "sampled") / (generated_from or "")
        if generated_from is not None and sampled.is_file():
            generated = [Task.from_dict(row) for row in read_jsonl(sampled)]
        start = current.answerer

        def fn() -> AnswererResult:
            rows, mix = self._answerer_rows(r, start, generated, step, out, reverse)
            rollout = None
            if cfg.answerer.mode == "multi_turn":
                rollout = MultiTurnRollout(self.pool, rows, spec=cfg.episode.spec(),
                                           decoding=cfg.model.decoding)
                reward: Any = EpisodeReward(cfg.parl, cfg.grpo_answerer.num_generations)
            else:
                reward = AnswererReward(cfg.grpo_answerer.num_generations)
            grpo = phases.run_grpo(
                start,
                rows,
                reward,
                data.in_order(cfg.grpo_answerer) if reverse else cfg.grpo_answerer,
                cfg,
                out,
                "answerer",
                cfg.model.answerer,
                stream_seed(cfg.seed, f"grpo_{step}", r),
                rollout_func=rollout,
                probe=self.probe if as_step is None else None,  # the controls' dev curve is not the run's
                label=f"round {r} answerer GRPO",
            )
            if mix.top_up:
                log.warning("round %d: only %d validated generated tasks; topped up %d with osint-gym tasks",
                            r, mix.generated, mix.top_up)
            return grpo.extended(AnswererResult, mix=mix, start_model=start,
                                 rollouts=rollout.summary() if rollout is not None else None,
                                 reward_seconds=None if rollout is not None else reward.seconds,
                                 zero_variance_by_source=reward.zero_variance_share())

        result = self.run_phase(r, name, fn, AnswererResult, collective=True)
        self.advance(current, "answerer", out)
        return result

    def _answerer_rows(self, r: int, answerer: str, generated: list[Task], step: str, out: Path,
                       reverse: bool = False) -> tuple[list[dict[str, Any]], TaskMix]:
        """The answerer phase's rows and mix (`data.mix_answerer_rows`), made by the main process
        (dynamic sampling plays ``answerer``, whose samples may differ across devices) and read back by all."""
        cfg = self.cfg
        if self.dist.is_main:
            solver = None
            if cfg.answerer.seed_candidates > 1 and not cfg.dry_run:
                seed = stream_seed(cfg.seed, f"seed_prepass_{step}", r)
                temperature = getattr(cfg.grpo_answerer, "temperature", 1.0)  # unset: GRPOConfig's default, 1.0
                solver = self._solver(answerer, seed, temperature)
            stream = streams.TRAIN if step == "answerer" else streams.TRAIN_FIRST
            try:
                rows, mix = data.mix_answerer_rows(self.pool, cfg, generated, r, stream,
                                                   solver.solve_rates if solver else None, reverse)
            finally:
                if solver is not None:
                    solver.close()
            atomic_write_jsonl(out / "tasks.jsonl", rows)
            atomic_write_json(out / "mix.json", mix.to_dict())
        self.dist.wait()
        return read_jsonl(out / "tasks.jsonl"), TaskMix.from_dict(json.loads((out / "mix.json").read_text()),
                                                                  str(out / "mix.json"))

    def advance(self, current: Models, role: str, out: Path) -> None:
        """Move ``role`` (both, with a shared model) on to the model phase folder ``out`` trained."""
        path = str(out / "final_model")
        if self.cfg.model_topology == "shared":
            current.generator = current.answerer = path
        else:
            setattr(current, role, path)

    # ------------------------------------------------------------------ run
    def run(self) -> RunSummary:
        """Run every unfinished phase. A new run that fails before any phase finished (a data
        setting no world can satisfy, a model that does not load) removes what it wrote, so the
        folder does not block the next attempt; Ctrl-C keeps it for ``--resume``."""
        fresh = not (self.root / "run.json").is_file()
        created = not self.root.exists()
        try:
            with log_file(self.root / "train.log", self.dist.is_main):
                return self._run()
        except Exception:
            if fresh and self.dist.is_main and not any(self.root.rglob("*.done.json")):
                shutil.rmtree(self.root, ignore_errors=True) if created else (self.root / "run.json").unlink(
                    missing_ok=True
                )
            raise

    def _run(self) -> RunSummary:
        cfg = self.cfg
        answerer_model = cfg.model.generator if cfg.warm_start_role else cfg.model.answerer
        bases = Models(generator=resolve_model(cfg.model.generator), answerer=resolve_model(answerer_model))
        self.root.mkdir(parents=True, exist_ok=True)
        if self.dist.is_main:
            clean_partials(self.root)
        chosen = precision.for_run(cfg.warm_start.autocast, self.root / "run.json", bases.answerer,
                                   precision.step_tokens(cfg.warm_start))
        precision.announce(chosen)
        self.summary.precision = chosen
        self._write_manifest(bases, chosen)
        warm = self._warm_start(bases) if cfg.warm_start_on else dataclasses.replace(bases)
        state = RunState(bases=bases, warm=warm, current=dataclasses.replace(warm))
        if self.probe.enabled:  # the dev curve's first point: the model the on-policy rounds start from
            start = warm.answerer
            self.summary.dev_curve_start = self.run_phase(
                None, "dev_curve_start",
                lambda: self.probe.measure_path(start, "warm start" if cfg.warm_start_on else "base", 0), DevPoint)
        for r in range(cfg.rounds):
            round_summary = self._round(r, state.current)
            self.summary.rounds.append(round_summary)
            if self.dist.is_main:
                atomic_write_json(self.run_dir(r, "summary.json"), round_summary.to_dict())
        self.summary.output_dir = str(self.root)
        self.summary.final_models = dataclasses.replace(state.current)
        self.summary.warm_start_models = warm if cfg.warm_start_on else None
        trained = controls.train(self, equal_compute=cfg.warm_start.control, uniform=cfg.answerer.uniform_control,
                                 curriculum=cfg.generator.curriculum_control,
                                 imitation=cfg.warm_start.imitation_control, reverse=cfg.answerer.reverse_control)
        self.summary.record(trained)
        models = controls.models(trained)
        if cfg.eval.enabled:
            self.summary.evaluation = self.run_phase(None, "evaluation", lambda: evaluate_run(self, state, models),
                                                     EvaluationResult)
        self.write_summary()
        return self.summary

    def _round(self, r: int, current: Models) -> RoundSummary:
        """Round ``r``'s phases in the configured schedule, advancing ``current``."""
        cfg = self.cfg
        round_summary = RoundSummary(round=r)
        for step in SCHEDULES[cfg.phase_schedule]:
            if step == "generator":
                round_summary.generator = self._generator_phase(r, current)
            elif step == "sample":
                round_summary.sampled = self._sample_phase(r, current)
            else:
                if step == "answerer" and cfg.relabel.enabled:
                    round_summary.relabel = relabel.phase(self, r, current)
                if step != "answerer" or not cfg.relabel.enabled or cfg.relabel.grpo:
                    setattr(round_summary, step, self.answerer_phase(r, current, step))
        return round_summary

    def write_summary(self) -> None:
        """Write ``summary.json`` with its claims (the main process), then wait for every process."""
        self.summary.claims = claims.claims(self.summary, self.cfg.seed)
        if self.dist.is_main:
            atomic_write_json(self.root / "summary.json", self.summary.to_dict())
        self.dist.wait()


def after_run(run_dir: str | Path) -> RunSummary:
    """Train the controls a finished run lacks (the equal-compute one where its warm start was packed),
    add them to its evaluation (paired on the same tasks) and return the updated run summary."""
    run = SelfPlayRun.finished(run_dir)
    with log_file(run.root / "train.log", run.dist.is_main):
        return _add_controls(run)


def _add_controls(run: SelfPlayRun) -> RunSummary:
    cfg, summary = run.cfg, run.summary
    if cfg.dry_run:
        raise ConfigError(f"the run in {str(run.root)!r} is a dry run: it trained nothing to control")
    packed = cfg.warm_start_on and cfg.warm_start.packing
    trained = controls.train(run, equal_compute=packed and not summary.control, uniform=not summary.uniform_control,
                             curriculum=cfg.generator.curriculum and not summary.curriculum_control,
                             imitation=packed and cfg.answerer.mode == "multi_turn" and not summary.imitation_reference,
                             reverse=cfg.answerer.mode == "multi_turn" and not summary.reverse_control)
    summary.record(trained)
    models = controls.models(trained)
    if cfg.eval.enabled and models:
        summary.evaluation = evaluate_controls(run, models)
    run.write_summary()
    return summary


def _one_line(result: PhaseResult) -> str:
    keys = ("valid_rate", "reward_first", "reward_last", "seconds", "steps", "examples", "final_loss", "wall_seconds")
    values = [(k, getattr(result, k, None)) for k in keys]
    parts = [f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in values if v is not None]
    return ", ".join(parts) or "done"
