"""The hardware catalogue: YAML files under resources/hardware validated into ``Hardware``.

File format (one or more devices per file)::

    schema: 1
    devices:
    - id: h100-sxm
      name: NVIDIA H100 SXM5 80 GB
      short_name: H100 SXM      # on charts and slides (optional; the name otherwise)
      vendor: NVIDIA
      kind: gpu
      class: datacenter         # datacenter, workstation, desktop, laptop or edge
      year: 2022
      sources: {datasheet: https://...}
      specs: {cores: 132, core_label: SM, boost_clock: 1980 MHz, tdp: 700 W, source: datasheet}
      compute:
      - {precision: bf16, unit: matrix, peak: 989.4 TFLOP/s, source: datasheet}
      memory:
      - {level: HBM3, main: true, capacity: 80 GB, bandwidth: 3.35 TB/s, source: datasheet}

A memory level may add its measured ``latency`` with ``latency_source`` and
``latency_note`` (the method): Little's law needs it (bandwidth = bytes in flight /
latency). Main memory may add ``usable`` with ``usable_source`` and ``usable_note``:
the total the device reports to programs (CUDA's total memory, nvidia-smi's "Total"),
which is below the nominal capacity; "fits" verdicts use it.

Every group of numbers names its ``source`` (a key of ``sources``); a number
computed rather than published adds ``derived: true`` and its ``formula`` (each
factor written as a number followed by what it counts, so a test can evaluate it).

Memory capacities are written in GiB/TiB: for DRAM and HBM, vendors' "GB" follows
JEDEC's binary meaning (JESD100B.01: giga = 2^30 for memory capacity), which is
also what the devices report (an "80 GB" H100 shows 80 GiB less reserved pages).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from explorer.core import units
from explorer.core.files.datafile import DataFileError, Fields, read_entries
from explorer.core.files.registry import Registry
from explorer.core.files.userfiles import Skipped, load_each, yaml_files
from explorer.core.hardware.hardware import (
    CLASSES,
    KINDS,
    LINK_DIRECTIONS,
    LINK_TIERS,
    UNITS,
    ComputePeak,
    DeviceClass,
    DeviceKind,
    Hardware,
    Link,
    MemoryLevel,
    Provenance,
    Specs,
    Tier,
)
from explorer.paths import resource_path

SCHEMA = 1


def _source_url(fields: Fields, name: str, sources: Mapping[str, str]) -> str:
    key = fields.text(name)
    if key not in sources:
        raise fields.error(name, f"{key!r} is not one of this entry's sources "
                                 f"({', '.join(sources) or 'none declared'})")
    return sources[key]


def _provenance(fields: Fields, sources: Mapping[str, str]) -> Provenance:
    url = _source_url(fields, "source", sources)
    derived = fields.flag("derived")
    formula = fields.text("formula", required=derived, default="")
    if formula and not derived:
        raise fields.error("formula", "a formula is given but the number is not marked derived: true")
    return Provenance(url=url, derived=derived, formula=formula,
                      note=fields.text("note", required=False, default=""))


def _read_specs(fields: Fields, sources: Mapping[str, str]) -> Specs:
    tdp_source = _source_url(fields, "tdp_source", sources) if fields.has("tdp_source") else None
    return Specs(
        cores=fields.integer("cores"),
        core_label=fields.text("core_label"),
        boost_clock_hz=fields.quantity("boost_clock", units.FREQUENCY),
        base_clock_hz=fields.quantity("base_clock", units.FREQUENCY, required=False),
        tdp_w=fields.quantity("tdp", units.POWER, required=False),
        tdp_provenance=Provenance(tdp_source) if tdp_source else None,
        matrix_unit=fields.text("matrix_unit", required=False),
        provenance=_provenance(fields, sources),
    )


def _read_peak(fields: Fields, sources: Mapping[str, str]) -> ComputePeak:
    return ComputePeak(
        precision=fields.text("precision", choices=units.PRECISIONS),
        unit=fields.text("unit", choices=UNITS),
        flops_per_s=fields.quantity("peak", units.FLOP_RATE),
        clock_hz=fields.quantity("clock", units.FREQUENCY, required=False),
        provenance=_provenance(fields, sources),
    )


def _measured(fields: Fields, name: str, dimension: units.Dimension,
              sources: Mapping[str, str]) -> tuple[float, Provenance] | tuple[None, None]:
    """(value, provenance) of an optional measured field with its ``NAME_source`` and
    ``NAME_note`` (the method), or (None, None)."""
    value = fields.quantity(name, dimension, required=False)
    if value is not None:
        return value, Provenance(_source_url(fields, f"{name}_source", sources),
                                 note=fields.text(f"{name}_note"))
    if fields.has(f"{name}_source") or fields.has(f"{name}_note"):
        raise fields.error(name, f"is missing ({name}_source and {name}_note describe it)")
    return None, None


def _read_memory(fields: Fields, sources: Mapping[str, str]) -> MemoryLevel:
    name, main = fields.text("level"), fields.flag("main")
    capacity = fields.quantity("capacity", units.BYTES, required=False)
    latency, latency_provenance = _measured(fields, "latency", units.TIME, sources)
    usable, usable_provenance = _measured(fields, "usable", units.BYTES, sources)
    if usable is not None and not (main and capacity and usable <= capacity):
        raise fields.error("usable", "applies to main memory and is at most its capacity")
    level = MemoryLevel(
        name=name, main=main, capacity_bytes=capacity,
        bandwidth_bytes_per_s=fields.quantity("bandwidth", units.BYTE_RATE, required=False),
        provenance=_provenance(fields, sources),
        latency_s=latency, latency_provenance=latency_provenance,
        usable_bytes=usable, usable_provenance=usable_provenance,
    )
    if level.main and level.bandwidth_bytes_per_s is None:
        raise fields.error("bandwidth", "is missing (main memory needs its bandwidth)")
    if level.main and level.capacity_bytes is None:
        raise fields.error("capacity", "is missing (main memory needs its capacity)")
    if level.capacity_bytes is None and level.bandwidth_bytes_per_s is None:
        raise fields.error("capacity", "is missing (a memory level needs a capacity or a bandwidth)")
    return level


def _read_link(fields: Fields, sources: Mapping[str, str]) -> Link:
    tier = Tier(fields.text("tier", choices=LINK_TIERS))
    latency, latency_provenance = _measured(fields, "latency", units.TIME, sources)
    group = fields.integer("group", required=tier == Tier.NODE, minimum=2, maximum=1024) or 0
    if group and tier != Tier.NODE:
        raise fields.error("group", "applies to node links (devices of one server reaching each other)")
    mesh = fields.integer("mesh", required=False, minimum=1, maximum=1024) or 0
    if mesh and not (group and mesh == group - 1):
        raise fields.error("mesh", "counts a node link's point-to-point links, one per other device of its "
                                   "group: group − 1")
    if latency is None:
        raise fields.error("latency", "is missing (a link needs its latency per transfer step, with "
                                      "latency_source and latency_note)")
    switch_reduction = fields.flag("switch_reduction")
    if switch_reduction and tier != Tier.NODE:
        raise fields.error("switch_reduction", "applies to node links (the switch of one server's devices)")
    return Link(
        name=fields.text("name"), tier=tier,
        bandwidth_bytes_per_s=fields.quantity("bandwidth", units.BYTE_RATE),
        direction=fields.text("direction", choices=LINK_DIRECTIONS),
        provenance=_provenance(fields, sources), group=group, mesh=mesh,
        latency_s=latency, latency_provenance=latency_provenance, switch_reduction=switch_reduction,
    )


def _device_class(text: str | None) -> DeviceClass | None:
    return DeviceClass(text) if text else None


R = TypeVar("R")


def _read_list(fields: Fields, name: str, reader: Callable[[Fields, Mapping[str, str]], R],
               sources: Mapping[str, str]) -> tuple[R, ...]:
    out: list[R] = []
    for index, raw in enumerate(fields.items(name)):
        item_fields = fields.child(raw, f"{name}[{index}]")
        out.append(reader(item_fields, sources))
        item_fields.finish()
    return tuple(out)


def read_hardware_entry(fields: Fields) -> Hardware:
    """Validate one device mapping into a ``Hardware`` (raises DataFileError)."""
    ident = fields.identifier("id")
    raw_sources = fields.mapping("sources")
    source_fields = fields.child(raw_sources, "sources")
    sources = {str(key): source_fields.url(key) for key in list(raw_sources)}
    specs_fields = fields.child(fields.mapping("specs"), "specs")
    specs = _read_specs(specs_fields, sources)
    specs_fields.finish()
    hardware = Hardware(
        id=ident,
        name=fields.text("name"),
        vendor=fields.text("vendor"),
        kind=DeviceKind(fields.text("kind", choices=KINDS)),
        year=fields.integer("year", minimum=1970),
        specs=specs,
        peaks=_read_list(fields, "compute", _read_peak, sources),
        memory=_read_list(fields, "memory", _read_memory, sources),
        sources=tuple(sources.items()),
        notes=fields.text("notes", required=False, default=""),
        origin=fields.file,
        short_name=fields.text("short_name", required=False, default=""),
        links=_read_list(fields, "links", _read_link, sources) if fields.has("links") else (),
        device_class=_device_class(fields.text("class", required=False, choices=CLASSES)),
    )
    mains = [level.name for level in hardware.memory if level.main]
    if len(mains) != 1:
        raise fields.error("memory", f"exactly one level must be 'main: true', found {len(mains)}")
    seen: set[tuple[str, str]] = set()
    for peak in hardware.peaks:
        key = (peak.precision, peak.unit)
        if key in seen:
            raise fields.error("compute", f"{peak.label} is listed twice")
        seen.add(key)
    return hardware


def _provenance_dict(p: Provenance, keys: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"source": keys[p.url]}
    if p.derived:
        out.update(derived=True, formula=p.formula)
    if p.note:
        out["note"] = p.note
    return out


def _quantity(value: float, unit: str, binary: bool = False) -> str:
    """``value`` with the largest prefix that writes it exactly (reads back bit for bit)."""
    prefixes: tuple[tuple[str, float], ...]
    prefixes = (("Ti", 2.0**40), ("Gi", 2.0**30), ("Mi", 2.0**20), ("Ki", 2.0**10)) if binary else ()
    prefixes += (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0))
    for prefix, scale in prefixes:
        text = f"{value / scale:.10g}"
        if value >= scale and float(text) * scale == value:
            return f"{text} {prefix}{unit}"
    return f"{value!r} {unit}"


def _specs_dict(s: Specs, keys: Mapping[str, str]) -> dict[str, Any]:
    """The ``specs`` mapping: the optional figures only where the device has them."""
    specs = {"cores": s.cores, "core_label": s.core_label,
             "boost_clock": _quantity(s.boost_clock_hz, "Hz")}
    if s.base_clock_hz:
        specs["base_clock"] = _quantity(s.base_clock_hz, "Hz")
    if s.tdp_w:
        specs["tdp"] = f"{s.tdp_w:g} W"
    if s.tdp_provenance:
        specs["tdp_source"] = keys[s.tdp_provenance.url]
    if s.matrix_unit:
        specs["matrix_unit"] = s.matrix_unit
    specs.update(_provenance_dict(s.provenance, keys))
    return specs


def _peak_dict(p: ComputePeak, keys: Mapping[str, str]) -> dict[str, Any]:
    """One ``compute`` entry; integer peaks count operations, not FLOPs."""
    entry = {"precision": p.precision, "unit": p.unit,
             "peak": _quantity(p.flops_per_s, "OP/s" if p.precision.startswith("int") else "FLOP/s")}
    if p.clock_hz:
        entry["clock"] = _quantity(p.clock_hz, "Hz")
    return {**entry, **_provenance_dict(p.provenance, keys)}


def _memory_dict(m: MemoryLevel, keys: Mapping[str, str]) -> dict[str, Any]:
    """One ``memory`` entry; a measured latency or usable size only with its source and note."""
    entry: dict[str, Any] = {"level": m.name}
    if m.main:
        entry["main"] = True
    if m.capacity_bytes:
        entry["capacity"] = _quantity(m.capacity_bytes, "B", binary=True)
    if m.bandwidth_bytes_per_s:
        entry["bandwidth"] = _quantity(m.bandwidth_bytes_per_s, "B/s")
    entry.update(_provenance_dict(m.provenance, keys))
    if m.latency_s is not None and m.latency_provenance is not None:
        entry.update(latency=f"{m.latency_s * 1e9:.10g} ns",
                     latency_source=keys[m.latency_provenance.url],
                     latency_note=m.latency_provenance.note)
    if m.usable_bytes is not None and m.usable_provenance is not None:
        entry.update(usable=_quantity(m.usable_bytes, "B", binary=True),
                     usable_source=keys[m.usable_provenance.url],
                     usable_note=m.usable_provenance.note)
    return entry


def _link_dict(link: Link, keys: Mapping[str, str]) -> dict[str, Any]:
    """One ``links`` entry; its latency per transfer step in microseconds."""
    entry: dict[str, Any] = {"name": link.name, "tier": link.tier.value,
             "bandwidth": _quantity(link.bandwidth_bytes_per_s, "B/s"), "direction": link.direction}
    if link.group:
        entry["group"] = link.group
    if link.mesh:
        entry["mesh"] = link.mesh
    if link.switch_reduction:
        entry["switch_reduction"] = True
    entry.update(_provenance_dict(link.provenance, keys))
    if link.latency_s is not None and link.latency_provenance is not None:
        entry.update(latency=f"{link.latency_s * 1e6:.10g} us",
                     latency_source=keys[link.latency_provenance.url],
                     latency_note=link.latency_provenance.note)
    return entry


def hardware_to_dict(hw: Hardware) -> dict[str, Any]:
    """The catalogue entry of ``hw``, as ``read_hardware_entry`` reads it back."""
    keys = {url: key for key, url in hw.sources}
    out = {"id": hw.id, "name": hw.name, "vendor": hw.vendor, "kind": str(hw.kind),
           **({"class": str(hw.device_class)} if hw.device_class else {}), "year": hw.year,
           "sources": dict(hw.sources), "specs": _specs_dict(hw.specs, keys),
           "compute": [_peak_dict(p, keys) for p in hw.peaks],
           "memory": [_memory_dict(m, keys) for m in hw.memory]}
    links = [_link_dict(link, keys) for link in hw.links]
    if hw.notes:
        out["notes"] = hw.notes
    if hw.short_name:
        out["short_name"] = hw.short_name
    if links:
        out["links"] = links
    return out


def load_hardware_file(path: str | Path, text: str | None = None) -> list[Hardware]:
    return read_entries(path, "devices", SCHEMA, read_hardware_entry, text)


class Catalog(Registry[Hardware]):
    """Devices by id, in load order; with the user's files that were skipped (broken) and
    the bundled ids a user's own device replaces."""

    def __init__(self, devices: Iterable[Hardware], skipped: Iterable[Skipped] = (),
                 overrides: Iterable[str] = ()) -> None:
        super().__init__("hardware", devices, skipped)
        self.overrides = frozenset(overrides)


def hardware_dir() -> Path:
    return resource_path("hardware")


def load_catalog(directory: str | Path | None = None,
                 user_directory: str | Path | None = None) -> Catalog:
    """Every ``*.yaml`` in ``directory`` (the bundled catalogue by default; any mistake
    stops loading), then the user's own devices from ``user_directory`` one file at a time:
    a broken file is skipped and listed in ``Catalog.skipped``, and a user's device with a
    bundled id replaces the bundled entry (listed in ``Catalog.overrides``)."""
    directory = Path(directory) if directory is not None else hardware_dir()
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise DataFileError(directory, "holds no hardware files (*.yaml)")
    bundled = Catalog(device for path in files for device in load_hardware_file(path))
    mine, skipped = load_each(yaml_files(user_directory), load_hardware_file, "device", "devices")
    by_id = {hw.id: hw for hw in mine}
    devices = [by_id.pop(hw.id, hw) for hw in bundled.values()] + list(by_id.values())
    return Catalog(devices, skipped, overrides=[hw.id for hw in mine if hw.id in bundled])


def open_catalogue() -> Catalog:
    """The catalogue every entry point uses: the bundled devices and the user's own (from
    the data folder's ``hardware/``), broken user files skipped."""
    from explorer.paths import user_file

    return load_catalog(user_directory=user_file("hardware"))
