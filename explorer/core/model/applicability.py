"""When a workload parameter applies, as data every reader of the parameter table shares.

A parameter applies in some phases (``Phase``), to some models (any, a transformer, a
mixture of experts), and perhaps only when other parameters take some values (``Condition``s,
any group of which holding is enough: tensor parallel, or data parallel in training).
Outside its phases a value is either kept for when it applies again (a prompt's length
while decoding) or held at its default (``Outside.DEFAULT``: a training-only setting at
inference is an error, and leaving training puts it back). Validation, the document's
phase changes, the workload panel, the commands' help and ``params --json`` all read this;
the sentence people read is written from it (``Applies.describe``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from explorer.core.hardware.hardware import DeviceKind


class Phase(StrEnum):
    """What one step does."""

    PREFILL = "prefill"  # process the prompt
    DECODE = "decode"  # one new token per sequence
    TRAIN = "train"  # forward, backward and the optimizer


ALL_PHASES = frozenset(Phase)
INFERENCE = frozenset({Phase.PREFILL, Phase.DECODE})


class Needs(Enum):
    """Which models a parameter means something for."""

    ANY = "any model"
    TRANSFORMER = "a transformer"
    MOE = "a mixture of experts"


class Outside(Enum):
    """What becomes of a value outside the parameter's phases."""

    KEPT = "kept"  # unused, and there again when the phase comes back
    DEFAULT = "default"  # held at its default: another value is refused, a phase change resets it


@dataclass(frozen=True)
class Condition:
    """One condition on another parameter: its value is one of ``values``, or at least
    ``at_least``."""

    name: str
    values: frozenset[str] = frozenset()
    at_least: int | None = None

    def holds(self, params: Any) -> bool:
        value = getattr(params, self.name)
        return value >= self.at_least if self.at_least is not None else value in self.values

    def describe(self) -> str:
        """"tp at least 2", "weight_dtype int4 or fp4", "phase train"."""
        if self.at_least is not None:
            return f"{self.name} at least {self.at_least}"
        return f"{self.name} {_either(sorted(map(str, self.values)))}"

    def to_dict(self) -> dict[str, Any]:
        if self.at_least is not None:
            return {"parameter": self.name, "at_least": self.at_least}
        return {"parameter": self.name, "one_of": sorted(map(str, self.values))}


@dataclass(frozen=True)
class Applies:
    """Where a parameter applies: its phases, the models it needs, and ``when``, groups of
    tests on other parameters of which one must hold entirely (none: always)."""

    phases: frozenset[Phase] = ALL_PHASES
    needs: Needs = Needs.ANY
    when: tuple[tuple[Condition, ...], ...] = ()
    outside: Outside = Outside.KEPT
    devices: frozenset[DeviceKind] = frozenset()  # the kinds of device it means something on (none: any)

    def holds(self, params: Any, transformer: bool = True, moe: bool = False,
              kinds: frozenset[DeviceKind] | None = None) -> bool:
        """Whether the parameter applies to a step with ``params`` of a model that is a
        transformer (or custom stack) and a mixture of experts or not, on shown devices of
        ``kinds`` (one of its ``devices`` among them; None: on any)."""
        if params.phase not in self.phases:
            return False
        if self.devices and kinds is not None and not self.devices & kinds:
            return False
        if (self.needs is Needs.TRANSFORMER and not transformer) or (self.needs is Needs.MOE and not moe):
            return False
        return not self.when or any(all(t.holds(params) for t in group) for group in self.when)

    def phase_words(self) -> str:
        """"training (phase train)", "a prefill (phase prefill)", "inference (phase prefill
        or decode)", "phase prefill or train"."""
        named = {frozenset({Phase.TRAIN}): "training", frozenset({Phase.PREFILL}): "a prefill",
                 frozenset({Phase.DECODE}): "a decode step", INFERENCE: "inference"}.get(self.phases)
        phases = f"phase {_either([p.value for p in Phase if p in self.phases])}"
        return f"{named} ({phases})" if named else phases

    def describe(self) -> str:
        """The sentence the commands' help, ``params`` and the docs print."""
        parts = [] if self.needs is Needs.ANY else [self.needs.value]
        if self.devices:
            parts.append(_either(sorted(f"a {kind.value.upper() if kind is DeviceKind.CPU else kind.value}"
                                        for kind in self.devices)))
        if self.phases != ALL_PHASES:
            parts.append(self.phase_words())
        if self.when:
            parts.append("steps with " + ", or ".join(" and ".join(t.describe() for t in group)
                                                 for group in self.when))
        return ", ".join(parts) or "always"

    def to_dict(self) -> dict[str, Any]:
        return {"phases": [p.value for p in Phase if p in self.phases], "needs": self.needs.name.lower(),
                "devices": sorted(kind.value for kind in self.devices),
                "when": [[t.to_dict() for t in group] for group in self.when],
                "outside": self.outside.value, "text": self.describe()}


def _either(words: Iterable[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


ALWAYS = Applies()
TRAINING = Applies(frozenset({Phase.TRAIN}), outside=Outside.DEFAULT)
