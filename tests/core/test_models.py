"""Model presets: configurations reproduce the published parameter counts."""

import pytest

from explorer.core.datafile import DataFileError
from explorer.core.models import load_model_file

# Published totals: GPT2LMHeadModel / LlamaForCausalLM(config).num_parameters() (the model
# cards round them to 124M, 6.74B, 13.0B, 8.03B, 70.6B) and torchvision's ResNet-50 page.
PUBLISHED = {
    "gpt2": 124_439_808,
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "resnet-50": 25_557_032,
}


def test_presets_present(models):
    assert set(models) == set(PUBLISHED)


@pytest.mark.parametrize(("ident", "count"), PUBLISHED.items())
def test_parameter_counts_match_published_totals(models, ident, count):
    assert models[ident].parameter_count() == count


def test_head_geometry(models):
    llama3 = models["llama-3-70b"]
    assert (llama3.head_dim, llama3.q_dim, llama3.kv_dim) == (128, 8192, 1024)
    assert models["gpt2"].head_dim == 64


@pytest.mark.parametrize(
    ("ident", "kv_bytes_bf16"),
    [
        # 2 (K and V) × layers × KV heads × head dim × 2 bytes
        ("llama-2-7b", 2 * 32 * 32 * 128 * 2),  # 512 KiB: multi-head attention
        ("llama-3-8b", 2 * 32 * 8 * 128 * 2),  # 128 KiB: grouped-query, 8 KV heads
        ("llama-3-70b", 2 * 80 * 8 * 128 * 2),  # 320 KiB
        ("gpt2", 2 * 12 * 12 * 64 * 2),  # 36 KiB
    ],
)
def test_kv_values_per_token(models, ident, kv_bytes_bf16):
    assert models[ident].kv_values_per_token() * 2 == kv_bytes_bf16


def test_a_wrong_configuration_number_is_caught(tmp_path):
    text = """schema: 1
models:
- id: llama-typo
  name: Llama with a typo
  architecture: transformer
  source: https://example.com/config.json
  parameters_source: https://example.com/card
  published_parameters: 6738415616
  d_model: 4096
  layers: 32
  heads: 32
  kv_heads: 32
  mlp_width: 11000  # the published config says 11008
  mlp: gated
  activation: silu
  norm: rmsnorm
  vocab: 32000
  tied_embeddings: false
  bias: false
  fused_qkv: false
  positions: rope
  max_context: 4096
"""
    path = tmp_path / "typo.yaml"
    path.write_text(text)
    with pytest.raises(DataFileError, match="the configuration gives 6,735,269,888 parameters") as info:
        load_model_file(path)
    assert info.value.entry == "llama-typo"
    assert info.value.field == "published_parameters"


def test_heads_must_divide_the_width(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("""schema: 1
models:
- {id: odd, name: Odd, architecture: transformer, source: https://e.com/c,
   parameters_source: https://e.com/p, published_parameters: 1, d_model: 100, layers: 1,
   heads: 3, kv_heads: 3, mlp_width: 4, mlp: plain, activation: gelu, norm: layernorm,
   vocab: 10, tied_embeddings: true, bias: true, fused_qkv: true, positions: learned,
   max_context: 8}
""")
    with pytest.raises(DataFileError, match="not divisible by 3 heads"):
        load_model_file(path)
