"""Placeholders of operation energies (``{energy:ID}``, ``{energy-ratio:ID:ID}``), each a
claim recomputed from the circuit-level table (``core.hardware.operation_energy``)."""

from __future__ import annotations

from explorer.core.hardware.operation_energy import operations
from explorer.core.words.claims import Quantity


def operation_field(placeholder: str) -> tuple[str, Quantity]:
    """``energy:ID`` (an operation's energy, "0.9 pJ") or ``energy-ratio:ID:ID`` (the first
    over the second, their low ends: "1,444"), from ``operation_energy``'s table."""
    kind, _, body = placeholder.partition(":")
    table = operations()
    ids = body.split(":")
    if len(ids) != (1 if kind == "energy" else 2) or any(i not in table for i in ids):
        raise KeyError(f"name {'one' if kind == 'energy' else 'two'} of: {', '.join(table)}")
    if kind == "energy":
        op = table[ids[0]]
        return op.text, Quantity(f"energy of a {op.name}", op.joules, op.text,
                                 lambda: operations()[ids[0]].joules, rel=1e-12)
    value = table[ids[0]].joules / table[ids[1]].joules
    text = f"{value:,.0f}" if value >= 9.95 else f"{value:.2g}"
    return text, Quantity(f"energy of a {table[ids[0]].name} over a {table[ids[1]].name}", value, text,
                          lambda: operations()[ids[0]].joules / operations()[ids[1]].joules)
