"""What placeholders are filled from: the catalogue, the models, and in a scene the step
shown and the one before it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.words.claims import State


@dataclass(frozen=True)
class Context:
    """What placeholders are filled from."""

    catalog: Mapping[str, Hardware]
    models: Mapping[str, ModelSpec] | None = None
    state: State | None = None  # a scene step on its primary device
    previous: State | None = None  # the step before it

    @property
    def step(self) -> State:
        """``state``, which only a scene step has (KeyError elsewhere)."""
        if self.state is None:
            raise KeyError("only a scene step has a state to read")
        return self.state
