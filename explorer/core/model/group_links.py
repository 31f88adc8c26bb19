"""Which link each communication op crosses on a device, by the group it joins.

TP groups use the node link (NVLink, Infinity Fabric; a server without one: PCIe); so do
EP groups while the TP × EP devices fit in one node. An EP group that spans nodes (tp × ep
over a whole number of nodes, each holding node size / tp of one TP rank's EP group) sends
over the network the part of its all-to-all bound for other nodes, at the network link's
rate per device (InfiniBand NDR: 50 GB/s a direction), while the part that stays in the
node goes over the node link at once, faster (NVLink 450 GB/s), so the network sets the
time: its own roof. Two ways of crossing (``WorkloadParams.dispatch``):
- flat, as NCCL's all-to-all (Megatron-LM's alltoall dispatcher) and DeepSeek-V3's decode
  ("All-to-all communication of the dispatch and combine parts is performed via direct
  point-to-point transfers over IB to achieve low latency", section 3.4.2): each token goes
  to each of its k experts' devices; of the (n−1)/n × k copies a device sends, (n−g)/n
  leave the node (n devices, g of them in a node), in n−1 steps at the network's step
  latency (the α–β convention of every all-to-all here: pessimistic where the sends go out
  at once, as DeepEP's low-latency kernels post them);
- two-hop, as DeepSeek-V3's kernels (DeepEP) do: "For each token, when its routing decision
  is made, it will first be transmitted via IB to the GPUs with the same in-node index on
  its target nodes. Once it reaches the target nodes, we will endeavor to ensure that it is
  instantaneously forwarded via NVLink to specific GPUs that host their target experts
  [...] In this way, communications via IB and NVLink are fully overlapped" (DeepSeek-V3
  technical report, arXiv 2412.19437, section 3.2.2; its prefill too: "For the MoE
  all-to-all communication, we use the same method as in training", 3.4.1). A token
  crosses the network once per other node its experts are on, R = (N−1)(1 − (1 − 1/N)^k)
  times on average over N nodes with uniform routing (DeepSeek-V3's own routing further
  limits a token to 4 nodes: not modelled), in N−1 steps. The NVLink forwarding is
  overlapped, as the report says.
Either way the op's bytes stay what the all-to-all delivers ((n−1)/n × k copies a token);
the link the op is timed on is the network as this all-to-all sees it: its rate divided
by the share of those bytes that cross it, its step latency scaled to the steps that do.
PP and DP groups use the node link when every device of the job fits in one node group,
else the network (a server with PCIe only is taken to hold up to 8 devices, as common
PCIe servers do); a CP group (context parallel) the node link while TP × CP devices fit
in one node, else the network.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from explorer.core.hardware.hardware import Hardware, Link, Tier
from explorer.core.model import ops as op
from explorer.core.model.parallel import ParallelError, Split

PCIE_SERVER = 8  # devices a server without a node link is taken to hold


def group_link(hardware: Hardware, tier: Tier, devices: int, what: str) -> Link:
    """The link a group of ``devices`` crosses on ``hardware`` (raises ParallelError)."""
    if tier == Tier.NETWORK:
        link = hardware.link(Tier.NETWORK)
        if link is None:
            raise ParallelError(f"{what} over {devices} devices needs more than one server, and "
                                f"{hardware.name} lists no network link: choose fewer devices or another "
                                "device")
        return link
    node = hardware.link(Tier.NODE)
    if node is not None:
        if devices > node.group:
            raise ParallelError(f"{what} over {devices} devices spans more than one {hardware.label} node "
                                f"of {node.group}: use at most {node.group}")
        return node
    host = hardware.link(Tier.HOST)
    if host is None:
        raise ParallelError(f"{hardware.name} lists no link to other devices: set the parallel degrees to 1 "
                            "or choose a device with NVLink, Infinity Fabric or PCIe")
    return host

def resolve_links(ops: Iterable[op.Op], hardware: Hardware, split: Split) -> list[Link | None]:
    """The link each op crosses on ``hardware`` (None for ops that do not communicate)."""
    whole_job_in_node = False
    node = hardware.link(Tier.NODE)
    if node is not None:
        whole_job_in_node = split.devices <= node.group
    out: list[Link | None] = []
    for o in ops:
        if o.unit != op.LINK:
            out.append(None)
            continue
        group = o.group or GROUPS[o.link](split)
        if o.link == "node" and o.role == op.Role.ALL_TO_ALL:
            out.append(expert_link(hardware, split, o))
        elif o.link == "node":
            out.append(group_link(hardware, Tier.NODE, split.tp, "tensor parallel").for_group(group))
        elif o.link == "context":
            devices = split.tp * split.cp
            tier = Tier.NODE if node is None or devices <= node.group else Tier.NETWORK
            what = f"tensor × context parallel (TP {split.tp} × CP {split.cp})"
            link = group_link(hardware, tier, devices, what)
            out.append(link.for_group(group))
        else:  # pipeline sends and gradient all-reduces: inside a node when the job fits in one
            inside = whole_job_in_node or (node is None and split.devices <= PCIE_SERVER)
            tier = Tier.NODE if inside else Tier.NETWORK
            link = group_link(hardware, tier, group if tier == Tier.NODE else split.devices,
                              "the job" if tier == Tier.NETWORK else str(o.role))
            out.append(link.for_group(group))
    return out


def expert_link(hardware: Hardware, split: Split, o: op.Op) -> Link:
    """The link an expert all-to-all ``o`` is timed on (see the module's conventions): the
    node link while the TP × EP devices fit in a node, else the network as the all-to-all
    sees it."""
    node = hardware.link(Tier.NODE)
    devices, n = split.tp * split.ep, split.ep
    what = f"tensor × expert parallel (TP {split.tp} × EP {split.ep})" if split.tp > 1 else "expert parallel"
    if node is None or devices <= node.group:
        return group_link(hardware, Tier.NODE, devices, what).for_group(n)
    if node.group % split.tp or devices % node.group:
        raise ParallelError(f"{what} over {devices} devices spans {hardware.label} nodes of {node.group} "
                            f"unevenly: choose TP × EP a multiple of {node.group}, TP dividing it")
    network = group_link(hardware, Tier.NETWORK, devices, what)
    per_node = node.group // split.tp
    nodes = n // per_node
    assert network.latency_s is not None  # the catalogue requires it
    if o.dispatch == "two-hop":
        k = float(o.fanout)
        crossing = (nodes - 1) * (1 - (1 - 1 / nodes) ** k) / (k * (n - 1) / n)
        steps = (nodes - 1) / (n - 1)
        how = (f"two-hop over {nodes} nodes: {crossing:.3g} of its bytes over the network, once a node, "
               "then NVLink, overlapped")
    else:
        crossing, steps = (n - per_node) / (n - 1), 1.0
        how = f"flat over {nodes} nodes: {n - per_node} of every {n - 1} bytes leave the node"
    return replace(network, name=f"{network.name} ({how})",
                   bandwidth_bytes_per_s=network.bandwidth_bytes_per_s / crossing,
                   latency_s=network.latency_s * steps)


# The devices taking part in one collective, by the group an op's ``link`` names.
GROUPS: dict[str, Callable[[Split], int]] = {
    "node": lambda s: s.tp * s.ep,  # tensor or expert parallel, within a node
    "context": lambda s: s.cp,  # context parallel: the devices sharing each sequence
    "pipeline": lambda s: 2,  # a send joins two neighbouring stages
    "data": lambda s: s.dp * s.cp,  # gradients of weights every data-parallel (and context) replica holds
    "data-expert": lambda s: s.dp * s.cp * s.ep,  # gradients of weights every device holds (EP copies them)
}
