"""The energy of single operations, from a circuit-level survey (``resources/energy``):
what an add, a multiply and a 64-bit read from SRAM or DRAM cost, as orders of magnitude
for teaching why moving data costs more than computing on it. Read by the "why"
paragraphs' ``{energy:ID}`` and ``{energy-ratio:ID:ID}`` placeholders."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from explorer.core.files.datafile import Fields, read_entries
from explorer.paths import resource_path

SCHEMA = 1


@dataclass(frozen=True)
class OperationEnergy:
    id: str
    name: str
    joules: float  # the low end where the source gives a range
    high: float | None  # the top of that range
    source: str

    @property
    def text(self) -> str:
        """"0.9 pJ", "1.3–2.6 nJ"."""
        unit, scale = ("nJ", 1e9) if max(self.joules, self.high or 0.0) >= 1e-9 else ("pJ", 1e12)
        low = f"{self.joules * scale:.3g}"
        return f"{low}–{self.high * scale:.3g} {unit}" if self.high else f"{low} {unit}"


def _read(fields: Fields) -> OperationEnergy:
    ident, name = fields.identifier("id"), fields.text("name")
    raw = fields.raw("joules")
    if isinstance(raw, str):  # YAML 1.1 reads 1e-12, without a point, as text
        raise fields.error("joules", "expected a number: write it with a point and a signed "
                                     "exponent, as 1.0e-12")
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw < 1e-3:
        raise fields.error("joules", f"expected the energy of one operation, above 0 and below a "
                                     f"millijoule, got {raw!r}")
    joules = float(raw)
    high = fields.number("high", required=False)
    if high is not None and not joules < high < 1e-3:
        raise fields.error("high", f"the top of the range must lie above {joules:g} J and below a "
                                   f"millijoule, got {high:g}")
    return OperationEnergy(ident, name, joules, high, fields.url("source"))


def read_operations(path: str | Path) -> dict[str, OperationEnergy]:
    return {op.id: op for op in read_entries(path, "operations", SCHEMA, _read)}


@lru_cache(maxsize=1)
def operations() -> dict[str, OperationEnergy]:
    """The bundled table (read once)."""
    return read_operations(resource_path("energy", "operations.yaml"))


# A FLOP at the table's energies: half a multiply and an add of the precision's width (a
# multiply-add is two FLOPs); bf16 at fp16's cost, the table having no bf16.
WIDTHS = {"fp32": "fp32", "bf16": "fp16", "fp16": "fp16", "int8": "int8"}


def flop_joules(dtype: str) -> float:
    """Joules a FLOP of ``dtype`` costs at the table's energies (KeyError: no such width)."""
    if dtype not in WIDTHS:
        raise KeyError(f"the energy table has no {dtype} arithmetic (it has {', '.join(WIDTHS)})")
    table, width = operations(), WIDTHS[dtype]
    return (table[f"{width}-mult"].joules + table[f"{width}-add"].joules) / 2


def byte_joules() -> float:
    """Joules a byte of main memory costs: a DRAM read of 64 bits (the range's low end) over 8."""
    return operations()["dram"].joules / 8


def floor_flop_joules() -> float:
    """Joules a FLOP of any precision costs at least, for a lower bound: an 8-bit integer
    multiply-add of the table over two. Newer processes than the table's 45 nm cost less,
    but a 16-bit multiply-add on them (a B200's dense bf16 at its TDP: 0.44 pJ a FLOP, all its
    power counted) still costs more than this 0.115 pJ."""
    table = operations()
    return (table["int8-mult"].joules + table["int8-add"].joules) / 2


def floor_byte_joules() -> float:
    """Joules a byte of main memory costs at least, for a lower bound: the table's cheapest
    memory, HBM2's 3.97 pJ a bit (O'Connor et al. 2017), over 8 bits: DRAM on a board costs
    more; a floor as long as no memory moves a bit for less than HBM2 does."""
    return operations()["hbm2"].joules / 8
