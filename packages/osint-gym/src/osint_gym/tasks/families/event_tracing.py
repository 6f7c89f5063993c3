"""event_tracing: from an event through forum threads and posts to the accounts and people behind them."""

from __future__ import annotations

from osint_gym.schema import Direction
from osint_gym.tasks.families.base import TaskFamily
from osint_gym.tasks.paths import Step, Template

_O, _I = Direction.OUT, Direction.IN


class EventTracing(TaskFamily):
    name = "event_tracing"
    description = "Start at an event; follow threads and posts to an account or the person behind it."
    difficulties = ("easy", "medium", "hard")

    def templates(self, difficulty: str) -> list[Template]:
        if difficulty == "easy":
            return [
                Template("event", (Step("discusses", _I),)),
                Template("event", (Step("attended", _I),)),
                Template("event", (Step("held_in", _O),)),
            ]
        if difficulty == "medium":
            return [
                Template("event", (Step("discusses", _I), Step("authored", _I))),
                Template("event", (Step("references", _I, target_type="post"), Step("authored", _I))),
                Template("event", (Step("discusses", _I), Step("commented_on", _I))),
            ]
        return [
            Template("event", (Step("discusses", _I), Step("authored", _I), Step("alias_of", _O))),
            Template("event", (Step("references", _I, target_type="post"), Step("authored", _I), Step("alias_of", _O))),
            Template("event", (Step("references", _I, target_type="post"), Step("mentions", _O), Step("alias_of", _O))),
        ]
