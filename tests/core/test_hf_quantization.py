"""A quantized checkpoint's ``quantization_config`` read into the bytes of each class of its
weights (``explorer.core.model.quantization``): DeepSeek-R1's fp8 blocks on 8 H200s, Neural
Magic's per-tensor fp8 Llama 3 and unsloth's nf4 Llama 3 against the size of their own
weight files, GPT-OSS's mxfp4 experts, AWQ, GPTQ, compressed-tensors and HQQ; the user's
``--weight-dtype`` still overrides, and the note says which was used."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.memory import weights_and_kv
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model import parallel
from explorer.core.model.hf_config import spec_from_config, stored_precision
from explorer.core.model.quantization import (
    ATTENTION,
    EMBEDDING,
    EXPERTS,
    LM_HEAD,
    MLP,
    ROUTER,
    QuantizationError,
    value_bytes,
)
from explorer.core.model.quantization_formats import read_quantization
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadParams
from tests.core.test_hf_config import MIXTRAL_8X7B, QWEN3_30B_A3B

CONFIGS = Path(__file__).parents[2] / "resources" / "models" / "configs"
# deepseek-ai/DeepSeek-V3, README_WEIGHTS.md (commit 0b39205a), "FP8 Weight Documentation":
# "DeepSeek-V3 natively supports FP8 weight format with 128x128 block scaling", the block
# below, and weight_scale_inv "stores the dequantization scale for each weight block",
# "Storage Format: float32 Tensor". DeepSeek-R1's config.json (DeepseekV3ForCausalLM, the
# same 671 B shape as this repository's deepseek-v3.json) carries the same block (issue 56).
DEEPSEEK_FP8 = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                "weight_block_size": [128, 128]}
# neuralmagic/Meta-Llama-3-8B-Instruct-FP8's config.json and the total_size of its
# model.safetensors.index.json (9,081,202,432 bytes), as copied into llm-d/llm-d-kv-cache-manager
# tests/e2e/redis_mock/testdata/local-llama3/ (commit eea3a359); its README: "Symmetric
# per-tensor quantization", "Only the weights and activations of the linear operators within
# transformers blocks are quantized" (the index lists lm_head.weight with no scale).
LLAMA3_FP8 = {"_name_or_path": "meta-llama/Meta-Llama-3-8B-Instruct", "architectures": ["LlamaForCausalLM"],
              "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 128000,
              "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
              "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "llama",
              "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
              "pretraining_tp": 1,
              "quantization_config": {"quant_method": "fp8", "activation_scheme": "static"},
              "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 500000.0,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.40.0",
              "use_cache": True, "vocab_size": 128256}
LLAMA3_FP8_FILES = 9_081_202_432
# unsloth/llama-3-8b-Instruct-bnb-4bit's config.json (snapshot fd5a4dc3), as transformers
# printed it loading the repository in a public LLaMA-Factory training log (found with the
# code index), which also shows the download of its one weight file: "model.safetensors:
# 100% 5.70G/5.70G" (tqdm's decimal units).
LLAMA3_NF4 = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
              "bos_token_id": 128000, "eos_token_id": 128009, "head_dim": 128, "hidden_act": "silu",
              "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
              "max_position_embeddings": 8192, "mlp_bias": False, "model_type": "llama",
              "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
              "pad_token_id": 128255, "pretraining_tp": 1,
              "quantization_config": {"_load_in_4bit": True, "_load_in_8bit": False,
                                      "bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_quant_storage": "uint8",
                                      "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True,
                                      "llm_int8_enable_fp32_cpu_offload": False,
                                      "llm_int8_has_fp16_weight": False, "llm_int8_skip_modules": None,
                                      "llm_int8_threshold": 6.0, "load_in_4bit": True, "load_in_8bit": False,
                                      "quant_method": "bitsandbytes"},
              "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 500000.0,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.51.3",
              "unsloth_version": "2024.9", "use_cache": True, "vocab_size": 128256}
# openai/gpt-oss-20b and -120b's config.json (https://huggingface.co/openai/gpt-oss-120b/blob/
# main/config.json), as quoted in xinyuwei-david/david-share Deep-Learning/OAI-OSS-on-Azure.
GPT_OSS_MXFP4 = {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                            "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"}
# What AutoAWQ writes to config.json: AwqConfig(bits, group_size, zero_point, version).to_dict()
# with its usual quant_config {"zero_point": True, "q_group_size": 128, "w_bit": 4, "version": "GEMM"}.
AWQ = {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq",
       "version": "gemm", "zero_point": True}


def _h200():
    return load_catalog()["h200-sxm"]


def _r1():
    config = json.loads((CONFIGS / "deepseek-v3.json").read_text())
    config = {**config, "_name_or_path": "deepseek-ai/DeepSeek-R1", "torch_dtype": "bfloat16",
              "quantization_config": DEEPSEEK_FP8}
    return spec_from_config(config, "DeepSeek-R1/config.json")


def test_deepseek_r1_on_8_h200s_holds_its_fp8_blocks_and_fits():
    """Per device at TP 8: every projection (attention, dense MLP, shared and routed experts)
    at a byte a weight plus a float32 scale per 128 × 128 block; the embedding table, the LM
    head, the routers (and their score bias) and the norms at bf16. bf16 throughout would be
    157.9 GiB, past the 126 GiB budget; fp8 everywhere 78.96 GiB (84.8 GB)."""
    spec = _r1()
    params = stored_precision(WorkloadParams(tp=8), spec)
    assert params.weight_dtype is None  # the file's quantization sets the bytes
    d, heads, q_rank, kv_rank, nope, rope, v = 7168, 128 // 8, 1536, 512, 128, 64, 128
    # the MLA projections one device holds (its 16 heads); the q and kv latent norms stay bf16
    attention = (d * q_rank + q_rank * heads * (nope + rope) + d * (kv_rank + rope)
                 + kv_rank * heads * (nope + v) + heads * v * d)
    dense = 3 * d * (18432 // 8)
    routed = 256 * 3 * d * (2048 // 8) + 3 * d * (2048 // 8)  # 256 experts + the shared one
    quantized = 61 * attention + 3 * dense + 58 * routed
    vocab = 129280 // 8
    unquantized = (2 * vocab * d + 58 * (d * 256 + 256) + 61 * (2 * d + q_rank + kv_rank)
                   + d)  # tables, routers, norms
    expected = quantized * (1 + 4 / (128 * 128)) + unquantized * 2
    weights, _ = weights_and_kv(spec, params)
    assert weights == pytest.approx(expected, rel=1e-12)
    assert weights / 2**30 == pytest.approx(79.29, abs=0.01)  # 85.1 GB: 84.8 GB at fp8 throughout + scales
    everything_fp8 = parallel.device_parameters(spec, params.split)
    assert everything_fp8 / 1e9 == pytest.approx(84.8, abs=0.05)
    analysis = analyze(spec, params, _h200())
    assert analysis.totals.weight_bytes == pytest.approx(expected, rel=1e-12)
    assert analysis.totals.weight_bytes < analysis.totals.memory_budget_bytes  # it fits now
    note = next(n for n in analysis.notes if "quantization_config" in n)
    assert "128×128 blocks with a float32 scale" in note and "8.002 bits a weight" in note
    assert "W8A8" in note and "--weight-dtype overrides" in note
    assert not any("stores its weights in bf16" in n for n in analysis.notes)


def test_deepseek_r1_s_ops_read_a_byte_a_weight_where_the_file_has_fp8():
    spec = _r1()
    ops = {o.name: o for o in build_ops(spec, WorkloadParams(batch=1, context=4096))}
    block = 1 + 4 / 16384
    assert ops["o_proj"].weight_bytes == pytest.approx(128 * 128 * 7168 * block)
    assert ops["gate_proj"].weight_bytes == pytest.approx(7168 * 18432 * block)  # dense layers 0-2
    assert ops["router"].weight_bytes == (7168 * 256 + 256) * 2  # the router stays bf16
    assert ops["lm_head"].weight_bytes == 7168 * 129280 * 2
    assert ops["attn_norm"].weight_bytes == 7168 * 2
    expert = ops["expert_down"]  # decode, one token: its 8 experts
    assert expert.weight_bytes == pytest.approx(8 * 2048 * 7168 * block)


def test_weight_dtype_given_overrides_the_file_and_says_so():
    spec = _r1()
    params = WorkloadParams(tp=8, weight_dtype="bf16")
    weights, _ = weights_and_kv(spec, params)
    assert weights == parallel.device_parameters(spec, params.split) * 2
    assert weights / 2**30 == pytest.approx(157.9, abs=0.05)  # does not fit in 126 GiB
    analysis = analyze(spec, params, _h200())
    note = next(n for n in analysis.notes if "quantized" in n)
    assert "analysed with bf16 weights as --weight-dtype asks" in note and "128×128 blocks" in note
    ops = {o.name: o for o in build_ops(spec, params)}
    assert ops["gate_proj"].weight_bytes == 7168 * (18432 // 8) * 2


def test_per_tensor_fp8_llama3_matches_its_weight_files():
    """Neural Magic's fp8 Llama 3 8B: its projections at a byte a weight, the embedding and
    LM head at bf16, the norms bf16; the files add a float32 weight scale and input scale
    per projection (7 × 32 × 2 × 4 = 1,792 bytes), which the model leaves out."""
    spec = spec_from_config(LLAMA3_FP8, "Meta-Llama-3-8B-Instruct-FP8/config.json")
    weights, _ = weights_and_kv(spec, stored_precision(WorkloadParams(), spec))
    assert weights == LLAMA3_FP8_FILES - 7 * 32 * 2 * 4
    assert spec.quantization is not None and spec.quantization.compute == "fp8"


def test_nf4_double_quantized_llama3_matches_its_weight_file():
    """4 + 8/64 + 32/(64 × 256) bits a projection weight (QLoRA's double quantization), the
    two 128,256 × 4,096 tables and the norms at bf16: 5.702 GB, the 5.70G downloaded."""
    spec = spec_from_config(LLAMA3_NF4, "llama-3-8b-Instruct-bnb-4bit/config.json")
    q = spec.quantization
    assert q is not None and q.bits_of(ATTENTION) == q.bits_of(MLP) == 4 + 8 / 64 + 32 / (64 * 256)
    assert q.bits_of(LM_HEAD) is None and q.bits_of(EMBEDDING) is None
    weights, _ = weights_and_kv(spec, WorkloadParams())
    linear = 32 * (4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336)
    assert weights == pytest.approx(linear * 4.126953125 / 8 + 2 * 128256 * 4096 * 2 + (65 * 4096) * 2)
    assert round(weights / 1e9, 2) == 5.70
    without_double = read_quantization({"quantization_config": {**LLAMA3_NF4["quantization_config"],
                                                                "bnb_4bit_use_double_quant": False}})
    assert without_double is not None and without_double.bits_of(MLP) == 4.5  # a float32 absmax per 64


def test_gpt_oss_mxfp4_quantizes_the_experts_only():
    q = read_quantization({"quantization_config": GPT_OSS_MXFP4})
    assert q is not None and q.bits == ((EXPERTS, 4.25),)  # 4 bits + an 8-bit exponent per 32
    assert "4.25 bits a weight for the experts" in q.sentence()
    # the same block on a mixture of experts this app reads: the experts' bytes follow it
    spec = spec_from_config({**MIXTRAL_8X7B, "torch_dtype": "bfloat16", "quantization_config": GPT_OSS_MXFP4},
                            "x/config.json")
    ops = {o.name: o for o in build_ops(spec, WorkloadParams(batch=1, context=1))}
    assert ops["expert_up"].weight_bytes == pytest.approx(2 * 2 * 4096 * 14336 * 4.25 / 8)
    assert ops["q_proj"].weight_bytes == 4096 * 4096 * 2  # attention kept at bf16
    note = next(n for n in analyze(spec, WorkloadParams(), load_catalog()["h100-sxm"]).notes
                if "quantization_config" in n)
    assert "Weight-only" in note


@pytest.mark.parametrize(("block", "bits", "lm_head"), [
    (AWQ, 4 + 16 / 128 + 4 / 128, False),  # a 16-bit scale and a packed 4-bit zero per 128
    ({**AWQ, "zero_point": False}, 4 + 16 / 128, False),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True, "lm_head": False},
     4 + 16 / 128 + 4 / 128, False),  # GPTQ stores qzeros even when symmetric
    ({"quant_method": "gptq", "bits": 8, "group_size": -1, "lm_head": True}, 8.0, True),
    ({"quant_method": "hqq", "nbits": 4, "group_size": 64}, 4 + 32 / 64, False),
    ({"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
      "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None,
                                    "weights": {"num_bits": 4, "type": "int", "symmetric": True,
                                                "strategy": "group", "group_size": 128}}}},
     4 + 16 / 128, False),
    ({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "ignore": [],
      "config_groups": {"group_0": {"targets": ["Linear"],
                                    "weights": {"num_bits": 4, "type": "float", "symmetric": True,
                                                "strategy": "tensor_group", "group_size": 16}}}},
     4 + 8 / 16, True),  # nvfp4: an fp8 scale per 16; nothing ignored, the LM head converted
])
def test_grouped_formats_count_their_scales_and_zero_points(block, bits, lm_head):
    q = read_quantization({"quantization_config": block})
    assert q is not None and q.bits_of(MLP) == pytest.approx(bits) == q.bits_of(ATTENTION)
    assert (q.bits_of(LM_HEAD) is not None) == lm_head
    assert q.bits_of(EMBEDDING) is None and q.bits_of(ROUTER) is None and q.compute == ""


def test_compressed_tensors_w8a8_fp8_runs_its_products_in_fp8():
    block = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
             "config_groups": {"group_0": {"targets": ["Linear"],
                                           "input_activations": {"dynamic": True, "num_bits": 8,
                                                                 "strategy": "token", "type": "float"},
                                           "weights": {"dynamic": False, "num_bits": 8, "strategy": "channel",
                                                       "symmetric": True, "type": "float"}}}}
    q = read_quantization({"quantization_config": block})
    assert q is not None and q.compute == "fp8" and q.bits_of(MLP) == 8 and q.bits_of(LM_HEAD) is None


def test_skip_lists_keep_whole_classes_and_name_single_layers():
    q = read_quantization({"quantization_config": {
        **DEEPSEEK_FP8,
        "modules_to_not_convert": ["model.layers.*.mlp.shared_expert", "model.layers.3.mlp"]}})
    assert q is not None and q.bits_of(MLP) is None and q.bits_of(EXPERTS) is not None
    assert "model.layers.3.mlp" in q.partial and "counted quantized" in q.sentence()


def test_a_quantized_moe_in_training_and_without_the_block_keeps_one_precision():
    spec = spec_from_config({**QWEN3_30B_A3B, "quantization_config": DEEPSEEK_FP8}, "q/config.json")
    plain = replace(spec, quantization=None)
    train = WorkloadParams(phase="train", seq=128)
    assert [o.weight_bytes for o in build_ops(spec, train)] == \
        [o.weight_bytes for o in build_ops(plain, train)]
    decode = WorkloadParams()
    fp8, bf16 = ({o.name: o.weight_bytes for o in build_ops(m, decode)} for m in (spec, plain))
    assert fp8["q_proj"] == pytest.approx(bf16["q_proj"] * (1 + 4 / 16384) / 2)
    assert fp8["expert_up"] == pytest.approx(bf16["expert_up"] * (1 + 4 / 16384) / 2)
    assert fp8["lm_head"] == bf16["lm_head"] and fp8["router"] == bf16["router"]


@pytest.mark.parametrize(("block", "words"), [
    ("fp8", "must be an object"),
    ({**DEEPSEEK_FP8, "weight_block_size": [128]}, "weight_block_size must be two positive"),
    ({**AWQ, "bits": "4"}, "bits must be a whole number"),
    ({"quant_method": "bitsandbytes"}, "neither load_in_4bit nor load_in_8bit"),
])
def test_a_config_that_cannot_be_read_is_refused_naming_the_field(block, words):
    with pytest.raises(DataFileError, match="quantization_config") as error:
        spec_from_config({**LLAMA3_FP8, "quantization_config": block}, "x/config.json")
    assert words in str(error.value)
    with pytest.raises(QuantizationError):
        read_quantization({"quantization_config": block})


def test_mlp_only_layers_is_named_when_it_is_the_reason():
    with pytest.raises(DataFileError) as error:
        spec_from_config({**QWEN3_30B_A3B, "mlp_only_layers": [0, 1]}, "q/config.json")
    assert error.value.field == "mlp_only_layers"


def test_a_product_s_rows_come_from_its_stored_weights():
    """The expected time's model reads a product's rows M as FLOPs over 2 × its weights, the
    weights its bytes over the bytes a weight takes as stored: 8 sequences, 8 rows."""
    spec = _r1()
    params = WorkloadParams(batch=8, context=1024)
    for o in build_ops(spec, params):
        if o.name in ("o_proj", "gate_proj", "lm_head", "router"):
            assert float(o.flops) / (2 * float(o.weight_bytes) / value_bytes(spec, params, o)) == \
                pytest.approx(8, rel=2e-4)  # the router's score bias reads as 256 weights more


def test_the_json_report_carries_the_note(tmp_path):
    from tests.cli.test_cli import run

    path = tmp_path / "DeepSeek-R1" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(json.loads(_r1().config)))
    options = ("analyze", "--hardware", "h200-sxm", "--model-config", str(path), "--tp", "8", "--json")
    code, out, _ = run(*options)
    notes = json.loads(out)["notes"]
    assert code == 0 and any("fp8 (e4m3) in 128×128 blocks" in n and "8.002 bits" in n for n in notes)
    code, out, _ = run(*options[:-1])
    assert "; bf16, weights fp8 as the checkpoint stores them; " in out.splitlines()[2]
    code, out, _ = run(*options, "--weight-dtype", "bf16")
    assert code == 0 and any("as --weight-dtype asks" in n for n in json.loads(out)["notes"])


@pytest.mark.parametrize("method", ["torchao", "fbgemm_fp8", "eetq", "quark"])
def test_a_method_not_read_loads_at_torch_dtype_with_a_note_naming_it(method):
    """A quant_method this app does not read no longer stops the file: the weights are costed
    at the file's torch_dtype (here float16, 2 bytes a weight), and the note names the method
    and what to give."""
    spec = spec_from_config({**LLAMA3_FP8, "torch_dtype": "float16",
                             "quantization_config": {"quant_method": method, "bits": 8}}, "x/config.json")
    assert spec.quantization is not None and spec.quantization.unread and spec.quantization.bits == ()
    weights, _ = weights_and_kv(spec, stored_precision(WorkloadParams(dtype="fp8"), spec))
    assert weights == spec.parameter_count() * 2  # at fp16 as the file says, not the fp8 compute
    note = next(n for n in analyze(spec, WorkloadParams(), _h200()).notes if method in n)
    assert note == (f"Meta-Llama-3-8B-Instruct's weights costed at fp16 (as torch_dtype says); quantization "
                    f"'{method}', which this app does not read: give --weight-dtype for the precision its "
                    f"file stores")
    given = analyze(spec, WorkloadParams(weight_dtype="int4"), _h200())
    assert any("as --weight-dtype asks" in n and method in n for n in given.notes)
    assert weights_and_kv(spec, WorkloadParams(weight_dtype="fp8"))[0] == spec.parameter_count()


# NVIDIA ModelOpt's config.json block as its export writes it: quant_algo, group_size, ignore
# (vLLM's ModelOptQuantConfigBase.from_config reads "quant_algo", "group_size" and "ignore" from
# config.json, "exclude_modules" from the older nested "quantization" object). The NVFP4 form
# as in the config tests of sgl-project and vLLM ({"quant_method": "modelopt", "quant_algo":
# "NVFP4", "ignore": ["lm_head"]}); the nested form as ModelOpt's convert_hf_quant_config_format
# documents hf_quant_config.json ({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo":
# "FP8", "exclude_modules": ["lm_head"]}}).
MODELOPT_NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "ignore": ["lm_head"],
                  "kv_cache_quant_algo": None, "producer": {"name": "modelopt", "version": "0.37.0"}}
MODELOPT_FP8_NESTED = {"quant_method": "modelopt", "producer": {"name": "modelopt", "version": "0.19.0"},
                       "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                                        "exclude_modules": ["lm_head"]}}


def test_modelopt_nvfp4_is_four_and_a_half_bits_a_weight():
    """NVFP4: 4-bit values and an fp8 scale per 16 (vLLM's weight_scale, input_size // 16
    columns of float8_e4m3fn): 4.5 bits for every projection, the LM head ignored stays bf16."""
    q = read_quantization({"quantization_config": MODELOPT_NVFP4})
    assert q is not None and q.bits_of(ATTENTION) == q.bits_of(MLP) == 4.5 and q.bits_of(LM_HEAD) is None
    spec = spec_from_config({**LLAMA3_FP8, "quantization_config": MODELOPT_NVFP4}, "llama-nvfp4/config.json")
    weights, _ = weights_and_kv(spec, stored_precision(WorkloadParams(), spec))
    linear = 32 * (4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336)
    assert weights == pytest.approx(linear * 4.5 / 8 + (2 * 128256 * 4096 + 65 * 4096) * 2, rel=1e-12)
    # without ignore the LM head is a Linear ModelOpt converts, as compressed-tensors'
    whole = read_quantization({"quantization_config": {**MODELOPT_NVFP4, "ignore": []}})
    assert whole is not None and whole.bits_of(LM_HEAD) == 4.5


def test_modelopt_fp8_nested_as_hf_quant_config_runs_in_fp8():
    q = read_quantization({"quantization_config": MODELOPT_FP8_NESTED})
    assert q is not None and q.bits_of(MLP) == 8 and q.bits_of(LM_HEAD) is None and q.compute == "fp8"


def test_a_modelopt_algorithm_not_read_is_named_in_the_note():
    block = {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": {}}
    q = read_quantization({"quantization_config": block})
    assert q is not None and q.unread and "'modelopt quant_algo MIXED_PRECISION'" in q.label


def test_the_json_report_lists_a_method_not_read(tmp_path):
    from tests.cli.test_cli import run

    path = tmp_path / "llama-modelopt" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**LLAMA3_FP8, "quantization_config": {"quant_method": "torchao",
                                                                       "quant_type": {"default": {}}}}))
    options = ("analyze", "--hardware", "h100-sxm", "--model-config", str(path))
    code, out, _ = run(*options, "--json")
    assert code == 0 and any("costed at bf16 (as torch_dtype says); quantization 'torchao'" in n
                             for n in json.loads(out)["notes"])
    code, out, _ = run(*options)
    assert code == 0 and "; bf16, weights bf16 (torchao not read); " in out.splitlines()[2]
