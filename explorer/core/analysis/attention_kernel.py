"""The fused attention kernel a step's expected time is costed with (the ``attention_kernel``
parameter), and why a device refuses one.

Each kernel's share of the matrix peak, forward and backward, is a factor of the device's
efficiency family (``hardware.efficiency.ATTENTION_KERNELS``): FlashAttention 2's is every
family's ``prefill_attention``; FlashAttention 3's and cuDNN's are published only for the
families where a measurement of them was found (Hopper). A step that asks for a kernel its
device's family has no share for is refused when the analysis is built, never costed with
another kernel's share in its place. The bound does not depend on the kernel.
"""

from __future__ import annotations

from collections.abc import Iterable

from explorer.core.hardware.efficiency import (
    ATTENTION_KERNELS,
    Efficiency,
    Source,
    calibrated,
    efficiency_for,
    published,
)
from explorer.core.hardware.hardware import Hardware
from explorer.core.model import ops as op
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.parameters import BY_NAME
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.model.workload_file import CUSTOM

DEFAULT = "fa2"  # the parameter's default: the share every family has
ROLES = frozenset({op.Role.ATTN_SCORE, op.Role.ATTN_VALUE})  # the products a fused kernel does


def families_for(source: str) -> tuple[Efficiency, ...]:
    """The efficiency families of ``source`` (published or calibrated)."""
    return calibrated()[0] if source == Source.CALIBRATED else published()


def asked(params: WorkloadParams, model: ModelSpec, ops: Iterable[op.Op]) -> bool:
    """Whether ``params`` asks for a kernel other than the default where the parameter applies
    (the workload panel's own rule, ``Parameter.applies``): a transformer's prompt or training
    step of fused attention, with an expected time. Elsewhere (a decode step, naive attention,
    the bound, a vision model, whose panel hides the choice) the default is costed."""
    transformer = isinstance(model, TransformerSpec) or model.id == CUSTOM
    applies = BY_NAME["attention_kernel"].applies.holds(params, transformer)
    return params.attention_kernel != DEFAULT and applies and any(o.role in ROLES for o in ops)


def why_refused(params: WorkloadParams, hardware: Hardware, family: Efficiency | None) -> str:
    """The message of a step asking for a kernel ``family`` (its device's, None: none) has no
    share for: the device, where the kernel's speed is published, and what to do."""
    kernel = ATTENTION_KERNELS[params.attention_kernel]
    fix = "use --attention-kernel fa2 (FlashAttention 2)"
    if params.efficiency == Source.CALIBRATED:
        whose = "no calibration covers it" if family is None else f"its calibration ({family.name}) has none"
        return (f"{kernel.label} (--attention-kernel {kernel.name}) has no measured share of the matrix peak "
                f"on {hardware.name}: {whose}. Calibration does not measure attention kernels: {fix}, "
                "or --efficiency published")
    having = [f.name for f in published() if f.attention_shares(kernel.name) is not None]
    whose = "no efficiency is published for its family" if family is None \
        else f"none is published for its family, {family.name}"
    return (f"{kernel.label} (--attention-kernel {kernel.name}) has no published share of the matrix peak "
            f"on {hardware.name}: {whose} (its speed is published for {', '.join(having) or 'no device'}). "
            f"To cost the step: {fix}, or --efficiency bound for the roofline bound alone")


def check(params: WorkloadParams, model: ModelSpec, hardware: Hardware, ops: Iterable[op.Op]) -> None:
    """Refuse (WorkloadError) a kernel the device's efficiency family has no share for. A device
    with no family at all has no expected time, whichever the kernel: not refused."""
    if not asked(params, model, ops):
        return
    family = efficiency_for(hardware, families_for(params.efficiency))
    if family is not None and family.attention_shares(params.attention_kernel) is None:
        raise WorkloadError(why_refused(params, hardware, family))


def shares(params: WorkloadParams, model: ModelSpec, hardware: Hardware, e: Efficiency,
           ops: Iterable[op.Op]) -> tuple[float, float]:
    """The shares of the matrix peak fused attention reaches, forward and backward, with the
    kernel ``params`` asks for where it applies (``asked``) and the factors ``e``; the default's
    elsewhere (a naive kernel's products are costed at it too)."""
    kernel = params.attention_kernel if asked(params, model, ops) else DEFAULT
    found = e.attention_shares(kernel)
    if found is None:  # (``check`` refuses it when the analysis is built)
        raise WorkloadError(why_refused(params, hardware, e))
    return found


def words(params: WorkloadParams, model: ModelSpec, ops: Iterable[op.Op]) -> str:
    """" with FlashAttention 3" where a kernel other than the default is costed, else ""."""
    return f" with {ATTENTION_KERNELS[params.attention_kernel].label}" if asked(params, model, ops) else ""
