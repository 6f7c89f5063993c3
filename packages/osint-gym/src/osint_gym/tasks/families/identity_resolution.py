"""identity_resolution: which person operates this account?

easy: the account is named; medium/hard: the account is reached from a post or thread first.
"""

from __future__ import annotations

from osint_gym.schema import Direction
from osint_gym.tasks.families.base import TaskFamily
from osint_gym.tasks.paths import Step, Template, listed_account

_O, _I = Direction.OUT, Direction.IN
OWNER = Step("alias_of", _O)


class IdentityResolution(TaskFamily):
    name = "identity_resolution"
    description = "Which person operates an account (named directly or reached through posts and threads)."
    difficulties = ("easy", "medium", "hard")

    def templates(self, difficulty: str) -> list[Template]:
        if difficulty == "easy":
            return [Template("account", (OWNER,), start_if=listed_account)]
        if difficulty == "medium":
            return [
                Template("post", (Step("authored", _I), OWNER)),
                Template("post", (Step("mentions", _O), OWNER)),
                Template("thread", (Step("authored", _I), OWNER)),
            ]
        return [
            Template("account", (Step("authored", _O, target_type="post"), Step("mentions", _O), OWNER)),
            Template("thread", (Step("discusses", _O), Step("discusses", _I), Step("authored", _I), OWNER)),
            Template("post", (Step("authored", _I), Step("follows", _O), OWNER)),
        ]
