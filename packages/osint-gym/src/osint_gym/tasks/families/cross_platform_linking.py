"""cross_platform_linking: the forum account of the person behind a microblog handle (and back)."""

from __future__ import annotations

from osint_gym.schema import Direction
from osint_gym.tasks.families.base import TaskFamily
from osint_gym.tasks.paths import Step, Template, listed_account

_O, _I = Direction.OUT, Direction.IN
OWNER = Step("alias_of", _O)
OTHER_PLATFORM = Step("alias_of", _I, platform="other")


class CrossPlatformLinking(TaskFamily):
    name = "cross_platform_linking"
    description = "Link an account on one platform to the same person's account on the other."
    difficulties = ("medium", "hard")

    def templates(self, difficulty: str) -> list[Template]:
        if difficulty == "medium":
            return [Template("account", (OWNER, OTHER_PLATFORM), start_if=listed_account)]
        return [
            Template("post", (Step("authored", _I), OWNER, OTHER_PLATFORM)),
            Template("thread", (Step("authored", _I), OWNER, OTHER_PLATFORM)),
            Template("post", (Step("mentions", _O), OWNER, OTHER_PLATFORM)),
        ]
