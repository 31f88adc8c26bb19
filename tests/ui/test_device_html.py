from explorer.core.model.session import WhatIf
from explorer.ui.panels.device_html import device_card


def test_the_card_cites_every_number_and_marks_what_ifs(catalog):
    a100 = catalog["a100-80gb-sxm"]
    card = device_card(a100)
    assert "2.04 TB/s" in card and "312 TFLOP/s" in card
    assert "HBM2e latency 406 ns, measured: pointer chase" in card and "te42kyfo/gpu-benches" in card
    capped = device_card(WhatIf(in_flight_bytes=64 * 1024).apply(a100), what_if=True)
    assert "161 GB/s" in capped and "derived: Little&#x27;s law: 64 KiB in flight / 406 ns" in capped
    assert "latency" not in device_card(catalog["xeon-platinum-8480"])
