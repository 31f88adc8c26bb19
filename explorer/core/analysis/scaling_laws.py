"""Scaling laws: the loss a model of N parameters reaches after D training tokens, and the
split of a compute budget C ≈ 6·N·D (forward and backward passes, 2 + 4 FLOPs per
parameter and token) that minimises it.

The parametric fit of Hoffmann et al. 2022 ("Chinchilla"), L(N, D) = E + A/N^α + B/D^β,
with two sets of constants, each cited: the paper's Approach 3, and the replication by
Besiroglu et al. 2024, who refit data reconstructed from the paper's plots and found the
original constants inconsistent with its other two approaches. Both are fits, valid near the range of models
they were fitted on; "about 20 tokens per parameter" is a rule of thumb, approximate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

FLOPS_PER_PARAMETER_TOKEN = 6  # training: 2 forward + 4 backward (Kaplan et al. 2020)
TOKENS_PER_PARAMETER = 20  # the rule of thumb read off Hoffmann et al.'s results (approximate)
BUDGET_RANGE = (1e18, 1e28)  # the training budgets (FLOPs) the app draws the fits for


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
        loss: float = self.E + self.A / parameters**self.alpha + self.B / tokens**self.beta
        return loss

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
RULE_OF_THUMB = "rule-of-thumb"  # the id ``rule_of_thumb`` goes by beside the fits (in placeholders)


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


def why_they_differ(budget: float, fits: tuple[Fit, ...] = (HOFFMANN, BESIROGLU)) -> str:
    """Why the fits put the optimum for ``budget`` at different sizes, in words computed from
    their constants."""
    first, second = fits
    (n1, d1), (n2, d2) = first.optimal(budget), second.optimal(budget)
    a1, a2 = first.exponents[0], second.exponents[0]
    return (f"Both fits have the form L = E + A/N^α + B/D^β, and the optimum grows as N ∝ C^(β/(α+β)). "
            f"{first.name}: α {first.alpha:g}, β {first.beta:g}, so N ∝ C^{a1:.2f}; {second.name}: "
            f"α {second.alpha:g}, β {second.beta:g} and B {second.B:g} (against {first.B:g}), "
            f"so N ∝ C^{a2:.2f}. "
            f"At {budget:.3g} FLOPs that is {n1 / 1e9:.0f} B parameters on {d1 / 1e12:.2f} T tokens "
            f"({d1 / n1:.0f} per parameter) against {n2 / 1e9:.0f} B on {d2 / 1e12:.2f} T "
            f"({d2 / n2:.0f} per parameter). Besiroglu et al. refitted data reconstructed from the "
            f"paper's plots and found its Approach 3 constants inconsistent with its Approaches 1 and 2 "
            f"(about 20 tokens per parameter). They trace the gap to an optimizer stopped before it "
            f"converged and to constants printed rounded (the paper's TeX source holds unrounded "
            f"ones, which give a larger model); their refit agrees with Approaches 1 and 2.")


@dataclass(frozen=True)
class Placement:
    """Where a model of ``parameters`` sits on a budget's isoFLOP curve under ``fit``."""

    fit: Fit
    budget: float
    parameters: float

    @property
    def tokens(self) -> float:
        """The tokens the budget buys for this model: C / 6N."""
        return self.budget / (FLOPS_PER_PARAMETER_TOKEN * self.parameters)

    @property
    def loss(self) -> float:
        return self.fit.loss(self.parameters, self.tokens)

    @property
    def excess(self) -> float:
        """Its loss above the budget's optimum under the fit."""
        return self.loss - self.fit.loss(*self.fit.optimal(self.budget))
