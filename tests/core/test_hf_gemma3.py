"""Gemma 3 read from its config.json: the text-only 1B and the multimodal 4B, 12B and 27B
(whose decoder is nested in ``text_config``, fields left out taking Gemma3TextConfig's
defaults) give the parameter counts of the Gemma 3 technical report, five local layers to
one global, query and key norms, and a note that the vision encoder is not costed."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.workload import WorkloadParams

ROPE = {"factor": 8.0, "rope_type": "linear"}
# The fields of each model's config.json on the Hub (google/gemma-3-*-it); the multimodal
# ones name only what differs from Gemma3TextConfig's defaults, as the Hub's files do.
GEMMA3_1B = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "head_dim": 256,
             "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "intermediate_size": 6912,
             "max_position_embeddings": 32768, "num_attention_heads": 4, "num_hidden_layers": 26,
             "num_key_value_heads": 1, "query_pre_attn_scalar": 256, "rope_local_base_freq": 10000,
             "rope_theta": 1000000, "sliding_window": 512, "sliding_window_pattern": 6,
             "torch_dtype": "bfloat16", "vocab_size": 262144}


def multimodal(**text) -> dict:
    return {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
            "torch_dtype": "bfloat16", "vision_config": {"model_type": "siglip_vision_model"},
            "text_config": {"model_type": "gemma3_text", "rope_scaling": ROPE, "sliding_window": 1024,
                            **text}}


GEMMA3_4B = multimodal(hidden_size=2560, intermediate_size=10240, num_hidden_layers=34)
GEMMA3_12B = multimodal(hidden_size=3840, intermediate_size=15360, num_attention_heads=16,
                        num_hidden_layers=48, num_key_value_heads=8)
GEMMA3_27B = multimodal(head_dim=128, hidden_size=5376, intermediate_size=21504, num_attention_heads=32,
                        num_hidden_layers=62, num_key_value_heads=16, query_pre_attn_scalar=168)
# Gemma 3 Technical Report (arXiv 2503.19786), Table 1: embedding and non-embedding
# parameters of the language model, in millions (the 417 M vision encoder apart).
REPORT = {"gemma-3-1b": (GEMMA3_1B, 302, 698), "gemma-3-4b": (GEMMA3_4B, 675, 3_209),
          "gemma-3-12b": (GEMMA3_12B, 1_012, 10_759), "gemma-3-27b": (GEMMA3_27B, 1_416, 25_600)}


@pytest.mark.parametrize("name", REPORT)
def test_each_size_gives_the_technical_report_s_counts(name):
    config, embedding, non_embedding = REPORT[name]
    spec = spec_from_config({**config, "_name_or_path": f"google/{name}-it"}, f"{name}/config.json")
    total = spec.parameter_count()
    assert round((total - spec.vocab * spec.d_model) / 1e6) == non_embedding  # to the report's digits
    assert total == pytest.approx((embedding + non_embedding) * 1e6, rel=0.005)
    assert spec.tied_embeddings and spec.qk_norm and spec.norms_per_layer == 4


def test_five_local_layers_to_one_global_and_the_window_of_each_size():
    one = spec_from_config(GEMMA3_1B, "1b/config.json")
    assert one.sliding_window == 512
    assert [i for i in range(one.layers) if i not in one.window_layers] == [5, 11, 17, 23]
    big = spec_from_config(GEMMA3_27B, "27b/config.json")
    assert big.sliding_window == 1024 and len(big.window_layers) == 62 - 10
    listed = {**GEMMA3_1B, "layer_types": ["full_attention" if i % 2 else "sliding_attention"
                                           for i in range(26)]}
    assert spec_from_config(listed, "l/config.json").window_layers == tuple(range(0, 26, 2))


def test_the_multimodal_file_is_read_as_its_text_decoder_with_a_note():
    spec = spec_from_config({**GEMMA3_4B, "_name_or_path": "google/gemma-3-4b-it"}, "4b/config.json")
    assert spec.name == "gemma-3-4b-it" and spec.file_dtype == "bf16"
    # Gemma3TextConfig's defaults fill what the file leaves out
    assert (spec.heads, spec.kv_heads, spec.head_dim, spec.vocab) == (8, 4, 256, 262208)
    a = analyze(spec, WorkloadParams(context=2048), load_catalog()["h100-sxm"])
    assert any("vision encoder" in note and "not costed" in note for note in a.notes)
    assert any("past 1,024 tokens" in note and "29 of its 34 layers" in note for note in a.notes)


def test_a_decode_step_costs_about_twice_its_parameters_a_token():
    spec = spec_from_config(GEMMA3_12B, "12b/config.json")
    a = analyze(spec, WorkloadParams(context=64), load_catalog()["h100-sxm"])
    # 2 FLOPs per parameter (the tied embedding counted once, as the output head), plus a
    # short context's attention
    assert a.totals.flops == pytest.approx(2 * spec.parameter_count(), rel=0.03)


def test_a_text_config_that_is_not_an_object_is_refused_by_name():
    with pytest.raises(DataFileError, match="text_config"):
        spec_from_config({**GEMMA3_4B, "text_config": [1, 2]}, "bad/config.json")
