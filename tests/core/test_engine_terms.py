"""The terms fitted to whole runs (explorer/core/analysis/engine_terms.py, run_fit.py): the
bundled file is the fit of today's published runs, a fit finds terms it was built from, a
held-out prediction never sees its own source, and the terms only ever add time.

``python -m tests.core.test_engine_terms --write`` writes resources/efficiency/engines.yaml
again after the runs or the model change."""

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from explorer.core.analysis import run_fit
from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.engine_terms import (
    TYPICAL,
    EngineTerm,
    FitClass,
    apply,
    band_words,
    neutral_terms,
    read_terms,
)
from explorer.core.analysis.expected import expected, expected_for, kernels_for
from explorer.core.analysis.validation import check, read_runs
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.efficiency import efficiency_for, published
from explorer.core.hardware.hardware import DeviceKind
from explorer.core.model.applicability import Phase
from explorer.core.model.parameters import ENGINES
from explorer.core.model.workload import WorkloadParams
from explorer.paths import resource_path

FILE = Path(resource_path("efficiency", "engines.yaml"))


def fitted_rows(models, catalog) -> list[run_fit.RunRow]:
    checked = [check(run, models, catalog, published(), neutral_terms()) for run in read_runs()]
    return [c.row for c in checked if c.row is not None]


@pytest.fixture(scope="module")
def rows(models, catalog):
    return fitted_rows(models, catalog)


def test_the_bundled_terms_are_the_fit_of_todays_runs(rows):
    assert FILE.read_text(encoding="utf-8") == run_fit.terms_yaml(run_fit.terms_of(rows)), \
        "resources/efficiency/engines.yaml is stale: python -m tests.core.test_engine_terms --write"


def test_every_engine_offered_has_runs_of_its_own_and_every_fitted_one_is_offered():
    terms = read_terms()
    # No published run on an accelerator (a TPU, a Gaudi): they take the GPUs' terms.
    assert set(terms.kinds) == set(DeviceKind) - {DeviceKind.ACCELERATOR}
    assert terms.of(DeviceKind.ACCELERATOR) is terms.kinds[DeviceKind.GPU]
    assert set().union(*(k.engines for k in terms.kinds.values())) == set(ENGINES)
    for kind in terms.kinds.values():
        assert all(fit.runs > 0 and fit.sources for fit in kind.engines.values())
        named = sum(f.runs for e, f in kind.engines.items() if e != TYPICAL)
        assert kind.engines[TYPICAL].runs == kind.runs == named


def test_nnls_is_the_least_squares_over_the_non_negative_orthant():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(12, 3)), rng.normal(size=12)
    x = run_fit.nnls(a, b)
    assert (x >= 0).all()
    grid = np.linspace(0, 3, 61)
    best = min(np.linalg.norm(a @ np.array([p, q, r]) - b) for p in grid for q in grid for r in grid)
    assert np.linalg.norm(a @ x - b) <= best + 1e-9
    free = np.linalg.lstsq(a, b, rcond=None)[0]
    if (free >= 0).all():
        assert x == pytest.approx(free)


def _row(ident: str, group: str, engine: str, units: dict[str, float], base: float,
         truth: dict[str, float]) -> run_fit.RunRow:
    """A run whose measured time is its base plus exactly ``truth``'s terms."""
    measured = base + sum(v * units[c] for c, v in truth.items())
    return run_fit.RunRow(ident, group, engine, Phase.DECODE, "h100", "h100-sxm", DeviceKind.GPU, measured,
                          0.5 * base, base, units)


def test_a_fit_finds_the_terms_the_runs_were_made_with():
    """Runs made from known terms (experts 2× slower, 0.5 ms a step for one engine, 30 µs a
    request for the other) give them back, up to the ridge's small pull."""
    truth = {"a": {FitClass.EXPERT.value: 1.0, EngineTerm.STEP.value: 0.5e-3},
             "b": {FitClass.EXPERT.value: 1.0, EngineTerm.SEQUENCE.value: 30e-6}}
    rng = np.random.default_rng(3)
    rows = []
    for i in range(40):
        engine = "ab"[i % 2]
        units = {c: 0.0 for c in run_fit.COLUMNS}
        units.update({FitClass.DENSE.value: rng.uniform(1e-3, 1e-2),
                      FitClass.EXPERT.value: rng.uniform(0, 1e-2),
                      EngineTerm.STEP.value: 1.0, EngineTerm.SEQUENCE.value: float(rng.integers(1, 256))})
        kernels = units[FitClass.DENSE.value] + units[FitClass.EXPERT.value]
        rows.append(_row(f"r{i}", f"g{i}", engine, units, kernels, truth[engine]))
    factors, engines = run_fit.fit(rows)
    assert factors[FitClass.EXPERT] == pytest.approx(2.0, rel=0.05)
    assert factors[FitClass.DENSE] == pytest.approx(1.0, abs=0.05)
    a, b = engines["a"].terms, engines["b"].terms  # each engine's own cost, pulled towards the other's
    assert a[EngineTerm.STEP] == pytest.approx(0.5, rel=0.4) and b[EngineTerm.STEP] < 0.5 * a[EngineTerm.STEP]
    assert b[EngineTerm.SEQUENCE] == pytest.approx(30, rel=0.4)
    assert a[EngineTerm.SEQUENCE] < 0.5 * b[EngineTerm.SEQUENCE]
    assert all(abs(run_fit.predict(r, factors, engines) / r.measured_s - 1) < 0.05 for r in rows)


def test_a_few_runs_no_factor_can_explain_do_not_set_the_factors():
    """Thirty runs made with experts 1.5× slower, and one source of three runs 40× slower
    than anything its terms could give (an engine leaving the matrix units idle): Huber's
    weight keeps the expert factor at 1.5 and the dense one near 1, where plain least
    squares in log scale would let the three runs set them."""
    truth = {FitClass.EXPERT.value: 0.5}
    rng = np.random.default_rng(5)
    rows = []
    for i in range(33):
        units = {c: 0.0 for c in run_fit.COLUMNS}
        units.update({FitClass.DENSE.value: rng.uniform(1e-3, 1e-2),
                      FitClass.EXPERT.value: rng.uniform(1e-3, 1e-2), EngineTerm.STEP.value: 1.0})
        kernels = units[FitClass.DENSE.value] + units[FitClass.EXPERT.value]
        row = _row(f"r{i}", f"g{i}" if i < 30 else "wild", TYPICAL, units, kernels, truth)
        rows.append(replace(row, measured_s=40 * row.measured_s) if i >= 30 else row)
    factors, _ = run_fit.fit(rows)
    assert factors[FitClass.EXPERT] == pytest.approx(1.5, rel=0.1)
    assert factors[FitClass.DENSE] < 1.2


def test_a_product_s_reading_of_its_weights_is_its_own_class(models, catalog):
    """A product's expected work is its arithmetic and the reading of its bytes, the shorter
    hidden as far as the overlap says (``expected.product_parts``): the reading's seconds
    are ``weight-bound products``, the rest the arithmetic's class. Llama 3 8B: on an H100 at
    batch 1 in decode the layers' products are nearly all reading; a 2,048-token prompt's
    nearly all arithmetic (``dense products``); on a Ryzen 9 7950X (no matrix unit, a packing
    product's two times added) a prompt's arithmetic is ``products on vector units`` and its
    reading, at the family's share of bandwidth, added whole. Every op's seconds add up to
    its work."""
    from explorer.core.analysis.engine_terms import class_seconds
    from explorer.core.model import ops as op

    model = models["llama-3-8b"]
    layer = (op.Role.QKV_PROJ, op.Role.O_PROJ, op.Role.GATE_PROJ, op.Role.UP_PROJ, op.Role.DOWN_PROJ,
             op.Role.Q_PROJ, op.Role.K_PROJ, op.Role.V_PROJ)
    prompt = WorkloadParams(phase="prefill", seq=2048)
    cases = (("h100-sxm", WorkloadParams(), FitClass.DENSE, (0.9, 1)),
             ("h100-sxm", prompt, FitClass.DENSE, (0, 0.1)),
             ("ryzen-9-7950x", prompt, FitClass.VECTOR, (0, 0.1)))
    for device, params, arithmetic, reading_share in cases:
        a = analyze(model, params, catalog[device])
        e = expected(a, efficiency_for(catalog[device], published()))
        work = e.op_time_s - e.kernel_s
        seconds = class_seconds(a, work, e.reading_s)
        mine = [i for i, o in enumerate(a.ops) if o.role in layer]
        assert np.allclose(sum(seconds.values())[mine], work[mine])
        read = seconds[FitClass.WEIGHTS][mine].sum() / work[mine].sum()
        assert reading_share[0] <= read <= reading_share[1], (device, params.phase, read)
        assert np.allclose(seconds[FitClass.WEIGHTS][mine] + seconds[arithmetic][mine], work[mine])
    family = efficiency_for(catalog["ryzen-9-7950x"], published())
    assert family is not None and family.value("gemm_overlap") == 0  # the reading is added whole
    i = next(i for i, o in enumerate(a.ops) if o.role == op.Role.GATE_PROJ)
    assert seconds[FitClass.WEIGHTS][i] == pytest.approx(
        float(a.bytes[i]) / (a.roofs.bandwidth_bytes_per_s * family.value("gemm_bandwidth")))
    head = next(i for i, o in enumerate(a.ops) if o.role == op.Role.LM_HEAD)  # one row: its reading
    assert seconds[FitClass.WEIGHTS][head] == pytest.approx(work[head])


def test_the_rank_term_counts_the_devices_of_the_model_beyond_the_first(models, catalog):
    """At inference a step pays ``rank_us`` for each of the tp × pp devices beyond the
    first (7 at TP 8, none on one device); a training step, none."""
    from explorer.core.analysis.engine_terms import EngineFit, features, host_s

    model, h100 = models["mixtral-8x7b"], catalog["h100-sxm"]
    family = efficiency_for(h100, published())
    train = WorkloadParams(phase="train", seq=4096, batch=8, tp=8)
    for params, ranks in ((WorkloadParams(tp=8), 7.0), (WorkloadParams(tp=2, pp=2), 3.0),
                          (WorkloadParams(), 0.0), (train, 0.0)):
        a = analyze(model, params, h100)
        assert features(a, expected(a, family))[EngineTerm.RANK.value] == ranks
    fit = EngineFit("x", {t: 0.0 for t in EngineTerm} | {EngineTerm.RANK: 150.0}, 1)
    assert host_s(fit, Phase.DECODE, 8, 8) == pytest.approx(7 * 150e-6)
    assert host_s(fit, Phase.TRAIN, 8, 8) == 0.0


def test_a_held_out_prediction_never_sees_its_own_source(rows):
    """Changing every measured time of one source changes the other sources' held-out
    predictions, never its own."""
    group = rows[0].group
    moved = [replace(r, measured_s=3 * r.measured_s) if r.group == group else r for r in rows]
    before = {h.row.id: h.expected_s for h in run_fit.held_out(rows)}
    after = {h.row.id: h.expected_s for h in run_fit.held_out(moved)}
    own = [r.id for r in rows if r.group == group]
    assert own and all(after[i] == pytest.approx(before[i], rel=1e-12) for i in own)
    assert any(after[r.id] != pytest.approx(before[r.id], rel=1e-6) for r in rows if r.group != group)


def test_the_band_weighs_each_source_s_runs_together_as_one():
    """By hand: source a's three runs at 1.0 weigh 1/3 each, b's one run at 2.0 weighs 1;
    their middles sit at 1/12, 3/12, 5/12 and 9/12 of the weight, so the 5th percentile is
    a's 1.0 and the 95th b's 2.0 (over runs, numpy's 95th would be 1.85). With 20 sources of
    one run each at e^0, e^0.1, …, e^1.9, the middles sit at 0.025, 0.075, …, 0.975: the
    5th percentile falls halfway between the first two (e^0.05), the 95th halfway between
    the last two (e^1.85)."""
    a, b = [("a", 1.0)] * 3, [("b", 2.0)]
    assert run_fit.band_of(a + b) == pytest.approx((1.0, 2.0))
    assert np.percentile([1.0, 1.0, 1.0, 2.0], 95) == pytest.approx(1.85)
    twenty = [(f"s{i}", math.exp(0.1 * i)) for i in range(20)]
    assert run_fit.band_of(twenty) == pytest.approx((math.exp(0.05), math.exp(1.85)), rel=1e-12)
    # a 21st source of ten runs at 1.0 weighs as one run at 1.0 would: the same band
    ten, one = [*twenty, *[("t", 1.0)] * 10], [*twenty, ("t", 1.0)]
    assert run_fit.band_of(ten) == pytest.approx(run_fit.band_of(one))
    assert run_fit.band_of([]) == (1.0, 1.0)


def test_a_factor_per_cell_places_at_most_each_cell_s_densest_interval():
    """By hand, with every term neutral (runs of kernels alone, measured at their kernels'
    time over the ratios below): cell x's ratios 1.0, 1.2, 1.5 and 1.6 — one factor puts
    1.2, 1.5 and 1.6 within 0.8–1.25 (1.6 / 1.2 = 1.33 ≤ 1.25 / 0.8 = 1.5625), never all four
    (1.6 / 1.0 > 1.5625); cell y's 0.5 and 2.0, one of them (2.0 / 0.5 = 4). One cell for all
    six: three (1.2, 1.5 and 1.6, or 1.5, 1.6 and 2.0); a cell for each run: all six."""
    ratios = {"x": [1.0, 1.2, 1.5, 1.6], "y": [0.5, 2.0]}
    rows = []
    for cell, values in ratios.items():
        for i, r in enumerate(values):
            units = {c: 0.0 for c in run_fit.COLUMNS}
            rows.append(run_fit.RunRow(f"{cell}{i}", f"{cell}{i}", TYPICAL, Phase.DECODE, "f", cell,
                                       DeviceKind.CPU, 1.0 / r, 0.5, 1.0, units))
    band = (0.8, 1.25)
    assert run_fit.ceiling(rows, lambda r: r.hardware, band) == 3 + 1
    assert run_fit.ceiling(rows, lambda r: 0, band) == 3
    assert run_fit.ceiling(rows, lambda r: r.id, band) == 6
    assert run_fit.ceiling([], lambda r: 0, band) == 0
    # the band's ends count: 0.8 and 1.25 are one factor apart (1.25 / 0.8), so both are placed
    assert run_fit._most_within([math.log(0.8), math.log(1.25)], math.log(1.25 / 0.8)) == 2
    assert run_fit._most_within([math.log(0.8), math.log(1.2501)], math.log(1.25 / 0.8)) == 1


@pytest.mark.parametrize(("model", "device", "params"), [
    ("llama-3-8b", "h100-sxm", WorkloadParams()),
    ("llama-3-70b", "h100-sxm", WorkloadParams(tp=4, batch=64, context=4096)),
    ("mixtral-8x7b", "a100-80gb-sxm", WorkloadParams(phase="prefill", seq=2048, tp=2)),
    ("llama-3-8b", "h100-sxm", WorkloadParams(phase="train", seq=4096, batch=8, dp=8)),
    ("llama-3-8b", "ryzen-9-7950x", WorkloadParams(dtype="int8", batch=2)),  # CPUs: the two parts add
    ("llama-3-8b", "ryzen-9-7950x", WorkloadParams(phase="prefill", seq=14, dtype="int8")),
    ("mixtral-8x7b", "apple-m4-max-cpu", WorkloadParams(phase="prefill", seq=512, dtype="int8", threads=8)),
])
def test_the_terms_only_add_time_and_the_band_holds_the_expected_time(models, catalog, model, device, params):
    for engine in ENGINES:
        a = analyze(models[model], replace(params, engine=engine), catalog[device])
        kernels, fitted = kernels_for(a), expected_for(a)
        assert kernels is not None and fitted is not None and fitted.band is not None
        assert a.totals.time_s <= kernels.time_s <= fitted.time_s
        assert fitted.band[0] < fitted.time_s < fitted.band[1]
        assert sum(fitted.parts.values()) == pytest.approx(fitted.time_s, rel=1e-9)
        own = engine in read_terms().of(catalog[device].kind).engines  # else typical's stand in
        assert fitted.engine == (engine if own else TYPICAL)


def test_a_family_without_runs_of_its_own_gets_a_wider_band(models, catalog):
    terms = read_terms()
    a = analyze(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"])
    e = expected(a, efficiency_for(catalog["h100-sxm"], published()))
    own = apply(a, e, terms, TYPICAL)
    other = apply(a, e, replace(terms, validated=frozenset()), TYPICAL)
    assert own.time_s == other.time_s and own.band is not None and other.band is not None
    assert other.band[0] < own.band[0] and other.band[1] > own.band[1]
    low, high = terms.of(DeviceKind.GPU).band
    assert own.band == pytest.approx((own.time_s / max(high, 1), own.time_s / min(low, 1)))
    gpu = terms.of(DeviceKind.GPU)
    assert band_words(catalog["h100-sxm"], terms=terms) == (
        f"a band that held the measured time of {gpu.held:.1%} of 89 published GPU runs ({gpu.sources} "
        f"sources), each predicted without its source, the expected time itself within 0.8–1.25× of the "
        f"measured one for {gpu.within:.1%} of them")
    assert band_words(catalog["h100-sxm"], "with calibrated efficiency", terms) == \
        "the band of 89 published GPU runs held out, not checked with calibrated efficiency"
    assert band_words(catalog["h100-sxm"], terms=replace(terms, validated=frozenset())) == \
        "a band 2× as wide in log scale as the devices' with runs: no published run on NVIDIA H100 SXM5 80 GB"


def test_what_the_band_held_is_the_share_of_held_out_runs_inside_it(rows):
    """And the share of them whose expected time fell within 0.8–1.25 of the measured one."""
    held = run_fit.held_out(rows)
    for kind in (DeviceKind.GPU, DeviceKind.CPU):
        mine = [h for h in held if h.row.kind == kind]
        terms = read_terms().of(kind)
        assert terms.held == pytest.approx(sum(h.covered for h in mine) / len(mine), abs=5e-5)
        assert terms.within == pytest.approx(sum(0.8 <= h.ratio <= 1.25 for h in mine) / len(mine), abs=5e-5)


def test_a_band_of_one_signed_errors_still_holds_the_expected_time(models, catalog):
    """The CPUs' held-out runs all came out slower than expected: their band starts at the
    expected time itself rather than above it."""
    a = analyze(models["llama-3-8b"], WorkloadParams(dtype="int8", weight_dtype="int8", engine="llama.cpp"),
                catalog["ryzen-9-7950x"])
    e = expected_for(a)
    assert e is not None and e.band is not None and e.band[0] <= e.time_s <= e.band[1]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("    attention: ", "    attention: -"),
     "'classes.attention': must be a number from 1 to 100"),
    (lambda t: t.replace("  - id: typical", "  - id: usual"), "has no 'typical' engine"),
    (lambda t: t.replace("schema: 3", "schema: 4"), "newer version"),
    (lambda t: t.replace("schema: 3", "schema: 2"), "no longer reads"),
    (lambda t: t.replace("  within: 0.", "  within: 1."), "'within': must be a number from 0 to 1"),
    (lambda t: t.replace("  band:\n  - ", "  band:\n  - -"), "two ratios above 0"),
    (lambda t: t.replace("- kind: gpu", "- kind: tpu"), "kind"),
])
def test_a_broken_terms_file_is_refused_by_name(tmp_path, edit, message):
    path = tmp_path / "engines.yaml"
    path.write_text(edit(FILE.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(DataFileError, match=message):
        read_terms(path)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    from explorer.core.hardware.catalog import load_catalog
    from explorer.core.model.presets import load_models

    FILE.write_text(run_fit.terms_yaml(run_fit.terms_of(fitted_rows(load_models(), load_catalog()))),
                    encoding="utf-8")


def test_every_catalogue_device_has_an_expected_time_and_a_wider_band_without_runs_of_its_own(models,
                                                                                              catalog):
    """Every device borrows its family's factors at least (resources/efficiency/published.yaml);
    a device no published run was made on says so with a band twice as wide in log scale."""
    terms = read_terms()
    widths = {}
    for device in catalog.values():
        a = analyze(models["qwen1.5-0.5b"], WorkloadParams(), device)
        e = expected_for(a)
        assert e is not None and e.band is not None, device.id
        widths[device.id] = (np.log(e.band[1] / e.band[0]), device.id in terms.validated, device.kind)
    for kind in (DeviceKind.GPU, DeviceKind.CPU):
        own = {w for w, validated, k in widths.values() if validated and k == kind}
        borrowed = {w for w, validated, k in widths.values() if not validated and k == kind}
        assert len(own) >= 1 and borrowed and all(b > max(own) for b in borrowed)
        if kind == DeviceKind.GPU:  # a band around 1: exactly twice as wide (a CPU's is stretched to hold 1)
            assert all(b == pytest.approx(2 * max(own)) for b in borrowed)
    # An accelerator (no runs of its kind) takes the GPUs' terms: a GPU's borrowed band.
    gpu_borrowed = {w for w, validated, k in widths.values() if not validated and k == DeviceKind.GPU}
    accelerators = {w for w, _, k in widths.values() if k == DeviceKind.ACCELERATOR}
    assert accelerators and all(w == pytest.approx(max(gpu_borrowed)) for w in accelerators)
