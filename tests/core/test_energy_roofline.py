"""The energy roofline (Choi et al., IPDPS 2013) and its words: the circuit roof worked out
by hand from Horowitz's table, a measured roof with constant power, the workload's ops on
their curve, and every number the sentences state."""

import numpy as np
import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.energy import EnergyConstants
from explorer.core.analysis.energy_roofline import (
    EnergyView,
    circuit_roof,
    measured_roof,
    workload_points,
)
from explorer.core.model.workload import WorkloadParams
from explorer.core.words.energy_words import energy_sentences

# bf16 at fp16's cost: (1.1 pJ multiply + 0.4 pJ add) / 2 a FLOP; a 64-bit DRAM read 1.3 nJ / 8.
FLOP_J, BYTE_J = 0.75e-12, 162.5e-12


def test_the_circuit_roof_by_hand():
    roof = circuit_roof("bf16")
    assert roof.constants.flop_j == pytest.approx(FLOP_J) and roof.constants.byte_j == pytest.approx(BYTE_J)
    assert roof.balance == pytest.approx(216.67, rel=1e-4) and not roof.timed and not roof.measured
    assert roof.ceiling == pytest.approx(1 / FLOP_J)
    assert roof.flops_per_joule(roof.balance) == pytest.approx(roof.ceiling / 2)  # half at the balance
    assert roof.flops_per_joule(1.0) == pytest.approx(1 / (FLOP_J + BYTE_J))
    assert np.all(np.diff(roof.flops_per_joule(np.geomspace(0.01, 1e4, 50))) > 0)  # rises with intensity
    assert circuit_roof("fp32").constants.flop_j == pytest.approx((3.7e-12 + 0.9e-12) / 2)
    assert circuit_roof("fp8") is None and circuit_roof("fp64") is None  # not in the table


def test_a_measured_roof_counts_its_constant_power_on_its_time_roofline():
    c = EnergyConstants(flop_j=1e-12, byte_j=50e-12, constant_w=100.0)
    roof = measured_roof("run", c, peak_flops=1e14, bandwidth=1e12, precision="fp32")
    assert roof.timed and roof.measured and roof.precision == "fp32"
    # below the ridge (100 FLOP/byte) memory sets the time: T/W = 1 / (I × bandwidth)
    assert roof.flops_per_joule(10.0) == pytest.approx(1 / (1e-12 + 5e-12 + 100 / (10 * 1e12)))
    assert roof.flops_per_joule(1e3) == pytest.approx(1 / (1e-12 + 5e-14 + 100 / 1e14))
    assert roof.ceiling == pytest.approx(1 / (1e-12 + 1e-12))
    assert measured_roof("run", c, None, None).timed is False  # no time roof: no constant power term
    assert measured_roof("run", EnergyConstants(-1e-12, 50e-12, 100.0), 1e14, 1e12) is None
    assert measured_roof("run", EnergyConstants(1e-12, 50e-12, -1.0), 1e14, 1e12) is None  # π₀ below 0


def test_the_ops_sit_on_their_curve_and_the_step_adds_them_up(models, catalog):
    a = analyze(models["llama-3-8b"], WorkloadParams(dtype="bf16", tp=2), catalog["h100-sxm"])
    roof = circuit_roof("bf16")
    points = workload_points(a, roof)
    ops, (step,) = points[:-1], points[-1:]
    assert step.role == "step" and all(p.role != "step" for p in ops)
    assert "all_reduce" not in {p.name for p in ops}  # its bytes cross a link, not memory
    for p in ops:
        assert p.flops_per_joule == pytest.approx(float(roof.flops_per_joule(p.intensity)), rel=1e-12)
    links = a.communicating
    flops = float((a.flops * a.counts)[~links].sum())
    moved = float((a.bytes * a.counts)[~links].sum())  # ops without arithmetic too (embedding rows)
    assert step.intensity == pytest.approx(flops / moved)
    assert step.joules == pytest.approx(flops * FLOP_J + moved * BYTE_J)
    assert step.joules > sum(p.joules for p in ops)  # the embedding's bytes cost, though it has no FLOPs


def test_a_decode_step_agrees_with_the_moving_data_scene(models, catalog):
    """Scene 13's fields (``energy_claims``) price the same step at the same energies."""
    from explorer.core.words.claims import State
    from explorer.core.words.energy_claims import step_field

    model, hw = models["llama-3-8b"], catalog["h100-sxm"]
    params = WorkloadParams(dtype="bf16")
    step = workload_points(analyze(model, params, hw), circuit_roof("bf16"))[-1]
    state = State(model, params, hw)
    memory, arithmetic = (step_field(state, f)[1].value for f in ("energy-memory", "energy-arithmetic"))
    assert step.joules == pytest.approx(memory + arithmetic, rel=1e-9)
    assert circuit_roof("bf16").balance / step.intensity == pytest.approx(memory / arithmetic, rel=1e-9)


def view_of(models, catalog, **params) -> EnergyView:
    a = analyze(models["llama-3-8b"], WorkloadParams(**params), catalog["h100-sxm"])
    roof = circuit_roof(a.params.dtype)
    workload = tuple(workload_points(a, roof)) if roof else ()
    return EnergyView("t", (roof,) if roof else (), workload, (), ("H100 SXM", 989.4e12 / 3.35e12))


def test_the_sentences_state_the_picture_s_numbers(models, catalog):
    decode = view_of(models, catalog, dtype="bf16")
    text = " ".join(energy_sentences(decode))
    step = decode.step
    assert "a bf16 FLOP costs 0.75 pJ and a byte read from DRAM 162 pJ" in text
    assert "the energy balance is 217 FLOP/byte" in text
    ratio = 216.667 / step.intensity
    assert f"{step.intensity:.3g} FLOP/byte, below the balance" in text and f"costs {ratio:.0f} times" in text
    share = 100 * step.flops_per_joule * FLOP_J
    assert f"{share:.2g}% of the 1.33 TFLOP/J" in text
    assert "The H100 SXM's time roofline bends at 295 FLOP/byte" in text
    prefill = " ".join(energy_sentences(view_of(models, catalog, dtype="bf16", phase="prefill", seq=2048)))
    assert "above the balance" in prefill and "costs 0.28 times the computing" in prefill
    fp8 = view_of(models, catalog, dtype="fp8")
    assert fp8.roofs == () and "energy balance is" not in " ".join(energy_sentences(fp8))


def test_the_status_line_ends_with_a_token_s_energy(models, catalog):
    from explorer.core.analysis.energy_report import step_energy
    from explorer.core.analysis.expected import expected_for
    from explorer.core.analysis.report_words import step_summary
    from explorer.core.units import format_si

    hw = catalog["h100-sxm"]
    a = analyze(models["llama-3-8b"], WorkloadParams(dtype="bf16"), hw)
    e = expected_for(a)
    assert hw.specs.tdp_w == 700  # the datasheet's
    s = step_energy(a, e)
    assert s is not None and step_summary(a, e).endswith(
        f"; about {format_si(s.joules_per_item, 'J')} a token (power model), at least "
        f"{format_si(s.lower_per_item, 'J')}")
    no_tdp = analyze(models["gpt2"], WorkloadParams(), catalog["apple-m3-max"])  # Apple gives no TDP
    assert catalog["apple-m3-max"].specs.tdp_w is None and "power model" not in step_summary(no_tdp)


@pytest.mark.parametrize("params", [dict(pp=2), dict(tp=2, pp=2),
                                    dict(phase="train", batch=8, seq=2048, pp=4, dtype="bf16")])
def test_the_step_is_one_device_s_as_the_analysis_counts_it(models, catalog, params):
    """A pipeline stage does its share of the layers: the star's intensity is the main
    chart's, its joules one device's FLOPs and bytes at the circuit energies."""
    a = analyze(models["llama-3-8b"], WorkloadParams(**{"dtype": "bf16", **params}), catalog["h100-sxm"])
    step = workload_points(a, circuit_roof("bf16"))[-1]
    # (the analysis divides whole FLOPs and bytes by the stages: a rounding of a few parts a million)
    assert step.intensity == pytest.approx(a.totals.intensity, rel=1e-4)
    assert step.joules == pytest.approx(a.totals.flops * FLOP_J + a.totals.bytes * BYTE_J, rel=1e-4)


def test_the_sentences_say_an_or_a_as_the_precision_is_read():
    from explorer.core.words.energy_words import article

    said = [article(p) for p in ("fp32", "int8", "bf16", "fp16")]
    assert said == ["an fp32", "an int8", "a bf16", "an fp16"]
