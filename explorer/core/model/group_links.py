"""Which link each communication op crosses on a device, by the group it joins.

TP and EP groups use the node link (NVLink, Infinity Fabric; a server
without one: PCIe); PP and DP groups use it too when every device of the job fits in one
node group, else the network (a server with PCIe only is taken to hold up to 8 devices,
as common PCIe servers do).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from explorer.core.hardware.hardware import Hardware, Link, Tier
from explorer.core.model import ops as op
from explorer.core.model.parallel import ParallelError, Split

PCIE_SERVER = 8  # devices a server without a node link is taken to hold


def group_link(hardware: Hardware, tier: Tier, devices: int, what: str) -> Link:
    """The link a group of ``devices`` crosses on ``hardware`` (raises ParallelError)."""
    if tier == Tier.NETWORK:
        link = hardware.link(Tier.NETWORK)
        if link is None:
            raise ParallelError(f"{devices} devices need more than one server, and {hardware.name} lists no "
                                "network link: choose fewer devices or another device")
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
        if o.link == "node":
            what = "expert parallel" if o.role == op.Role.ALL_TO_ALL else "tensor parallel"
            out.append(group_link(hardware, Tier.NODE, split.tp * split.ep, what).for_group(group))
        else:  # pipeline sends and gradient all-reduces: inside a node when the job fits in one
            inside = whole_job_in_node or (node is None and split.devices <= PCIE_SERVER)
            tier = Tier.NODE if inside else Tier.NETWORK
            link = group_link(hardware, tier, group if tier == Tier.NODE else split.devices, o.role)
            out.append(link.for_group(group))
    return out


# The devices taking part in one collective, by the group an op's ``link`` names.
GROUPS: dict[str, Callable[[Split], int]] = {
    "node": lambda s: s.tp * s.ep,  # tensor or expert parallel, within a node
    "pipeline": lambda s: 2,  # a send joins two neighbouring stages
    "data": lambda s: s.dp,  # gradients of weights every data-parallel replica holds
    "data-expert": lambda s: s.dp * s.ep,  # gradients of weights every device holds (EP copies them)
}
