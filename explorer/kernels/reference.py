"""The ceilings a measurement is judged against: a catalogue device or a derived CPU peak.

A measured rate above its reference ceiling means the measurement is wrong (data stayed
in a cache, or bytes or FLOPs were mis-counted), not that the machine is fast: such
points are flagged *suspect* and never used as empirical ceilings.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from explorer.core.hardware.hardware import GPU, Hardware
from explorer.kernels.cpuinfo import ClockSource

# A measurement may exceed a datasheet figure by rounding and clock boost; beyond this it
# is suspect.
TOLERANCE = 1.05
DERIVED = "derived from the local CPU"  # the source of a reference from this machine's CPU
# A CPU peak derived at the clock /proc/cpuinfo reports (no cpufreq maximum: a virtual
# machine, WSL, some drivers) is no ceiling: that clock may be the host's base, or the one a
# core ran at the moment it was read, and the cores boost beyond it by as much as their
# maximum over that clock (a laptop's Core Ultra 7 155H: 1.4 GHz base, 4.8 GHz turbo), which
# the OS does not say. Compute rates are not judged against such a peak.


@dataclass(frozen=True)
class Reference:
    source: str  # "catalogue h100-sxm" or "derived from the local CPU"
    flops_per_s: dict[str, float] = field(default_factory=dict)  # best unit per precision
    bandwidth_bytes_per_s: float | None = None
    tolerance: float = TOLERANCE  # how far beyond its peaks a real rate may go

    @classmethod
    def from_hardware(cls, hw: Hardware) -> Reference:
        return cls(f"catalogue {hw.id}", {p: hw.peak_flops(p) for p in hw.precisions},
                   hw.bandwidth_bytes_per_s)

    @classmethod
    def from_cpu(cls, cpu) -> Reference:
        peaks = {p.precision: p.flops_per_s for p in cpu.peaks}
        if cpu.clock_source == ClockSource.MAXIMUM:
            return cls(DERIVED, peaks)
        return cls(f"{DERIVED} at the clock the OS reports, which boost may exceed: compute rates are "
                   "not judged against it", peaks, tolerance=math.inf)

    def suspect(self, dtype: str, flops_per_s: float, bytes_per_s: float) -> str | None:
        peak = self.flops_per_s.get(dtype)
        if peak and flops_per_s > peak * self.tolerance:
            return (f"{flops_per_s / peak:.2f}× the {dtype} peak ({self.source}): "
                    "cache-resident or mis-counted, not real")
        bandwidth = self.bandwidth_bytes_per_s
        if bandwidth and bytes_per_s > bandwidth * TOLERANCE:
            return (f"{bytes_per_s / bandwidth:.2f}× the main-memory bandwidth ({self.source}): "
                    "cache-resident or mis-counted, not real")
        return None


def reference_for(backend, catalog, compare: str | None = None) -> tuple[Reference, str | None]:
    """What a run on ``backend`` is judged against, and a note when nothing fits: the
    ``compare`` device, else the GPU's own catalogue entry, else the CPU's derived peaks."""
    if compare:
        return Reference.from_hardware(catalog[compare]), None
    if backend.device_kind == GPU:
        match = match_device(backend.gpu.name, catalog)
        if match:
            return Reference.from_hardware(match), None
        return Reference("no reference"), (
            f"no catalogue entry matches {backend.gpu.name!r}: points are not judged against a "
            "datasheet; choose a device to compare with")
    return Reference.from_cpu(backend.cpu), None


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t]


def match_device(name: str, catalog) -> Hardware | None:
    """The catalogue GPU whose id tokens all appear in a device name such as
    'NVIDIA A100-SXM4-80GB' (→ a100-80gb-sxm); None if none or several match equally."""
    words = set(_tokens(name))
    best: list[tuple[int, Hardware]] = []
    # Another form factor of the same chip has other clocks, power and memory: no match.
    form_factors = {"pcie", "nvl"} & words
    for hw in catalog.values():
        if hw.kind != GPU:
            continue
        keys = [t for t in _tokens(hw.id) if t not in ("sxm", "apple")]
        if form_factors - set(_tokens(hw.id)):
            continue
        if keys and all(k in words for k in keys):
            best.append((len(keys), hw))
    if not best:
        return None
    best.sort(key=lambda item: item[0], reverse=True)
    if len(best) > 1 and best[0][0] == best[1][0]:
        return None
    return best[0][1]
