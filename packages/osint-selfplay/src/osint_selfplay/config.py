"""Run configuration: frozen dataclasses loaded from TOML, with ``--set a.b=c`` overrides.

Unknown keys are errors that name the closest key; cross-field rules are checked with a message
that states the rule, the values and the fix.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import tomllib

from osint_eval.modeling import DECODING_MODES
from osint_gym.benchmark import BENCHMARKS, parse_ref, shares_world
from osint_gym.errors import from_table, read_toml, unknown_key_message
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import DEFAULT_BUDGETS, Budgets, FailureReason
from osint_selfplay.config_compat import renamed
from osint_selfplay.errors import ConfigError
from osint_selfplay.grpo_config import GRPOPhaseConfig

PHASE_SCHEDULES = ("generator_answerer", "answerer_generator_answerer", "answerer")  # the rounds' phase orders (`loop`)


def _f(default: Any, help: str, **kw: Any) -> Any:  # noqa: A002 - mirrors dataclass field(metadata=help)
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help, **kw})
    return field(default=default, metadata={"help": help, **kw})


def _choice(name: str, value: Any, choices: tuple[Any, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")


def _positive(name: str, value: Any, minimum: float = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise ConfigError(f"{name} must be a number >= {minimum}; got {value!r}")


@dataclass(frozen=True)
class ModelConfig:
    generator: str = _f("tiny:128x3", "Generator model: hub id, local folder or tiny:<hidden>x<layers> spec.")
    answerer: str = _f("tiny:128x3", "Answerer model (ignored with model_topology 'shared' or 'forked', which use "
                                      "`generator`).")
    dtype: str = _f("float32", "Weights dtype: float32, bfloat16, float16 or auto.")
    decoding: str = _f("generate", "Hugging Face generation (evaluation, sampling, CPU rollouts): 'generate' "
                       "(transformers'), 'exact' or 'prefix' (osint-eval's Decoder for small full-attention models; "
                       "see osint_eval.decoding).")
    plain_lm_head: bool = _f(True, "GRPO on a device without Triton: TRL's fused LM head replaced by plain logits over "
                             "the labelled positions, the same log-probabilities at a faster backward "
                             "(osint_selfplay.trl_compat.plain_lm_head; false: TRL's own).")

    def __post_init__(self) -> None:
        _choice("model.dtype", self.dtype, ("float32", "bfloat16", "float16", "auto"))
        if not isinstance(self.plain_lm_head, bool):
            raise ConfigError(f"model.plain_lm_head must be true or false; got {self.plain_lm_head!r}")
        _choice("model.decoding", self.decoding, DECODING_MODES)
        for name in ("generator", "answerer"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ConfigError(f"model.{name} must be a non-empty string")


@dataclass(frozen=True)
class LoraConfig:
    r: int = _f(16, "LoRA rank.")
    alpha: int = _f(32, "LoRA alpha (scaling = alpha / r).")
    dropout: float = _f(0.05, "LoRA dropout.")
    target_modules: list[str] = _f(
        ["q_proj", "k_proj", "v_proj", "o_proj"], "Modules to adapt (peft LoraConfig.target_modules)."
    )

    def __post_init__(self) -> None:
        _positive("lora.r", self.r)
        _positive("lora.alpha", self.alpha)
        if not 0 <= self.dropout < 1:
            raise ConfigError(f"lora.dropout must be in [0, 1); got {self.dropout!r}")
        if "lm_head" in self.target_modules:
            raise ConfigError("lora.target_modules must not contain 'lm_head' (TRL rejects it)")


@dataclass(frozen=True)
class WarmStartConfig:
    enabled: str = _f("auto", "SFT warm start: 'auto' (on for tiny: models), 'on' or 'off'.")
    answerer_examples: int = _f(6000, "Verified osint-gym tasks demonstrated to the answerer: a gold answer each in "
                                "single_turn mode, an oracle episode each in multi_turn mode (incorrect ones dropped).")
    generator_examples: int = _f(1500, "Gold task proposals (verified offers, phrased).")
    difficulties: list[str] = _f(["easy", "medium"], "Difficulties of the demonstrated tasks (the self-play rounds "
                                                     "climb past them: hard tasks are never demonstrated).")
    epochs: float = _f(1.0, "Passes over the demonstrations.")
    learning_rate: float = _f(2e-3, "SFT learning rate (a tiny model from scratch needs a high one to learn "
                                    "to copy early; the main job's rate and its figures: benchmarks/RESULTS.md).")
    batch_size: int = _f(32, "SFT batch size.")
    warmup_steps: int = _f(30, "Linear warm-up steps.")
    max_length: int = _f(
        512,
        "Truncate demonstrations to this many tokens (packed: the packed row's length; "
        "longer demonstrations are dropped and counted).",
    )
    packing: bool = _f(
        False,
        "Pack demonstrations into rows of max_length tokens and train with osint-selfplay's own loop "
        "(faster than TRL's SFTTrainer for a tiny model on a CPU, benchmarks/RESULTS.md; one "
        "process); batch_size then counts packed rows.",
    )
    rename_words: bool = _f(
        False,
        "Multi-turn: each demonstration renames the made-up two-syllable words of its organisation and "
        "event names, consistently within it, to words drawn from all 1,369 "
        "(osint_gym.world.names.rename_made_up_words), so every such word is trained, not only "
        "those the training worlds wrote.",
    )
    workers: int = _f(
        1,
        "Multi-turn: processes that generate the oracle demonstrations (each a pure function of its index: the "
        "rows do not depend on this); 2 on a 2-core CPU uses both cores (benchmarks/RESULTS.md).",
    )
    autocast: str = _f(
        "auto",
        "Packed: 'bfloat16' runs SFT's forward and backward under torch.autocast (matrix products in "
        "bfloat16; weights, gradients and the optimizer stay float32); 'none': float32 throughout; 'auto': "
        "bfloat16 only where the device has native bfloat16 kernels and a sub-second timing confirms them, "
        "else float32 (osint_selfplay.precision; the choice is recorded in run.json).",
    )
    max_steps: int = _f(
        0,
        "Packed: stop the warm start after this many optimizer steps (0: no limit); a budget in steps "
        "gives the same model on any machine, where max_seconds gives a faster one more steps.",
    )
    max_seconds: float = _f(0.0, "Packed: stop the warm start after this many seconds of training (0: no limit; "
                                 "epochs and max_steps decide).")
    decay_fraction: float = _f(
        0.0,
        "Packed: the learning rate falls linearly to 0 over this last share of the budget (the epochs' "
        "steps or max_seconds, whichever ends first); 0: constant after the warm-up.",
    )
    control: bool = _f(
        False,
        "Packed: train the equal-compute control (the warm start's schedule stretched by the self-play "
        "rounds' wall time, resumed where its decay began) inside the job and evaluate it next to the final model; "
        "`osint-selfplay controls RUN_DIR` trains it after the job instead.",
    )
    imitation_control: bool = _f(
        False,
        "Packed: train the imitation reference inside the job: the equal-compute control with a third of every "
        "step's rows oracle demonstrations of hard (3-hop) tasks, i.e. what imitation gives where demonstrations "
        "exist (a reference, not a control); `osint-selfplay controls RUN_DIR` trains it after the job instead.",
    )

    def __post_init__(self) -> None:
        _choice("warm_start.enabled", self.enabled, ("auto", "on", "off"))
        _choice("warm_start.autocast", self.autocast, ("auto", "bfloat16", "none"))
        if not self.difficulties:
            raise ConfigError("warm_start.difficulties must name at least one of 'easy', 'medium', 'hard'")
        for d in self.difficulties:
            _choice("warm_start.difficulties[]", d, ("easy", "medium", "hard"))
        for name in ("answerer_examples", "generator_examples", "batch_size", "workers"):
            _positive(f"warm_start.{name}", getattr(self, name))
        _positive("warm_start.learning_rate", self.learning_rate, 1e-12)
        _positive("warm_start.max_length", self.max_length, 16)
        _positive("warm_start.max_seconds", self.max_seconds, 0)
        _positive("warm_start.max_steps", self.max_steps, 0)
        _positive("warm_start.epochs", self.epochs, 1e-6)
        if not 0 <= self.decay_fraction <= 1:
            raise ConfigError(f"warm_start.decay_fraction must be in [0, 1]; got {self.decay_fraction!r}")
        for name in ("control", "imitation_control"):
            if getattr(self, name) and not self.packing:
                raise ConfigError(f"warm_start.{name} continues a packed warm start: set warm_start.packing = true")


@dataclass(frozen=True)
class GeneratorConfig:
    prompts_per_round: int = _f(64, "Generator training prompts (offers) per round.")
    max_hops: int = _f(2, "Longest evidence path an offer holds (1..4).")
    offer_filters: bool = _f(
        False,
        "canonical_graph_mode = 'choose': offer the task families' own paths, narrowed by filters where a hop "
        "has several candidates ('the acquaintance of X who lives in L'), as hard as osint-gym's seed tasks; "
        "false: paths unique without filters only.",
    )
    offer_choices: int = _f(3, "canonical_graph_mode = 'choose': verified paths each offer numbers (2..9).")
    rungs: bool = _f(
        False,
        "canonical_graph_mode = 'choose', multi-turn: each offered path shows its demonstrator's number of steps "
        "under the episode's budgets, and a proposal also names how many of them the answerer plays (P: k n): the "
        "task starts after the others, given (a rung, osint_gym.rungs); its frontier reward is the frozen "
        "answerer's at that start.",
    )
    learnability: str = _f("r_zero", "The frontier reward of a task solved with rate 0 < p < 1: 'r_zero' "
                                     "(1 - 2|p - 0.5|) or 'azr' (1 - p).")
    degenerate_reward: float = _f(-0.1, "The frontier reward of a valid task the frozen answerer solves in all or "
                                        "none of its k episodes (above every invalid reward: a valid task still "
                                        "beats an invalid one).")
    solver_samples: int = _f(8, "k: the frozen answerer's episodes per distinct valid proposal, which estimate its "
                                "solve rate p (the generator's reward and the frontier share).")
    solver_temperature: float = _f(1.0, "Temperature of those episodes: one where the answerer's outcomes vary.")
    learnability_weight: float = _f(1.0, "Weight of the frontier term.")
    diversity_weight: float = _f(0.3, "Penalty for a near-duplicate of a proposal in the batch or in recent history.")
    grounding_weight: float = _f(0.2, "Weight of the share of evidence edges the offer showed.")
    history_size: int = _f(2048, "Recent valid proposals remembered for the diversity penalty.")
    duplicate_jaccard: float = _f(
        0.9, "Question-token Jaccard similarity at or above which proposals are near-duplicates."
    )
    invalid_rewards: dict[str, float] = _f(
        {"malformed": -1.0, "unknown_entity": -0.8, "edge_not_in_world": -0.7, "not_a_path": -0.6, "too_large": -0.5,
         "answer_mismatch": -0.5, "answer_leaked": -0.5, "ambiguous": -0.4, "start_not_named": -0.3, "unsolvable": -0.2,
         "out_of_range": -0.8},
        "Reward of an invalid proposal, by failure reason (all negative).")
    sample_tasks: int = _f(256, "Proposals sampled from the trained generator each round for the answerer.")
    sample_temperature: float = _f(1.0, "Temperature when sampling those proposals.")
    curriculum: bool = _f(
        False,
        "canonical_graph_mode = 'choose': the sample phase also picks a path of each of its offers by the scripted "
        "frontier curriculum (osint_selfplay.curriculum: p(1 - p) per bin of family x hops x filters, and steps "
        "left with rungs, from the round's generator episodes) and estimates the frontier share of its picks, the "
        "learned generator's control.",
    )
    curriculum_control: bool = _f(
        False,
        "Train the curriculum arm inside the job: every round's answerer phase again, chained from the warm start, on "
        "the scripted curriculum's frontier tasks instead of the learned generator's (equal answerer compute); "
        "needs generator.curriculum; `osint-selfplay controls RUN_DIR` trains it after the job instead.",
    )

    def __post_init__(self) -> None:
        _choice("generator.learnability", self.learnability, ("r_zero", "azr"))
        if not 1 <= self.max_hops <= 4:
            raise ConfigError(f"generator.max_hops must be in 1..4; got {self.max_hops!r}")
        _positive("generator.solver_samples", self.solver_samples, 2)
        if isinstance(self.offer_choices, bool) or self.offer_choices not in range(2, 10):
            raise ConfigError(f"generator.offer_choices must be an integer in 2..9; got {self.offer_choices!r}")
        for reason, value in self.invalid_rewards.items():
            if not isinstance(value, (int, float)) or value >= 0:
                raise ConfigError(f"generator.invalid_rewards.{reason} must be negative; got {value!r}")
        worst_invalid = max(self.invalid_rewards.values(), default=-1.0)
        if not worst_invalid < self.degenerate_reward <= 0:
            raise ConfigError(f"generator.degenerate_reward must lie in ({worst_invalid}, 0] (above every invalid "
                              f"reward, at most a learnable task's); got {self.degenerate_reward!r}")
        if self.curriculum_control and not self.curriculum:
            raise ConfigError("generator.curriculum_control trains on the scripted curriculum's tasks: "
                              "set generator.curriculum = true")
        known = [r.value for r in FailureReason if r not in (FailureReason.OK, FailureReason.DUPLICATE)]
        for reason in self.invalid_rewards:
            if reason not in known:
                raise ConfigError(unknown_key_message(reason, known, "generator.invalid_rewards"))


@dataclass(frozen=True)
class AnswererConfig:
    mode: str = _f("single_turn", "'single_turn' (context in the prompt) or 'multi_turn' (tools in OSINT-v0).")
    context_mode: str = _f(
        "triples", "Single-turn context: 'triples' (evidence + distractor triples) or 'records' (rendered records)."
    )
    n_distractors: int = _f(6, "Single-turn context: edges around the entities the question names.")
    decoys: int = _f(
        3, "Single-turn context: decoy chains (the question's relation pattern from other start entities)."
    )
    tasks_per_round: int = _f(256, "Answerer training tasks per round.")
    generated_share: float = _f(
        0.5, "Share of those taken from validated generated tasks; the rest are osint-gym seed tasks."
    )
    seed_difficulties: list[str] = _f(["easy", "medium"], "Difficulties of the seed tasks.")
    frontier: list[float] = _f(
        [],
        "[low, high]: only generated tasks whose estimated solve rate (the frozen answerer's, k samples) "
        "lies in this band train the answerer; seed tasks top up the rest (counted). [] keeps every valid one.",
    )
    seed_candidates: int = _f(1, "Dynamic sampling of seed tasks: candidates per seed task. Above 1, the "
                                 "current answerer plays each candidate generator.solver_samples times at "
                                 "grpo_answerer.temperature; those it always or never solves are replaced by "
                                 "the next ones (counted in the summary).")
    uniform_control: bool = _f(
        False,
        "Train the uniform-task control inside the job: the last round's answerer phase again, from "
        "the same model with the same GRPO steps, on osint-gym seed tasks only; `osint-selfplay "
        "controls RUN_DIR` trains it after the job instead.",
    )
    reverse_control: bool = _f(
        False,
        "Multi-turn: train R3's fixed reverse curriculum inside the job (arXiv 2402.05808), no generator: every "
        "round's answerer phase again on its seed tasks, each started where only its demonstrator's last 1, 2, ... "
        "steps are left (osint_selfplay.data.REVERSE_STAGES stages over the rounds' GRPO steps, the last one the "
        "whole episode); `osint-selfplay controls RUN_DIR` trains it after the job instead.",
    )
    cite_evidence: bool = _f(
        True, "Single turn: teach the answerer to copy the evidence lines it follows before the answer (evidence F1)."
    )
    def __post_init__(self) -> None:
        _choice("answerer.mode", self.mode, ("single_turn", "multi_turn"))
        _choice("answerer.context_mode", self.context_mode, ("triples", "records"))
        _positive("answerer.decoys", self.decoys, 0)
        _positive("answerer.seed_candidates", self.seed_candidates)
        if not 0 <= self.generated_share <= 1:
            raise ConfigError(f"answerer.generated_share must be in [0, 1]; got {self.generated_share!r}")
        for d in self.seed_difficulties:
            _choice("answerer.seed_difficulties[]", d, ("easy", "medium", "hard"))
        band = self.frontier
        if band and not (len(band) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in band)
                         and 0 <= band[0] <= band[1] <= 1):
            raise ConfigError(f"answerer.frontier must be [] or [low, high] with 0 <= low <= high <= 1; got {band!r}")


@dataclass(frozen=True)
class EpisodeConfig:
    """How the multi-turn answerer's episodes are served, in training, relabelling and evaluation alike: the
    fields of an `osint_gym.spec.EpisodeSpec` (its `Budgets`, action syntax and tool description), flat."""

    max_steps: int = _f(8, "Multi turn: the env's step budget per episode, in env steps (actions), not optimizer "
                           "steps (Budgets.max_steps; formerly answerer.max_turns).")
    max_parallel_calls: int = _f(4, "Multi turn: tool calls one action may run in parallel.")
    max_observation_chars: int = _f(
        1500, "Multi turn: observations are cut to this many characters (keeps trajectories short)."
    )
    observation_format: str = _f(
        "json", "Multi turn: the env's observations, 'json' or 'compact' (one record per line, ids only)."
    )
    action_format: str = _f(
        "json",
        "Multi turn: the demonstrations' and system prompt's action syntax, 'json' or 'short' "
        "(get_profile person_7, answer person_3); the env accepts both.",
    )
    describe_tools: bool = _f(
        True,
        "Multi turn: false serves no system message and a reset observation of the question alone (the env's "
        "describe_tools): for a model trained from scratch on this format, whose demonstrations lose a third of "
        "their tokens; a pretrained model needs the description.",
    )
    rung_mode: str = _f(
        "given",
        "Multi turn: how a task's start depth (a rung) is served: 'given' (the demonstrator's first steps played, "
        "the answerer plays the rest) or 'hint' (those steps only listed after the question, QuestA's partial "
        "solution; the answerer plays them all).",
    )

    def __post_init__(self) -> None:
        _positive("episode.max_steps", self.max_steps)
        _choice("episode.rung_mode", self.rung_mode, ("given", "hint"))
        _positive("episode.max_parallel_calls", self.max_parallel_calls)
        _positive("episode.max_observation_chars", self.max_observation_chars, 256)
        _choice("episode.observation_format", self.observation_format, ("json", "compact"))
        _choice("episode.action_format", self.action_format, ("json", "short"))
        if not isinstance(self.describe_tools, bool):
            raise ConfigError(f"episode.describe_tools must be true or false; got {self.describe_tools!r}")

    def spec(self) -> EpisodeSpec:
        """The `EpisodeSpec` every driver of the multi-turn answerer's episodes is handed."""
        budgets = Budgets(self.max_steps, self.max_parallel_calls, self.max_observation_chars, self.observation_format)
        return EpisodeSpec(budgets, self.action_format, self.describe_tools, self.rung_mode)


@dataclass(frozen=True)
class PlayConfig:
    """Training-time play: the episodes the frozen answerer plays to estimate a task's solve rate (the generator's
    reward, the frontier filter, dynamic sampling) and those the answerer plays for expert relabelling. The closing
    evaluation has its own settings in ``[eval]``; a config without this table (written before it existed, when
    training-time play read ``[eval]``) takes ``batch_size`` and ``max_new_tokens`` from there
    (`osint_selfplay.config_compat.PLAY_FROM_EVAL`)."""

    batch_size: int = _f(128, "Multi turn: episodes whose turns are generated together (the frozen answerer's and "
                              "the relabelling answerer's).")
    max_new_tokens: int = _f(
        160, "Multi turn: tokens a model may generate per turn while it plays (a longer turn ends the episode "
             "unanswered)."
    )
    workers: int = _f(1, "Multi turn: processes those episodes are shared out to (each on every N-th episode or task, "
                         "torch's threads shared out): 2 on a 2-core CPU uses both cores while the trainer waits for "
                         "its reward (formerly generator.solver_workers and relabel.workers).")

    def __post_init__(self) -> None:
        for name in ("batch_size", "max_new_tokens", "workers"):
            _positive(f"play.{name}", getattr(self, name))


@dataclass(frozen=True)
class ParlConfig:
    """PARL-style auxiliary reward for multi-turn answerers (off by default):
    r = r_task + lambda_parallel * r_parallel + lambda_finish * r_finish, with both lambdas annealed
    linearly to 0 over ``anneal_steps`` optimizer steps of each answerer phase."""

    lambda_parallel: float = _f(0.0, "Weight of r_parallel: the share of tool calls made in parallel steps.")
    lambda_finish: float = _f(
        0.0, "Weight of r_finish: the share of parallel calls whose results the evidence or answer used."
    )
    anneal_steps: int = _f(100, "Steps over which both weights fall linearly to 0.")

    def __post_init__(self) -> None:
        for name in ("lambda_parallel", "lambda_finish"):
            if getattr(self, name) < 0:
                raise ConfigError(f"parl.{name} must be >= 0; got {getattr(self, name)!r}")
        _positive("parl.anneal_steps", self.anneal_steps)


@dataclass(frozen=True)
class RelabelConfig:
    """Expert relabelling (`osint_selfplay.relabel`): the oracle continues the answerer's own failed episodes."""

    enabled: bool = _f(False, "Multi turn: each round's answerer update starts with expert relabelling "
                              "(osint_selfplay.relabel).")
    grpo: bool = _f(True, "With relabelling on, the round's answerer GRPO phase still runs after it "
                          "(false: relabelling is the answerer's whole update).")
    states: str = _f("all", "The states of a failed episode the oracle continues from: 'all' (after each of the "
                            "answerer's turns), 'clean' (those before its first turn with an error) or 'divergence' "
                            "(the first where its turn is not the teacher's).")
    tasks: int = _f(1000, "Training tasks the answerer plays per round: the round's frontier generated tasks first, "
                          "then seed tasks.")
    temperature: float = _f(0.0, "The answerer's sampling temperature while it plays them "
                                 "(0: greedy, the states evaluation visits).")
    share: float = _f(0.25, "Share of every SFT step's packed rows drawn from the relabelled conversations "
                            "(cycled); the rest continue the warm start's demonstrations where it stopped.")
    sft_steps: int = _f(
        500,
        "Optimizer steps of SFT on the relabelled conversations and the demonstrations, added to the "
        "warm start's schedule (its decay stretched) in round 0.",
    )
    learning_rate: float = _f(5e-4, "Rounds after the first (or a warm start without a saved decay): "
                                    "the fresh optimizer's peak rate.")

    def __post_init__(self) -> None:
        for name in ("tasks", "sft_steps"):
            _positive(f"relabel.{name}", getattr(self, name))
        if not 0 <= self.temperature <= 2:
            raise ConfigError(f"relabel.temperature must be in [0, 2]; got {self.temperature!r}")
        _choice("relabel.states", self.states, ("all", "clean", "divergence"))
        if not 0 < self.share < 1:
            raise ConfigError(f"relabel.share must be in (0, 1); got {self.share!r}")
        _positive("relabel.learning_rate", self.learning_rate, 1e-12)


@dataclass(frozen=True)
class EvalConfig:
    enabled: bool = _f(True, "Evaluate at the end of the run (held-out greedy accuracy, paired with the baselines).")
    tasks: str = _f("v0:test", "Held-out benchmark split.")
    difficulties: list[str] = _f(["easy", "medium"], "Difficulties evaluated (empty: all).")
    limit: int = _f(1000, "Held-out tasks (the same tasks for every model: paired comparison).")
    batch_size: int = _f(128, "Generation batch size of the closing evaluation and the dev curve (training-time play: "
                              "play.batch_size).")
    include_untrained: bool = _f(True, "Also evaluate the untrained model.")
    max_new_tokens: int = _f(
        160, "Multi turn: tokens a model may generate per turn in the closing evaluation and the dev curve (also "
             "capped by grpo_answerer.max_completion_length; training-time play: play.max_new_tokens)."
    )
    workers: int = _f(
        1,
        "Processes each trained model is evaluated in (osint-eval's workers: each on every N-th task, torch's "
        "threads shared out); 2 on a 2-core CPU uses both cores (benchmarks/RESULTS.md); "
        "greedy results equal up to float rounding.",
    )

    single_turn_model: str = _f(
        "",
        "Multi-turn runs: a single-turn answerer (e.g. the default run's final model) evaluated on the same tasks "
        "for comparison.",
    )
    curve_tasks: int = _f(
        0,
        "Multi turn: tasks of curve_split the answerer plays greedily at the warm start and during the on-policy "
        "phases (a curve in the report; 0: none).",
    )
    curve_split: str = _f("v0:dev", "The benchmark split of those tasks (not the held-out eval.tasks); taken "
                                    "in equal numbers of each difficulty it has.")
    extra_splits: list[str] = _f(
        [], "More held-out splits evaluated like eval.tasks, each in its own report (eval/<split>/); their hard tasks "
            "join those of eval.tasks in the hard-task figures and claims (e.g. ['v1:hard'])."
    )
    curve_every: int = _f(
        0, "Optimizer steps of an on-policy phase between two curve points (0: only at each phase's end)."
    )

    def __post_init__(self) -> None:
        for name in ("limit", "batch_size", "max_new_tokens", "workers"):
            _positive(f"eval.{name}", getattr(self, name))
        for name in ("curve_tasks", "curve_every"):
            _positive(f"eval.{name}", getattr(self, name), 0)
        for d in self.difficulties:
            _choice("eval.difficulties[]", d, ("easy", "medium", "hard"))


@dataclass(frozen=True)
class RunConfig:
    output_dir: str = _f("runs/tiny-cpu", "Where every artifact of the run goes.")
    seed: int = _f(0, "Seed of everything: data, sampling, model init.")
    rounds: int = _f(2, "Self-play rounds.")
    phase_schedule: str = _f("generator_answerer", "'generator_answerer', 'answerer_generator_answerer' or "
                             "'answerer' (the answerer alone on seed tasks: no generator phase or warm start).")
    model_topology: str = _f("dual", "'dual' (two models, two warm starts), 'shared' (one model plays both roles) or "
                                     "'forked' (one warm start, then each role trains its own copy).")
    tuning_mode: str = _f("full", "'full' or 'lora' (see [lora]).")
    canonical_graph_mode: str = _f(
        "fixed",
        "'fixed' (phrase an offered verified path), 'generate' (pick a path in a subgraph and phrase it) "
        "or 'choose' (pick one of the offered verified paths by its number; osint-gym phrases it).",
    )
    train_worlds: int = _f(
        32,
        "Distinct generated worlds the training data is drawn from (seeds disjoint from the benchmark's), "
        "so that a model learns to read its context instead of memorising one world.",
    )
    train_world: str = _f(
        "v0",
        "The benchmark version whose world settings and task rules the training worlds take: 'v0' and 'v1' the "
        "default world, 'v2' near-miss decoys (decoy_density 0.8) and minimally constrained tasks.",
    )
    dry_run: bool = _f(False, "Materialise every dataset and artifact, skip the gradient updates.")
    torch_threads: int = _f(
        0,
        "torch intra-op CPU threads, pinned for reproducibility: CPU float sums are split by thread, "
        "so another count changes results in the last bits and then every sample after them. "
        "0: torch's default (the machine's cores), recorded in run.json.",
    )
    deterministic: bool = _f(True, "On CUDA: torch.use_deterministic_algorithms(True, warn_only=True) and "
                                   "deterministic cuBLAS (a warning names any op that has no deterministic kernel). "
                                   "Not applied on the CPU, where it slows SFT and runs are byte-identical without it "
                                   "(benchmarks/RESULTS.md).")
    strict: bool = _f(False, "Turn health warnings (zero-variance rewards, unchanged parameters) into errors.")
    report_to: str | list[str] = _f(
        "none", "TRL report_to, as TRL accepts it: 'none', 'all', 'wandb' or a list such as ['wandb', 'tensorboard']."
    )
    use_vllm: bool = _f(False, "Generate with vLLM (GPU; needs the vllm extra).")
    vllm_mode: str = _f("colocate", "'colocate' or 'server'.")
    vllm_server_base_url: str = _f(
        "",
        "vllm_mode = 'server': the URL of a running `trl vllm-serve`, e.g. http://10.0.0.5:8000 "
        "(GRPOConfig.vllm_server_base_url); checked for /health before any model is loaded.",
    )
    model: ModelConfig = field(default_factory=ModelConfig)
    lora: LoraConfig = field(default_factory=LoraConfig)
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)
    generator: GeneratorConfig = field(default_factory=GeneratorConfig)
    answerer: AnswererConfig = field(default_factory=AnswererConfig)
    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    play: PlayConfig = field(default_factory=PlayConfig)
    parl: ParlConfig = field(default_factory=ParlConfig)
    relabel: RelabelConfig = field(default_factory=RelabelConfig)
    grpo_generator: GRPOPhaseConfig = field(default_factory=lambda: GRPOPhaseConfig(max_completion_length=96))
    grpo_answerer: GRPOPhaseConfig = field(default_factory=GRPOPhaseConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)

    def __post_init__(self) -> None:
        choices_of = {
            "phase_schedule": PHASE_SCHEDULES,
            "model_topology": ("dual", "shared", "forked"),
            "tuning_mode": ("full", "lora"),
            "train_world": tuple(BENCHMARKS),
            "canonical_graph_mode": ("fixed", "generate", "choose"),
            "vllm_mode": ("colocate", "server"),
        }
        for name, choices in choices_of.items():
            _choice(name, getattr(self, name), choices)
        if self.phase_schedule == "answerer" and (self.answerer.generated_share or self.generator.curriculum_control):
            raise ConfigError("phase_schedule = 'answerer' has no generator: set answerer.generated_share = 0 and "
                              "generator.curriculum_control = false")
        for name in ("offer_filters", "rungs"):
            if getattr(self.generator, name) and self.canonical_graph_mode != "choose":
                raise ConfigError(f"generator.{name} needs canonical_graph_mode = 'choose' (a proposal in "
                                  f"{self.canonical_graph_mode!r} mode names no offered path)")
        if (
            self.use_vllm
            and self.vllm_mode == "server"
            and not self.vllm_server_base_url.startswith(("http://", "https://"))
        ):
            raise ConfigError("use_vllm with vllm_mode = 'server' needs vllm_server_base_url = 'http://<host>:<port>' "
                              f"(where `trl vllm-serve` listens); got {self.vllm_server_base_url!r}")
        _positive("rounds", self.rounds)
        _positive("torch_threads", self.torch_threads, 0)
        _positive("train_worlds", self.train_worlds)
        parse_ref(self.eval.curve_split)
        for split in (self.eval.tasks, *self.eval.extra_splits):
            parse_ref(split)
            if self.eval.curve_tasks and shares_world(self.eval.curve_split, split):
                raise ConfigError(
                    f"eval.curve_split must not be a held-out split ({split!r}) or share its world: the curve is "
                    "measured during training; use v0:dev or v1:dev"
                )
        if self.eval.tasks in self.eval.extra_splits:
            raise ConfigError(f"eval.extra_splits repeats eval.tasks ({self.eval.tasks!r})")
        episodes = {"eval.curve_tasks": self.eval.curve_tasks, "generator.rungs": self.generator.rungs,
                    "answerer.reverse_control": self.answerer.reverse_control}
        if self.answerer.mode != "multi_turn" and any(episodes.values()):
            raise ConfigError(f"{next(n for n, on in episodes.items() if on)} plays multi-turn episodes; turn it off "
                              f"for answerer.mode {self.answerer.mode!r}")

    def budgets(self) -> Budgets:
        """The budgets the answerer's tasks are verified under: the multi-turn episode's, else osint-gym's
        defaults (a single-turn answerer plays no episode)."""
        return self.episode.spec().budgets if self.answerer.mode == "multi_turn" else DEFAULT_BUDGETS

    @property
    def warm_start_role(self) -> str | None:
        """The one warm start's role ('shared': 'shared' and 'forked' topologies), None for two ('dual')."""
        return None if self.model_topology == "dual" else "shared"

    @property
    def warm_start_on(self) -> bool:
        if self.warm_start.enabled == "auto":
            return any(m.startswith("tiny:") for m in (self.model.generator, self.model.answerer))
        return self.warm_start.enabled == "on"

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {
            k: v.to_dict()
            if isinstance(v, GRPOPhaseConfig)
            else dataclasses.asdict(v)
            if dataclasses.is_dataclass(v) and not isinstance(v, type)
            else v
            for k, v in out.items()
        }


# ---------------------------------------------------------------------------- loading
def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # bare strings: --set model.generator=tiny:64x2


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``a.b=c`` overrides (values parsed as TOML, else kept as strings)."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects key=value, got {item!r}")
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {key}: {part!r} is not a table")
        node[parts[-1]] = _parse_value(value.strip())
    return data


def load_config(path: str | None = None, overrides: list[str] | None = None) -> RunConfig:
    """A RunConfig from a TOML file (or the defaults) plus ``--set`` overrides."""
    data: dict[str, Any] = {}
    if path is not None:
        data = read_toml(path)
    data = apply_overrides(data, overrides or [])
    # TOML [run] holds the top-level scalars, for readability of the shipped configs
    flat = dict(data.pop("run", {})) if isinstance(data.get("run"), dict) else {}
    flat.update(data)
    return config_from_dict(flat)


def config_from_dict(data: dict[str, Any]) -> RunConfig:
    """A RunConfig from a table (a run.json's config too: renamed keys of older runs still load, and a config
    without a [play] table plays with its [eval] settings, as it did before that table existed)."""
    return from_table(RunConfig, renamed(data), "top-level")
