"""deepseek-moe (DeepseekForCausalLM, v1, remote code) read from its config.json: ordinary
attention, the first layer dense, 64 routed experts (6 a token) and 2 shared ones; DeepSeek-V2
configs without hidden_act take DeepseekV2Config's silu, said so; Phi-3.5-MoE's class name
and MiniMax's linear attention."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.workload import WorkloadParams
from tests.core.test_hf_config import DEEPSEEK_V2_LITE, PHI35_MOE

# deepseek-ai/deepseek-moe-16b-base's shape: the defaults of DeepseekConfig as public copies of
# its configuration_deepseek.py carry them (vocab 102,400, hidden 2,048, 28 layers, 16 heads,
# intermediate 10,944, moe 1,408, 64 routed experts, 6 a token, 2 shared); the Hub's config.json
# itself was not opened here. first_k_dense_replace 1 (the copies default to 0) is the value
# that gives the repository's 16.4 B: with 0, layer 0 too is MoE and the count is 16.9 B.
DEEPSEEK_MOE_16B = {"architectures": ["DeepseekForCausalLM"], "model_type": "deepseek", "hidden_size": 2048,
                    "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 28,
                    "num_attention_heads": 16, "num_key_value_heads": 16, "n_shared_experts": 2,
                    "n_routed_experts": 64, "num_experts_per_tok": 6, "first_k_dense_replace": 1,
                    "moe_layer_freq": 1, "vocab_size": 102400, "max_position_embeddings": 4096,
                    "tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False}


def hand_count(active: bool) -> int:
    """DeepseekModel (vLLM's deepseek.py, the remote code's shapes): q, k, v, o; layer 0 a
    dense MLP of 10,944; then a gate (64 × d), 64 experts and a shared MLP of 2 × 1,408."""
    d, vocab = 2048, 102400
    attention, norms = 4 * d * d, 2 * d
    dense = 3 * d * 10944
    expert, shared, gate = 3 * d * 1408, 3 * d * 2 * 1408, 64 * d
    moe = gate + (6 if active else 64) * expert + shared
    return 2 * vocab * d + (attention + dense + norms) + 27 * (attention + moe + norms) + d


def test_deepseek_moe_16b():
    spec = spec_from_config(DEEPSEEK_MOE_16B, "deepseek-moe-16b/config.json")
    assert not spec.mla and spec.dense_layers == 1 and spec.shared_width == 2 * 1408
    assert spec.parameter_count() == hand_count(False) == 16_375_728_128
    assert spec.parameter_count(active=True) == hand_count(True)
    # DeepSeek-MoE's repository: "DeepSeekMoE 16B ... with 16.4B parameters"
    assert round(spec.parameter_count() / 1e8) / 10 == 16.4


def test_deepseek_v2_without_hidden_act_takes_silu_and_says_so():
    bare = {k: v for k, v in DEEPSEEK_V2_LITE.items() if k != "hidden_act"}
    spec = spec_from_config(bare, "v2-lite/config.json")
    assert spec.activation == "silu"
    assert spec.parameter_count() == spec_from_config(DEEPSEEK_V2_LITE, "c.json").parameter_count()
    assert spec.q_lora_rank == 0  # the file's null stands over DeepseekV2Config's 1,536
    a = analyze(spec, WorkloadParams(context=1024), load_catalog()["h100-sxm"])
    assert any("DeepseekV2Config defaults" in n and "hidden_act silu" in n for n in a.notes)


def test_phi_moe_s_class_name_is_read_without_its_model_type():
    named = {k: v for k, v in PHI35_MOE.items() if k != "model_type"}
    assert spec_from_config(named, "phi/config.json").parameter_count() == \
        spec_from_config(PHI35_MOE, "phi/config.json").parameter_count()


@pytest.mark.parametrize("config", [{"architectures": ["MiniMaxText01ForCausalLM"]},
                                    {"architectures": ["MiniMaxM1ForCausalLM"], "model_type": "minimax_m1"},
                                    {"model_type": "minimax"}])
def test_minimax_is_refused_by_name_with_the_reason(config):
    with pytest.raises(DataFileError, match=r"MiniMax.*linear attention"):
        spec_from_config(config, "minimax/config.json")
