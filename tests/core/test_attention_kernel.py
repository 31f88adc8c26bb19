"""The fused attention kernel a step is costed with (``--attention-kernel``): each kernel's
shares of the matrix peak come from the efficiency file (FlashAttention 2's 33 % everywhere;
FlashAttention 3's and cuDNN's on Hopper, from the FlashAttention-3 paper's figures 5 and 6 at
16k tokens, head dim 128, as a third party transcribed them: 616 and 561, 539 and 516 TFLOP/s
of an H100's 989), the expected time charges a forward's products at the forward's share and
a backward's at the backward's, the bound does not move, and a device without a published
share for the kernel is refused, never costed with another kernel's."""

from __future__ import annotations

import io

import pytest

from explorer.commands import main as cli
from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import OpClass, expected_for, kernels_for
from explorer.core.hardware.efficiency import efficiency_for, published
from explorer.core.model import ops as op
from explorer.core.model.session import Session, load_session
from explorer.core.model.workload import WorkloadError, WorkloadParams

PEAK_TFLOPS = 989  # the H100 SXM5's dense 16-bit matrix peak the paper's shares are of
SHARES = {  # (forward, backward) of the matrix peak, by hand from the published speeds
    "fa2": (0.333, 0.333),  # FlashAttention 2: 329.3 TFLOP/s forward at 8k on H200 (Azure), both ways
    "fa3": (616 / PEAK_TFLOPS, 561 / PEAK_TFLOPS),
    "cudnn": (539 / PEAK_TFLOPS, 516 / PEAK_TFLOPS),
}
PRODUCTS = (op.Role.ATTN_SCORE, op.Role.ATTN_VALUE)


@pytest.mark.parametrize("device", ["h100-sxm", "h200-sxm"])
@pytest.mark.parametrize("kernel", list(SHARES))
def test_each_kernel_s_shares_on_hopper_are_its_published_speeds(catalog, device, kernel):
    family = efficiency_for(catalog[device], published())
    assert family is not None
    forward, backward = family.attention_shares(kernel)
    assert forward == pytest.approx(SHARES[kernel][0], abs=5e-4)  # (the file keeps three decimals)
    assert backward == pytest.approx(SHARES[kernel][1], abs=5e-4)


def _attention_ops(a):
    return [i for i, o in enumerate(a.ops) if o.role in PRODUCTS and float(a.flops[i]) > 0]


@pytest.mark.parametrize("kernel", list(SHARES))
def test_a_prompt_s_attention_runs_at_its_kernel_s_forward_share_and_the_bound_stays(models, catalog,
                                                                                     kernel):
    m, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    a = analyze(m, WorkloadParams(phase="prefill", seq=16384, attention_kernel=kernel), h100)
    base = analyze(m, WorkloadParams(phase="prefill", seq=16384), h100)
    assert a.totals.time_s == base.totals.time_s  # the bound does not depend on the kernel
    e = kernels_for(a)  # the kernel model (without the terms fitted to whole runs)
    assert e is not None
    peak, vector = a.roofs.matrix.flops_per_s, a.roofs.vector.flops_per_s
    assert peak == pytest.approx(PEAK_TFLOPS * 1e12, rel=1e-3)
    found = _attention_ops(a)
    assert found
    for i in found:
        o = a.ops[i]
        products = float(a.flops[i]) - float(o.vector_flops)
        arithmetic = products / (peak * SHARES[kernel][0]) + float(o.vector_flops) / vector
        assert arithmetic > float(a.bytes[i]) / a.roofs.bandwidth_bytes_per_s  # compute-bound at 16k
        work = float(e.op_time_s[i] - e.kernel_s[i])
        assert work == pytest.approx(arithmetic, rel=2e-3)  # (the file's shares: three decimals)


def test_in_training_the_backward_s_products_run_at_the_backward_s_share(models, catalog):
    # Full recomputation: 4 passes counted (2 forwards, a backward of 2); the kernel does 2
    # forwards at the forward's share and 2.5 forwards' products at the backward's.
    m, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    a = analyze(m, WorkloadParams(phase="train", seq=8192, recompute="full", attention_kernel="fa3"), h100)
    e = kernels_for(a)
    assert e is not None
    forward, backward = SHARES["fa3"]
    peak, vector = a.roofs.matrix.flops_per_s, a.roofs.vector.flops_per_s
    for i in _attention_ops(a):
        o = a.ops[i]
        products = float(a.flops[i]) - float(o.vector_flops)
        by_hand = products / 4 * (2 / forward + 2.5 / backward) / peak + float(o.vector_flops) / vector
        assert float(e.op_time_s[i] - e.kernel_s[i]) == pytest.approx(by_hand, rel=2e-3)
    fa2 = kernels_for(analyze(m, WorkloadParams(phase="train", seq=8192, recompute="full"), h100))
    assert fa2 is not None and e.parts[OpClass.ATTENTION] < 0.62 * fa2.parts[OpClass.ATTENTION]


@pytest.mark.parametrize(("kernel", "label"), [("fa3", "FlashAttention 3"), ("cudnn", "cuDNN")])
def test_a_kernel_without_a_published_share_on_the_device_is_refused_naming_it(models, catalog, kernel,
                                                                                 label):
    m, a100 = models["llama-3-8b"], catalog["a100-80gb-sxm"]
    with pytest.raises(WorkloadError) as refused:
        analyze(m, WorkloadParams(phase="prefill", seq=4096, attention_kernel=kernel), a100)
    text = str(refused.value)
    assert label in text and a100.name in text and "NVIDIA A100 (Ampere)" in text
    assert "--attention-kernel fa2" in text and "--efficiency bound" in text
    assert "NVIDIA H100 (Hopper), NVIDIA H200 (Hopper)" in text  # where its speed is published
    # the command says so and fails
    out, err = io.StringIO(), io.StringIO()
    rc = cli.run(cli.parse_args(["analyze", "--model", "llama-3-8b", "--hardware", "a100-80gb-sxm", "--phase",
                                 "prefill", "--seq", "4096", "--attention-kernel", kernel]), out, err)
    assert rc != 0 and label in err.getvalue()


@pytest.mark.parametrize("where", [dict(phase="decode"), dict(phase="prefill", attention="naive"),
                                   dict(phase="prefill", efficiency="bound"),
                                   dict(phase="decode", model="vit-b-16"),
                                   dict(phase="prefill", model="vit-b-16")])
def test_where_the_kernel_means_nothing_it_is_not_refused_and_changes_nothing(models, catalog, where):
    where = dict(where)
    model = where.pop("model", "llama-3-8b")
    m, a100 = models[model], catalog["a100-80gb-sxm"]
    # a decode step, a naive kernel, no expected time, a vision model (whose workload panel
    # hides the choice; its decode phase is a prompt too): the kernel is kept, unused
    a = analyze(m, WorkloadParams(**where, attention_kernel="fa3"), a100)
    default = analyze(m, WorkloadParams(**where), a100)
    e, e_default = expected_for(a), expected_for(default)
    assert (e is None) == (e_default is None)
    if e is not None and e_default is not None:
        assert e.time_s == e_default.time_s


def test_a_session_without_the_kernel_opens_with_fa2_and_fa3_round_trips(tmp_path):
    old = tmp_path / "old.yaml"
    Session(model="llama-3-8b", params=WorkloadParams(phase="prefill")).save(old)
    assert "attention_kernel" not in old.read_text()  # the default is not written: older files lack it
    assert load_session(old).params.attention_kernel == "fa2"
    new = tmp_path / "new.yaml"
    Session(model="llama-3-8b", params=WorkloadParams(phase="prefill", attention_kernel="fa3")).save(new)
    assert "attention_kernel: fa3" in new.read_text()
    assert load_session(new).params.attention_kernel == "fa3"


def test_the_window_s_document_refuses_the_kernel_a_lone_device_lacks(models, catalog):
    from explorer.document import Document

    lone = Document(catalog, models, Session(model="llama-3-8b", hardware=("a100-80gb-sxm",)))
    lone.set_params(phase="prefill")
    lone.set_params(attention_kernel="fa3")  # one device's prompt: refused, not costed (nor a crash)
    assert lone.params.attention_kernel == "fa2" and lone.analysis().params.attention_kernel == "fa2"
    hopper = Document(catalog, models, Session(model="llama-3-8b", hardware=("h100-sxm",)))
    hopper.set_params(phase="prefill")
    hopper.set_params(attention_kernel="fa3")
    assert hopper.params.attention_kernel == "fa3" and hopper.expected() is not None


def test_a_calibration_has_no_kernel_share_and_says_to_use_the_published_ones(catalog):
    from explorer.core.analysis.attention_kernel import why_refused

    h100 = catalog["h100-sxm"]
    asked = WorkloadParams(phase="train", attention_kernel="fa3", efficiency="calibrated")
    text = why_refused(asked, h100, None)
    assert text.startswith("FlashAttention 3 (--attention-kernel fa3) has no measured share")
    assert h100.name in text and "no calibration covers it" in text
    assert "--attention-kernel fa2" in text and "--efficiency published" in text


def test_a_device_with_no_calibration_gets_the_bound_alone_with_any_kernel(models, catalog, tmp_path,
                                                                           monkeypatch):
    """With --efficiency calibrated and no calibration of the device, FlashAttention 2 gives the
    roofline bound alone (no expected time); another kernel gives the same, not a refusal."""
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))  # (an empty data folder: no calibration)
    m, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    a = analyze(m, WorkloadParams(phase="prefill", efficiency="calibrated", attention_kernel="fa3"), h100)
    assert expected_for(a) is None
