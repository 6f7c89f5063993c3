"""network_discovery: constrained connections ("the acquaintance of X who works at O and attended E")."""

from __future__ import annotations

from osint_gym.schema import Direction
from osint_gym.tasks.families.base import TaskFamily
from osint_gym.tasks.paths import Step, Template, listed_account

_O, _I = Direction.OUT, Direction.IN
KNOWS = Step("knows", _O)


class NetworkDiscovery(TaskFamily):
    name = "network_discovery"
    description = "People found through who-knows-whom, narrowed by employer, city or events."
    difficulties = ("easy", "medium", "hard")

    def templates(self, difficulty: str) -> list[Template]:
        if difficulty == "easy":
            return [Template("person", (KNOWS,))]
        if difficulty == "medium":
            return [
                Template("person", (KNOWS, KNOWS)),
                Template("account", (Step("alias_of", _O), KNOWS), start_if=listed_account),
                Template("organization", (Step("works_at", _I), KNOWS)),
                Template("event", (Step("attended", _I), KNOWS)),
            ]
        return [
            Template("account", (Step("alias_of", _O), KNOWS, KNOWS), start_if=listed_account),
            Template("person", (KNOWS, KNOWS, KNOWS)),
            Template("event", (Step("attended", _I), KNOWS, KNOWS)),
        ]
