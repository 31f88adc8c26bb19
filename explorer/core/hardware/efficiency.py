"""How close real kernels come to a device's roofs: the factors behind an expected time.

A roofline time is a bound: every op at the datasheet's peak or bandwidth, nothing else.
Real kernels stay below the roofs, and a step pays for more than its kernels' work. An
``Efficiency`` names, for one device family, the few factors that say by how much, each
with the measurement it comes from:

- ``gemm``: the share of the matrix peak a large matrix product in a 16-bit or wider type
  reaches (as K grows without end);
- ``gemm_8bit``: the same for products in 8-bit types (fp8, int8), whose tiles are harder
  to feed at twice the rate (optional: ``gemm`` stands in);
- ``gemm_depth``: the depth K0 over which a tile's fixed work (loading its first operands,
  writing its results) costs as much as its main loop: a product of depth K reaches
  K / (K + gemm_depth) of ``gemm``;
- ``gemm_tile``: the rows of the tiles a product is computed in: its M rows are padded
  to a whole number of tiles, so a product of M rows reaches gemm × M / (tiles × gemm_tile)
  (tile quantization: a decode step's few rows fill a small part of each tile);
- ``gemm_bandwidth``: the share of main-memory bandwidth a product reaches while reading
  its weights for few rows (decode: a memory-bound product);
- ``gemm_overlap``: how much of a product's memory time hides under its arithmetic (or
  the reverse): 1 adds the slower of the two only (a GPU kernel streams its operands while
  it computes), 0 adds both (a CPU BLAS packs its operands before it computes);
- ``gemv_overlap``: the same for a matrix-vector product (one row: a decode step of one
  sequence), ``gemm_overlap`` where not given: a CPU's kernel for it streams the weights
  through the cores without packing them, so its arithmetic hides under their reading;
- ``bandwidth``: the share of main-memory bandwidth other streaming kernels reach (norms,
  activations, residual adds, lookups, a prompt's attention reading its inputs);
- ``decode_attention``: the share of bandwidth attention over a KV cache reaches in decode;
- ``prefill_attention``: the share of the matrix peak fused attention reaches on a prompt
  (FlashAttention 2's, the ``attention_kernel`` parameter's default, forward and backward);
- ``prefill_attention_fa3``, ``backward_attention_fa3``, ``prefill_attention_cudnn``,
  ``backward_attention_cudnn``: the same for FlashAttention 3 and cuDNN's fused attention,
  forward and backward (``ATTENTION_KERNELS``), where they are published: a family without
  them has no such kernel, and a step asking for one is refused (optional, no stand-in);
- ``link``: the share of a link's rate a collective reaches (its latency is the link's);
- ``nccl_link`` and ``nccl_us``: within a node, the share of the link's rate NCCL's (or
  RCCL's) collectives reach and the microseconds each costs beyond its cost model's
  latency (launch, synchronisation, filling its pipeline), fitted together to the
  all-reduce bus bandwidths nccl-tests measures from 1 MB to 8 GB: the model alone is up to
  1.6× too fast for the 4–64 MB messages of prompts and large batches (optional: ``link``
  and 0 stand in);
- ``nccl_ring``: the share NCCL's ring (and tree) reach within a node where NCCL picks
  another algorithm (NVLS on NVLink SHARP) and ``nccl_link`` is fitted to that one
  (optional: ``nccl_link`` stands in);
- ``kernel_us``: microseconds each kernel costs beyond its work (launch, ramp-up and
  tail: the device is partly idle between one kernel and the next);
- ``step_ms``: milliseconds each step costs beyond its kernels (the serving engine's
  scheduling, sampling and synchronisation with the host).

The factors come from a file (``read_efficiencies``): the published ones bundled in
``resources/efficiency``, a calibration of this machine, or the user's own.

A calibration whose run measured power also keeps the energy constants fitted to it
(``energy``: ε_flop for one precision, ε_byte and π₀, after Choi et al.; ``analysis.energy``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any

from explorer.core.files.datafile import Fields, dump_yaml, read_entries
from explorer.core.files.userfiles import Skipped, load_each, yaml_files
from explorer.core.hardware.hardware import DeviceKind, Hardware
from explorer.core.hardware.measured_energy import MeasuredEnergy, energy_mapping, read_energy
from explorer.core.units import DTYPE_BYTES
from explorer.paths import resource_path

SCHEMA = 1


class Source(StrEnum):
    """Where the factors of an expected time come from (the ``efficiency`` parameter)."""

    BOUND = "bound"  # none: the roofline bound alone
    PUBLISHED = "published"  # measurements published for the device's family (bundled)
    CALIBRATED = "calibrated"  # ``roofline-explorer calibrate`` on the device (the data folder)


CALIBRATED_FOLDER = "efficiency"  # in the user's data folder


@dataclass(frozen=True)
class FactorSpec:
    """One factor: its name, what it means, its unit and its limits."""

    name: str
    label: str
    unit: str  # "share" (of a peak or a rate), "rows", "µs", "ms"
    minimum: float
    maximum: float
    fallback: str = ""  # optional: the factor whose value stands in when a file omits this one
    default: float | None = None  # optional: the value that stands in when a file omits this one
    absent: bool = False  # optional, nothing stands in: a family without it lacks what it measures

    @property
    def required(self) -> bool:
        return not self.fallback and self.default is None and not self.absent

    def check(self, value: float) -> str | None:
        """Why ``value`` cannot be this factor (None: it can)."""
        if not self.minimum <= value <= self.maximum:
            return f"must be from {self.minimum:g} to {self.maximum:g} ({self.unit}), got {value:g}"
        return None


FACTORS = (
    FactorSpec("gemm", "matrix products: share of the matrix peak", "share", 0.01, 1.0),
    FactorSpec("gemm_8bit", "matrix products in 8-bit types: share of their matrix peak", "share", 0.01,
               1.0, fallback="gemm"),
    FactorSpec("gemm_depth", "depth at which a product's tiles spend half their time outside the "
               "main loop", "K", 0, 1e6),
    FactorSpec("gemm_tile", "rows of a product's tiles (its rows are padded to whole tiles)", "rows",
               1, 1024),
    FactorSpec("gemm_bandwidth", "memory-bound matrix products: share of main-memory bandwidth", "share",
               0.01, 1.0),
    FactorSpec("gemm_overlap", "share of the shorter of a product's memory and arithmetic times hidden "
               "under the longer", "share", 0.0, 1.0),
    FactorSpec("gemv_overlap", "matrix-vector products (one row): share of the shorter of their memory "
               "and arithmetic times hidden under the longer", "share", 0.0, 1.0, fallback="gemm_overlap"),
    FactorSpec("bandwidth", "other streaming kernels: share of main-memory bandwidth", "share", 0.01, 1.0),
    FactorSpec("decode_attention", "decode attention: share of bandwidth reading the KV cache", "share",
               0.01, 1.0),
    FactorSpec("prefill_attention", "prompt attention (fused): share of the matrix peak", "share", 0.01, 1.0),
    FactorSpec("prefill_attention_fa3", "prompt attention with FlashAttention 3, forward: share of the "
               "matrix peak", "share", 0.01, 1.0, absent=True),
    FactorSpec("backward_attention_fa3", "attention's backward with FlashAttention 3: share of the matrix "
               "peak", "share", 0.01, 1.0, absent=True),
    FactorSpec("prefill_attention_cudnn", "prompt attention with cuDNN's fused kernel, forward: share of "
               "the matrix peak", "share", 0.01, 1.0, absent=True),
    FactorSpec("backward_attention_cudnn", "attention's backward with cuDNN's fused kernel: share of the "
               "matrix peak", "share", 0.01, 1.0, absent=True),
    FactorSpec("link", "collectives: share of the link's rate", "share", 0.01, 1.0),
    FactorSpec("nccl_link", "NCCL's collectives within a node: share of the link's rate", "share", 0.01,
               1.0, fallback="link"),
    FactorSpec("nccl_ring", "NCCL's ring and tree within a node: share of the link's rate", "share", 0.01,
               1.0, fallback="nccl_link"),
    FactorSpec("nccl_us", "each of NCCL's collectives within a node beyond its model's latency", "µs", 0.0,
               1e4, default=0.0),
    FactorSpec("kernel_us", "each kernel beyond its work (launch, ramp-up, tail)", "µs", 0.0, 1e4),
    FactorSpec("step_ms", "each step beyond its kernels (scheduling, sampling, host)", "ms", 0.0, 1e4),
)
FACTOR_NAMES = tuple(f.name for f in FACTORS)


@dataclass(frozen=True)
class AttentionKernel:
    """A fused attention kernel a step may be costed with (the ``attention_kernel``
    parameter): the factors of its shares of the matrix peak, forward and backward."""

    name: str  # the parameter's value
    label: str
    forward: str  # the factor of its forward's share
    backward: str  # the factor of its backward's share


# FlashAttention 2 is what the validated engines ran: the ``prefill_attention`` every family
# has, its backward's share taken as the forward's (it keeps 32-34 % of an H100's peak both
# ways: the h100 family's note). FlashAttention 3 runs on Hopper GPUs only (its README:
# "FlashAttention-3 is optimized for Hopper GPUs (e.g. H100)", "Requirements: H100 / H800 GPU");
# a family publishes its and cuDNN's shares where a measurement of them was found.
ATTENTION_KERNELS = {
    "fa2": AttentionKernel("fa2", "FlashAttention 2", "prefill_attention", "prefill_attention"),
    "fa3": AttentionKernel("fa3", "FlashAttention 3", "prefill_attention_fa3", "backward_attention_fa3"),
    "cudnn": AttentionKernel("cudnn", "cuDNN's fused attention", "prefill_attention_cudnn",
                             "backward_attention_cudnn"),
}


@dataclass(frozen=True)
class Factor:
    """A factor's value and the measurement it comes from."""

    value: float
    source: str  # the document (a URL) and where in it
    note: str  # what was measured and how the value follows from it
    stand_in: bool = False  # the file left it out: another factor's value or a default stands in


@dataclass(frozen=True)
class Efficiency:
    """The factors for one family of devices (``devices``: their catalogue ids; ``kind``:
    every device of that kind the file lists no family for)."""

    id: str
    name: str
    devices: tuple[str, ...]
    kind: DeviceKind | None
    factors: dict[str, Factor]
    origin: str = ""  # the file
    measured: str = ""  # a calibration: when (ISO 8601), on what, with which backend
    fit_error: float | None = None  # a calibration: RMS relative error of its product-time fit
    machine: str = ""  # a calibration of a machine the catalogue does not list: applies to no device
    energy: MeasuredEnergy | None = None  # a calibration whose run measured power

    def __hash__(self) -> int:  # the factors' dict is never changed after reading
        return hash((self.id, self.origin))

    def value(self, name: str) -> float:
        return self.factors[name].value

    @property
    def gemm(self) -> float:
        return self.value("gemm")

    @property
    def bandwidth(self) -> float:
        return self.value("bandwidth")

    def gemm_share(self, rows: float, depth: float = 0, precision: str = "bf16") -> float:
        """The share of the ``precision`` matrix peak a product of ``rows`` rows and depth
        ``depth`` (0: not known) reaches: its rows padded to whole tiles, its tiles' fixed
        work spread over its depth."""
        tile, fixed = self.value("gemm_tile"), self.value("gemm_depth")
        large = self.value("gemm_8bit") if DTYPE_BYTES.get(precision, 2) == 1 else self.gemm
        share = large * (depth / (depth + fixed) if depth > 0 else 1.0)
        if not math.isfinite(rows) or rows <= 1:  # a large product, or a matrix-vector one
            return share  # (BLAS libraries run one row as a vector product: no tile to fill)
        return share * rows / (math.ceil(rows / tile) * tile)

    def covers(self, hardware: Hardware) -> bool:
        return hardware.id in self.devices

    def attention_shares(self, kernel: str) -> tuple[float, float] | None:
        """The shares of the matrix peak fused attention reaches with ``kernel`` (an
        ``ATTENTION_KERNELS`` name), forward and backward (None: none is published here)."""
        k = ATTENTION_KERNELS[kernel]
        if k.forward not in self.factors or k.backward not in self.factors:
            return None
        return self.value(k.forward), self.value(k.backward)


def _read_factor(fields: Fields, spec: FactorSpec) -> Factor:
    entry = fields.child(fields.mapping(spec.name), spec.name)
    raw = entry.raw("value")
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise entry.error("value", f"expected a number, got {type(raw).__name__}")
    try:
        value = float(raw)
    except OverflowError:  # an integer of hundreds of digits
        raise entry.error("value", f"is too large a number: {spec.label}") from None
    problem = spec.check(value)
    if problem:
        raise entry.error("value", problem)
    factor = Factor(value, entry.text("source"), entry.text("note"))
    entry.finish()
    return factor


def _stand_in(spec: FactorSpec, factors: dict[str, Factor]) -> Factor:
    """What an optional factor a file omits takes: another factor's value, or its default."""
    if spec.fallback:
        other = factors[spec.fallback]
        return Factor(other.value, other.source, f"not in the file: {spec.fallback}'s value stands in", True)
    return Factor(float(spec.default or 0.0), "not in the file",
                  f"not in the file: {spec.default:g} {spec.unit} stands in", True)


def _read_efficiency(fields: Fields) -> Efficiency:
    ident = fields.identifier("id")
    name = fields.text("name")
    devices = fields.raw("devices", required=False) or []
    if not isinstance(devices, list) or not all(isinstance(d, str) and d for d in devices):
        raise fields.error("devices", "expected a list of device ids")
    kind = fields.text("kind", required=False, choices=[k.value for k in DeviceKind])
    machine = fields.text("machine", required=False) or ""
    if not devices and kind is None and not machine:
        raise fields.error("devices", "name the devices these factors are for, a kind "
                                      f"({', '.join(k.value for k in DeviceKind)}) "
                                      "they are the fallback of, or the machine they were measured on")
    factors = {spec.name: _read_factor(fields, spec) for spec in FACTORS
               if spec.required or fields.has(spec.name)}
    for spec in FACTORS:
        if spec.name not in factors and not spec.absent:
            factors[spec.name] = _stand_in(spec, factors)
    measured = fields.text("measured", required=False) or ""
    fit_error = fields.raw("fit_error", required=False)
    if fit_error is not None and (isinstance(fit_error, bool) or not isinstance(fit_error, int | float)
                                  or not 0 <= fit_error <= 10):
        raise fields.error("fit_error", f"expected a relative error from 0 to 10, got {fit_error!r}")
    kept = fields.raw("energy", required=False)  # (``energy: null`` is no energy, as leaving it out)
    energy = None if kept is None else read_energy(fields.child(energy_mapping(fields, kept), "energy"))
    return Efficiency(ident, name, tuple(devices), DeviceKind(kind) if kind else None, factors, fields.file,
                      measured, fit_error, machine, energy)


def read_efficiencies(path: str | Path, text: str | None = None) -> list[Efficiency]:
    """The efficiency families of a file (``schema: 1``, ``efficiencies: [...]``)."""
    return read_entries(path, "efficiencies", SCHEMA, _read_efficiency, text)


@lru_cache(maxsize=1)
def published() -> tuple[Efficiency, ...]:
    """The bundled families, from published measurements (read once)."""
    return tuple(read_efficiencies(resource_path("efficiency", "published.yaml")))


def calibrated(folder: str | Path | None = None) -> tuple[tuple[Efficiency, ...], list[Skipped]]:
    """The calibrations in the data folder's ``efficiency/`` (or ``folder``), and the files
    skipped as broken (``userfiles.Skipped``)."""
    from explorer.paths import user_file

    directory = user_file(CALIBRATED_FOLDER) if folder is None else folder
    signature: list[tuple[str, int | None, int | None]]
    signature = []  # read again only when a file was added, removed or changed
    for path in yaml_files(directory):
        try:
            stat = path.stat()
        except OSError:  # a dangling link, a file gone: the reader names it, as it does any other
            signature.append((str(path), None, None))
            continue
        signature.append((str(path), stat.st_mtime_ns, stat.st_size))
    loaded, skipped = _read_calibrations(tuple(signature))
    return loaded, list(skipped)


@lru_cache(maxsize=8)
def _read_calibrations(signature: tuple[tuple[str, int | None, int | None], ...]
                       ) -> tuple[tuple[Efficiency, ...], tuple[Skipped, ...]]:
    loaded, skipped = load_each([Path(path) for path, _, _ in signature], read_efficiencies, "calibration",
                                "efficiencies")
    return tuple(loaded), tuple(skipped)


def to_text(e: Efficiency) -> str:
    """``e`` as an efficiency file (``read_efficiencies`` reads it back)."""
    entry: dict[str, Any] = {"id": e.id, "name": e.name}
    if e.devices:
        entry["devices"] = list(e.devices)
    elif e.kind is not None:
        entry["kind"] = str(e.kind)
    if e.machine:
        entry["machine"] = e.machine
    if e.measured:
        entry["measured"] = e.measured
    if e.fit_error is not None:
        entry["fit_error"] = round(e.fit_error, 4)
    for name, factor in e.factors.items():
        entry[name] = {"value": round(factor.value, 6), "source": factor.source, "note": factor.note}
    if e.energy is not None:
        c = e.energy.constants
        entry["energy"] = {"precision": e.energy.precision, "flop_j": float(f"{c.flop_j:.6g}"),
                           "byte_j": float(f"{c.byte_j:.6g}"), "constant_w": float(f"{c.constant_w:.6g}"),
                           **({"errors": [float(f"{v:.3g}") for v in c.errors]} if c.errors else {}),
                           "source": c.source}
    return dump_yaml({"schema": SCHEMA, "efficiencies": [entry]}, sort_keys=False, allow_unicode=True,
                          width=100)


def efficiency_for(hardware: Hardware, families: Iterable[Efficiency]) -> Efficiency | None:
    """The family ``hardware`` belongs to, else the fallback for its kind (None: neither)."""
    for family in families:
        if family.covers(hardware):
            return family
    return next((f for f in families if f.kind == hardware.kind and not f.devices), None)
