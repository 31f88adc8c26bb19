"""The document's history: session snapshots, undone by putting the previous one back."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.model.session import Session


@dataclass(frozen=True)
class Step:
    """One undo step: the session before and after a change, and the change's name."""

    before: Session
    after: Session
    text: str


class History:
    """Session snapshots: undo applies a step's ``before``, redo its ``after``."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.index = 0  # steps applied
        self.clean: int | None = 0  # the index at which the document matches its file

    def push(self, step: Step) -> None:
        del self.steps[self.index:]
        if self.clean is not None and self.clean > self.index:
            self.clean = None  # the saved state was undone and is now out of reach
        self.steps.append(step)
        self.index += 1

    def clear(self) -> None:
        self.steps, self.index, self.clean = [], 0, 0

    @property
    def undo_text(self) -> str:
        return self.steps[self.index - 1].text if self.index else ""

    @property
    def redo_text(self) -> str:
        return self.steps[self.index].text if self.index < len(self.steps) else ""
