"""The hardware panel's grouping (kind, then vendor) and its search by any name."""

from dataclasses import replace

from explorer.core.hardware.grouping import catalogue_groups, group_title, search


def test_groups_by_kind_then_vendor(catalog):
    groups = catalogue_groups(catalog.values())
    assert [kind for kind, _ in groups][:2] == ["gpu", "cpu"]
    gpus = dict(groups)["gpu"]
    assert list(gpus) == sorted(gpus, key=str.lower) and "NVIDIA" in gpus and "AMD" in gpus
    order = list(catalog)
    assert [hw.id for hw in gpus["AMD"]] == [i for i in order if i in {hw.id for hw in gpus["AMD"]}]
    assert sum(len(d) for _, vendors in groups for d in vendors.values()) == len(catalog)
    cpus = dict(groups)["cpu"]
    assert {"AWS", "Intel", "AMD"} <= set(cpus) and [hw.id for hw in cpus["AWS"]] == ["graviton4"]


def test_any_other_kind_gets_its_own_group_after_gpus_and_cpus(catalog):
    tpu = replace(catalog["h100-sxm"], id="tpu-x", name="Some TPU", vendor="Google", kind="tpu")
    npu = replace(catalog["l4"], id="gaudi-x", name="Some accelerator", vendor="Intel", kind="accelerator")
    groups = catalogue_groups([tpu, *catalog.values(), npu])
    assert [kind for kind, _ in groups] == ["gpu", "cpu", "tpu", "accelerator"]
    assert dict(groups)["tpu"] == {"Google": [tpu]}
    assert [group_title(k) for k, _ in groups] == ["GPUs", "CPUs", "TPUs", "Accelerators"]
    assert search([tpu, npu, *catalog.values()], "tpu") == {"tpu-x", "tpu-v5e", "tpu-v5p", "tpu-v6e"}


def test_search_by_any_name(catalog):
    devices = catalog.values()
    assert search(devices, "4090") == {"rtx-4090"}
    assert search(devices, "RTX 40") == {"rtx-4090"}
    orin = search(devices, "orin")
    assert len(orin) == 7 and all(i.startswith("jetson-") for i in orin)
    assert search(devices, "Orin Nano") == {i for i in orin if "nano" in i}
    assert "nvidia-grace" in search(devices, "Grace")
    assert search(devices, "graviton") == {"graviton4"}
    assert search(devices, "m4") == {"apple-m4-max", "apple-m4-max-cpu"}  # not the A100's "SXM4"
    assert {"a100-80gb-sxm", "h100-sxm"} <= search(devices, "100")  # no word starts so: anywhere
    assert search(devices, "apple") == {hw.id for hw in devices if hw.vendor == "Apple"}
    assert search(devices, "") == set(catalog)
    assert search(devices, "no such device") == set()
