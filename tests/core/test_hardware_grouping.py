"""The hardware panel's grouping (kind, then class, then vendor) and its search by any name."""

from dataclasses import replace

from explorer.core.hardware.grouping import catalogue_groups, group_title, row_name, search


def test_groups_by_kind_then_class_then_vendor(catalog):
    groups = catalogue_groups(catalog.values())
    assert [kind for kind, _ in groups] == ["gpu", "cpu", "accelerator"]
    gpus, cpus, accelerators = (dict(groups)[k] for k in ("gpu", "cpu", "accelerator"))
    # classes from the data centre down to the edge
    assert list(gpus) == ["Data centre", "Workstation", "Desktop", "Laptop", "Edge"]
    assert list(cpus) == ["Data centre", "Workstation", "Desktop", "Laptop", "Edge"]
    assert list(accelerators) == ["Data centre"]
    assert list(gpus["Data centre"]) == ["AMD", "NVIDIA"]  # vendors by name
    assert list(gpus["Workstation"]) == ["AMD", "Apple", "NVIDIA"]
    assert [hw.id for hw in gpus["Desktop"]["NVIDIA"]] == ["rtx-3090", "rtx-4090", "rtx-5090"]
    assert gpus["Edge"]["NVIDIA"][0].id == "jetson-agx-orin-64gb-maxn"  # catalogue order
    assert len(gpus["Edge"]["NVIDIA"]) == 7
    assert list(cpus["Data centre"]) == ["AMD", "AWS", "Intel", "NVIDIA"]
    assert [hw.id for hw in cpus["Data centre"]["AWS"]] == ["graviton4"]
    assert [hw.id for hw in cpus["Edge"]["Raspberry Pi"]] == ["raspberry-pi-5"]
    assert list(accelerators["Data centre"]) == ["Google", "Intel"]
    every = [hw for _, classes in groups for vendors in classes.values()
             for d in vendors.values() for hw in d]
    assert sorted(hw.id for hw in every) == sorted(catalog)


def test_a_device_without_a_class_is_listed_last_under_other(catalog):
    mine = replace(catalog["l4"], id="my-gpu", name="My GPU", device_class=None)
    gpus = dict(catalogue_groups([mine, *catalog.values()]))["gpu"]
    assert list(gpus)[-1] == "Other" and gpus["Other"] == {"NVIDIA": [mine]}


def test_any_other_kind_gets_its_own_group_after_gpus_and_cpus(catalog):
    tpu = replace(catalog["h100-sxm"], id="tpu-x", name="Some TPU", vendor="Google", kind="tpu")
    npu = replace(catalog["l4"], id="gaudi-x", name="Some accelerator", vendor="Intel", kind="accelerator")
    devices = [d for d in catalog.values() if d.kind != "accelerator"]
    groups = catalogue_groups([tpu, *devices, npu])
    assert [kind for kind, _ in groups] == ["gpu", "cpu", "tpu", "accelerator"]
    assert dict(groups)["tpu"] == {"Data centre": {"Google": [tpu]}}
    assert [group_title(k) for k, _ in groups] == ["GPUs", "CPUs", "TPUs", "Accelerators"]
    assert search([tpu, npu, *catalog.values()], "tpu") == {"tpu-x", "tpu-v5e", "tpu-v5p", "tpu-v6e"}


def test_a_row_under_its_vendor_drops_the_vendors_name(catalog):
    assert row_name(catalog["mi300x"]) == "Instinct MI300X"
    assert row_name(catalog["jetson-agx-orin-64gb-maxn"]) == "Jetson AGX Orin 64GB (MAXN)"
    assert row_name(catalog["graviton4"]) == "Graviton4"
    assert row_name(catalog["raspberry-pi-5"]) == "Raspberry Pi 5 (BCM2712)"  # not "5 (BCM2712)"


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


def test_search_by_class(catalog):
    devices = catalog.values()
    edge = {hw.id for hw in devices if hw.device_class == "edge"}
    assert search(devices, "edge") == edge and len(edge) == 8 and "raspberry-pi-5" in edge
    datacentre = {hw.id for hw in devices if hw.device_class == "datacenter"}
    assert len(datacentre) == 32
    for words in ("data centre", "datacenter", "Data Center", "datacentre", "server"):
        assert search(devices, words) == datacentre, words
    assert search(devices, "workstation") == {"apple-m3-ultra", "apple-m3-ultra-cpu", "radeon-pro-w7900",
                                              "rtx-6000-ada", "rtx-pro-6000-blackwell"}
    assert search(devices, "laptop apple cpu") == {"apple-m4-max-cpu"}
    assert search(devices, "desktop amd") == {"ryzen-9-7950x", "ryzen-9-9950x"}
    assert search(devices, "edge nvidia orin nano") == {
        "jetson-orin-nano-8gb-15w", "jetson-orin-nano-8gb-25w", "jetson-orin-nano-8gb-maxn-super"}
