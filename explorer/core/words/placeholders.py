"""Numbers in prose: ``{…}`` placeholders in the "why" paragraphs and scene captions,
filled in from the catalogue (and, in a scene, from the analysis of the step shown).
Each filled placeholder brings the claim behind it, so a test (or ``scenes check``) can
recompute it.

Catalogue, ``{ID/FIELD}``:
  bandwidth, cores, core_label, memory (nominal capacity), usable (what the device reports),
  latency, in-flight (bandwidth × latency), bandwidth@SIZE (min(bandwidth, SIZE / latency)),
  link-TIER (node | network | host: the link's rate per direction),
  peak-PRECISION (fastest unit) or peak-PRECISION-UNIT (vector | matrix),
  lanes-PRECISION (vector lanes of the chip: vector peak ÷ 2 FLOP ÷ clock, derived),
  ridge-PRECISION (that precision's fastest roof over main memory, as the chart draws it)
``{ratio:ID/FIELD:ID/FIELD}``: the first number over the second ("11", "7.4").
``{faster:MODEL:SLOW:FAST}``: decode at batch 1 (bf16, context 1024) on SLOW against FAST:
  "11× faster".
``{energy:ID}``, ``{energy-ratio:ID:ID}``: ``energy_claims`` ("0.9 pJ", "1,444").

The step shown by a scene (its primary device), ``{step/FIELD}``:
  time, bound ("memory-bound"), tokens-per-s, intensity, batch, max-batch (largest batch
  that fits), crossing (first compute-bound batch), memory (what must be resident),
  budget (what the serving engine may use), fits ("fits" | "does not fit"),
  kv-per-token (KV cache per token), vs-previous (against the previous step: "2.0× faster"),
  parameters, active-parameters (a mixture of experts: those one token uses),
  weights-read (weight bytes the step reads), experts-touched ("7.2 of 8" per layer),
  vs-model:ID (the same step of model ID on the same device: "4% faster"); for a step
  spread over devices and training, ``parallel_claims``: devices, weights-per-device,
  communication, communication-share, train-days:TOKENS; for the expected time,
  ``expected_claims``: expected, expected-ratio, kernels, expected-share:CLASS,
  efficiency:FACTOR; for serving a decode step, ``serving_claims``: per-user, per-device,
  cost:PRICE, joules-per-token; at 45 nm circuit energies, ``energy_claims``: energy-memory,
  energy-arithmetic, energy-ratio, energy-per-token, energy-balance; a real run's, ``profile_claims``
``{scaling:BUDGET/FIT/FIELD}``, ``{scaling:BUDGET/days:ID:DEVICES}``: ``parallel_claims``
``{op:NAME/FIELD}``: bound, intensity, crossing, bytes (a communication op's, per device)
``{role:ROLE/FIELD}``: intensity-range ("32–332 FLOP/byte"), intensity-median, share (of time)
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from explorer.core.files.registry import UnknownIdError
from explorer.core.hardware.hardware import Hardware
from explorer.core.hardware.littles_law import NoLatencyError
from explorer.core.model.models import ModelSpec
from explorer.core.model.workload import WorkloadError
from explorer.core.units import UnitError
from explorer.core.words import energy_claims, parallel_claims
from explorer.core.words.catalogue_claims import (
    catalogue_field,
    faster_field,
    littles_law,
    ratio_field,
    ridge_field,
)
from explorer.core.words.claims import Claim, Found, Quantity
from explorer.core.words.placeholder_context import Context
from explorer.core.words.step_claims import op_field, role_field, step_field

PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def _resolve(ctx: Context, placeholder: str) -> tuple[str, Found]:
    if placeholder.startswith("ratio:"):
        return ratio_field(ctx, placeholder.removeprefix("ratio:"))
    if placeholder.startswith("faster:"):
        return faster_field(ctx, placeholder.removeprefix("faster:"))
    if placeholder.startswith("scaling:"):
        return parallel_claims.scaling_field(ctx.catalog, placeholder.removeprefix("scaling:"))
    if placeholder.startswith(tuple(f"{f}:" for f in energy_claims.OperationField)):  # an operation's energy
        return energy_claims.operation_field(placeholder)
    scope, _, field = placeholder.partition("/")
    if scope in ("step",) or scope.startswith(("op:", "role:")):
        if scope == "step":
            return step_field(ctx, field)
        if scope.startswith("op:"):
            return op_field(ctx, scope.removeprefix("op:"), field)
        return role_field(ctx, scope.removeprefix("role:"), field)
    if field.startswith("ridge-"):
        return ridge_field(ctx, placeholder)
    if "/bandwidth@" in placeholder or placeholder.endswith("/in-flight"):
        value, text = catalogue_field(ctx, placeholder)
        ident, _, field = placeholder.partition("/")
        assert value is not None  # (Little's law's fields are numbers)
        return text, Quantity(f"Little's law: {placeholder}", value, text,
                              lambda: littles_law(ctx.catalog[ident], field))
    return catalogue_field(ctx, placeholder)[1], None


def fill_with_claims(text: str, ctx: Context) -> tuple[str, list[Claim]]:
    """``text`` with every placeholder filled in, and the claims behind them (KeyError
    names a placeholder that cannot be filled)."""
    claims: list[Claim] = []

    def resolve(match: re.Match[str]) -> str:
        try:
            value, claim = _resolve(ctx, match.group(1))
        except (NoLatencyError, UnknownIdError, UnitError, WorkloadError, KeyError, ValueError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise KeyError(f"{{{match.group(1)}}}: {message}") from None
        if isinstance(claim, list):
            claims.extend(claim)
        elif claim is not None:
            claims.append(claim)
        return value

    return PLACEHOLDER.sub(resolve, text), claims


def fill(text: str, catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec] | None = None) -> str:
    """``text`` with its catalogue placeholders filled in."""
    return fill_with_claims(text, Context(catalog, models))[0]
