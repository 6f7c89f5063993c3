"""The one "sample a generator, then validate" step (`osint_gym.proposals.sample_tasks`) and its offers."""

from __future__ import annotations

from osint_gym import proposals as P
from osint_gym.streams import stream_seed


def test_offers_come_from_a_named_stream_and_two_streams_share_none(world):
    train = P.stream_offers(world, 0, "generate", 6)
    by_hand = [P.make_offer(world, stream_seed(0, "generate"), i).to_json() for i in range(6)]
    assert [o.to_json() for o in train] == by_hand
    assert [o.to_json() for o in P.stream_offers(world, 0, "generate", 6)] == [o.to_json() for o in train]
    other = P.stream_offers(world, 0, "eval_generator", 6)
    assert not {o.to_json() for o in train} & {o.to_json() for o in other}


def test_sampling_validates_each_completion_against_its_offer(world):
    offers = P.stream_offers(world, 3, "generate", 5)
    seen: list[list[list[dict[str, str]]]] = []

    def generate(prompts: list[list[dict[str, str]]]) -> list[str]:
        seen.append(prompts)
        # gold proposals for the first three offers, nonsense for the rest
        return [P.gold_proposal(world, o) for o in offers[:3]] + ["not a proposal"] * 2

    batch = P.sample_tasks([world] * 5, offers, generate, max_hops=2, id_prefix="t-")
    assert seen == [[P.generator_messages(world, o) for o in offers]]  # one call, the generator's prompts in order
    assert [t.task_id for t in batch.tasks] == ["t-0", "t-1", "t-2"]
    assert sum(batch.reasons.values()) == 5 and batch.reasons.get("ok", 0) == 3
    assert [r["offer_id"] for r in batch.records] == [o.offer_id for o in offers]
    inline = P.validate_sampled([world] * 5, offers, generate([P.generator_messages(world, o) for o in offers]),
                                max_hops=2, id_prefix="t-")
    assert [t.to_dict() for t in inline.tasks] == [t.to_dict() for t in batch.tasks] and inline.reasons == batch.reasons
