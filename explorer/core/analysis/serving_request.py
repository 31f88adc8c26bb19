"""A serving request's terms: its KV cache in whole pages, its decode step, the prefix it
finds cached, what no layout can serve, and a step's time and price as serving counts them."""

from __future__ import annotations

import math
from dataclasses import replace

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.expected import Expected, expected_for
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.workload import WorkloadError, WorkloadParams

KV_BLOCK = 16  # tokens in a page of the KV cache (vLLM's default block size)
HOUR_S = 3600.0
MAX_TOKENS = 1 << 22  # a request's prompt and output together (the longest context costed)


def cost_per_million_tokens(price_per_device_hour: float, devices: int, tokens_per_s: float) -> float:
    """$ per million tokens at ``tokens_per_s`` over all ``devices``."""
    if tokens_per_s <= 0:
        return math.inf
    return price_per_device_hour * devices / (tokens_per_s * HOUR_S) * 1e6


def paged_context(tokens: int, block: int = KV_BLOCK) -> int:
    """``tokens`` rounded up to whole pages of ``block`` tokens."""
    if block < 1:
        raise ValueError(f"a KV-cache page holds at least 1 token, got {block}")
    return -(-tokens // block) * block


def decode_params(params: WorkloadParams, prompt: int, output: int, block: int = 1) -> WorkloadParams:
    """The decode step of a request at the middle of its output (its context in whole pages
    of ``block`` tokens: the KV cache it holds, not the tokens it attends to)."""
    return replace(params, phase=Phase.DECODE, context=paged_context(prompt + output // 2, block))


def last_step_params(params: WorkloadParams, prompt: int, output: int,
                     block: int = KV_BLOCK) -> WorkloadParams:
    """The decode step of a request's last token: its whole prompt and output in the KV cache,
    in whole pages of ``block`` tokens (what the KV-cache wall is sized with)."""
    return replace(params, phase=Phase.DECODE, context=paged_context(prompt + output, block))


def check_request(model: ModelSpec, prompt: int, output: int) -> None:
    """Refuse what no layout can serve: a model that does not decode, an empty request."""
    if not isinstance(model, TransformerSpec):
        raise WorkloadError(f"{model.name} does not generate tokens: serving plans a language "
                            "model's decoding")
    if prompt < 1 or output < 1:
        raise WorkloadError("a request has at least one prompt token and one output token")
    if prompt + output > MAX_TOKENS:
        raise WorkloadError(f"a request's prompt and output together are at most {MAX_TOKENS:,} tokens, "
                            f"got {prompt + output:,}")


def time_of(a: Analysis) -> tuple[float, str]:
    """A step's time as serving counts it: expected where the device's family has published
    efficiency, else the bound; and which ("expected" or "bound")."""
    e = expected_for(a)
    return (e.time_s, "expected") if e is not None else (a.totals.time_s, "bound")


def step_s(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> tuple[float, str]:
    return time_of(analyze(model, params, hardware))


def step_and_band(model: ModelSpec, params: WorkloadParams,
                  hardware: Hardware) -> tuple[float, tuple[float, float] | None]:
    """A step's time as serving counts it (``time_of``) and its ``Expected.band`` over that
    time, (low, high), to scale a time built from the step (None where the time is the
    bound, or no band is fitted)."""
    a = analyze(model, params, hardware)
    return time_and_band(a, expected_for(a))


def time_and_band(a: Analysis, e: Expected | None) -> tuple[float, tuple[float, float] | None]:
    """``step_and_band`` of an analysis ``a`` and its expected time ``e`` (``expected_for(a)``)."""
    if e is None:
        return a.totals.time_s, None
    share = None if e.band is None or e.time_s <= 0 else (e.band[0] / e.time_s, e.band[1] / e.time_s)
    return e.time_s, share


def cached_prefix(prompt: int, hit: float, block: int = KV_BLOCK) -> int:
    """Prompt tokens prefix caching finds in the cache when a share ``hit`` of each prompt is
    shared: whole pages of ``block`` tokens only (vLLM caches full blocks), and never the
    whole prompt (its last token is computed to give the first output token)."""
    if not 0 <= hit < 1:
        raise WorkloadError(f"the prefix hit rate is a share from 0 to below 1, got {hit}")
    return min(int(prompt * hit) // block * block, (prompt - 1) // block * block)
