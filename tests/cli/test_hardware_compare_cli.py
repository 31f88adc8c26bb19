"""``hardware compare``: devices side by side, each number with its source."""

import json

from tests.cli.test_cli import run


def _row(out: str, label: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(label))


def test_compare_puts_every_roof_side_by_side():
    code, out, err = run("hardware", "compare", "h100-sxm,mi300x")
    assert code == 0 and not err
    header = out.splitlines()[0].split()
    assert header == ["h100-sxm", "mi300x"]
    bf16 = _row(out, "bf16 matrix (TFLOP/s)")
    assert "989.4 [whitepaper]" in bf16 and "1307.4 [datasheet]" in bf16
    assert bf16.index("989.4") < bf16.index("1307.4")  # in the order asked for
    assert "1978.9" in _row(out, "int8 matrix (TOP/s)")
    assert "3350.0 [product]" in _row(out, "main bandwidth (GB/s)")
    assert "80 GiB" in _row(out, "main capacity") and "192 GiB" in _row(out, "main capacity")
    node = _row(out, "node link (GB/s)")
    assert "900.0 (NVLink 4, both)" in node and "896.0 (Infinity Fabric, both)*" in node
    assert "—" in _row(out, "fp16 vector (TFLOP/s)")  # MI300X publishes no fp16 vector rate
    assert "  mi300x datasheet: https://www.amd.com/" in out


def test_compare_marks_derived_roofs_of_a_cpu():
    code, out, _ = run("hardware", "compare", "xeon-6980p,epyc-9755,h100-sxm")
    assert code == 0
    assert out.splitlines()[0].split() == ["xeon-6980p", "epyc-9755", "h100-sxm"]
    assert "511.2* [amx_rates]" in _row(out, "bf16 matrix (TFLOP/s)")  # derived: marked
    assert "L3 capacity" in out and "host link (GB/s)" in out


def test_compare_json_gives_values_and_sources():
    code, out, _ = run("hardware", "compare", "h100-sxm,mi300x", "--json")
    doc = json.loads(out)
    assert code == 0 and [d["id"] for d in doc["devices"]] == ["h100-sxm", "mi300x"]
    rows = {row["label"]: row for row in doc["rows"]}
    bf16 = rows["bf16 matrix"]["values"]
    assert bf16["h100-sxm"]["value"] == 989.4e12 and bf16["mi300x"]["value"] == 1307.4e12
    assert rows["bf16 matrix"]["unit"] == "TFLOP/s"
    assert bf16["mi300x"]["source"].startswith("https://www.amd.com/")
    assert bf16["mi300x"]["source_key"] == "datasheet" and bf16["mi300x"]["derived"] is False
    assert rows["fp16 vector"]["values"]["mi300x"] is None
    assert rows["main bandwidth"]["values"]["mi300x"]["value"] == 5.3e12
    assert rows["node link"]["values"]["h100-sxm"]["value"] == 900e9


def test_compare_names_unknown_ids_with_the_closest_matches():
    code, out, err = run("hardware", "compare", "h100,mi300x,mi300")
    assert code == 2 and not out
    assert "unknown hardware 'h100': did you mean h100-sxm" in err
    assert "unknown hardware 'mi300': did you mean mi300x" in err
    assert "'mi300x'" not in err


def test_compare_needs_ids():
    code, _, _ = run("hardware", "compare", ",")
    assert code == 2


def test_compare_names_each_devices_class():
    code, out, _ = run("hardware", "compare", "h100-sxm,rtx-4090,jetson-agx-orin-64gb-maxn")
    assert code == 0
    assert _row(out, "class").split() == ["class", "datacenter", "desktop", "edge"]
    code, out, _ = run("hardware", "compare", "apple-m4-max,rtx-pro-6000-blackwell", "--json")
    doc = json.loads(out)
    assert [d["class"] for d in doc["devices"]] == ["laptop", "workstation"]
    values = next(r for r in doc["rows"] if r["label"] == "class")["values"]
    assert values["apple-m4-max"]["text"] == "laptop"
