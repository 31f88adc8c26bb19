"""What a chart says under its axis when the step does not fit in the device's memory: the
parts of the memory it needs and the budget it has, the same figures the workload panel's
memory bar draws (``core.analysis`` totals). A slide of such a step then shows the limit
itself, not only a caption about it."""

from __future__ import annotations

from explorer.core.analysis.analysis import Analysis
from explorer.core.model.applicability import Phase
from explorer.core.units import format_bytes


def memory_note(a: Analysis) -> str | None:
    """The sentence, or None when the step fits."""
    t = a.totals
    if t.fits_in_memory:
        return None
    parts = [("weights", t.weight_bytes)]
    if a.params.phase == Phase.TRAIN:
        parts.append(("gradients and optimizer state", t.state_bytes))
    else:
        parts.append(("KV cache", t.kv_cache_bytes))
    parts.append(("activations", t.activation_bytes))
    added = " + ".join(f"{name} {format_bytes(value)}" for name, value in parts if value)
    per_device = " per device" if t.devices > 1 else ""
    return (f"Does not fit: {added} = {format_bytes(t.memory_required_bytes)}{per_device}, of the "
            f"{format_bytes(t.memory_budget_bytes)} {a.hardware.label} gives "
            f"({a.params.budget_share:.0%} of its usable memory)")
