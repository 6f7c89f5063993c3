"""Model policies: a tiny Hugging Face model in both modes, and an OpenAI-compatible endpoint served
for real on loopback by ``transformers serve`` (no mock)."""

from __future__ import annotations

import pytest

from osint_eval.cli import main
from osint_eval.policies import HFPolicy, OpenAIPolicy
from osint_eval.runner import run_multi_turn, run_single_turn
from osint_eval.tasks import load_tasks
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets
from tests.serving import free_port, transformers_serve

TINY = "tiny:64x2"


@pytest.fixture(scope="module")
def tiny_dir():
    from osint_eval.modeling import tiny_path

    return str(tiny_path(TINY))


@pytest.fixture(scope="module")
def dev():
    return load_tasks("v0:dev", limit=8)


def test_hf_policy_single_and_multi_turn_batched_and_seeded(tiny_dir, dev):
    greedy = HFPolicy(tiny_dir, batch_size=4, max_new_tokens=6)
    a = run_single_turn(greedy, dev.world, dev.tasks, batch_size=4)
    b = run_single_turn(greedy, dev.world, dev.tasks, batch_size=8)
    assert [r.submitted for r in a] == [r.submitted for r in b]  # greedy and batching-invariant
    assert greedy.tokens_generated > 0 and all(r.steps == 1 for r in a)
    sampled = [HFPolicy(tiny_dir, batch_size=8, max_new_tokens=6, temperature=1.0, seed=s) for s in (1, 1, 2)]
    outs = [p.generate([[{"role": "user", "content": t.question}] for t in dev.tasks]) for p in sampled]
    assert outs[0] == outs[1] and outs[0] != outs[2]
    policy = HFPolicy(tiny_dir, batch_size=8, max_new_tokens=12)
    multi = run_multi_turn(policy, dev.world, dev.tasks[:4], spec=EpisodeSpec(Budgets(max_steps=3)))
    assert [r.task_id for r in multi] == [t.task_id for t in dev.tasks[:4]]
    assert all(0 <= r.steps <= 3 and len(r.transcript) == r.steps for r in multi)
    # an untrained model rambles past max_new_tokens: the per-turn token budget ends its episode, unanswered
    assert all(r.end == "token_budget" and not r.correct for r in multi if r.steps < 3)
    assert len(policy.last_unfinished) >= 1


def test_length_sorted_batches_and_episodes_in_flight_change_no_greedy_output(tiny_dir, dev):
    # generate sorts prompts by length into batches: each completion still lands at its prompt's place
    convs = [[{"role": "user", "content": t.question * (1 + i % 3)}] for i, t in enumerate(dev.tasks)]
    one = HFPolicy(tiny_dir, batch_size=1, max_new_tokens=6)
    alone = [one.generate([c])[0] for c in convs]
    sorted_batches = HFPolicy(tiny_dir, batch_size=3, max_new_tokens=6)
    assert sorted_batches.generate(convs) == alone
    sampled = HFPolicy(tiny_dir, batch_size=3, max_new_tokens=6, temperature=1.0, seed=3)
    twice = [sampled.generate(convs, num_return_sequences=2) for _ in range(2)]
    assert twice[0] == twice[1] and len(twice[0]) == len(sampled.last_unfinished) == 2 * len(convs)
    # episodes in flight: the schedule of batches changes, the greedy episodes do not
    three = EpisodeSpec(Budgets(max_steps=3))
    runs = [run_multi_turn(HFPolicy(tiny_dir, batch_size=2, max_new_tokens=12), dev.world, dev.tasks, spec=three,
                           in_flight=k)
            for k in (1, 4)]
    assert [(r.task_id, r.transcript, r.end) for r in runs[0]] == [(r.task_id, r.transcript, r.end) for r in runs[1]]


@pytest.mark.slow
def test_workers_run_a_model_in_processes_with_the_same_episodes(tiny_dir, dev):
    """evaluate(workers=2): the model policy plays every other task in each of two spawned processes
    (pickled as its reference, not its weights); the episodes come back in the tasks' order, equal to
    one process's; scripted policies stay in this process."""
    import pickle

    from osint_eval.errors import EvalError
    from osint_eval.evaluate import evaluate
    from osint_eval.policies import make_policy

    policy = HFPolicy(tiny_dir, batch_size=2, max_new_tokens=12)
    assert len(pickle.dumps(policy)) < 2_000 and pickle.loads(pickle.dumps(policy)).model_ref == tiny_dir
    kwargs = {"mode": "multi_turn", "spec": EpisodeSpec(Budgets(max_steps=3)), "progress": False}
    reports = [evaluate({"m": policy, "naive": make_policy("naive-search")}, dev, workers=w, **kwargs) for w in (1, 2)]
    one, two = ([(e.task_id, e.transcript, e.end, e.reward) for e in r.episodes["m"]] for r in reports)
    assert one == two and [t for t, *_ in two] == [t.task_id for t in dev.tasks]
    assert reports[0].episodes["naive"] == reports[1].episodes["naive"]
    with pytest.raises(EvalError, match="workers must be >= 1"):
        evaluate({"m": policy}, dev, workers=0, **kwargs)


class _Scripted:
    """Replies ``action``; says its turn was cut (no end-of-turn token) on the turns listed in ``cut_on``."""

    is_model = True

    def __init__(self, action, cut_on):
        self.action, self.cut_on, self.calls, self.last_unfinished = action, cut_on, 0, []

    def act(self, batch):
        self.calls += 1
        self.last_unfinished = [self.calls in self.cut_on] * len(batch)
        return [self.action] * len(batch)


def test_a_turn_over_the_token_budget_ends_the_episode_unanswered(dev):
    five = EpisodeSpec(Budgets(max_steps=5))
    cut_first = run_multi_turn(_Scripted("search_people name=x", {1}), dev.world, dev.tasks[:2], spec=five)
    assert [(r.end, r.steps, r.transcript) for r in cut_first] == [("token_budget", 0, [])] * 2
    cut_third = run_multi_turn(_Scripted("search_people name=x", {3}), dev.world, dev.tasks[:2], spec=five)
    assert [(r.end, r.steps) for r in cut_third] == [("token_budget", 2)] * 2 and not any(r.correct for r in cut_third)
    never = run_multi_turn(_Scripted("search_people name=x", set()), dev.world, dev.tasks[:2], spec=five)
    assert [(r.end, r.steps) for r in never] == [("step_budget", 5)] * 2


def test_a_bare_prompt_shows_the_policy_the_question_alone(dev):
    class Recording(_Scripted):
        def act(self, batch):
            self.seen = [b.messages for b in batch]
            return super().act(batch)

    for bare in (False, True):
        policy = Recording("answer person_0", set())
        spec = EpisodeSpec(Budgets(max_steps=3, observation_format="compact"), "short", describe_tools=not bare)
        run_multi_turn(policy, dev.world, dev.tasks[:2], spec=spec)
        first = [conv[0] for conv in policy.seen]
        if bare:
            assert [conv for conv in policy.seen] == [[{"role": "user", "content": t.question}] for t in dev.tasks[:2]]
        else:
            assert [m["role"] for m in first] == ["system"] * 2 and all(
                "\ntools " in conv[1]["content"] for conv in policy.seen
            )


@pytest.fixture(scope="module")
def server(tiny_dir):
    with transformers_serve(tiny_dir) as url:
        yield url, tiny_dir


@pytest.mark.slow
def test_openai_policy_against_a_real_local_server(server, dev, tmp_path, capsys):
    url, model = server
    policy = OpenAIPolicy(url, model, max_tokens=6)
    results = run_single_turn(policy, dev.world, dev.tasks[:4], batch_size=4)
    assert len(results) == 4 and all(isinstance(r.reward, float) for r in results)
    assert all(r.transcript[0]["action"] is not None for r in results)
    assert (
        main(
            [
                "run",
                "--policy",
                f"openai:{url}#{model}",
                "--tasks",
                "v0:dev",
                "--limit",
                "3",
                "--out",
                str(tmp_path / "r"),
                "--leaderboard",
                "",
                "--no-progress",
                "--max-new-tokens",
                "6",
            ]
        )
        == 0
    )
    assert "success" in capsys.readouterr().out


def test_unreachable_endpoint_is_a_one_line_error(capsys):
    port = free_port()  # nothing listens there
    assert (
        main(
            [
                "run",
                "--policy",
                f"openai:http://127.0.0.1:{port}/v1#m",
                "--tasks",
                "v0:dev",
                "--out",
                "x",
                "--limit",
                "2",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.startswith("osint-eval: error: endpoint") and "unreachable" in err and "\n" not in err


def test_compare_two_tiny_models_from_the_cli(tiny_dir, tmp_path, capsys):
    from osint_eval.modeling import tiny_path

    other = str(tiny_path("tiny:64x2-s1"))
    assert main(["compare", "--base", tiny_dir, "--candidate", other, "--tasks", "v0:test", "--limit", "20",
                 "--out", str(tmp_path / "cmp"), "--leaderboard", str(tmp_path / "lb.jsonl"), "--no-progress",
                 "--max-new-tokens", "6"]) == 0
    out = capsys.readouterr().out
    assert f"candidate ({other}) vs base ({tiny_dir}): success delta" in out and "(n=20)" in out
    assert (tmp_path / "cmp" / "report.html").is_file()
