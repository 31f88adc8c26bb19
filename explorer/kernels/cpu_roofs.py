"""Per-core rates of this machine's CPU from the instruction-set flags the OS reports
(``/proc/cpuinfo``): each precision's operations per cycle with its formula, written as the
catalogue writes a CPU's (``2 FMA units (AVX-512) × 16 FP32 lanes × 2 FLOP``).

x86: the widest FMA (AVX-512, AVX2+FMA, else 128-bit SSE) on two FMA units, as recent Intel
and AMD cores have; AMD's family 19h (Zen 3, Zen 4) runs AVX-512 as two 256-bit halves. bf16
from AMX (``amx_bf16``: 1024 FLOP per cycle per core, Intel's AMX overview) or AVX512_BF16
(``avx512_bf16``: VDPBF16PS, two BF16 products per FP32 lane); int8 from AMX (``amx_int8``:
2048 operations per cycle per core), AVX512_VNNI or AVX-VNNI (VPDPBUSD, four INT8 products
per INT32 lane). Arm: 128-bit vector units, four on Neoverse V1 and V2 cores (Arm's software
optimization guides), two on others; SVE and SVE2 (``sve``, ``sve2``) run on the same pipes, as
wide in all (Neoverse V2: 4 × 128-bit), so they add no rate. bf16 from ``bf16`` (FEAT_BF16 has
BFMMLA: a 2-by-4 by 4-by-2 bf16 matrix product into 2 × 2 fp32, 16 products per 128 bits);
int8 from ``i8mm`` (SMMLA/UMMLA: 2-by-8 by 8-by-2 int8 into 2 × 2 int32, 32 products per 128
bits), else ``asimddp`` (SDOT: 16 products). Each is counted on every vector unit: LLVM's Neoverse
V1 and V2 models (from Arm's optimisation guides) issue BFMMLA and SMMLA to any of the four
FP/ASIMD pipes, and no 128-bit instruction issues faster than one per pipe per cycle, so the
count bounds any Arm core's rate.
A precision without such instructions gets no roof: the CPU widens it to fp32.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

AMX_BF16_PER_CYCLE, AMX_INT8_PER_CYCLE = 1024, 2048
WIDE_ARM_PARTS = {"0xd40": "Neoverse V1", "0xd4f": "Neoverse V2", "0xd84": "Neoverse V3"}


@dataclass(frozen=True)
class CoreRate:
    """Operations per cycle per core of one precision, and how they are counted."""

    precision: str
    unit: str  # "vector" or "matrix" (AMX tiles)
    per_cycle: int
    how: str
    note: str = ""  # after the clock, as the catalogue puts it ("; Zen 4 runs AVX-512 as …")


@dataclass(frozen=True)
class CpuFlags:
    """What the rates depend on: the flags, the vendor, and (x86) the family or (Arm) the part."""

    flags: frozenset[str]
    vendor: str = ""  # vendor_id: GenuineIntel, AuthenticAMD
    family: str = ""  # cpu family (x86)
    part: str = ""  # CPU part (Arm)

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> CpuFlags:
        flags = frozenset((fields.get("flags") or fields.get("Features") or "").split())
        return cls(flags, fields.get("vendor_id", ""), fields.get("cpu family", ""),
                   fields.get("CPU part", "").lower())

    @property
    def arm(self) -> bool:
        return "asimd" in self.flags or bool(self.part)


def _x86_vector(cpu: CpuFlags) -> tuple[int, int, str, str]:
    """(FMA units, bits per unit, how the width reads, a note) of an x86 core."""
    f = cpu.flags
    if "avx512f" in f:
        if cpu.vendor == "AuthenticAMD" and cpu.family == "25":
            return 2, 256, "256-bit", "; Zen 4 runs AVX-512 as two 256-bit halves"
        return 2, 512, "AVX-512", ""
    if "avx2" in f and "fma" in f:
        return 2, 256, "256-bit", ""
    return 2, 128, "128-bit", ""


def core_rates(cpu: CpuFlags) -> list[CoreRate]:
    """fp64 and fp32 always; bf16 and int8 where the flags give them instructions."""
    out = _rates(cpu)
    note = "" if cpu.arm else _x86_vector(cpu)[3]
    return [replace(r, note=note) if note and r.unit == "vector" else r for r in out]


def _rates(cpu: CpuFlags) -> list[CoreRate]:
    f = cpu.flags
    if cpu.arm:
        units, bits = (4 if cpu.part in WIDE_ARM_PARTS else 2), 128
        width = ", ".join(["128-bit", *(["SVE2"] if "sve2" in f else ["SVE"] if "sve" in f else []),
                           *([WIDE_ARM_PARTS[cpu.part]] if cpu.part in WIDE_ARM_PARTS else [])])
    else:
        units, bits, width, _note = _x86_vector(cpu)
    lanes32 = bits // 32
    out = [
        CoreRate(p, "vector", units * (bits // size) * 2,
                 f"{units} FMA units ({width}) × {bits // size} {p.upper()} lanes × 2 FLOP")
        for p, size in (("fp64", 64), ("fp32", 32))]
    if "amx_bf16" in f and "amx_tile" in f:
        out.append(CoreRate("bf16", "matrix", AMX_BF16_PER_CYCLE,
                            f"{AMX_BF16_PER_CYCLE} BF16 FLOP per cycle per core (AMX)"))
    elif cpu.arm and "bf16" in f:
        out.append(CoreRate("bf16", "vector", units * 16 * 2,
                            f"{units} vector units ({width}) × 16 BF16 products × 2 FLOP "
                            f"(BFMMLA: a 2-by-4 by 4-by-2 matrix product)"))
    elif "avx512_bf16" in f:
        out.append(CoreRate("bf16", "vector", units * lanes32 * 2 * 2,
                            f"{units} FMA units ({width}) × {lanes32} FP32 lanes × 2 BF16 products "
                            f"× 2 FLOP (AVX512_BF16)"))
    if "amx_int8" in f and "amx_tile" in f:
        out.append(CoreRate("int8", "matrix", AMX_INT8_PER_CYCLE,
                            f"{AMX_INT8_PER_CYCLE} INT8 operations per cycle per core (AMX)"))
    elif cpu.arm and "i8mm" in f:
        out.append(CoreRate("int8", "vector", units * 32 * 2,
                            f"{units} vector units ({width}) × 32 INT8 products × 2 OP "
                            f"(i8mm: SMMLA, a 2-by-8 by 8-by-2 matrix product)"))
    else:
        dot = _int8_dot(cpu, bits)
        if dot:
            dot_bits, isa = dot
            lanes = dot_bits // 32
            label = width if dot_bits == bits else f"{dot_bits}-bit"
            out.append(CoreRate("int8", "vector", units * lanes * 4 * 2,
                                f"{units} multiply units ({label}) × {lanes} INT32 lanes × 4 INT8 "
                                f"products × 2 OP ({isa})"))
    return out


def _int8_dot(cpu: CpuFlags, bits: int) -> tuple[int, str] | None:
    """(bits per unit, instruction set) of the widest INT8 dot product, or None."""
    f = cpu.flags
    if cpu.arm:
        return (bits, "asimddp: SDOT") if "asimddp" in f else None
    if "avx512_vnni" in f:
        return bits, "AVX512_VNNI"
    if "avx_vnni" in f:
        return 256, "AVX-VNNI"
    return None
