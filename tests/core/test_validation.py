"""The bound and the expected time against published measurements of real runs
(resources/validation/published-runs.yaml): the bound is never above a measured time, the
expected time falls near it, and docs/validation.md's table is this table."""

from dataclasses import replace
from pathlib import Path

import pytest

from explorer.core.analysis.validation import BAND, check, markdown_table, read_runs, summary
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.efficiency import published

DOC = Path(__file__).resolve().parents[2] / "docs" / "validation.md"
# The share of runs whose expected time falls within BAND today. The goal is 0.8
# (a better model of matrix-product shapes and of mixture-of-experts kernels); this
# floor keeps a change from making it worse unnoticed.
# 37 of 44 with the all-reduces the engines run, MI300X's products at hipBLASLt's measured
# share of bandwidth and Megatron-LM's ten training runs: docs/validation.md says which runs miss
# and why.
IN_BAND_AT_LEAST = 0.8


@pytest.fixture(scope="module")
def checked(models, catalog):
    return [check(run, models, catalog, published()) for run in read_runs()]


def test_the_set_covers_devices_batches_parallel_layouts_and_experts():
    runs = read_runs()
    assert len(runs) >= 15
    assert {r.hardware for r in runs} >= {"a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x"}
    assert {r.kind for r in runs} >= {"generate", "prefill", "decode", "train"}
    assert {r.workload.get("tp", 1) for r in runs} >= {1, 2, 4, 8}
    assert max(r.workload["batch"] for r in runs) >= 128 and "mixtral-8x7b" in {r.model for r in runs}
    assert all(r.source.startswith("https://") and r.quote and r.derivation for r in runs)


def test_the_megatron_models_are_the_papers_count():
    """Eq. 2 of Narayanan et al. 2021, P = 12 l h² + 13 l h + (V + s) h, plus the final
    LayerNorm's 2 h (the equation leaves it out)."""
    from explorer.core.analysis.validation import run_models
    megatron = [m for m in run_models().values() if m.id.startswith("megatron-gpt-")]
    assert len(megatron) == 10
    for m in megatron:
        h, layers = m.d_model, m.layers
        assert m.parameter_count() == 12 * layers * h * h + 13 * layers * h + (51200 + 2048) * h + 2 * h


def test_the_bound_never_exceeds_a_measured_time(checked):
    over = [(c.run.id, round(c.bound_ratio, 3)) for c in checked if c.bound_s > c.run.measured_s]
    assert not over


def test_the_expected_time_falls_near_the_measured_one(checked):
    print("\n" + markdown_table(checked) + "\n" + summary(checked))
    assert all(c.expected_s is not None for c in checked)  # every device here has a family
    assert all(c.expected_s >= c.bound_s for c in checked)
    inside = sum(c.in_band for c in checked) / len(checked)
    assert inside >= IN_BAND_AT_LEAST, summary(checked)
    assert BAND == (0.8, 1.25)


def test_the_readmes_sentences_on_where_it_lands(checked):
    """docs/validation.md: "every NVIDIA run that is mostly decode at a batch of 8 or less comes
    within 0.8–1.25"; "every run outside the band comes out faster than measured"; Llama 3.1
    405B's pre-training "comes out slower than measured"; Megatron-LM's ten runs "come out at
    0.84–0.95 of their measured times"."""
    mostly_decode = [c for c in checked if c.run.kind == "decode"
                     or (c.run.kind == "generate" and c.run.output >= c.run.prompt)]
    small_decode = [c for c in mostly_decode if c.run.workload["batch"] <= 8 and c.run.hardware != "mi300x"]
    assert len(small_decode) >= 10 and all(c.in_band for c in small_decode)
    outside = [c for c in checked if not c.in_band]
    assert outside and all(c.expected_s < c.run.measured_s for c in outside)
    meta = next(c for c in checked if c.run.id == "llama-3.1-405b-pretraining-h100")
    assert meta.expected_s > meta.run.measured_s  # "slower than measured"
    megatron = [c.expected_ratio for c in checked if c.run.source == "https://arxiv.org/abs/2104.04473"]
    readme = " ".join(DOC.read_text(encoding="utf-8").split())
    assert len(megatron) == 10 and f"come out at {min(megatron):.2f}–{max(megatron):.2f} of their" in readme


def test_the_readme_says_how_ncclS_pick_would_land(models, catalog):
    runs = [replace(r, workload={**r.workload, "allreduce": "nccl"}) for r in read_runs()]
    inside = sum(check(r, models, catalog, published()).in_band for r in runs)
    readme = " ".join(DOC.read_text(encoding="utf-8").split())
    claim = f"Taking NCCL's pick for every one instead puts {inside} of the {len(runs)} runs in the band"
    assert claim in readme
    tp8 = check(next(r for r in runs if r.id == "gpt-fast-llama-2-7b-a100-tp8"), models, catalog, published())
    assert f"(gpt-fast's TP 8 at {tp8.expected_s / tp8.run.measured_s:.2f})" in readme


def test_the_readme_holds_this_table(checked):
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- validation: start -->\n")[1].split("\n<!-- validation: end -->")[0]
    assert block == markdown_table(checked) + "\n\n" + summary(checked), \
        "regenerate with: roofline-explorer validate --markdown"


def test_a_run_setting_what_its_kind_sets_is_refused(tmp_path):
    path = tmp_path / "runs.yaml"
    path.write_text("schema: 1\nruns:\n- {id: x, kind: decode, model: gpt2, hardware: h100-sxm, "
                    "workload: {batch: 1, context: 9}, context: 10, measured_s: 0.01, "
                    "source: https://example.org, where: t, quote: q, derivation: d, engine: e}\n")
    with pytest.raises(DataFileError, match="context is not a workload parameter a run sets"):
        read_runs(path)


def test_the_readme_s_sentences_on_mi300x(checked, models, catalog):
    """"that brings the runs of one to eight requests into the band"; "whose measured time a
    token grows by 14 ms from batch 1 to 128 (8.4 to 22.7 ms) where the modelled kernels
    grow by 4 ms"."""
    from explorer.core.analysis.analysis import analyze
    from explorer.core.analysis.expected import expected
    from explorer.core.analysis.validation import _steps
    from explorer.core.hardware.efficiency import efficiency_for

    mi300x = [c for c in checked if c.run.hardware == "mi300x"]
    assert all(c.in_band for c in mi300x if c.run.workload["batch"] <= 8)
    assert not any(c.in_band for c in mi300x if c.run.workload["batch"] >= 32)
    runs = {c.run.workload["batch"]: c.run for c in mi300x
            if c.run.model == "llama-3-70b" and c.run.prompt == 128}
    per_token = {b: runs[b].measured_s / runs[b].output for b in (1, 128)}
    family = efficiency_for(catalog["mi300x"], published())
    step = {}
    for b in (1, 128):
        params, _ = _steps(runs[b])[1]  # the decode steps
        step[b] = expected(analyze(models["llama-3-70b"], params, catalog["mi300x"]), family).time_s
    readme = " ".join(DOC.read_text(encoding="utf-8").split())
    claim = (f"grows by {round((per_token[128] - per_token[1]) * 1e3)} ms from batch 1 to 128 "
             f"({per_token[1] * 1e3:.1f} to {per_token[128] * 1e3:.1f} ms) where the modelled kernels "
             f"grow by {round((step[128] - step[1]) * 1e3)} ms")
    assert claim in readme
