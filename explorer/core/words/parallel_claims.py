"""Placeholders for steps spread over devices and for training budgets, each with the claim
a test (or ``scenes check``) recomputes by its own route.

``{step/FIELD}`` of a scene step:
  devices (how many), weights-per-device, communication (the step's time in communication
  ops), communication-share (of the step's time), train-days:TOKENS (days to train on
  TOKENS tokens at the roofline's step time; phase train)
``{scaling:BUDGET/FIT/FIELD}``: the compute-optimal model for BUDGET FLOPs under FIT
  (hoffmann-2022 | besiroglu-2024 | rule-of-thumb): n-opt, d-opt, tokens-per-parameter
``{scaling:BUDGET/days:ID:DEVICES}``: days to spend BUDGET on DEVICES of device ID at the
  stated default utilisation (40 %)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from explorer.core.analysis.scaling_laws import (
    FITS,
    FLOPS_PER_PARAMETER_TOKEN,
    RULE_OF_THUMB,
    Fit,
    rule_of_thumb,
    training_seconds,
)
from explorer.core.analysis.terms import op_roofs
from explorer.core.hardware.hardware import Hardware
from explorer.core.model import collective_costs, training
from explorer.core.model.applicability import Phase
from explorer.core.model.quantization import bytes_of_class, parameter_classes
from explorer.core.units import format_bytes, format_number, format_parameters, format_share, format_time
from explorer.core.words.claims import Quantity, State

STEP_FIELDS = ("devices", "weights-per-device", "communication", "communication-share")


def step_field(state: State, field: str) -> tuple[str, Quantity | None]:
    """A ``{step/FIELD}`` this module knows (KeyError otherwise)."""
    a = state.analysis()
    t = a.totals
    if field == "devices":
        return f"{t.devices:,}", None
    if field == "weights-per-device":
        split = state.params.split
        sharing = split.tp * split.pp * (split.ep if split.ep > 1 else 1)

        def about() -> float:  # every weight split evenly: norms are copied, stages differ by a layer
            m, p = state.model, state.params  # each class at its bytes (a quantized checkpoint's)
            return math.fsum(n * bytes_of_class(m, p, c) for c, n in parameter_classes(m).items()) / sharing

        return format_bytes(t.weight_bytes), Quantity("weights per device", t.weight_bytes,
                                                      format_bytes(t.weight_bytes), about, rel=0.03)
    if field in ("communication", "communication-share"):
        if not t.link_bytes:
            raise KeyError("the step does not communicate: it runs on one device")
        share = t.link_time_s / t.time_s
        if field == "communication":
            return format_time(t.link_time_s), Quantity("communication time", t.link_time_s,
                                                         format_time(t.link_time_s),
                                                         lambda: communication_seconds(state), rel=1e-9)
        def recomputed_share() -> float:
            return communication_seconds(state) / state.analysis().totals.time_s

        return format_share(share), Quantity("communication share", share, format_share(share),
                                             recomputed_share, rel=1e-9)
    if field.startswith("train-days:"):
        tokens = float(field.removeprefix("train-days:"))
        if state.params.phase != Phase.TRAIN:
            raise KeyError("train-days needs a training step (phase train)")
        days = training.run(a, tokens).seconds(at_mfu=False) / 86400
        p = state.params
        return (f"{format_number(days)} days",
                Quantity("days to train", days, f"{format_number(days)} days",
                         lambda: tokens / (p.batch * p.seq) * state.analysis().totals.time_s / 86400))
    raise KeyError(f"unknown field {field!r}")


def communication_seconds(state: State, latency_only: bool = False) -> float:
    """The communication ops' time (``latency_only``: its latency part), from the catalogue's
    links: NCCL's base latency, each transfer step's latency, the bytes at the per-direction
    rate."""
    a, p = state.analysis(), state.params
    factor = training.pipeline_factor(p, p.split, p.batch, a.model)  # once-per-step ops run once
    total = 0.0
    for o, link in zip(a.ops, a.links, strict=True):
        if link is None:
            continue
        each = float(collective_costs.op_link_seconds(link, o, 0.0 if latency_only else float(o.bytes),
                                              p.phase == Phase.TRAIN))
        total += o.count * each * (1.0 if o.once_per_step else factor)
    return total


def scaling_field(catalog: Mapping[str, Hardware], text: str) -> tuple[str, Quantity]:
    """``{scaling:BUDGET/…}`` (see the module's docstring)."""
    budget_text, _, rest = text.partition("/")
    budget = float(budget_text)
    kind, _, field = rest.partition("/")
    if kind.startswith("days:"):
        ident, _, devices_text = kind.removeprefix("days:").partition(":")
        hw, devices = catalog[ident], int(devices_text)
        peak = op_roofs(hw, "bf16").matrix.flops_per_s
        days = training_seconds(budget, devices, peak, training.DEFAULT_MFU) / 86400
        words = f"{format_number(days)} days"
        return words, Quantity(f"days for {budget:.3g} FLOPs", days, words,
                               lambda: budget / (devices * peak * training.DEFAULT_MFU) / 86400)
    if kind == RULE_OF_THUMB:
        n, d = rule_of_thumb(budget)
        exact = (lambda: math.sqrt(budget / 120), lambda: 20 * math.sqrt(budget / 120))
    else:
        fit = FITS[kind]
        n, d = fit.optimal(budget)
        searched = _search(fit, budget)
        exact = (lambda: searched, lambda: budget / (FLOPS_PER_PARAMETER_TOKEN * searched))
    if field == "n-opt":
        return format_parameters(n), Quantity(f"{kind} N_opt", n, format_parameters(n), exact[0], rel=1e-4)
    if field == "d-opt":
        return format_parameters(d), Quantity(f"{kind} D_opt", d, format_parameters(d), exact[1], rel=1e-4)
    if field == "tokens-per-parameter":
        words = format_number(d / n)
        return words, Quantity(f"{kind} tokens per parameter", d / n, words,
                               lambda: exact[1]() / exact[0](), rel=1e-4)
    raise KeyError(f"unknown field {field!r}")


def _search(fit: Fit, budget: float) -> float:
    """The N minimising the fit's loss along the isoFLOP curve, by narrowing a grid (the
    check's own route, not the closed form)."""
    low, high = 1e6, 1e15
    for _ in range(8):
        sizes = np.geomspace(low, high, 201)
        losses = [fit.loss(n, budget / (FLOPS_PER_PARAMETER_TOKEN * n)) for n in sizes]
        best = int(np.argmin(losses))
        low, high = sizes[max(best - 1, 0)], sizes[min(best + 1, len(sizes) - 1)]
    return float(math.sqrt(low * high))
