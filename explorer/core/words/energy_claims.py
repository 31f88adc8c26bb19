"""Placeholders of operation energies (``{energy:ID}``, ``{energy-ratio:ID:ID}``), each a
claim recomputed from the circuit-level table (``core.hardware.operation_energy``)."""

from __future__ import annotations

from enum import StrEnum

from explorer.core.analysis.analysis import analyze
from explorer.core.hardware.operation_energy import byte_joules as per_byte
from explorer.core.hardware.operation_energy import flop_joules as per_flop
from explorer.core.hardware.operation_energy import operations
from explorer.core.units import format_number, format_si
from explorer.core.words.claims import Quantity, State


class OperationField(StrEnum):
    """The placeholders of operation energies: ``{energy:ID}``, ``{energy-ratio:ID:ID}``."""

    ENERGY = "energy"
    RATIO = "energy-ratio"


def operation_field(placeholder: str) -> tuple[str, Quantity]:
    """``energy:ID`` (an operation's energy, "0.9 pJ") or ``energy-ratio:ID:ID`` (the first
    over the second, their low ends: "1,444"), from ``operation_energy``'s table."""
    kind, _, body = placeholder.partition(":")
    table = operations()
    ids = body.split(":")
    single = kind == OperationField.ENERGY
    if len(ids) != (1 if single else 2) or any(i not in table for i in ids):
        raise KeyError(f"name {'one' if single else 'two'} of: {', '.join(table)}")
    if single:
        op = table[ids[0]]
        return op.text, Quantity(f"energy of a {op.name}", op.joules, op.text,
                                 lambda: operations()[ids[0]].joules, rel=1e-12)
    value = table[ids[0]].joules / table[ids[1]].joules
    text = f"{value:,.0f}" if value >= 9.95 else f"{value:.2g}"
    return text, Quantity(f"energy of a {table[ids[0]].name} over a {table[ids[1]].name}", value, text,
                          lambda: operations()[ids[0]].joules / operations()[ids[1]].joules)


# The step's energy at the same table's circuit energies (a 45 nm chip: orders of magnitude,
# not the device's own), ``{step/FIELD}``: energy-memory (its bytes to and from main memory
# at a DRAM read's 1.3 nJ per 64 bits), energy-arithmetic (its FLOPs, ``flop_joules``),
# energy-ratio (the first over the second), energy-per-token (both over the tokens the step
# gives) and energy-balance (the FLOP/byte where the two cost the same, the energy
# counterpart of the ridge). A step spread over devices: one device's share.
STEP_FIELDS = ("energy-memory", "energy-arithmetic", "energy-ratio", "energy-per-token", "energy-balance")


def handles(field: str) -> bool:
    return field in STEP_FIELDS


def _value(state: State, field: str, fresh: bool = False) -> float:
    """The field's value from the state's analysis (``fresh``: a new one). The totals are one
    device's: a token's energy counts every device's share."""
    if field == "energy-balance":
        return per_byte() / per_flop(state.params.dtype)
    a = analyze(state.model, state.params, state.hardware) if fresh else state.analysis()
    memory = a.totals.bytes * per_byte()
    if field == "energy-memory":
        return memory
    arithmetic = a.totals.flops * per_flop(state.params.dtype)
    every_device = (memory + arithmetic) * state.params.split.devices
    values: dict[str, float] = {"energy-arithmetic": arithmetic, "energy-ratio": memory / arithmetic,
              "energy-per-token": every_device / a.totals.items_per_step}
    return values[field]


def step_field(state: State, field: str) -> tuple[str, Quantity]:
    """A ``{step/FIELD}`` of ``STEP_FIELDS`` ("2.6 J", "312", "217 FLOP/byte")."""
    value = _value(state, field)
    if field == "energy-ratio":
        text = f"{value:,.0f}" if value >= 9.95 else f"{value:.2g}"
    elif field == "energy-balance":
        text = f"{format_number(value)} FLOP/byte"
    else:
        text = format_si(value, "J")
    what = {"energy-memory": "energy of the step's memory traffic (45 nm DRAM)",
            "energy-arithmetic": "energy of the step's arithmetic (45 nm)",
            "energy-ratio": "memory energy over arithmetic energy", "energy-balance": "energy balance",
            "energy-per-token": "energy of a token (45 nm)"}[field]
    return text, Quantity(what, value, text, lambda: _value(state, field, fresh=True), rel=1e-9)
