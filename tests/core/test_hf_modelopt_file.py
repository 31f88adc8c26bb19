"""A ModelOpt checkpoint whose config.json has no ``quantization_config`` but an
``hf_quant_config.json`` beside it (the nvidia/*-FP8 and *-FP4 repositories): the file
beside is read as the config's quantization when the config is read from a file.

The pair: the config is DeepSeek-V3's shape (``tests/core/test_hf_config.DEEPSEEK_V3``;
DeepSeek-R1 has the same 671 B shape) without a quantization block. The hf_quant_config.json
is built after a real one: the DeepSeek NVFP4 export stored at the root of
https://github.com/peaceh-nv/TensorRT-LLM/blob/8d8be36b538750351b725de99a2606342f982b59/hf_quant_config.json
(Apache-2.0, 25,051 characters), whose head reads verbatim ``"producer": {"name": "modelopt",
"version": "0.23.0"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": null,
"group_size": 16, "exclude_modules": ["lm_head", "model.embed_tokens", ...`` and whose
``exclude_modules`` then lists, for each of layers 0-60, ``input_layernorm``,
``post_attention_layernorm``, ``self_attn.kv_a_proj_with_mqa``, ``self_attn.q_proj``,
``self_attn.q_b_proj``, ``self_attn.kv_a_layernorm``, ``self_attn.kv_b_proj`` (and
``mlp.gate`` from layer 3, the first MoE layer), then ``model.layers.61*`` (the
next-token-prediction layer) and ``model.norm``. The list is rebuilt here from that pattern
(its order within a layer varies in the file; the reader does not depend on order); the
file itself was not copied (the tools here could read it but not fetch it byte for byte)."""

import json

import pytest

from explorer.core.model.hf_config import read_config_file
from explorer.core.model.hf_quant_file import MODELOPT_FILE
from explorer.core.model.quantization import ATTENTION, EMBEDDING, EXPERTS, LM_HEAD
from tests.cli.test_cli import run
from tests.core.test_hf_config import DEEPSEEK_V3


def _excluded() -> list[str]:
    per_layer = ("input_layernorm", "post_attention_layernorm", "self_attn.kv_a_proj_with_mqa",
                 "self_attn.q_proj", "self_attn.q_b_proj", "self_attn.kv_a_layernorm", "self_attn.kv_b_proj")
    layers = [f"model.layers.{i}.{m}" for i in range(61) for m in per_layer]
    gates = [f"model.layers.{i}.mlp.gate" for i in range(3, 61)]
    return ["lm_head", "model.embed_tokens", *sorted(layers + gates), "model.layers.61*", "model.norm"]


HF_QUANT_CONFIG = {"producer": {"name": "modelopt", "version": "0.23.0"},
                   "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None, "group_size": 16,
                                    "exclude_modules": _excluded()}}


@pytest.fixture
def checkpoint(tmp_path):
    folder = tmp_path / "DeepSeek-R1-FP4"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**DEEPSEEK_V3, "torch_dtype": "bfloat16"}))
    (folder / MODELOPT_FILE).write_text(json.dumps(HF_QUANT_CONFIG, indent=4))
    return folder


def test_the_file_beside_is_the_config_s_quantization(checkpoint):
    assert len(HF_QUANT_CONFIG["quantization"]["exclude_modules"]) == 2 + 61 * 7 + 58 + 2
    spec = read_config_file(checkpoint / "config.json")
    q = spec.quantization
    assert q is not None and q.method == "modelopt"
    assert q.label.startswith("ModelOpt NVFP4: 4-bit E2M1 values with an fp8 (e4m3) scale per 16")
    # 4 bits and an 8-bit scale per 16 values: 4.5 bits for the experts; the LM head and the
    # embedding table are excluded whole (kept at the file's bf16)
    assert q.bits_of(EXPERTS) == 4.5 and q.bits_of(LM_HEAD) is None and q.bits_of(EMBEDDING) is None
    assert q.bits_of(ATTENTION) == 4.5  # per-layer entries are named as partial, not read as a class
    assert "model.layers.0.self_attn.q_proj" in q.partial
    assert json.loads(spec.config)["quantization_config"]["quant_method"] == "modelopt"  # a session keeps it


def test_without_the_file_or_with_the_config_s_own_block(checkpoint, tmp_path):
    (checkpoint / MODELOPT_FILE).rename(tmp_path / "elsewhere.json")
    assert read_config_file(checkpoint / "config.json").quantization is None
    (tmp_path / "elsewhere.json").rename(checkpoint / MODELOPT_FILE)
    own = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
           "weight_block_size": [128, 128]}
    (checkpoint / "config.json").write_text(json.dumps({**DEEPSEEK_V3, "quantization_config": own}))
    q = read_config_file(checkpoint / "config.json").quantization
    assert q is not None and q.method == "fp8"  # the config's own block comes first


def test_the_analysis_weighs_the_experts_at_four_and_a_half_bits(checkpoint):
    """The bytes follow the file beside: less than half the bf16 figure (experts hold most of
    the 671 B parameters), and more than 4.5 bits a weight overall (embedding, LM head, norms
    kept at bf16)."""
    options = ("analyze", "--hardware", "h200-sxm", "--model-config", str(checkpoint / "config.json"),
               "--json")
    code, out, err = run(*options)
    assert code == 0, err
    report = json.loads(out)
    stored, parameters = report["totals"]["weight_bytes"], report["workload"]["parameters"]
    bf16 = json.loads(run(*options, "--weight-dtype", "bf16")[1])["totals"]["weight_bytes"]
    assert bf16 == 2 * parameters
    assert 4.5 / 8 * parameters < stored < 0.5 * bf16
