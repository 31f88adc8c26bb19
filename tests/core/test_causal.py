"""The causal-mask option: a prefill computes only the query-key pairs the mask keeps
(t(t+1)/2 of t², capped by a sliding window); the bytes, decode and the default stay."""

import pytest

from explorer.core.model.blocks import causal_pairs
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.session import Session, load_session
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams
from tests.core.test_hf_config import MISTRAL_7B


def ops_of(model, **params):
    return {o.name: o for o in build_ops(model, WorkloadParams(**params))}


def test_pairs_kept_by_a_causal_mask():
    assert causal_pairs(4, 4) == 10  # 1 + 2 + 3 + 4
    assert causal_pairs(6, 4) == 10 + 2 * 4  # the last two queries see the window's 4
    assert causal_pairs(1, 1) == 1


def test_causal_prefill_counts_half_the_score_flops_and_the_same_bytes(models):
    model = models["llama-3-8b"]
    full = ops_of(model, phase="prefill", seq=512, causal=False)
    causal = ops_of(model, phase="prefill", seq=512)  # the default
    for name in ("attn_score", "attn_value"):
        products = 2 * 32 * 128 * (512 * 513 // 2)  # 2 × heads × head_dim × kept pairs, batch 1
        softmax = 5 * 32 * (512 * 513 // 2) if name == "attn_score" else 0
        assert causal[name].flops == products + softmax
        assert causal[name].bytes == full[name].bytes
        assert causal[name].flops / full[name].flops == pytest.approx(513 / 1024)
    assert causal["q_proj"] == full["q_proj"]
    assert ops_of(model, causal=False)["attn_score"] == ops_of(model)["attn_score"]  # decode: all tokens


def test_a_window_caps_the_pairs_a_causal_prefill_keeps():
    mistral = spec_from_config(MISTRAL_7B, "Mistral/config.json")
    causal = ops_of(mistral, phase="prefill", seq=8192, causal=True)["attn_value"]
    assert causal.flops == 2 * 32 * 128 * causal_pairs(8192, 4096)


def test_causal_is_saved_with_the_session_and_checked(tmp_path, catalog, models):
    session = Session(params=WorkloadParams(phase="prefill", causal=False))
    session.save(tmp_path / "s.yaml")
    assert "causal: false" in (tmp_path / "s.yaml").read_text()
    assert load_session(tmp_path / "s.yaml", set(catalog), set(models)) == session
    with pytest.raises(WorkloadError, match="causal must be true or false"):
        WorkloadParams(causal="yes")
