"""The bundled hardware catalogue: contents checked against published figures, and validation."""

import copy
import re

import pytest
import yaml

from explorer.core.files.datafile import DataFileError
from explorer.core.files.registry import UnknownIdError
from explorer.core.hardware.catalog import load_catalog, load_hardware_file
from explorer.core.hardware.hardware import DeviceKind, evaluate_formula

GPUS = ["a10", "a100-40gb-sxm", "a100-80gb-pcie", "a100-80gb-sxm", "a40", "apple-m2-max", "apple-m3-max",
        "apple-m3-ultra", "apple-m4-max", "b200", "gb200", "gb300", "h100-nvl", "h100-pcie", "h100-sxm",
        "h200-nvl", "h200-sxm", "jetson-agx-orin-64gb-15w", "jetson-agx-orin-64gb-30w",
        "jetson-agx-orin-64gb-50w", "jetson-agx-orin-64gb-maxn", "jetson-orin-nano-8gb-15w",
        "jetson-orin-nano-8gb-25w", "jetson-orin-nano-8gb-maxn-super", "l4", "l40s", "mi250x", "mi300x",
        "mi325x", "mi355x", "radeon-pro-w7900", "rtx-3090", "rtx-4090", "rtx-5090", "rtx-6000-ada",
        "rtx-pro-6000-blackwell", "t4", "v100-sxm2"]
CPUS = ["apple-m3-ultra-cpu", "apple-m4-max-cpu", "core-i9-13900k", "core-ultra-9-285k", "epyc-9654",
        "epyc-9755", "graviton4", "nvidia-grace", "raspberry-pi-5", "ryzen-9-7950x", "ryzen-9-9950x",
        "xeon-6980p", "xeon-platinum-8480"]
ACCELERATORS = ["gaudi-2", "gaudi-3", "tpu-v5e", "tpu-v5p", "tpu-v6e"]


def test_every_required_device_is_present(catalog):
    assert sorted(catalog) == sorted(GPUS + CPUS + ACCELERATORS)
    assert {catalog[i].kind for i in GPUS} == {DeviceKind.GPU}
    assert {catalog[i].kind for i in CPUS} == {DeviceKind.CPU}
    assert {catalog[i].kind for i in ACCELERATORS} == {DeviceKind.ACCELERATOR}


CLASSES = {
    "datacenter": {"a10", "a100-40gb-sxm", "a100-80gb-pcie", "a100-80gb-sxm", "a40", "b200", "gb200",
                   "gb300", "h100-nvl", "h100-pcie", "h100-sxm", "h200-nvl", "h200-sxm", "l4", "l40s",
                   "mi250x", "mi300x", "mi325x", "mi355x", "t4", "v100-sxm2", "epyc-9654", "epyc-9755",
                   "graviton4", "nvidia-grace", "xeon-6980p", "xeon-platinum-8480", *ACCELERATORS},
    "workstation": {"apple-m3-ultra", "apple-m3-ultra-cpu", "radeon-pro-w7900", "rtx-6000-ada",
                    "rtx-pro-6000-blackwell"},
    "desktop": {"rtx-3090", "rtx-4090", "rtx-5090", "core-i9-13900k", "core-ultra-9-285k",
                "ryzen-9-7950x", "ryzen-9-9950x"},
    "laptop": {"apple-m2-max", "apple-m3-max", "apple-m4-max", "apple-m4-max-cpu"},
    "edge": {i for i in GPUS if i.startswith("jetson-")} | {"raspberry-pi-5"},
}


def test_every_device_has_its_class(catalog):
    assert {hw.id: str(hw.device_class) for hw in catalog.values()} == {
        ident: cls for cls, idents in CLASSES.items() for ident in idents}
    # edge devices draw tens of watts at most, data-centre GPUs more than a Jetson's 60 W
    edge_tdps = [catalog[i].specs.tdp_w for i in CLASSES["edge"] if catalog[i].specs.tdp_w]
    assert len(edge_tdps) == 7 and max(edge_tdps) <= 60
    assert min(catalog[i].specs.tdp_w for i in CLASSES["datacenter"] if catalog[i].specs.tdp_w) >= 70


def test_a_class_round_trips_and_a_users_device_may_leave_it_out(tmp_path):
    from explorer.core.hardware.catalog import hardware_to_dict

    hw = load_hardware_file(write(tmp_path, broken(lambda d: d.__setitem__("class", "edge"))))[0]
    assert hw.device_class == "edge" and hardware_to_dict(hw)["class"] == "edge"
    bare = load_hardware_file(write(tmp_path, broken(lambda d: d.pop("class", None))))[0]
    assert bare.device_class is None and "class" not in hardware_to_dict(bare)


def test_every_number_has_a_source_and_every_derived_number_a_formula(catalog):
    for hw in catalog.values():
        groups = [hw.specs.provenance, *(p.provenance for p in hw.peaks),
                  *(m.provenance for m in hw.memory), *(x.provenance for x in hw.links),
                  *(x.latency_provenance for x in hw.links)]
        for provenance in groups:
            assert re.match(r"^https?://", provenance.url), hw.id
            assert provenance.formula if provenance.derived else True, hw.id
        assert hw.peak("fp32", "vector") is not None, f"{hw.id}: vector ops need an fp32 peak"


def test_cpu_flop_peaks_are_derived(catalog):
    for ident in CPUS:
        for peak in catalog[ident].peaks:
            assert peak.provenance.derived, (ident, peak.label)
            assert "cores" in peak.provenance.formula


def test_no_sparse_headline_is_stored_as_a_peak(catalog):
    # Published with-sparsity headlines: H100/H200 bf16 1979, fp8 3958; A100 bf16 624; MI300X 2614.9.
    assert catalog["h100-sxm"].peak_flops("bf16") == pytest.approx(989.4e12)
    assert catalog["h100-sxm"].peak_flops("fp8") == pytest.approx(1978.9e12)
    assert catalog["h200-sxm"].peak_flops("bf16") == pytest.approx(989.4e12)
    assert catalog["a100-80gb-sxm"].peak_flops("bf16") == pytest.approx(312e12)
    assert catalog["mi300x"].peak_flops("fp16") == pytest.approx(1307.4e12)
    assert catalog["b200"].peak_flops("bf16") == pytest.approx(2.25e15)
    assert catalog["l4"].peak_flops("fp8") == pytest.approx(242.5e12)


def test_published_memory_figures(catalog):
    # Datasheets: H100 SXM 3.35 TB/s, H200 4.8 TB/s and 141 GB, A100 40 GB 1,555 GB/s,
    # A100 80 GB 2,039 GB/s, MI300X 5.3 TB/s and 192 GB, RTX 4090 1,008 GB/s. Bandwidths are
    # decimal; memory "GB" is JEDEC's binary gigabyte (2^30 bytes).
    assert catalog["h100-sxm"].bandwidth_bytes_per_s == 3.35e12
    assert catalog["h200-sxm"].bandwidth_bytes_per_s == 4.8e12
    assert catalog["h200-sxm"].memory_capacity_bytes == 141 * 2**30
    assert catalog["h100-sxm"].memory_capacity_bytes == 80 * 2**30
    assert catalog["a100-40gb-sxm"].bandwidth_bytes_per_s == 1.555e12
    assert catalog["a100-80gb-sxm"].bandwidth_bytes_per_s == 2.039e12
    assert catalog["mi300x"].memory_capacity_bytes == 192 * 2**30
    assert catalog["rtx-4090"].bandwidth_bytes_per_s == 1.008e12


@pytest.mark.parametrize(
    ("ident", "precision", "ridge"),
    [
        # Hand-computed: peak / bandwidth.
        ("h100-sxm", "bf16", 989.4e12 / 3.35e12),  # 295.3 FLOP/byte
        ("h200-sxm", "bf16", 989.4e12 / 4.8e12),  # 206.1: same chip, faster memory
        ("a100-40gb-sxm", "fp16", 312e12 / 1.555e12),  # 200.6
        ("a100-80gb-sxm", "fp16", 312e12 / 2.039e12),  # 153.0
        ("v100-sxm2", "fp16", 125e12 / 900e9),  # 138.9
        ("t4", "fp16", 65e12 / 320e9),  # 203.1
        ("xeon-platinum-8480", "fp32", 13.6192e12 / 307.2e9),  # 44.3: 56 × 2 × 16 × 2 × 3.8 GHz
    ],
)
def test_ridge_points(catalog, ident, precision, ridge):
    assert catalog[ident].ridge_point(precision) == pytest.approx(ridge, rel=1e-9)


def test_ridge_of_h100_is_about_300_flop_per_byte(catalog):
    assert 290 < catalog["h100-sxm"].ridge_point("bf16") < 300


def test_cpu_peak_formula_matches_value(catalog):
    # CPU roofs are bounds at the maximum boost clock.
    # 56 cores × 2 FMA units × 16 lanes × 2 FLOP × 3.8 GHz
    assert catalog["xeon-platinum-8480"].peak_flops("fp32", "vector") == pytest.approx(
        56 * 2 * 16 * 2 * 3.8e9)
    # 16 cores × 2 × 8 lanes × 2 × 5.7 GHz
    assert catalog["ryzen-9-7950x"].peak_flops("fp32") == pytest.approx(16 * 2 * 8 * 2 * 5.7e9)
    # AVX512_BF16: 2 bf16 products per fp32 lane; VNNI: 4 int8 products per 32-bit lane
    assert catalog["ryzen-9-7950x"].peak_flops("bf16") == pytest.approx(16 * 2 * 8 * 2 * 2 * 5.7e9)
    assert catalog["ryzen-9-7950x"].peak_flops("int8") == pytest.approx(16 * 2 * 8 * 4 * 2 * 5.7e9)
    assert catalog["epyc-9654"].peak_flops("bf16") == pytest.approx(96 * 2 * 8 * 2 * 2 * 3.7e9)
    assert catalog["epyc-9654"].peak_flops("int8") == pytest.approx(96 * 2 * 8 * 4 * 2 * 3.7e9)
    # 8 P-cores × 2 × 8 lanes × 2 × 5.8 GHz + 16 E-cores × 2 × 4 lanes × 2 × 4.3 GHz
    assert catalog["core-i9-13900k"].peak_flops("fp32") == pytest.approx(
        8 * 2 * 8 * 2 * 5.8e9 + 16 * 2 * 4 * 2 * 4.3e9)
    assert catalog["core-i9-13900k"].peak("bf16") is None  # no AVX512_BF16: converted to fp32
    # AMX: 1024 bf16 FLOP and 2048 int8 OP per cycle per core × 56 cores × 3.8 GHz
    assert catalog["xeon-platinum-8480"].peak_flops("bf16", "matrix") == pytest.approx(56 * 1024 * 3.8e9)
    assert catalog["xeon-platinum-8480"].peak_flops("int8", "matrix") == pytest.approx(56 * 2048 * 3.8e9)


def test_best_unit_is_chosen(catalog):
    h100 = catalog["h100-sxm"]
    assert h100.peak("fp64").unit == "matrix"
    assert h100.peak("fp64", "vector").flops_per_s == pytest.approx(33.5e12)
    with pytest.raises(KeyError, match="no published fp8 peak"):
        catalog["a100-80gb-sxm"].peak_flops("fp8")


def test_unknown_id_names_close_matches(catalog):
    with pytest.raises(UnknownIdError) as info:
        catalog["h100"]
    assert "h100-sxm" in str(info.value)
    assert "did you mean" in str(info.value)


# -- validation -------------------------------------------------------------------------------

VALID = {
    "schema": 1,
    "devices": [{
        "id": "test-gpu",
        "name": "Test GPU",
        "vendor": "Test",
        "kind": "gpu",
        "year": 2024,
        "sources": {"datasheet": "https://example.com/datasheet.pdf"},
        "specs": {"cores": 10, "core_label": "SM", "boost_clock": "1 GHz", "tdp": "100 W",
                  "source": "datasheet"},
        "compute": [
            {"precision": "fp32", "unit": "vector", "peak": "10 TFLOP/s", "source": "datasheet"},
            {"precision": "bf16", "unit": "matrix", "peak": "100 TFLOP/s", "source": "datasheet"},
        ],
        "memory": [{"level": "HBM", "main": True, "capacity": "16 GB", "bandwidth": "1 TB/s",
                    "source": "datasheet"}],
    }],
}


def write(tmp_path, data, name="test.yaml"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def broken(mutate):
    data = copy.deepcopy(VALID)
    mutate(data["devices"][0])
    return data


def test_valid_file_loads(tmp_path):
    (hw,) = load_hardware_file(write(tmp_path, VALID))
    assert hw.id == "test-gpu"
    assert hw.ridge_point("bf16") == pytest.approx(100.0)
    assert hw.usable_memory_bytes == hw.memory_capacity_bytes  # none reported: the nominal capacity


def test_usable_memory_is_what_the_device_reports(catalog):
    # nvidia-smi totals, each with its source: ECC takes 1/16 of a T4's GDDR6.
    for ident, mib in (("t4", 15_360), ("h100-sxm", 81_559), ("l4", 23_034), ("h200-sxm", 143_771),
                       ("a100-40gb-sxm", 40_339)):
        memory = catalog[ident].main_memory
        assert memory.usable_bytes == mib * 2**20 < memory.capacity_bytes or ident == "a100-80gb-sxm"
        assert memory.usable_provenance.url.startswith("https://") and memory.usable_provenance.note
    assert catalog["mi300x"].usable_memory_bytes == 192 * 2**30  # no source found: nominal
    from explorer.core.files.datafile import Fields
    from explorer.core.hardware.catalog import hardware_to_dict, read_hardware_entry

    t4 = catalog["t4"]
    assert read_hardware_entry(Fields(hardware_to_dict(t4), "t4.yaml", "t4")) == t4


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda d: d.__setitem__("peek", 1), "peek", "not a known field"),
        (lambda d: d.pop("name"), "name", "is missing"),
        (lambda d: d["compute"][0].__setitem__("peak", "0 TFLOP/s"), "compute[0].peak",
         "must be positive"),
        (lambda d: d["compute"][1].__setitem__("peak", "1e999 TFLOP/s"), "compute[1].peak",
         "not a finite"),
        (lambda d: d["specs"].__setitem__("cores", float("nan")), "specs.cores", "whole number"),
        (lambda d: d["specs"].__setitem__("cores", -4), "specs.cores", "must be positive"),
        (lambda d: d["memory"][0].__setitem__("bandwidth", "1 TB"), "memory[0].bandwidth",
         "unknown unit 'TB'"),
        (lambda d: d["memory"][0].__setitem__("bandwidth", 1e12), "memory[0].bandwidth",
         "written with its unit"),
        (lambda d: d["compute"][0].__setitem__("source", "whitepaper"), "compute[0].source",
         "not one of this entry's sources"),
        (lambda d: d["compute"][0].__setitem__("derived", True), "compute[0].formula", "is missing"),
        (lambda d: d["compute"][0].__setitem__("precision", "fp7"), "compute[0].precision",
         "expected one of"),
        (lambda d: d.__setitem__("kind", "tpu"), "kind", "expected one of cpu, gpu"),
        (lambda d: d.__setitem__("class", "server"), "class",
         "expected one of datacenter, workstation, desktop, laptop, edge; got 'server'"),
        (lambda d: d["memory"][0].__setitem__("main", False), "memory", "exactly one level"),
        (lambda d: d["memory"][0].pop("capacity"), "memory[0].capacity", "main memory needs"),
        (lambda d: d["compute"].append(dict(d["compute"][0])), "compute", "listed twice"),
        (lambda d: d["sources"].__setitem__("datasheet", "ftp://x"), "sources.datasheet",
         "http"),
        (lambda d: d.__setitem__("id", "Bad Id"), "id", "not a valid id"),
        (lambda d: d["memory"][0].update(usable="15 GiB"), "memory[0].usable_source", "is missing"),
        (lambda d: d["memory"][0].update(usable="17 GiB", usable_source="datasheet", usable_note="x"),
         "memory[0].usable", "at most its capacity"),
        (lambda d: d["memory"][0].update(usable_note="nvidia-smi"), "memory[0].usable", "is missing"),
    ],
)
def test_broken_entry_names_file_entry_and_field(tmp_path, mutate, field, message):
    path = write(tmp_path, broken(mutate))
    with pytest.raises(DataFileError) as info:
        load_hardware_file(path)
    error = info.value
    assert error.file == str(path)
    assert error.field == field
    assert message in str(error)
    assert str(path) in str(error)
    if field != "id":
        assert error.entry == "test-gpu"


def test_duplicate_key_is_rejected(tmp_path):
    text = yaml.safe_dump(VALID, sort_keys=False).replace("  vendor: Test\n",
                                                          "  vendor: Test\n  vendor: Other\n")
    with pytest.raises(DataFileError, match=r"duplicate key 'vendor'.*line"):
        load_hardware_file(write(tmp_path, text))


def test_duplicate_id_in_a_file_is_rejected(tmp_path):
    data = copy.deepcopy(VALID)
    data["devices"].append(copy.deepcopy(data["devices"][0]))
    with pytest.raises(DataFileError, match="used twice") as info:
        load_hardware_file(write(tmp_path, data))
    assert info.value.entry == "test-gpu"


def test_duplicate_id_across_files_is_rejected(tmp_path):
    write(tmp_path, VALID, "a.yaml")
    write(tmp_path, VALID, "b.yaml")
    with pytest.raises(DataFileError, match=r"already defined in .*a\.yaml") as info:
        load_catalog(tmp_path)
    assert info.value.file.endswith("b.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("devices: [", "not valid YAML"),
        ("- just a list\n", "expected a mapping"),
        ("schema: 2\ndevices: []\n", "reads schema 1"),
        ("schema: 1\n", "field 'devices': is missing"),
        ("schema: 1\ndevices: [42]\n", "entry '#1'"),
        ("schema: 1\n? [a, b]\n: 1\n", "a key must be plain text"),
        ("schema: 1\ndevices: [{id: x, sources: {1: ftp://x}}]\n", "field 'sources.1'"),
        ("schema: " + "9" * 5000 + "\n", "not valid YAML"),
    ],
)
def test_broken_files(tmp_path, text, message):
    with pytest.raises(DataFileError, match=re.escape(message)):
        load_hardware_file(write(tmp_path, text))


@pytest.mark.parametrize("tag", ["!!python/object/apply:os.getcwd []",
                                 "!!python/name:os.system ''"])
def test_python_tags_are_refused_not_executed(tmp_path, tag):
    # Well-formed YAML that an unsafe loader would turn into a call or an object.
    with pytest.raises(DataFileError, match="could not determine a constructor"):
        load_hardware_file(write(tmp_path, f"schema: 1\ndevices: {tag}\n"))


def test_every_formula_evaluates_to_its_stored_value(catalog):
    checked = 0
    for hw in catalog.values():
        numbers = [(p.provenance, p.flops_per_s) for p in hw.peaks]
        numbers += [(m.provenance, m.bandwidth_bytes_per_s) for m in hw.memory if m.main]
        numbers += [(x.provenance, x.bandwidth_bytes_per_s) for x in hw.links]
        for provenance, value in numbers:
            if provenance.derived and ("×" in provenance.formula or "÷" in provenance.formula):
                assert evaluate_formula(provenance.formula) == pytest.approx(value, rel=0.01), (
                    hw.id, provenance.formula)
                checked += 1
    assert checked >= 25
    assert evaluate_formula("8 channels × 4800 MT/s × 8 bytes") == 307.2e9


def test_empty_directory_is_an_error(tmp_path):
    with pytest.raises(DataFileError, match="holds no hardware files"):
        load_catalog(tmp_path)
