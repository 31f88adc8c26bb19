"""Units: parsing quantities written with their unit, and formatting numbers for people.

Data files write every physical number with its unit ("3.35 TB/s", "50 MiB",
"989.4 TFLOP/s") so a unit is never guessed from a magnitude. Decimal prefixes
(k, M, G, T, P, E) are powers of 1000; binary ones (Ki, Mi, Gi, Ti) powers of 1024.
Inside the program every value is in base units: FLOP/s, bytes/s, bytes, Hz, W.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

DECIMAL_PREFIXES = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
BINARY_PREFIXES = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
SMALL_PREFIXES = {"m": 1e-3, "u": 1e-6, "n": 1e-9}


@dataclass(frozen=True)
class Dimension:
    """A kind of quantity: the unit symbols that express it and an example for error text."""

    name: str
    symbols: tuple[str, ...]
    example: str
    binary_prefixes: bool = False
    small_prefixes: bool = False  # m, u (micro), n: for times


FLOP_RATE = Dimension("compute rate", ("FLOP/s", "OP/s"), "989.4 TFLOP/s")
BYTE_RATE = Dimension("bandwidth", ("B/s",), "3.35 TB/s")
BYTES = Dimension("size", ("B",), "80 GB or 50 MiB", binary_prefixes=True)
FREQUENCY = Dimension("frequency", ("Hz",), "1830 MHz")
POWER = Dimension("power", ("W",), "700 W")
TIME = Dimension("time", ("s",), "406 ns", small_prefixes=True)

# A number (thousands may be grouped with commas: 1,555), then the unit.
_QUANTITY = re.compile(
    r"^\s*((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)(/s)?\s*$")

# Bytes per stored value for every precision the app knows. tf32 is a compute
# mode of the matrix units: its operands are stored as 4-byte fp32.
DTYPE_BYTES: dict[str, int] = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "int8": 1,
}
PRECISIONS: tuple[str, ...] = tuple(DTYPE_BYTES)


class UnitError(ValueError):
    """A quantity string that does not parse as the expected dimension."""


def parse_quantity(text: object, dimension: Dimension) -> float:
    """Return the value of ``text`` (for example ``"3.35 TB/s"``) in base units.

    Raises UnitError naming what was expected when the text is not a number
    followed by one of the dimension's units.
    """
    if not isinstance(text, str):
        raise UnitError(
            f"expected a {dimension.name} written with its unit, like '{dimension.example}', "
            f"got {text!r}"
        )
    match = _QUANTITY.match(text)
    if match is None:
        raise UnitError(f"expected a {dimension.name} like '{dimension.example}', got {text!r}")
    number_text, unit_text, per_second = match.groups()
    unit_text = unit_text + (per_second or "")
    number = float(number_text.replace(",", ""))
    for symbol in dimension.symbols:
        if not unit_text.endswith(symbol):
            continue
        prefix = unit_text[: len(unit_text) - len(symbol)]
        if prefix in DECIMAL_PREFIXES:
            scale = DECIMAL_PREFIXES[prefix]
        elif dimension.binary_prefixes and prefix in BINARY_PREFIXES:
            scale = BINARY_PREFIXES[prefix]
        elif dimension.small_prefixes and prefix in SMALL_PREFIXES:
            scale = SMALL_PREFIXES[prefix]
        else:
            break
        value = number * scale
        if not math.isfinite(value):
            raise UnitError(f"{text!r} is not a finite {dimension.name}")
        return value
    raise UnitError(
        f"unknown unit {unit_text or '(none)'!r} for a {dimension.name}: "
        f"write it like '{dimension.example}'"
    )


def rate_unit(precision: str) -> str:
    """Integer peaks are operations per second, not floating-point ones."""
    return "OP/s" if precision.startswith("int") else "FLOP/s"


def format_si(value: float, unit: str, digits: int = 3) -> str:
    """Format ``value`` with a decimal prefix: ``format_si(9.894e14, "FLOP/s") == "989 TFLOP/s"``."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    magnitude = abs(value)
    prefix, scale = "", 1.0
    for candidate, candidate_scale in DECIMAL_PREFIXES.items():
        if magnitude >= candidate_scale * 0.9995:
            prefix, scale = candidate, candidate_scale
    if magnitude < 0.9995:  # 0.9996 s rounds to "1 s", not "1e+03 ms"
        for candidate, candidate_scale in (("m", 1e-3), ("µ", 1e-6), ("n", 1e-9), ("p", 1e-12)):
            prefix, scale = candidate, candidate_scale
            if magnitude >= candidate_scale * 0.9995:
                break
    return f"{_digits(value / scale, digits)} {prefix}{unit}"


def _digits(value: float, digits: int) -> str:
    """``digits`` significant digits, never in exponent form (999.7 → "1,000", not "1e+03")."""
    text = f"{value:.{digits}g}"
    return format_number(value, digits) if "e" in text else text


def format_bytes(value: float, digits: int = 3) -> str:
    """A memory size with a binary prefix, as memory is sold: ``format_bytes(80 * 2**30) ==
    "80 GiB"``. (JEDEC's "GB" for memory means 2^30 bytes; see the catalogue notes.)"""
    magnitude = abs(value)
    for prefix, scale in (("Ti", 2.0**40), ("Gi", 2.0**30), ("Mi", 2.0**20), ("Ki", 2.0**10)):
        if magnitude >= scale * 0.9995:
            return f"{_digits(value / scale, digits)} {prefix}B"
    return f"{_digits(value, digits)} B"


def format_time(seconds: float) -> str:
    """Seconds with a readable prefix: ``format_time(0.0042) == "4.2 ms"``."""
    return format_si(seconds, "s")


def format_parameters(value: float) -> str:
    """A parameter count as model cards write it: "46.7 B", "124 M", "8.03 B"."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}"
    return f"{value:.0f}"


def format_count(value: float, digits: int = 3) -> str:
    """A plain count with an SI prefix and no unit: ``format_count(7.0e10) == "70 G"``."""
    return format_si(value, "", digits).strip()


def format_number(value: float, digits: int = 3) -> str:
    """A number for prose: ``digits`` significant digits, thousands grouped, never in
    exponent form: 2093.7 → "2,090", 46.71 → "46.7", 0.5 → "0.5"."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    exponent = math.floor(math.log10(abs(value)))
    if exponent >= digits - 1:
        return f"{round(value, digits - 1 - exponent):,.0f}"
    return f"{value:.{digits - 1 - exponent}f}".rstrip("0").rstrip(".")


def format_share(share: float) -> str:
    """A fraction as a percentage for prose, never "0.0%": 0.0004 → "under 0.1%",
    0.052 → "5.2%", 0.88 → "88%"."""
    if share == 0:
        return "0%"
    if 0 < share < 0.001:
        return "under 0.1%"
    return f"{share:.0%}" if share >= 0.1 else f"{share:.1%}"
