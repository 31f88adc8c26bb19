"""Falcon (FalconForCausalLM) read from its config.json, each block variant of transformers'
modeling_falcon.py: Falcon-7B's multi-query attention with attention and MLP side by side after
one LayerNorm, Falcon-40B's new decoder architecture (8 KV heads, ln_attn and ln_mlp), the
sequential block (two norms), and ALiBi refused."""

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.core.model.hf_config import spec_from_config

# tiiuae/falcon-7b's config.json as transformers saved it (transformers_version 4.28.1), copied
# into a public test of another project (its auto_map removed)
FALCON_7B = {"architectures": ["FalconForCausalLM"], "bias": False, "bos_token_id": 11, "eos_token_id": 11,
             "hidden_dropout": 0.0, "hidden_size": 4544, "initializer_range": 0.02,
             "layer_norm_epsilon": 1e-05, "model_type": "falcon", "multi_query": True,
             "new_decoder_architecture": False, "num_attention_heads": 71, "num_hidden_layers": 32,
             "num_kv_heads": 71, "parallel_attn": True, "torch_dtype": "bfloat16",
             "transformers_version": "4.28.1", "use_cache": True, "vocab_size": 65024}
# tiiuae/falcon-40b: derived from the 7B's file with the 40B's shape (the new decoder
# architecture, 60 layers of 8,192, 128 heads sharing 8 KV heads, as Megatron-LM's Falcon
# converter sets it up: num_layers 60, hidden_size 8192, num_attention_heads 128,
# num_attention_heads_kv 8); the 40B's own config.json was not opened here
FALCON_40B = {**FALCON_7B, "hidden_size": 8192, "new_decoder_architecture": True, "num_attention_heads": 128,
              "num_hidden_layers": 60, "num_kv_heads": 8}


def hand_count(d: int, layers: int, heads: int, kv: int, norms: int, vocab: int = 65024) -> int:
    """FalconForCausalLM: query_key_value (heads + 2 × kv) × head_dim, dense, dense_h_to_4h and
    dense_4h_to_h (bias false), LayerNorms with a bias, ln_f, the LM head tied to the embedding."""
    hd = d // heads
    layer = d * (heads + 2 * kv) * hd + d * d + 2 * d * 4 * d + norms * 2 * d
    return vocab * d + layers * layer + 2 * d


def test_falcon_7b():
    spec = spec_from_config(FALCON_7B, "falcon-7b/config.json")
    assert spec.kv_heads == 1 and spec.norms_per_layer == 1 and not spec.gated_mlp and spec.tied_embeddings
    assert spec.parameter_count() == hand_count(4544, 32, 71, 1, 1) == 6_921_720_704
    assert round(spec.parameter_count() / 1e9) == 7  # model card: "Falcon-7B is a 7B parameters ... model"


def test_falcon_40b():
    spec = spec_from_config(FALCON_40B, "falcon-40b/config.json")
    assert spec.kv_heads == 8 and spec.norms_per_layer == 2
    assert spec.parameter_count() == hand_count(8192, 60, 128, 8, 2) == 41_303_293_952
    # model card: "Falcon-40B is a 40B parameters causal decoder-only model" (a round name: 41.3 B)
    assert spec.parameter_count() == pytest.approx(40e9, rel=0.04)


def test_the_sequential_block_and_multi_head_attention():
    spec = spec_from_config({**FALCON_7B, "parallel_attn": False, "multi_query": False}, "f.json")
    assert spec.kv_heads == 71 and spec.norms_per_layer == 2 and not spec.parallel_block
    assert spec.parameter_count() == hand_count(4544, 32, 71, 71, 2)


def test_alibi_is_refused():
    with pytest.raises(DataFileError, match="alibi"):
        spec_from_config({**FALCON_7B, "alibi": True}, "falcon-rw/config.json")
