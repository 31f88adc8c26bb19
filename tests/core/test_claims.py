"""The claims registry: each kind of claim catches a wrong statement, and every sentence the
app shows (Explain, why-paragraphs, scenes, the design lab) holds over a grid of states."""

import itertools

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.memory import max_batch_that_fits
from explorer.core.model.workload import WorkloadParams
from explorer.core.words.batch_claims import Crossing, LevelsOff, MaxBatch
from explorer.core.words.claims import (
    Bound,
    Faster,
    Fits,
    OpsBound,
    Quantity,
    Ridge,
    State,
    faster,
    throughput,
)
from explorer.core.words.explain import explain_state
from explorer.core.words.sentences import Explanation, unbacked, verify


@pytest.fixture
def decode(catalog, models):
    """Llama 3 8B decode at context 128 on an A100 80 GB: compute-bound from batch 213."""
    return State(models["llama-3-8b"], WorkloadParams(context=128), catalog["a100-80gb-sxm"])


def test_each_kind_of_claim_catches_a_wrong_statement(decode, catalog):
    assert Bound(decode, "memory").check() is None
    assert "not compute-bound" in Bound(decode, "compute").check()
    assert Crossing(decode, 213).check() is None
    assert "still memory-bound at batch 212" in Crossing(decode, 212).check()
    assert "already compute-bound at batch 213" in Crossing(decode, 214).check()
    assert "compute-bound at batch" in Crossing(decode, None).check()
    top = max_batch_that_fits(decode.model, decode.params, decode.hardware)
    assert MaxBatch(decode, top).check() is None
    assert "fits too" in MaxBatch(decode, top - 1).check()
    assert "does not fit" in MaxBatch(decode, top + 1).check()
    assert Fits(decode, True).check() is None and Fits(decode, False).check()
    fp8 = decode.at(dtype="fp8")
    assert faster(decode, fp8).check() is None and faster(decode, fp8).phrase == "2.0× faster"
    assert Faster(decode, fp8, 3.0).check()
    assert faster(fp8, decode).phrase == "2.0× slower"
    ridge = 312e12 / 2039e9
    assert Ridge(decode.hardware, "bf16 matrix", ridge).check() is None
    assert Ridge(decode.hardware, "bf16 matrix", 2 * ridge).check()
    assert LevelsOff(decode, 152, top, 0.95).check() is None and LevelsOff(decode, 151, top, 0.95).check()
    assert Quantity("two", 2.0, "2", lambda: 2.0).check() is None
    assert Quantity("two", 3.0, "3", lambda: 2.0).check()
    assert OpsBound(decode, "all", "memory").check() is None
    assert "0 of" in OpsBound(decode, "role:gate_proj", "compute").check()


def test_small_changes_read_in_percent(decode):
    assert faster(decode, decode).phrase == "no faster"
    eight = decode.at(batch=8)
    assert faster(decode, eight).phrase.endswith("% slower")


def test_verify_ties_words_to_claims(decode):
    claim = throughput(decode)
    assert verify(f"It makes {claim.phrase}.", [claim]) == []
    assert "does not say" in verify("It makes many tokens.", [claim])[0]
    assert unbacked("This runs 3× faster and fits.", []) == [
        "'faster' states a speed comparison that no claim backs",
        "'fits' states a memory fit that no claim backs"]
    assert unbacked("It fits.", [Fits(decode, True)]) == []


GPUS = ("a100-80gb-sxm", "h100-sxm", "t4", "l4", "mi300x", "rtx-4090", "v100-sxm2", "b200")
CPUS = ("xeon-platinum-8480", "epyc-9654", "core-i9-13900k", "apple-m3-max")


def _grid():
    models = ("gpt2", "llama-3-8b", "llama-3-70b", "resnet-50")
    shapes = (("decode", 1), ("decode", 64), ("decode", 4096), ("prefill", 1))
    for gpu, cpu in zip(GPUS, itertools.cycle(CPUS), strict=False):
        for model, (phase, batch), dtype in itertools.product(models, shapes,
                                                              ("fp32", "bf16", "fp16", "fp8")):
            yield gpu, cpu, model, phase, batch, dtype


@pytest.mark.parametrize("gpu,cpu,model,phase,batch,dtype",
                         [pytest.param(*g, id="-".join(map(str, g))) for g in _grid()])
def test_every_explain_sentence_holds(catalog, models, gpu, cpu, model, phase, batch, dtype):
    """Explain, on a GPU with a CPU overlaid and on the CPU alone, with an op selected: every
    claim recomputes, every number it states is in the text, every direction word is backed."""
    params = WorkloadParams(phase=phase, batch=batch, dtype=dtype, context=512, seq=512)
    spec = models[model]
    op = next(o.name for o in analyze(spec, params, catalog[gpu]).ops
              if o.role in ("down_proj", "fc2", "conv"))
    for devices in ([catalog[gpu], catalog[cpu]], [catalog[cpu]]):
        for e in explain_state(spec, params, devices, op):
            assert isinstance(e, Explanation)
            assert e.problems() == [], (e.title, e.text)


def test_the_explain_panel_never_overstates_lower_precision(catalog, models):
    """Where a lower precision makes the step slower, or the device cannot compute in it,
    the text says so."""
    for ident in (*GPUS, *CPUS):
        hw = catalog[ident]
        for dtype, lower in (("fp32", "bf16"), ("bf16", "fp8"), ("fp16", "fp8")):
            params = WorkloadParams(phase="prefill", seq=256, dtype=dtype)
            texts = [e.text for e in explain_state(models["llama-3-8b"], params, [hw])
                     if e.title == "Lower precision"]
            if not texts:
                continue
            text = texts[0]
            if hw.peak(lower) is None:
                assert f"has no {lower} arithmetic" in text, (ident, dtype)
            a = analyze(models["llama-3-8b"], params, hw)
            b = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=256, dtype=lower), hw)
            word = "faster" if b.totals.time_s < 0.99 * a.totals.time_s else (
                "slower" if b.totals.time_s > 1.01 * a.totals.time_s else "no faster")
            assert word in text, (ident, dtype, text)


def test_a_ratio_of_a_field_that_is_no_number_names_the_placeholder(catalog):
    """``ratio:`` of a text field (``core_label``) is refused with the placeholder named, as
    any other placeholder that cannot be filled, not a TypeError from dividing None."""
    from explorer.core.words.placeholders import fill

    with pytest.raises(KeyError, match="core_label"):
        fill("{ratio:h100-sxm/core_label:a100-80gb-sxm/bandwidth}", catalog)


@pytest.mark.parametrize("ident", ["resnet-50", "vit-b-16"])
def test_weights_read_is_checked_for_a_model_without_tokens(catalog, models, ident):
    """A CNN's or a ViT's step reads every weight once: ``{step/weights-read}`` holds (its
    check once asked the model for a transformer's vocabulary)."""
    from explorer.core.words.placeholder_context import Context
    from explorer.core.words.placeholders import fill_with_claims

    state = State(models[ident], WorkloadParams(batch=8), catalog["h100-sxm"])
    _, claims = fill_with_claims("{step/weights-read}", Context(catalog, models, state))
    assert len(claims) == 1 and claims[0].check() is None
