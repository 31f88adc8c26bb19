"""What a trace event carries, whatever a profiler wrote there."""

from __future__ import annotations

from typing import Any


def args_of(event: dict) -> dict[str, Any]:
    """An event's ``args`` mapping ({} where it has none, or something else there)."""
    args = event.get("args")
    return args if isinstance(args, dict) else {}
