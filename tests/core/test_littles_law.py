"""Little's law: bandwidth = bytes in flight / latency, capped at the peak."""

import pytest
import yaml

from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.littles_law import (
    NoLatencyError,
    bytes_in_flight_needed,
    effective_bandwidth,
    latency_of,
)
from explorer.core.model.session import Session, WhatIf, load_session

A100_PEAK, A100_LATENCY = 2039e9, 406e-9  # datasheet; gpu-benches pointer chase


def test_the_catalogue_latency_is_the_measured_one(catalog):
    # 2208.8 ms for 5,446,216 dependent loads; 9970.5 ms for 24,465,205 (gpu-benches rows)
    assert latency_of(catalog["a100-80gb-sxm"]) == pytest.approx(2208.8e-3 / 5446216, rel=2e-3)
    assert latency_of(catalog["a100-40gb-sxm"]) == pytest.approx(9970.5e-3 / 24465205, rel=2e-3)
    level = catalog["a100-80gb-sxm"].memory[0]
    assert "pointer chase" in level.latency_provenance.note
    assert level.latency_provenance.url.startswith("https://github.com/te42kyfo/gpu-benches")


def test_effective_bandwidth_by_hand():
    assert effective_bandwidth(A100_PEAK, A100_LATENCY, 16 * 1024) == pytest.approx(16384 / 406e-9)
    assert float(effective_bandwidth(A100_PEAK, A100_LATENCY, 2**20)) == A100_PEAK
    curve = effective_bandwidth(A100_PEAK, A100_LATENCY, [1024, 2048, 4096])
    assert curve[1] == pytest.approx(2 * curve[0]) and curve[2] == pytest.approx(4 * curve[0])
    assert bytes_in_flight_needed(A100_PEAK, A100_LATENCY) == pytest.approx(827_834, rel=1e-6)
    with pytest.raises(ValueError, match="latency must be positive"):
        effective_bandwidth(A100_PEAK, 0.0, 1024)


def test_a_what_if_caps_main_memory_and_says_why(catalog):
    a100 = catalog["a100-80gb-sxm"]
    capped = WhatIf(in_flight_bytes=64 * 1024).apply(a100)
    assert capped.bandwidth_bytes_per_s == pytest.approx(65536 / 406e-9)
    main = next(m for m in capped.memory if m.main)
    assert main.provenance.derived and "Little's law: 64 KiB in flight / 406 ns" in main.provenance.formula
    assert capped.memory[1] == a100.memory[1]  # L2 untouched
    # Enough in flight: the datasheet number stays as it is.
    assert WhatIf(in_flight_bytes=2**20).apply(a100).memory[0] == a100.memory[0]
    # A drag and the cap compose: the cap applies to the dragged bandwidth.
    both = WhatIf(bandwidth_scale=0.01, in_flight_bytes=2**20).apply(a100)
    assert both.bandwidth_bytes_per_s == pytest.approx(0.01 * A100_PEAK)


def test_a_device_without_a_latency_is_refused_by_name(catalog):
    with pytest.raises(NoLatencyError, match=r"Xeon.*no measured memory latency"):
        WhatIf(in_flight_bytes=4096).apply(catalog["xeon-platinum-8480"])
    with pytest.raises(ValueError, match="at least 1"):
        WhatIf(in_flight_bytes=0.0)


def test_sessions_keep_the_cap(tmp_path, catalog, models):
    cap = WhatIf(in_flight_bytes=48 * 1024)
    session = Session(hardware=("a100-80gb-sxm",), what_ifs=(("a100-80gb-sxm", cap),))
    path = tmp_path / "s.yaml"
    session.save(path)
    assert yaml.safe_load(path.read_text())["what_if"]["a100-80gb-sxm"]["in_flight"] == "49152 B"
    assert load_session(path, catalog, set(models)) == session
    path.write_text("schema: 1\nhardware: [xeon-platinum-8480]\nworkload: {model: gpt2}\n"
                    "what_if: {xeon-platinum-8480: {in_flight: 64 KiB}}\n")
    with pytest.raises(DataFileError) as info:
        load_session(path, catalog, set(models))
    assert info.value.field == "what_if.xeon-platinum-8480.in_flight"
    assert "no measured memory latency" in str(info.value)
