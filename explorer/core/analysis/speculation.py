"""Speculative decoding: the tokens a target step yields, the speed-up, and the time per
output token with a draft model.

Speculative decoding (Leviathan et al. 2023, "Fast Inference from Transformers via
Speculative Decoding", eq. 1 and Theorem 3.8): a draft of γ tokens, each accepted with
probability α, gives (1 − α^(γ+1)) / (1 − α) tokens per target step; a draft step costing c
of a target step makes that a speed-up of the tokens ÷ (γ·c + 1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from explorer.core.analysis.serving_request import step_s
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.workload import WorkloadError, WorkloadParams


def tokens_per_target_step(acceptance: float, draft: int) -> float:
    """Expected tokens a speculative step yields: (1 − α^(γ+1)) / (1 − α) (γ + 1 at α = 1)."""
    if not 0 <= acceptance <= 1 or draft < 0:
        raise ValueError("the acceptance rate is a share from 0 to 1 and the draft length at least 0")
    if acceptance == 1:
        return float(draft + 1)
    return (1 - acceptance ** (draft + 1)) / (1 - acceptance)


def speculative_speedup(acceptance: float, draft: int, cost: float) -> float:
    """Speed-up of speculative decoding: tokens per target step ÷ (γ·c + 1), ``cost`` c the
    draft model's step over the target's."""
    if cost < 0:
        raise ValueError("a draft step's cost is at least 0 of the target's")
    return tokens_per_target_step(acceptance, draft) / (draft * cost + 1)


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding: ``draft`` proposes ``tokens`` (γ) a step, each accepted with
    probability ``acceptance`` (α); the target checks them in one step."""

    draft: ModelSpec
    tokens: int
    acceptance: float

    def __post_init__(self) -> None:
        if not 0 <= self.acceptance < 1:
            raise WorkloadError(f"the acceptance rate is a share from 0 to below 1, got {self.acceptance}")
        if not 1 <= self.tokens <= 64:
            raise WorkloadError(f"a draft proposes 1 to 64 tokens a step, got {self.tokens}")


def speculative_tpot(model: ModelSpec, decode: WorkloadParams, hardware: Hardware, batch: int,
                     speculation: Speculation) -> float:
    """Time per output token with speculation: γ draft steps and one target step checking
    γ + 1 tokens a sequence, over the tokens a step yields. At a small batch the check reads
    the weights once, as a decode step does (why speculation helps a memory-bound decode);
    at a large one its arithmetic grows γ + 1 times."""
    draft = step_s(speculation.draft, replace(decode, batch=batch), hardware)[0]
    check = step_s(model, replace(decode, batch=batch * (speculation.tokens + 1)), hardware)[0]
    return (speculation.tokens * draft + check) / tokens_per_target_step(speculation.acceptance,
                                                                         speculation.tokens)

