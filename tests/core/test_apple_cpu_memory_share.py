"""The Apple CPUs' memory share: an Apple M2 Max's STREAM Triad on its eight performance cores
(EntityFX/anybench), the published figure quoted in the family's notes and the share its
arithmetic gives."""
import pytest

from explorer.core.hardware.efficiency import efficiency_for, published

MEMORY = ("bandwidth", "gemm_bandwidth", "decode_attention")
TRIAD_8_THREADS_MB_S = 184259.6  # 'Triad:          184259.6' in the anybench log the source names
M2_MAX_PEAK_MB_S = 409.6e3  # applegpuinfo on an M2 Max: 'GPU bandwidth: 409.6 GB/s' (its issue #10)


def test_the_apple_cpus_memory_shares_are_the_m2_max_triad_over_its_peak(catalog):
    families = published()
    family = next(f for f in families if f.id == "arm-cpu")
    assert family.devices == ("apple-m4-max-cpu", "apple-m3-ultra-cpu")
    for ident in family.devices:
        assert efficiency_for(catalog[ident], families) is family
    share = TRIAD_8_THREADS_MB_S / M2_MAX_PEAK_MB_S
    for name in MEMORY:
        factor = family.factors[name]
        assert factor.value == pytest.approx(share, abs=0.005), name
        assert "Triad: 184259.6" in factor.note and "'GPU bandwidth: 409.6 GB/s'" in factor.note
        assert "Number of Threads counted = 8" in factor.note
        assert factor.source.startswith("https://github.com/EntityFX/anybench/blob/74de088b86ea85ca9c5031feeea62cdb478bda0a/")
        assert factor.source.endswith("STREAM_arm-apple-m1_O3_mp8.stdout_stderr.log")


def test_the_apple_cpus_share_sits_below_every_other_cpus_measured_share():
    """An M2 Max's eight performance cores reach 0.45 of its memory by STREAM Triad, below
    every other CPU's measured share (Pi 5 0.68, x86 0.70, Graviton4 0.87, Grace 0.90): the
    CPU clusters of an Apple SoC draw a part of the memory the GPU's 409.6 GB/s is quoted for."""
    by_id = {f.id: f for f in published()}
    apple = by_id["arm-cpu"].factors["bandwidth"].value
    others = [by_id[i].factors["bandwidth"].value
              for i in ("raspberry-pi-5", "x86-cpu", "graviton4", "nvidia-grace")]
    assert apple == 0.45 and all(apple < other for other in others)
