"""Which unit a CPU engine's matrix products run on, and the peak that gives them.

The roofline bound runs a product at the fastest unit the device has for its precision
(``terms.op_roofs``: AMX tiles on a Xeon 8480 for int8). An engine's kernels may not use
that unit: ggml ran its quantized dot products on the vector units until its AMX kernels
came, and Intel's LLM Runtime uses AMX for int8 only with weights in groups of 128.
``resources/efficiency/engine-units.yaml`` says, for each engine and precision, which unit
(matrix or vector) its products use, with its source; ``product_peak`` gives the peak the
expected time runs them at. The bound keeps the best unit, so it stays a bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from explorer.core.analysis.terms import MATRIX_FALLBACKS
from explorer.core.files.datafile import Fields, check_schema, load_yaml
from explorer.core.hardware.hardware import ComputePeak, DeviceKind, Hardware, Provenance
from explorer.paths import resource_path

SCHEMA = 1
T = TypeVar("T")
MATRIX, VECTOR = "matrix", "vector"
PRECISIONS = tuple(MATRIX_FALLBACKS)


@dataclass(frozen=True)
class UnitRule:
    """Products of ``precision`` run on ``unit``; only with weights in groups that are a
    multiple of ``group_multiple`` when it is set (0: any group)."""

    precision: str
    unit: str
    group_multiple: int = 0

    def matches(self, precision: str, group: int) -> bool:
        return self.precision == precision and (self.group_multiple == 0 or group % self.group_multiple == 0)


@dataclass(frozen=True)
class EngineUnits:
    """One engine's rules (the first that matches names the unit) and their source."""

    id: str
    rules: tuple[UnitRule, ...]
    source: str
    quote: str


@dataclass(frozen=True)
class VectorShare:
    """On ``devices``, whose catalogue lists ``precision`` only on matrix units, the vector
    units' rate for it as a share of the matrix peak."""

    id: str
    devices: frozenset[str]
    precision: str
    share: float
    source: str
    quote: str


@dataclass(frozen=True)
class UnitTable:
    engines: dict[str, EngineUnits]
    shares: tuple[VectorShare, ...]

    def unit(self, engine: str, precision: str, group: int) -> str | None:
        """The unit ``engine``'s products of ``precision`` run on (None: no rule, the best)."""
        entry = self.engines.get(engine)
        rule = next((r for r in entry.rules if r.matches(precision, group)), None) if entry else None
        return rule.unit if rule else None


def _read_rule(fields: Fields) -> UnitRule:
    rule = UnitRule(fields.text("precision", choices=PRECISIONS),
                    fields.text("unit", choices=(MATRIX, VECTOR)),
                    fields.integer("group_multiple", required=False, minimum=1, default=0))
    fields.finish()
    return rule


def _read_engine(fields: Fields) -> EngineUnits:
    rules = tuple(_read_rule(Fields(item, fields.file, f"rule {i + 1}"))
                  for i, item in enumerate(fields.items("rules")))
    out = EngineUnits(fields.identifier("id"), rules, fields.url("source"), fields.text("quote"))
    fields.text("note", required=False)
    return out


def _read_share(fields: Fields) -> VectorShare:
    devices = fields.raw("devices")
    if not isinstance(devices, list) or not devices or not all(isinstance(d, str) for d in devices):
        raise fields.error("devices", "must be a list of catalogue device ids")
    share = fields.number("share")
    if not 0 < share <= 1:
        raise fields.error("share", f"must be above 0 and at most 1, got {share:g}")
    out = VectorShare(fields.identifier("id"), frozenset(devices),
                      fields.text("precision", choices=PRECISIONS), share, fields.url("source"),
                      fields.text("quote"))
    fields.text("note", required=False)
    return out


def _entries(top: Fields, key: str, reader: Callable[[Fields], T]) -> list[T]:
    out = []
    for i, raw in enumerate(top.items(key)):
        fields = Fields(raw, top.file, raw.get("id") if isinstance(raw, dict) else f"#{i + 1}")
        out.append(reader(fields))
        fields.finish()
    return out


@lru_cache(maxsize=4)
def read_units(path: str | Path | None = None) -> UnitTable:
    """The table of ``path`` (the bundled ``resources/efficiency/engine-units.yaml`` by default)."""
    where = path or resource_path("efficiency", "engine-units.yaml")
    top = Fields(load_yaml(where), where, None)
    check_schema(top, top.integer("schema"), SCHEMA)
    engines: dict[str, EngineUnits] = {}
    for entry in _entries(top, "engines", _read_engine):
        if entry.id in engines:
            raise top.error("engines", f"{entry.id} is listed twice")
        engines[entry.id] = entry
    shares = tuple(_entries(top, "vector_shares", _read_share))
    top.finish()
    return UnitTable(engines, shares)


def _vector_peak(hardware: Hardware, roof: ComputePeak, table: UnitTable) -> ComputePeak:
    """The vector units' peak for ``roof``'s precision: the catalogue's, else the table's
    share of the matrix peak, else the vector peak of the precision it is converted to."""
    own = hardware.peak(roof.precision, VECTOR)
    if own is not None:
        return own
    for s in table.shares:
        if hardware.id in s.devices and s.precision == roof.precision:
            return ComputePeak(roof.precision, VECTOR, roof.flops_per_s * s.share,
                               Provenance(s.source, derived=True, formula=f"{roof.label} peak × {s.share:g}",
                                          note=s.quote), roof.clock_hz)
    for tier in MATRIX_FALLBACKS[roof.precision][1:]:
        found = max((p for p in (hardware.peak(t, VECTOR) for t in tier) if p is not None),
                    key=lambda p: p.flops_per_s, default=None)
        if found is not None:
            return found
    return roof


def product_peak(hardware: Hardware, roof: ComputePeak, engine: str, group: int,
                 table: UnitTable | None = None) -> ComputePeak:
    """The peak ``engine``'s matrix products run at on ``hardware``: ``roof`` (the bound's,
    the fastest unit for its precision) unless the device is a CPU, ``roof`` is on its
    matrix units and the engine's rule puts the products on the vector units; never above
    ``roof``. ``group``: the weights' group (``WorkloadParams.weight_group``)."""
    if hardware.kind != DeviceKind.CPU or roof.unit != MATRIX:
        return roof
    table = table or read_units()
    if table.unit(engine, roof.precision, group) != VECTOR:
        return roof
    peak = _vector_peak(hardware, roof, table)
    return peak if peak.flops_per_s <= roof.flops_per_s else roof
