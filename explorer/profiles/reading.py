"""A profile from whichever file the user gives: a PyTorch profiler trace (JSON, gzipped
or not) or an Nsight Compute CSV export, told apart by content, not by name."""

from __future__ import annotations

from pathlib import Path

from explorer.core.profile import Profile
from explorer.profiles.kineto import is_trace, read_kineto
from explorer.profiles.ncu import read_ncu_csv


def read_profile(path: str | Path) -> Profile:
    return read_kineto(path) if is_trace(path) else read_ncu_csv(path)
