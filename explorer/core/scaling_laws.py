"""Scaling laws: the loss a model of N parameters reaches after D training tokens, and the
split of a compute budget C ≈ 6·N·D (forward and backward passes, 2 + 4 FLOPs per
parameter and token) that minimises it.

The parametric fit of Hoffmann et al. 2022 ("Chinchilla"), L(N, D) = E + A/N^α + B/D^β,
with two sets of constants, each cited: the paper's Approach 3, and the replication by
Besiroglu et al. 2024, who refit the paper's own data and found the original constants
inconsistent with its other two approaches. Both are fits, valid near the range of models
they were fitted on; "about 20 tokens per parameter" is a rule of thumb, approximate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

FLOPS_PER_PARAMETER_TOKEN = 6  # training: 2 forward + 4 backward (Kaplan et al. 2020)
TOKENS_PER_PARAMETER = 20  # the rule of thumb read off Hoffmann et al.'s results (approximate)


@dataclass(frozen=True)
class Fit:
    """L(N, D) = E + A / N^alpha + B / D^beta."""

    id: str
    name: str
    source: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float

    def loss(self, parameters: float, tokens: float) -> float:
        return self.E + self.A / parameters**self.alpha + self.B / tokens**self.beta

    @property
    def exponents(self) -> tuple[float, float]:
        """(a, b): N_opt ∝ C^a and D_opt ∝ C^b along the compute-optimal frontier."""
        total = self.alpha + self.beta
        return self.beta / total, self.alpha / total

    def optimal(self, budget: float) -> tuple[float, float]:
        """(N_opt, D_opt) minimising L under 6·N·D = ``budget`` (Hoffmann et al., eq. 4):
        N_opt = G (C/6)^a, D_opt = (C/6)^b / G, G = (αA / βB)^(1/(α+β))."""
        if not budget > 0:
            raise ValueError(f"a compute budget must be a positive number of FLOPs, got {budget!r}")
        a, b = self.exponents
        g = (self.alpha * self.A / (self.beta * self.B)) ** (1 / (self.alpha + self.beta))
        product = budget / FLOPS_PER_PARAMETER_TOKEN
        return g * product**a, product**b / g


HOFFMANN = Fit("hoffmann-2022", "Hoffmann et al. 2022, Approach 3", "https://arxiv.org/abs/2203.15556",
               E=1.69, A=406.4, B=410.7, alpha=0.34, beta=0.28)
BESIROGLU = Fit("besiroglu-2024", "Besiroglu et al. 2024, replication", "https://arxiv.org/abs/2404.10102",
                E=1.8172, A=482.01, B=2085.43, alpha=0.3478, beta=0.3658)
FITS = {fit.id: fit for fit in (HOFFMANN, BESIROGLU)}


def rule_of_thumb(budget: float) -> tuple[float, float]:
    """(N, D) with D = 20 N and 6·N·D = ``budget``: approximate, not a fit."""
    parameters = math.sqrt(budget / (FLOPS_PER_PARAMETER_TOKEN * TOKENS_PER_PARAMETER))
    return parameters, TOKENS_PER_PARAMETER * parameters


def isoflop(fit: Fit, budget: float, parameters: list[float]) -> list[tuple[float, float, float]]:
    """(N, D, loss) for each N at a fixed budget (D = C / 6N): the isoFLOP curve."""
    return [(n, budget / (FLOPS_PER_PARAMETER_TOKEN * n),
             fit.loss(n, budget / (FLOPS_PER_PARAMETER_TOKEN * n))) for n in parameters]


def training_seconds(budget: float, devices: int, peak_flops_per_s: float, mfu: float) -> float:
    """Wall-clock seconds to spend ``budget`` FLOPs on ``devices`` devices running at the
    model-FLOPs utilisation ``mfu`` (the share of their peak the training achieves)."""
    if devices < 1 or not 0 < mfu <= 1 or peak_flops_per_s <= 0:
        raise ValueError("devices must be at least 1, the peak positive and the utilisation in (0, 1]")
    return budget / (devices * peak_flops_per_s * mfu)
