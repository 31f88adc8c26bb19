"""``hardware list``, ``hardware show ID`` and ``hardware compare ID,ID,…``: the catalogue
in a terminal, every number with its source."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from explorer.commands.common import open_catalog
from explorer.commands.texttable import format_table
from explorer.core.analysis import hardware_report
from explorer.core.analysis.hardware_compare import compare_dict, compare_rows, source_key
from explorer.core.files.registry import UnknownIdError
from explorer.core.hardware.device_sheet import device_sheet
from explorer.core.units import format_bytes, format_si, rate_unit

EXIT_OK, EXIT_USAGE = 0, 2


def add_parser(sub) -> None:
    """The ``hardware`` command and its actions on ``sub`` (the top level's subparsers)."""
    hw = sub.add_parser("hardware", help="list the hardware catalogue, show one device or compare several")
    hw_sub = hw.add_subparsers(dest="hardware_command", metavar="ACTION", required=True)
    hw_list = hw_sub.add_parser("list", help="one line per device")
    hw_list.add_argument("--json", action="store_true", help="print JSON")
    hw_show = hw_sub.add_parser("show", help="every number of one device, with sources")
    hw_show.add_argument("id", metavar="ID")
    hw_show.add_argument("--json", action="store_true", help="print JSON")
    hw_compare = hw_sub.add_parser(
        "compare", help="devices side by side: every roof, memory level and link, with sources",
        description="Devices side by side: specs, every dense peak (per precision and unit), memory "
                    "levels and links, one row each, with the source of every number.")
    hw_compare.add_argument("ids", metavar="ID,ID,…", type=_id_list,
                            help="two or more device ids, comma-separated (see: hardware list)")
    hw_compare.add_argument("--json", action="store_true", help="print JSON")


def _id_list(text: str) -> list[str]:
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise argparse.ArgumentTypeError("expected device ids separated by commas, such as h100-sxm,mi300x")
    return list(dict.fromkeys(ids))


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    catalog = open_catalog(err)
    if args.hardware_command == "list":
        return _list(catalog, args.json, out)
    if args.hardware_command == "compare":
        return _compare(catalog, args.ids, args.json, out, err)
    hw = catalog[args.id]
    if args.json:
        json.dump(hardware_report.hardware_detail(hw), out, indent=2)
        out.write("\n")
        return EXIT_OK
    _print_hardware(hw, out)
    return EXIT_OK


def _list(catalog, as_json: bool, out: TextIO) -> int:
    if as_json:
        json.dump([hardware_report.hardware_summary(hw) for hw in catalog.values()], out, indent=2)
        out.write("\n")
        return EXIT_OK
    rows = []
    for hw in catalog.values():
        best = max(hw.peaks, key=lambda p: p.flops_per_s)
        rows.append([hw.id, hw.name, hw.kind, hw.device_class or "—", hw.year,
                     f"{format_si(best.flops_per_s, rate_unit(best.precision))} {best.label}",
                     format_si(hw.bandwidth_bytes_per_s, "B/s"),
                     format_bytes(hw.memory_capacity_bytes)])
    print(format_table(["id", "name", "kind", "class", "year", "best dense peak", "memory bandwidth",
                        "memory"], rows, right=(4, 6, 7)), file=out)
    return EXIT_OK


def _compare(catalog, ids: list[str], as_json: bool, out: TextIO, err: TextIO) -> int:
    devices, unknown = [], []
    for ident in ids:
        try:
            devices.append(catalog[ident])
        except UnknownIdError as exc:
            unknown.append(str(exc))
    for message in unknown:
        print(f"roofline-explorer: error: {message}", file=err)
    if unknown:
        return EXIT_USAGE
    chosen = tuple(devices)
    if as_json:
        json.dump(compare_dict(chosen), out, indent=2)
        out.write("\n")
        return EXIT_OK
    rows = []
    for row in compare_rows(chosen):
        label = f"{row.label} ({row.unit})" if row.unit else row.label
        cells = []
        for hw, cell in zip(chosen, row.cells, strict=True):
            if cell is None:
                cells.append("—")
            elif cell.provenance is None:
                cells.append(cell.text)
            else:
                mark = "*" if cell.provenance.derived else ""
                cells.append(f"{cell.text}{mark} [{source_key(hw, cell.provenance)}]")
        rows.append([label, *cells])
    print(format_table(["", *(hw.id for hw in chosen)], rows), file=out)
    print("\n* derived from published inputs (its formula: hardware show ID); — none published", file=out)
    print("\nSources", file=out)
    for hw in chosen:
        for key, url in hw.sources:
            print(f"  {hw.id} {key}: {url}", file=out)
    return EXIT_OK


def _print_hardware(hw, out: TextIO) -> None:
    sheet = device_sheet(hw)

    def marked(cell) -> str:
        return cell.text + (" (derived)" if cell.derived else "")

    print("\n".join([f"{sheet.name}  [{sheet.ident}]", sheet.summary, "", marked(sheet.specs), ""]), file=out)
    print("Dense peaks (ridge = peak / main-memory bandwidth, FLOP/byte)", file=out)
    print(format_table(["precision", "unit", "peak", "at clock", "ridge", "note"],
                       [[precision, unit, marked(peak), clock, ridge, peak.note]
                        for precision, unit, peak, clock, ridge in sheet.peaks], right=(2, 3, 4)), file=out)
    print("\nMemory", file=out)
    print(format_table(["level", "capacity", "bandwidth", "note"],
                       [[level, capacity.text, marked(bandwidth), bandwidth.note]
                        for level, capacity, bandwidth in sheet.memory], right=(1, 2)), file=out)
    for text, provenance in sheet.measured:
        print(f"\n{text} ({provenance.url})", file=out)
    print("\nSources", file=out)
    for key, url in sheet.sources:
        print(f"  {key}: {url}", file=out)
