"""The modules that fill a scene step's ``{step/FIELD}`` placeholders beside
``placeholders`` itself, each with ``handles(field)`` and ``step_field(state, field)``:
the expected time, serving, circuit energies and a real run's profile."""

from typing import Protocol

from explorer.core.words import energy_claims, expected_claims, profile_claims, serving_claims
from explorer.core.words.claims import Quantity, State


class StepFields(Protocol):
    """A module that fills some of a step's fields."""

    def handles(self, field: str) -> bool: ...

    def step_field(self, state: State, field: str) -> tuple[str, Quantity]: ...


STEP_MODULES: tuple[StepFields, ...] = (expected_claims, serving_claims, energy_claims, profile_claims)
