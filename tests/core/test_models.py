"""Model presets: configurations reproduce the published parameter counts."""

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.core.model.presets import load_model_file, matches_published
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadParams

# Published totals: GPT2LMHeadModel / LlamaForCausalLM(config).num_parameters() (the model
# cards round them to 124M, 6.74B, 13.0B, 8.03B, 70.6B) and torchvision's ResNet-50 page.
PUBLISHED = {
    "gpt2": 124_439_808,
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,  # 80 layers of 855,654,400 + 2 × 262,144,000 + 8,192
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "resnet-50": 25_557_032,
    "vit-b-16": 86_567_656,  # torchvision's vit_b_16 page
    # Brown et al. 2020's shapes: 96 layers of 12·d² + 13·d (d 12,288: QKV, output and MLP
    # weights and biases, two LayerNorms) = 173,961,510,912; tied embeddings 50,257·d =
    # 617,558,016; positions 2,048·d = 25,165,824; final LayerNorm 2·d = 24,576
    "gpt-3-175b": 174_604_259_328,
}


# Presets read from the models' own config.json files (resources/models/from-configs.yaml):
# (total, active) as published: an exact count or the figure "46.7 B" to its digits.
FROM_CONFIGS = {
    "mistral-7b": (7_241_732_096, None),
    "mixtral-8x7b": ("46.7 B", "12.9 B"),
    "qwen2.5-7b": ("7.61 B", None),
    # the Hub's model page (its config does not tie the output head to the embeddings)
    "qwen1.5-0.5b": ("620 M", None),
    "gemma-2-9b": ("9.24 B", None),
    "llama-3.1-405b": (405_853_388_800, None),
    "deepseek-v3": ("671 B", "37 B"),
    # the model's name: 22 layers of 44,044,288 weights and two untied 32,000 × 2,048
    # embeddings, 1,100,048,384 in all
    "tinyllama-1.1b": ("1.1 B", None),
}


def test_presets_present(models):
    assert set(models) == set(PUBLISHED) | set(FROM_CONFIGS)


@pytest.mark.parametrize("ident", FROM_CONFIGS)
def test_presets_from_configs_match_their_published_counts_within_half_a_percent(models, ident):
    total, active = FROM_CONFIGS[ident]
    spec = models[ident]
    assert matches_published(spec.parameter_count(), total)
    number, scale = (total, "") if isinstance(total, int) else total.split()
    figure = float(number) * {"": 1, "M": 1e6, "B": 1e9}[scale]
    assert spec.parameter_count() == pytest.approx(figure, rel=5e-3)
    if active is not None:
        assert matches_published(spec.parameter_count(active=True), active)
        assert spec.parameter_count(active=True) == pytest.approx(float(active.split()[0]) * 1e9, rel=2e-2)


@pytest.mark.parametrize("ident", [*FROM_CONFIGS, "llama-3-8b", "gpt2"])
def test_a_decode_token_costs_twice_its_active_parameters(models, ident):
    """Kaplan et al. 2020: about 2 FLOPs per active parameter per token, plus attention
    (nothing at a one-token context); the embedding table is a lookup, no product, unless
    tied to the LM head (then it is one, once)."""
    spec = models[ident]
    active = spec.parameter_count(active=True)
    # a lookup table counted active (DeepSeek's count leaves the input table out)
    lookups = 0 if spec.tied_embeddings or spec.active_without_embedding else spec.vocab * spec.d_model
    if spec.positions == "learned":
        lookups += spec.max_context * spec.d_model
    total = sum(o.flops * o.count for o in build_ops(spec, WorkloadParams(context=1)))
    assert total == pytest.approx(2 * (active - lookups), rel=2e-2)


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


def test_vit_b16_costs_what_torchvision_publishes(models):
    """torchvision lists 17.56 GFLOPS for vit_b_16 at 224×224: multiply-adds, so 35.1
    GFLOP per image here (2 FLOPs each), within the softmax and norms this counts too."""
    total = sum(o.flops * o.count for o in build_ops(models["vit-b-16"], WorkloadParams(batch=1)))
    assert total == pytest.approx(2 * 17.56e9, rel=0.015)
    assert models["vit-b-16"].tokens == 197


@pytest.mark.parametrize("ident", [*FROM_CONFIGS, "llama-3-8b", "gpt2"])
def test_a_prefill_costs_twice_its_active_parameters_per_token_plus_attention(models, ident):
    """Every prompt token goes through the active weights once (2 FLOPs each); the LM head
    runs for the last position only; attention's score and value products are on top and
    left out here."""
    spec = models[ident]
    tokens = 128
    active = spec.parameter_count(active=True)
    table = spec.vocab * spec.d_model
    counted = 0 if spec.tied_embeddings or spec.active_without_embedding else table
    lookups = counted + (spec.max_context * spec.d_model if spec.positions == "learned" else 0)
    per_token = active - lookups - table  # the LM head's matrix runs once, below
    attention = ("attn_score", "attn_value", "attn_softmax", "local_attn_score", "local_attn_value")
    total = sum(o.flops * o.count for o in build_ops(spec, WorkloadParams(phase="prefill", seq=tokens))
                if o.name not in attention)
    assert total == pytest.approx(2 * per_token * tokens + 2 * table, rel=2e-2)
