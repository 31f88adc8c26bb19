"""Interconnects in the catalogue: published rates with what they count, node groups,
latencies per transfer step, and the loader's refusals."""

from __future__ import annotations

import pytest

from explorer.core.files.datafile import DataFileError, Fields
from explorer.core.hardware.catalog import hardware_to_dict, load_catalog, read_hardware_entry


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.mark.parametrize(("ident", "name", "published", "per_direction"), [
    ("v100-sxm2", "NVLink 2", 300e9, 150e9),
    ("a100-80gb-sxm", "NVLink 3", 600e9, 300e9),
    ("h100-sxm", "NVLink 4", 900e9, 450e9),
    ("h200-sxm", "NVLink 4", 900e9, 450e9),
    ("b200", "NVLink 5", 1.8e12, 900e9),
    ("mi300x", "Infinity Fabric", 896e9, 448e9),
])
def test_node_links_per_generation(catalog, ident, name, published, per_direction):
    link = catalog[ident].link("node")
    assert (link.name, link.bandwidth_bytes_per_s, link.direction) == (name, published, "both")
    assert link.per_direction_bytes_per_s == per_direction
    assert link.group == 8


def test_network_and_host_links(catalog):
    ndr = catalog["h100-sxm"].link("network")
    assert ndr.direction == "each" and ndr.per_direction_bytes_per_s == 50e9  # 400 Gb/s
    assert catalog["a100-80gb-sxm"].link("network").per_direction_bytes_per_s == 25e9  # HDR 200 Gb/s
    assert catalog["h100-sxm"].link("host").per_direction_bytes_per_s == 64e9  # PCIe 5.0 x16
    assert catalog["l4"].link("host").per_direction_bytes_per_s == 32e9  # PCIe 4.0 x16
    assert catalog["l4"].link("node") is None
    assert not catalog["epyc-9654"].links


def test_latencies_are_nccls_per_step_figures(catalog):
    h100 = catalog["h100-sxm"]
    latencies = [h100.link(t).latency_s for t in ("node", "network", "host")]
    assert latencies == pytest.approx([0.6e-6, 2.7e-6, 1e-6])
    for hw in catalog.values():
        for link in hw.links:
            assert "tuning.cc" in link.latency_provenance.url and link.latency_provenance.note


def test_links_survive_a_round_trip(catalog):
    h100 = catalog["h100-sxm"]
    assert read_hardware_entry(Fields(hardware_to_dict(h100), "h100.yaml", "h100-sxm")) == h100


def _entry(catalog, **change):
    data = hardware_to_dict(catalog["h100-sxm"])
    data["links"][0].update(change)
    return data


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"tier": "bus"}, "links[0].tier", "expected one of"),
    ({"direction": "up"}, "links[0].direction", "expected one of"),
    ({"bandwidth": "0 GB/s"}, "links[0].bandwidth", "must be positive"),
    ({"group": 1}, "links[0].group", ">= 2"),
    ({"latency": None, "latency_source": None, "latency_note": None}, "links[0].latency", "is missing"),
])
def test_broken_links_name_the_field(catalog, change, field, message):
    data = _entry(catalog, **change)
    for key in [k for k, v in data["links"][0].items() if v is None]:
        del data["links"][0][key]
    with pytest.raises(DataFileError) as info:
        read_hardware_entry(Fields(data, "h100.yaml", "h100-sxm"))
    assert info.value.field == field and message in str(info.value)


def test_a_group_belongs_to_node_links(catalog):
    data = hardware_to_dict(catalog["h100-sxm"])
    data["links"][1]["group"] = 8
    with pytest.raises(DataFileError, match="applies to node links"):
        read_hardware_entry(Fields(data, "h100.yaml", "h100-sxm"))


def test_hardware_show_gives_each_link_with_its_sources():
    import io
    import json

    from explorer.commands import main as cli

    out = io.StringIO()
    assert cli.run(cli.parse_args(["hardware", "show", "h100-sxm", "--json"]), out, io.StringIO()) == 0
    links = {x["name"]: x for x in json.loads(out.getvalue())["links"]}
    assert links["NVLink 4"]["per_direction_bytes_per_s"] == 450e9 and links["NVLink 4"]["group"] == 8
    assert links["InfiniBand NDR"]["direction"] == "each"
    assert "tuning.cc" in links["NVLink 4"]["latency"]["source"]
    out = io.StringIO()
    cli.run(cli.parse_args(["hardware", "show", "h100-sxm"]), out, io.StringIO())
    assert "NVLink 4 (node link): 900 GB/s published (both directions together), 450 GB/s per direction" \
        in out.getvalue()


def test_a_mesh_gives_a_small_group_only_its_own_links(catalog):
    from explorer.core.analysis.analysis import analyze
    from explorer.core.model.presets import load_models
    from explorer.core.model.workload import WorkloadParams

    fabric = catalog["mi300x"].link("node")
    assert fabric.mesh == 7
    assert fabric.for_group(2).per_direction_bytes_per_s == pytest.approx(64e9)  # one link, 128 GB/s both
    assert fabric.for_group(8) is fabric
    m = load_models()["llama-3-70b"]
    a = analyze(m, WorkloadParams(context=2048, tp=2), catalog["mi300x"])
    [link] = {x for x in a.links if x is not None}
    assert link.name == "Infinity Fabric (1 of its 7 links)"
    assert link.per_direction_bytes_per_s == pytest.approx(64e9)
    nvlink = analyze(m, WorkloadParams(context=2048, tp=2), catalog["h100-sxm"])
    assert {x.per_direction_bytes_per_s for x in nvlink.links if x is not None} == {450e9}  # a switch


def test_a_mesh_counts_one_link_per_peer(catalog):
    data = hardware_to_dict(catalog["mi300x"])
    data["links"][0]["mesh"] = 6
    with pytest.raises(DataFileError, match="group − 1"):
        read_hardware_entry(Fields(data, "mi300x.yaml", "mi300x"))
