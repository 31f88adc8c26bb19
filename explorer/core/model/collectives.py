"""How long an all-reduce takes, by algorithm and message size, and which algorithm runs.

Every algorithm costs latency + bytes one device sends / the rate it sends at (α–β):
- NCCL's ring and tree, each with its three protocols (LL, LL128, Simple), and NVLS (NVLink
  SHARP: the switch adds the buffers), with NCCL's own cost model (src/graph/tuning.cc at
  b6475625, ``NCCL_TUNING``): a base latency per algorithm and protocol, a latency per
  transfer step by the kind of link (NVLink, PCI, network), and the share of the link's
  rate a protocol reaches (LL ¼, capped at NCCL's 87.7 GB/s; LL128 0.92; a tree 0.92 of
  it, LL /3.8, LL128 7/9 within a node). A ring sends 2(n−1)/n × the message in 2(n−1)
  steps, a tree 2 × the message up and down in 2(n−1) steps within a node, NVLS 6/5 × the
  message (NCCL's bus-to-algorithm ratio 5/6) with one latency. The link's catalogued step
  latency is NCCL's ring/LL one; the other protocols' come from the same table.
- The custom all-reduce of serving engines on NVLink (vLLM, SGLang, TensorRT-LLM): one-shot,
  every device reads the n−1 others' buffers and adds them ((n−1) × the message), and
  two-shot, a reduce-scatter and an all-gather through peer memory (2(n−1)/n × the
  message). Their latency is their barriers, each a flag one device writes and its peers
  see over the link: two for one-shot, three for two-shot (vLLM's cross_device_reduce_1stage
  and _2stage), at the link's step latency. SGLang measured the small-message kernel, launch
  included, at 3.7–5.9 µs on H100 at TP 2–8 (sgl-project/sglang#2904); the bound here is the
  barriers' 1.2–1.8 µs and the expected time adds the launch.

``auto`` picks as the software does: at inference over a node link, the engines' custom
all-reduce up to 8 MiB on 2, 4, 6 or 8 devices (vLLM: one-shot on 2 devices, below 512 KiB
on up to 4 and below 256 KiB on up to 8, else two-shot), else NCCL; in training NCCL.
``nccl`` picks what NCCL's cost model finds fastest (it picks so itself).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from explorer.core.hardware.hardware import Link, Tier
from explorer.core.model.ops import Size

ALGORITHMS = ("auto", "nccl", "ring", "tree", "oneshot", "twoshot", "nvls")
PROTOCOLS = ("LL", "LL128", "Simple")
NCCL_TUNING = ("https://github.com/NVIDIA/nccl/blob/b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2/"
               "src/graph/tuning.cc")
CUSTOM_SOURCE = "https://github.com/vllm-project/vllm/blob/v0.6.3.post1/csrc/custom_all_reduce.cuh"
# baseLat[algorithm][protocol], µs
BASE_US = {"ring": {"LL": 6.6, "LL128": 14.0, "Simple": 8.4},
           "tree": {"LL": 6.8, "LL128": 14.0, "Simple": 0.0},
           "nvls": {"Simple": 0.0}}
# hwLat[link kind][algorithm][protocol], µs per step (NVLS: once)
STEP_US: dict[str, dict[str, dict[str, float]]] = {
    "nvlink": {"ring": {"LL": 0.6, "LL128": 1.9, "Simple": 3.4},
               "tree": {"LL": 0.6, "LL128": 1.25, "Simple": 28}, "nvls": {"Simple": 23}},
    "pci": {"ring": {"LL": 1.0, "LL128": 2.5, "Simple": 5.7},
            "tree": {"LL": 1.0, "LL128": 1.9, "Simple": 28}},
    "net": {"ring": {"LL": 2.7, "LL128": 4.0, "Simple": 14.0},
            "tree": {"LL": 5.0, "LL128": 8.5, "Simple": 28}},
}
LL_MAX_BYTES_PER_S = 87.7e9  # llMaxBws for Ampere and Hopper, one node
RATE_SHARE = {"ring": {"LL": 0.25, "LL128": 0.92, "Simple": 1.0},
              "tree": {"LL": 0.92 / 3.8, "LL128": 0.92 * 7 / 9, "Simple": 0.92}}
KIND = {Tier.NODE: "nvlink", Tier.HOST: "pci", Tier.NETWORK: "net"}
CUSTOM_MAX_BYTES = 8 << 20  # vLLM's custom all-reduce buffer (max_size 8 MiB)
CUSTOM_DEVICES = (2, 4, 6, 8)


@dataclass(frozen=True)
class Choice:
    """An algorithm (and NCCL protocol) for one all-reduce: what it sends and its latency."""

    algorithm: str  # ring, tree, nvls, oneshot, twoshot
    protocol: str  # LL, LL128, Simple; "" for the custom ones
    bytes_sent: float  # by one device
    latency_s: float
    rate_share: float  # of the link's per-direction rate
    steps: int = 1  # transfers one after another: a ring's or tree's 2(n−1), one-shot 1, two-shot 2

    @property
    def label(self) -> str:
        return f"{self.algorithm}/{self.protocol}" if self.protocol else self.algorithm

    def seconds(self, link: Link, scale: Size = 1.0) -> Size:
        """The all-reduce's time; ``scale`` multiplies the message (per batch, for sweeps)."""
        rate = link.per_direction_bytes_per_s * self.rate_share
        if self.protocol == "LL":
            rate = min(rate, LL_MAX_BYTES_PER_S)
        return self.latency_s + self.bytes_sent * scale / rate


def options(link: Link, devices: int, message: float) -> dict[str, list[Choice]]:
    """Every algorithm this link can run an all-reduce of ``message`` bytes over
    ``devices`` devices with, by name (NCCL's with each protocol)."""
    n, kind = devices, KIND[link.tier]
    latency = link.latency_s
    if latency is None:  # (the catalogue's reader requires it)
        raise ValueError(f"the link {link.name} has no latency per transfer step")
    ring_bytes = 2 * (n - 1) / n * message
    out: dict[str, list[Choice]] = {"ring": [], "tree": []}
    for protocol in PROTOCOLS:
        step = latency if protocol == "LL" else STEP_US[kind]["ring"][protocol] * 1e-6
        out["ring"].append(Choice("ring", protocol, ring_bytes, BASE_US["ring"][protocol] * 1e-6
                                  + 2 * (n - 1) * step, RATE_SHARE["ring"][protocol], 2 * (n - 1)))
        out["tree"].append(Choice("tree", protocol, 2 * message, (BASE_US["tree"][protocol]
                                  + 2 * (n - 1) * STEP_US[kind]["tree"][protocol]) * 1e-6,
                                  RATE_SHARE["tree"][protocol], 2 * (n - 1)))
    if link.switch_reduction:
        nvls_s = STEP_US["nvlink"]["nvls"]["Simple"] * 1e-6
        out["nvls"] = [Choice("nvls", "Simple", 6 / 5 * message, nvls_s, 1.0)]
    if link.tier == Tier.NODE:
        barrier = latency
        out["oneshot"] = [Choice("oneshot", "", (n - 1) * message, 2 * barrier, 1.0, 1)]
        out["twoshot"] = [Choice("twoshot", "", ring_bytes, 3 * barrier, 1.0, 2)]
    return out


def fastest(link: Link, choices: list[Choice]) -> Choice:
    return min(choices, key=lambda c: c.seconds(link))


def one_shot_below(devices: int) -> float:
    """vLLM's rule: its custom all-reduce runs one-shot on 2 devices, below 512 KiB on up
    to 4 and below 256 KiB on up to 8; two-shot above (up to ``CUSTOM_MAX_BYTES``)."""
    if devices == 2:
        return math.inf
    return 512 << 10 if devices <= 4 else 256 << 10


def _family(link: Link, devices: int, asked: str, training: bool) -> str:
    """The family ``asked`` resolves to before the message is known ("auto": the engines'
    custom all-reduce where it can run, else "nccl")."""
    if asked == "auto" and (training or link.tier != Tier.NODE or devices not in CUSTOM_DEVICES):
        return "nccl"
    return asked


@dataclass(frozen=True)
class Achieved:
    """How far real collectives stay from the cost model (the expected time's factors; the
    bound's default: at the model): the share of the link's rate the engines' custom
    all-reduces reach, and NCCL's (its ring, tree and NVLS) with the time each of its
    collectives costs beyond the model's latency."""

    share: float = 1.0
    nccl_share: float = 1.0
    nccl_extra_s: float = 0.0
    ring_share: float | None = None  # NCCL's ring and tree (None: ``nccl_share``, fitted to its pick)

    def nccl_algorithm_share(self, algorithm: str) -> float:
        """The share of the link's rate NCCL's ``algorithm`` reaches: NVLS at ``nccl_share``
        (fitted to what NCCL picks on a node with NVLink SHARP), the ring and the tree at
        ``ring_share`` where it is given (nccl-tests with NCCL_ALGO=RING measures its own)."""
        if algorithm in ("ring", "tree") and self.ring_share is not None:
            return self.ring_share
        return self.nccl_share


AT_THE_MODEL = Achieved()
NCCL_FAMILY = ("ring", "tree", "nvls")


def all_reduce_seconds(link: Link, devices: int, message: Size, asked: str, training: bool,
                       achieved: Achieved = AT_THE_MODEL) -> Size:
    """``choose(...).seconds(link)`` for a message that may be an array (a batch sweep):
    each element by the algorithm its own size picks, as far from the model as
    ``achieved`` says."""
    message = np.asarray(message, dtype=float)
    every = options(link, devices, 1.0)  # bytes per byte of message; latencies fixed

    def fastest_of(choices: list[Choice], share: float = achieved.share) -> Size:
        return np.min([c.seconds(link, message / share) for c in choices], axis=0)

    def nccl_of(names: tuple[str, ...]) -> Size:
        return np.min([fastest_of(every[name], achieved.nccl_algorithm_share(name))
                       for name in names if name in every], axis=0) + achieved.nccl_extra_s

    nccl = nccl_of(NCCL_FAMILY)
    asked = _family(link, devices, asked, training)
    if asked == "auto":
        custom = np.where(message < one_shot_below(devices), fastest_of(every["oneshot"]),
                          fastest_of(every["twoshot"]))
        return np.where(message <= CUSTOM_MAX_BYTES, custom, nccl)
    if asked == "nccl" or asked not in every:
        return nccl
    if asked in NCCL_FAMILY:
        return nccl_of((asked,))
    return fastest_of(every[asked])


def choose(link: Link, devices: int, message: float, asked: str, training: bool) -> Choice:
    """The all-reduce ``asked`` (one of ``ALGORITHMS``) of ``message`` bytes over ``devices``
    devices on ``link``. An algorithm the link cannot run (NVLS without a reducing switch,
    a custom one off a node link) falls back to NCCL's pick."""
    every = options(link, devices, message)
    nccl = [c for name in NCCL_FAMILY for c in every.get(name, [])]
    asked = _family(link, devices, asked, training)
    if asked == "auto":
        if message > CUSTOM_MAX_BYTES:
            asked = "nccl"
        else:
            asked = "oneshot" if message < one_shot_below(devices) else "twoshot"
    if asked == "nccl" or asked not in every:
        return fastest(link, nccl)
    return fastest(link, every[asked])
