"""The modules that fill a scene step's ``{step/FIELD}`` placeholders beside
``placeholders`` itself, each with ``handles(field)`` and ``step_field(state, field)``:
the expected time, serving, circuit energies and a real run's profile."""

from explorer.core.words import energy_claims, expected_claims, profile_claims, serving_claims

STEP_MODULES = (expected_claims, serving_claims, energy_claims, profile_claims)
