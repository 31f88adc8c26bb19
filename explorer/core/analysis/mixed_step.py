"""One step of continuous batching with chunked prefill: every active sequence decodes a
token and a chunk of prompt tokens is prefilled in the same step, as vLLM, SGLang and
TensorRT-LLM schedule them (a budget of tokens a step). The two share the step's weight
reads: each op that reads weights runs over the decode rows and the chunk's rows together
and reads its weights once, so a chunk rides on a memory-bound decode step almost free;
attention stays each sequence's own (the decodes over their caches, the chunk over its
cached prefix and itself).

The step is costed from the two analyses, op by op (same name: same op): FLOPs and bytes
add, the weights counted once; the bound is each op's max(FLOPs / peak, bytes /
bandwidth). The expected time (where the device's family has published efficiency) gives a
product of weights its efficiency at the rows of both (``expected.product_parts``: its
arithmetic and its reading) and one launch, and every other op the two parts' expected work
under one launch; then the terms fitted to whole runs as for any step (``engine_terms``: each
op's classes' factors, a product's reading by the weight-bound one, the engine's
costs a kernel, a collective, a step and a request, the chunk's request counted). An op only
one part has (latent attention's absorbed decode projections) keeps its own time. A
communication op is costed as the two parts' together (its latency counted twice: an upper
bound)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.engine_terms import apply, host_s, launch_s, read_terms, scaled_work
from explorer.core.analysis.expected import Expected, kernels_for, product_parts, products_peak
from explorer.core.analysis.terms import once_per_step, step_total
from explorer.core.hardware.hardware import Hardware
from explorer.core.model import ops as op
from explorer.core.model import training
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec
from explorer.core.model.quantization import value_bytes
from explorer.core.model.workload import WorkloadParams


@dataclass(frozen=True)
class MixedStep:
    bound_s: float  # the roofline bound of the step
    time_s: float  # expected where the device's family has published efficiency, else the bound
    time_source: str  # "expected" or "bound"
    decode: Analysis
    chunk: Analysis


def mixed_step(model: ModelSpec, params: WorkloadParams, hardware: Hardware, batch: int, context: int,
               chunk: int, prefix: int = 0) -> MixedStep:
    """The step decoding ``batch`` sequences at ``context`` and prefilling ``chunk`` prompt
    tokens after ``prefix`` cached ones, with ``params``' layout and precisions."""
    decode = analyze(model, replace(params, phase=Phase.DECODE, batch=batch, context=context), hardware)
    part = analyze(model, replace(params, phase=Phase.PREFILL, batch=1, seq=chunk, prefix=prefix), hardware)
    chunk_at = {o.name: i for i, o in enumerate(part.ops)}
    matched = [(i, chunk_at.get(o.name)) for i, o in enumerate(decode.ops)]
    bandwidth = decode.roofs.bandwidth_bytes_per_s
    bound = np.array([_bound(decode, part, i, j, bandwidth) for i, j in matched])
    once = once_per_step(decode.ops)
    factor = training.pipeline_factor(decode.params, decode.params.split, batch)
    alone = [j for j, o in enumerate(part.ops) if o.name not in {x.name for x in decode.ops}]
    bound_s = float(step_total(decode.counts, bound, once, factor)) + _alone(part, alone, part.time_s)
    e_decode, e_part = kernels_for(decode), kernels_for(part)
    if e_decode is None or e_part is None:
        return MixedStep(bound_s, bound_s, "bound", decode, part)
    terms = read_terms().of(hardware.kind)
    fit = terms.engine(params.engine)
    kernel_s = e_decode.efficiency.value("kernel_us") * 1e-6
    op_s, reading = np.array([_expected(decode, part, e_decode, e_part, i, j)
                              for i, j in matched]).reshape(-1, 2).T
    op_s = scaled_work(decode, op_s - kernel_s, reading, terms) + kernel_s + launch_s(decode, fit)
    work_alone = _alone(part, alone, apply(part, e_part, read_terms(), params.engine).op_time_s)
    expected_s = float(step_total(decode.counts, op_s, once, factor)) + work_alone + \
        e_decode.efficiency.value("step_ms") * 1e-3 + host_s(fit, Phase.DECODE, decode.params.local_batch + 1,
                                                             decode.params.tp * decode.params.pp)
    return MixedStep(bound_s, expected_s, "expected", decode, part)


def _alone(part: Analysis, indices: list[int], times: NDArray[np.float64]) -> float:
    return float(sum(float(times[j]) * part.ops[j].count for j in indices))


def _shares_weights(decode: Analysis, i: int, j: int | None) -> bool:
    o = decode.ops[i]
    return j is not None and o.unit != op.LINK and float(o.weight_bytes) > 0


def _work(decode: Analysis, part: Analysis, i: int, j: int) -> tuple[float, float, float]:
    """(FLOPs, bytes, arithmetic seconds) of op ``i`` over both parts, weights read once (a
    mixture of experts' parts touch different experts: the larger set is read, a lower
    bound on their union)."""
    flops = float(decode.flops[i]) + float(part.flops[j])
    shared = min(float(decode.ops[i].weight_bytes), float(part.ops[j].weight_bytes))
    moved = float(decode.bytes[i]) + float(part.bytes[j]) - shared
    arithmetic = float(decode.flops[i]) / float(decode.peaks[i]) + float(part.flops[j]) / float(part.peaks[j])
    return flops, moved, arithmetic


def _bound(decode: Analysis, part: Analysis, i: int, j: int | None, bandwidth: float) -> float:
    if j is None:
        return float(decode.time_s[i])
    if not _shares_weights(decode, i, j):
        return float(decode.time_s[i]) + float(part.time_s[j])
    _, moved, arithmetic = _work(decode, part, i, j)
    return max(arithmetic, moved / bandwidth)


def _expected(decode: Analysis, part: Analysis, e_decode: Expected, e_part: Expected, i: int,
              j: int | None) -> tuple[float, float]:
    """Seconds of one occurrence of op ``i`` in the mixed step (its one launch included), and
    of them those reading a product's bytes (``Expected.reading_s``)."""
    kernel_s = e_decode.efficiency.value("kernel_us") * 1e-6
    read_decode = e_decode.reading_s if e_decode.reading_s is not None else np.zeros(len(decode.ops))
    if j is None:
        return float(e_decode.op_time_s[i]), float(read_decode[i])
    o = decode.ops[i]
    if not _shares_weights(decode, i, j) or o.unit != op.MATRIX:
        read_part = e_part.reading_s if e_part.reading_s is not None else np.zeros(len(part.ops))
        return (float(e_decode.op_time_s[i]) + float(e_part.op_time_s[j]) - kernel_s,
                float(read_decode[i]) + float(read_part[j]))
    flops, moved, _ = _work(decode, part, i, j)
    matrix = products_peak(decode)  # on a CPU, the unit its engine's kernels use
    weights = max(float(o.weight_bytes), float(part.ops[j].weight_bytes)) / value_bytes(decode.model,
                                                                                          decode.params, o)
    rows = flops / (2 * weights)
    vector = float(o.vector_flops) + float(part.ops[j].vector_flops)
    bandwidth = decode.roofs.bandwidth_bytes_per_s
    arithmetic, reading = product_parts(e_decode.efficiency, flops - vector, moved, rows, float(o.depth),
                                        matrix.flops_per_s, bandwidth, matrix.precision)
    return arithmetic + reading + vector / decode.roofs.vector.flops_per_s + kernel_s, reading
