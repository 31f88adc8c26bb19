"""Every numeric field of every format the loader fuzz covers, set in turn to a number at
the edge of what floats hold: 1e308 and -1e308 (finite, but any product overflows),
integers of 400 digits (JSON and YAML read them; no float holds them), 1e-320 (a subnormal:
any quotient by it overflows), and NaN and infinities (both formats write them as text).
Each loads with finite numbers only or is refused with a DataFileError naming the file;
an OverflowError or any other exception fails. The profile CSVs (Nsight Compute,
rocprof-compute) get the same in every numeric cell.

Profiles (tests/conftest.py): ``ci`` tries an even sample of (field, value) pairs, as many
as it runs examples; ``long`` (``make fuzz``) every pair.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import dataclasses
import enum
import io
import json
import math
import random

import pytest
import yaml
from hypothesis import settings

from .mutate import _parent, paths
from .test_loaders import NAMES, _dump, check

BIG = 10**400 - 1
HUGE = [1e308, -1e308, BIG, -BIG, 1e-320, -1e-320, math.nan, math.inf, -math.inf]


def non_finite(value, seen=None, where="") -> str | None:
    """Where a loaded value holds a float that is not finite (None: nowhere)."""
    seen = set() if seen is None else seen
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} = {value}"
    if isinstance(value, str | bytes | int | enum.Enum | type(None)) or id(value) in seen:
        return None
    seen.add(id(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
    elif isinstance(value, dict):
        items = ((repr(k), v) for k, v in value.items())
    elif isinstance(value, list | tuple | set | frozenset):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        return None
    return next((found for key, item in items if (found := non_finite(item, seen, f"{where}.{key}"))), None)


@pytest.mark.parametrize("name", NAMES)
def test_huge_and_tiny_numbers_in_every_numeric_field_load_finite_or_are_refused(name, cases, tmp_path):
    text, kind, load = cases[name]
    original = json.loads(text) if kind == "json" else yaml.safe_load(text)
    places = [place for place, value in paths(original)
              if place and isinstance(value, int | float) and not isinstance(value, bool)]
    trials = [(place, value) for place in places for value in HUGE]
    budget = settings.default.max_examples
    if budget < len(trials):
        trials = sorted(random.Random(name).sample(trials, budget), key=repr)
    path = tmp_path / f"huge.{kind}"
    for place, value in trials:
        tree = copy.deepcopy(original)
        _parent(tree, place)[place[-1]] = value
        path.write_text(_dump(tree, kind), encoding="utf-8")
        loaded = check(load, path)
        where = non_finite(loaded)
        assert where is None, f"{'.'.join(map(str, place))} = {value!r} loaded as {where}"


def _csv_cells(text: str):
    """(line, cell) of every cell of a CSV text that is a number (ncu writes 1,000.00)."""
    for index, line in enumerate(text.splitlines()):
        for column, cell in enumerate(next(csv.reader([line]), [])):
            with contextlib.suppress(ValueError):
                float(cell.replace(",", ""))
                yield index, column


def _csv_with(text: str, index: int, column: int, value: str) -> str:
    lines = text.splitlines()
    cells = next(csv.reader([lines[index]]))
    cells[column] = value
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="").writerow(cells)
    lines[index] = out.getvalue()
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", ["ncu raw", "ncu details", "rocprof"])
def test_huge_and_tiny_numbers_in_every_profile_cell_load_finite_or_are_refused(name, tmp_path):
    """The same for the profile CSVs (Nsight Compute, rocprof-compute): every numeric cell."""
    from explorer.profiles.reading import read_profile
    from tests.profiles.test_ncu import long_layout, raw_page
    from tests.profiles.test_rocprof import pmc_text

    text = {"ncu raw": raw_page, "ncu details": long_layout, "rocprof": pmc_text}[name]()
    texts = [f"{v:.17g}" if isinstance(v, float) else str(v) for v in HUGE] + ["1.7976931348623157e308"]
    trials = [(*cell, value) for cell in _csv_cells(text) for value in texts]
    budget = settings.default.max_examples
    if budget < len(trials):
        trials = sorted(random.Random(name).sample(trials, budget))
    path = tmp_path / "profile.csv"
    for index, column, value in trials:
        path.write_text(_csv_with(text, index, column, value))
        loaded = check(read_profile, path)
        where = non_finite(loaded)
        assert where is None, f"line {index + 1}, cell {column + 1} = {value[:20]} loaded as {where}"
