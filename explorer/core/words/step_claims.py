"""The placeholders a scene step fills from its own analysis: ``{step/FIELD}`` (beside the
modules of ``step_fields``), ``{op:NAME/FIELD}`` and ``{role:ROLE/FIELD}``
(``placeholders`` lists every field)."""

from __future__ import annotations

import math
from statistics import median

import numpy as np
from numpy.typing import NDArray

from explorer.core.analysis.batching import crossing_batch
from explorer.core.analysis.roofline import BoundKind
from explorer.core.model.models import TransformerSpec
from explorer.core.model.ops import Op, Role
from explorer.core.model.quantization import (
    EMBEDDING,
    EXPERTS,
    bytes_of_class,
    parameter_classes,
    value_bytes,
)
from explorer.core.units import format_bytes, format_number, format_parameters, format_share
from explorer.core.words import parallel_claims
from explorer.core.words.batch_claims import Crossing, MaxBatch
from explorer.core.words.claims import (
    Bound,
    Claim,
    Fits,
    Found,
    Quantity,
    State,
    faster,
    step_time,
    throughput,
)
from explorer.core.words.placeholder_context import Context
from explorer.core.words.step_fields import STEP_MODULES


def _intensities(state: State, role: str) -> NDArray[np.float64]:
    a = state.analysis()
    values = np.array([float(i) for o, i in zip(a.ops, a.intensity, strict=True) if o.role == role])
    if values.size == 0:
        raise KeyError(f"{a.model.name} has no {role} ops")
    return values


def step_field(ctx: Context, field: str) -> tuple[str, Found]:
    state = ctx.step
    t = state.analysis().totals
    claim: Claim
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
        if not isinstance(model, TransformerSpec) or not model.moe:
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


def _transformer(state: State) -> TransformerSpec:
    """The step's model, which the field asks to be a transformer (KeyError else)."""
    if not isinstance(state.model, TransformerSpec):
        raise KeyError(f"{state.model.name} is not a transformer")
    return state.model


def _touched(state: State) -> float:
    """Distinct experts a step's tokens touch per layer, from the routing assumption alone:
    E·(1 − (1 − k/E)^n) uniformly, E at worst."""
    m, p = _transformer(state), state.params
    if p.routing == "all":
        return float(m.experts)
    tokens = p.batch * p.query_tokens
    return m.experts * (1 - (1 - m.experts_per_token / m.experts) ** tokens)


def _touched_in_analysis(state: State) -> float:
    """The same, as the analysis reads them: the routed experts' weight bytes over one expert's."""
    m, p = _transformer(state), state.params
    [up] = [o for o in state.analysis().ops if o.name == "expert_up"]
    return float(up.weight_bytes) / (2 * m.d_model * m.expert_width * value_bytes(m, p, up))


def weights_read(state: State) -> float:
    """Weight bytes a step reads, from the parameter counts by class, each class at the bytes
    a weight of it takes (a quantized checkpoint's as its file stores them): every weight
    once, except, in a transformer, the embedding table (only the rows of the step's tokens;
    a tied table is read in full once more as the LM head) and the routed experts no token
    touches."""
    m, p = state.model, state.params
    counts: dict[str, float] = dict(parameter_classes(m))
    if isinstance(m, TransformerSpec):
        n = p.batch * p.query_tokens
        table = m.vocab * m.d_model
        rows = n * m.d_model * (2 if m.positions == "learned" else 1)  # token (and position) rows
        counts[EMBEDDING] = rows + (table if m.tied_embeddings else 0)
        if m.moe:
            per_expert = (3 if m.gated_mlp else 2) * m.d_model * m.expert_width
            routed_layers = sum(1 for i in range(m.layers) if m.moe_layer(i))
            counts[EXPERTS] -= routed_layers * (m.experts - _touched(state)) * per_expert
    return math.fsum(count * bytes_of_class(m, p, name) for name, count in counts.items())


def op_field(ctx: Context, name: str, field: str) -> tuple[str, Found]:
    state = ctx.step
    a = state.analysis()
    index = next((i for i, o in enumerate(a.ops) if o.name == name), None)
    if index is None:
        raise KeyError(f"{a.model.name} has no op {name!r}")
    claim: Claim
    if field == "bound":
        claim = Bound(state, BoundKind(str(a.bounds[index])), name)
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


def _message_bytes(state: State, o: Op) -> float:
    """What a tensor-parallel all-reduce sends, from the ring formula: 2(n−1)/n of the
    step's activations (tokens × d_model × bytes); other ops, their bytes as costed."""
    p = state.params
    if o.role != Role.ALL_REDUCE or p.tp == 1 or o.name == "grad_all_reduce":
        return float(o.bytes)
    m = _transformer(state)  # (only a transformer splits by tensor parallel)
    message = p.local_batch * p.query_tokens * m.d_model * p.act_bytes
    return 2 * (p.tp - 1) / p.tp * message


def role_field(ctx: Context, role: str, field: str) -> tuple[str, Found]:
    state = ctx.step
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
