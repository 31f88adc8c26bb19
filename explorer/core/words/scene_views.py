"""The pictures a scene step may show (``view:`` in a scene file): each step names the one
its point needs, export draws it, and the window's scene player brings its own view of it
forward."""

from __future__ import annotations

from enum import StrEnum


class View(StrEnum):
    """The picture a step shows (its slide, and the view the window brings forward)."""

    ROOFLINE = "roofline"  # the roofline chart (the default)
    SERVING = "serving"  # tokens/s a device against tokens/s a user, batch 1 to the KV-cache wall
    ENERGY = "energy"  # the energy roofline: FLOP/J against intensity
    MEMORY = "memory"  # the memory bar: what the step keeps in memory against the budget
    EXPECTED = "expected"  # each op at its expected time (launches included), under its bound
    SCALING = "scaling"  # the scaling laws of a training budget (``scaling_laws:``)


VIEWS = tuple(v.value for v in View if v != View.SCALING)  # what ``view:`` may name
