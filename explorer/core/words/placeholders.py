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
from dataclasses import dataclass
from statistics import median

import numpy as np

from explorer.core.analysis.batching import crossing_batch
from explorer.core.files.registry import UnknownIdError
from explorer.core.hardware.hardware import Hardware, vector_lanes
from explorer.core.hardware.littles_law import (
    NoLatencyError,
    bytes_in_flight_needed,
    effective_bandwidth,
    latency_of,
)
from explorer.core.model.ops import Role
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.units import (
    BYTES,
    UnitError,
    format_bytes,
    format_number,
    format_parameters,
    format_share,
    format_si,
    format_time,
    parse_quantity,
    rate_unit,
)
from explorer.core.words import energy_claims, parallel_claims
from explorer.core.words.batch_claims import Crossing, MaxBatch
from explorer.core.words.claims import (
    Bound,
    Claim,
    Fits,
    Quantity,
    Ridge,
    State,
    faster,
    step_time,
    throughput,
)
from explorer.core.words.step_fields import STEP_MODULES

PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class Context:
    """What placeholders are filled from."""

    catalog: Mapping[str, Hardware]
    models: Mapping | None = None
    state: State | None = None  # a scene step on its primary device
    previous: State | None = None  # the step before it


def _catalogue_value(hw: Hardware, field: str) -> tuple[float | None, str]:
    """(number, text) of one field of a catalogue device."""
    if field == "bandwidth":
        return hw.bandwidth_bytes_per_s, format_si(hw.bandwidth_bytes_per_s, "B/s")
    if field == "cores":
        return hw.specs.cores, f"{hw.specs.cores:,}"
    if field == "core_label":
        return None, hw.specs.core_label
    if field == "memory":
        return hw.memory_capacity_bytes, format_bytes(hw.memory_capacity_bytes)
    if field == "usable":
        return hw.usable_memory_bytes, format_bytes(hw.usable_memory_bytes)
    if field == "latency":
        latency = latency_of(hw)
        return latency, format_time(latency)
    if field.startswith("bandwidth@"):  # Little's law with this much in flight
        in_flight = parse_quantity(field.removeprefix("bandwidth@"), BYTES)
        value = float(effective_bandwidth(hw.bandwidth_bytes_per_s, latency_of(hw), in_flight))
        return value, format_si(value, "B/s")
    if field == "in-flight":  # bytes that must be outstanding to reach the bandwidth
        needed = bytes_in_flight_needed(hw.bandwidth_bytes_per_s, latency_of(hw))
        return needed, format_bytes(needed)
    if field.startswith("link-"):  # a link's rate per direction: link-node, link-network, link-host
        link = hw.link(field.removeprefix("link-"))
        if link is None:
            raise KeyError(f"{hw.name} lists no {field.removeprefix('link-')} link")
        return link.per_direction_bytes_per_s, format_si(link.per_direction_bytes_per_s, "B/s")
    if field.startswith("peak-"):
        precision, _, unit = field.removeprefix("peak-").partition("-")
        peak = hw.peak_flops(precision, unit or None)
        return peak, format_si(peak, rate_unit(precision))
    if field.startswith("lanes-"):
        built = vector_lanes(hw, field.removeprefix("lanes-"))
        if built is None:
            raise KeyError(f"{hw.name}'s lanes cannot be derived from its catalogue entry")
        return built[1], f"{built[1]:,}"
    raise KeyError(f"unknown field {field!r}")


def _catalogue(ctx: Context, reference: str) -> tuple[float | None, str]:
    ident, _, field = reference.partition("/")
    return _catalogue_value(ctx.catalog[ident], field)


def _ridge(ctx: Context, reference: str) -> tuple[str, Claim]:
    ident, _, field = reference.partition("/")
    hw = ctx.catalog[ident]
    peak = hw.peak(field.removeprefix("ridge-"))
    if peak is None:
        raise KeyError(f"{hw.name} has no {field.removeprefix('ridge-')} peak")
    claim = Ridge(hw, peak.label, peak.flops_per_s / hw.bandwidth_bytes_per_s)
    return claim.phrase, claim


def _ratio(ctx: Context, body: str) -> tuple[str, Claim]:
    first, _, second = body.partition(":")
    value = _catalogue(ctx, first)[0] / _catalogue(ctx, second)[0]
    text = f"{value:.0f}" if value >= 9.95 else f"{value:.1f}"
    # Recomputed from the catalogue when checked: a changed entry shows up there.
    return text, Quantity(f"ratio {body}", value, text,
                          lambda: _catalogue(ctx, first)[0] / _catalogue(ctx, second)[0])


def _faster(ctx: Context, body: str) -> tuple[str, Claim]:
    model_id, slow, fast = body.split(":")
    if ctx.models is None:
        raise KeyError("models are not available here")
    model, params = ctx.models[model_id], WorkloadParams()
    claim = faster(State(model, params, ctx.catalog[slow]), State(model, params, ctx.catalog[fast]))
    return claim.phrase, claim


def _intensities(state: State, role: str):
    a = state.analysis()
    values = np.array([float(i) for o, i in zip(a.ops, a.intensity, strict=True) if o.role == role])
    if values.size == 0:
        raise KeyError(f"{a.model.name} has no {role} ops")
    return values


def _step(ctx: Context, field: str) -> tuple[str, Claim | None]:
    state = ctx.state
    t = state.analysis().totals
    if field == "time":
        claim = step_time(state)
    elif field == "bound":
        claim = Bound.of(state)
    elif field == "tokens-per-s":
        claim = throughput(state)
    elif field == "intensity":
        return f"{format_number(t.intensity)} FLOP/byte", Quantity(
            "step intensity", t.intensity, format_number(t.intensity),
            lambda: state.analysis().totals.flops / state.analysis().totals.bytes)
    elif field == "batch":
        return f"{state.params.batch:,}", None
    elif field == "max-batch":
        claim = MaxBatch(state, MaxBatch.largest(state))
    elif field == "crossing":
        claim = Crossing(state, crossing_batch(state.model, state.params, state.hardware))
    elif field == "memory":
        return format_bytes(t.memory_required_bytes), None
    elif field == "budget":
        return format_bytes(t.memory_budget_bytes), None
    elif field == "kv-per-token":
        return _kv_per_token(state)
    elif field in ("parameters", "active-parameters"):
        return format_parameters(state.model.parameter_count(active=field == "active-parameters")), None
    elif field == "weights-read":
        value = float(sum(o.weight_bytes * o.count for o in state.analysis().ops))
        return format_bytes(value), Quantity("weights read per step", value, format_bytes(value),
                                             lambda: weights_read(state), rel=1e-9)
    elif field == "experts-touched":
        model = state.model
        if not getattr(model, "moe", False):
            raise KeyError(f"{model.name} is not a mixture of experts")
        value = _touched_in_analysis(state)
        text = f"{format_number(value)} of {model.experts}"
        return text, Quantity("experts touched per layer", value, text, lambda: _touched(state), rel=1e-9)
    elif field == "fits":
        claim = Fits(state, t.fits_in_memory)
    elif field.startswith("vs-model:"):  # the same step of another model, on the same device
        if ctx.models is None:
            raise KeyError("models are not available here")
        other = State(ctx.models[field.removeprefix("vs-model:")], state.params, state.hardware)
        claim = faster(other, state)
    elif field in parallel_claims.STEP_FIELDS or field.startswith("train-days:"):
        return parallel_claims.step_field(state, field)
    elif (module := next((m for m in STEP_MODULES if m.handles(field)), None)) is not None:
        return module.step_field(state, field)
    elif field == "vs-previous":
        if ctx.previous is None:
            raise KeyError("the first step has no previous step")
        claim = faster(ctx.previous, state)
    else:
        raise KeyError(f"unknown field {field!r}")
    return claim.phrase, claim


def _kv_per_token(state: State) -> tuple[str, Claim]:
    t = state.analysis().totals

    def per_token() -> float:  # windows cap some layers' caches: an average over the context
        p = state.params
        return state.model.kv_cache_values(p.kv_tokens) * p.kv_bytes // p.kv_tokens

    text = format_bytes(t.kv_bytes_per_token)
    return text, Quantity("KV cache per token", t.kv_bytes_per_token, text, per_token)


def _touched(state) -> float:
    """Distinct experts a step's tokens touch per layer, from the routing assumption alone:
    E·(1 − (1 − k/E)^n) uniformly, E at worst."""
    m, p = state.model, state.params
    if p.routing == "all":
        return float(m.experts)
    tokens = p.batch * p.query_tokens
    return m.experts * (1 - (1 - m.experts_per_token / m.experts) ** tokens)


def _touched_in_analysis(state) -> float:
    """The same, as the analysis reads them: the routed experts' weight bytes over one expert's."""
    m, p = state.model, state.params
    [up] = [o for o in state.analysis().ops if o.name == "expert_up"]
    return up.weight_bytes / (2 * m.d_model * m.expert_width * p.weight_bytes)


def weights_read(state) -> float:
    """Weight bytes a transformer step reads, from the parameter count: every weight once,
    except the embedding table (only the rows of the step's tokens; a tied table is read in
    full once more as the LM head) and the routed experts no token touches."""
    m, p = state.model, state.params
    n = p.batch * p.query_tokens
    table = m.vocab * m.d_model
    count = m.parameter_count() - (0 if m.tied_embeddings else table) + n * m.d_model
    if m.positions == "learned":
        count += n * m.d_model - m.max_context * m.d_model
    if getattr(m, "moe", False):
        per_expert = (3 if m.gated_mlp else 2) * m.d_model * m.expert_width
        routed_layers = sum(1 for i in range(m.layers) if m.moe_layer(i))
        count -= routed_layers * (m.experts - _touched(state)) * per_expert
    return count * p.weight_bytes


def _op(ctx: Context, name: str, field: str) -> tuple[str, Claim | None]:
    state = ctx.state
    a = state.analysis()
    index = next((i for i, o in enumerate(a.ops) if o.name == name), None)
    if index is None:
        raise KeyError(f"{a.model.name} has no op {name!r}")
    if field == "bound":
        claim = Bound(state, str(a.bounds[index]), name)
    elif field == "bytes":  # a communication op: what each device sends
        value = float(a.bytes[index])
        o = a.ops[index]
        return format_bytes(value), Quantity(f"{name} bytes", value, format_bytes(value),
                                             lambda: _message_bytes(state, o), rel=1e-9)
    elif field == "intensity":
        value = float(a.intensity[index])
        return f"{format_number(value)} FLOP/byte", Quantity(
            f"{name} intensity", value, format_number(value),
            lambda: float(state.analysis().flops[index] / state.analysis().bytes[index]))
    elif field == "crossing":
        claim = Crossing(state, crossing_batch(state.model, state.params, state.hardware, op=name), name)
    else:
        raise KeyError(f"unknown field {field!r}")
    return claim.phrase, claim


def _message_bytes(state, o) -> float:
    """What a tensor-parallel all-reduce sends, from the ring formula: 2(n−1)/n of the
    step's activations (tokens × d_model × bytes); other ops, their bytes as costed."""
    p, m = state.params, state.model
    if o.role != Role.ALL_REDUCE or p.tp == 1 or o.name == "grad_all_reduce":
        return float(o.bytes)
    message = p.local_batch * p.query_tokens * m.d_model * p.act_bytes
    return 2 * (p.tp - 1) / p.tp * message


def _role(ctx: Context, role: str, field: str) -> tuple[str, Claim | None]:
    state = ctx.state
    values = _intensities(state, role)
    if field == "intensity-range":
        low, high = float(values.min()), float(values.max())
        text = f"{format_number(low)}–{format_number(high)} FLOP/byte"
        return text, [Quantity(f"lowest {role} intensity", low, format_number(low),
                               lambda: float(_intensities(state, role).min())),
                      Quantity(f"highest {role} intensity", high, format_number(high),
                               lambda: float(_intensities(state, role).max()))]
    if field == "share":
        def share() -> float:
            a = state.analysis()
            return float(sum(s for o, s in zip(a.ops, a.time_share, strict=True) if o.role == role))

        value = share()
        return format_share(value), Quantity(f"{role} share of the step", value, format_share(value), share)
    if field == "intensity-median":  # (statistics, not NumPy: np.median imports numpy.ma, 40 ms)
        value = float(median(values))
        return f"{format_number(value)} FLOP/byte", Quantity(
            f"median {role} intensity", value, format_number(value),
            lambda: float(median(_intensities(state, role))))
    raise KeyError(f"unknown field {field!r}")


def _resolve(ctx: Context, placeholder: str) -> tuple[str, Claim | None]:
    if placeholder.startswith("ratio:"):
        return _ratio(ctx, placeholder.removeprefix("ratio:"))
    if placeholder.startswith("faster:"):
        return _faster(ctx, placeholder.removeprefix("faster:"))
    if placeholder.startswith("scaling:"):
        return parallel_claims.scaling_field(ctx.catalog, placeholder.removeprefix("scaling:"))
    if placeholder.startswith(("energy:", "energy-ratio:")):  # an operation's energy
        return energy_claims.operation_field(placeholder)
    scope, _, field = placeholder.partition("/")
    if scope in ("step",) or scope.startswith(("op:", "role:")):
        if ctx.state is None:
            raise KeyError("only a scene step has a state to read")
        if scope == "step":
            return _step(ctx, field)
        if scope.startswith("op:"):
            return _op(ctx, scope.removeprefix("op:"), field)
        return _role(ctx, scope.removeprefix("role:"), field)
    if field.startswith("ridge-"):
        return _ridge(ctx, placeholder)
    if "/bandwidth@" in placeholder or placeholder.endswith("/in-flight"):
        value, text = _catalogue(ctx, placeholder)
        ident, _, field = placeholder.partition("/")
        return text, Quantity(f"Little's law: {placeholder}", value, text,
                              lambda: _littles_law(ctx.catalog[ident], field))
    return _catalogue(ctx, placeholder)[1], None


def _littles_law(hw: Hardware, field: str) -> float:
    """Bandwidth with SIZE in flight, or the bytes in flight for the peak, from the
    catalogue's bandwidth and measured latency (the check's own route)."""
    memory = hw.main_memory
    if field == "in-flight":
        return memory.bandwidth_bytes_per_s * memory.latency_s
    in_flight = parse_quantity(field.removeprefix("bandwidth@"), BYTES)
    return min(memory.bandwidth_bytes_per_s, in_flight / memory.latency_s)


def fill_with_claims(text: str, ctx: Context) -> tuple[str, list[Claim]]:
    """``text`` with every placeholder filled in, and the claims behind them (KeyError
    names a placeholder that cannot be filled)."""
    claims: list[Claim] = []

    def resolve(match: re.Match) -> str:
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


def fill(text: str, catalog: Mapping[str, Hardware], models=None) -> str:
    """``text`` with its catalogue placeholders filled in."""
    return fill_with_claims(text, Context(catalog, models))[0]
