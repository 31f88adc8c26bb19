"""Model descriptions (transformers, CNNs, ViTs) and their parameter counts.

The preset files that hold them are read by ``presets``; a config.json by
``hf_config``.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.model.quantization import (
    ATTENTION,
    EMBEDDING,
    EXPERTS,
    LM_HEAD,
    MLP,
    NORM,
    ROUTER,
    Quantization,
)


@dataclass(frozen=True)
class TransformerSpec:
    """A decoder-only transformer with pre-norm blocks."""

    id: str
    name: str
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    mlp_width: int
    gated_mlp: bool
    activation: str  # gelu | silu
    norm: str  # layernorm | rmsnorm
    vocab: int
    tied_embeddings: bool
    bias: bool
    fused_qkv: bool
    positions: str  # learned | rope
    max_context: int
    source: str
    published_parameters: int
    parameters_source: str
    origin: str = ""
    architecture: str = "transformer"
    # Beyond a plain Llama-style block (all default off; a Hugging Face config sets them,
    # explorer.core.model.hf_config):
    head_dim_value: int = 0  # per-head width when it is not d_model / heads (Gemma, Qwen3)
    qkv_bias: bool = False  # biases on the Q, K and V projections (Qwen2; with o_bias, Llama)
    o_bias: bool = False  # a bias on the attention's output projection (Llama-family attention_bias)
    qk_norm: bool = False  # an RMS norm over each head's query and key (Qwen3)
    norms_per_layer: int = 2  # Gemma 2 normalises before and after attention and MLP: 4
    dropout: bool = False  # trained with dropout (GPT-2, GPT-3): its masks are kept for the backward pass
    sliding_window: int = 0  # tokens a windowed layer attends over (and caches); 0: none
    window_layers: tuple[int, ...] = ()  # the layers with the window (Gemma 2: every other)
    experts: int = 0  # routed experts per MoE layer (0: a dense model)
    experts_per_token: int = 0  # experts each token is routed to
    expert_width: int = 0  # an expert's MLP width
    shared_width: int = 0  # width of the experts every token goes through (0: none)
    shared_gate: bool = False  # a sigmoid gate on the shared experts' output (Qwen2-MoE)
    dense_layers: int = 0  # the first layers keep a dense MLP (DeepSeek)
    moe_step: int = 1  # every moe_step-th layer has the experts, the others a dense MLP (Llama 4 Maverick: 2)
    router_bias: bool = False  # a per-expert bias on the router's scores (DeepSeek-V3)
    expert_bias: bool = False  # biases on each expert's projections (GPT-OSS: gate/up and down)
    attention_sinks: bool = False  # one learned sink logit per head and layer (GPT-OSS)
    norm_bias: bool = True  # a LayerNorm with a bias (Cohere's LayerNorm has a weight only)
    parallel_block: bool = False  # attention and MLP read the same normed input, summed (Cohere, Falcon)
    # Multi-head latent attention (DeepSeek-V2/V3; all 0: ordinary attention). Queries go
    # through a rank-q_lora bottleneck; keys and values are one cached latent of kv_lora
    # values plus a shared rotary key of qk_rope values per token.
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    config: str = ""  # the Hugging Face config.json this spec was read from (canonical JSON)
    file_dtype: str = ""  # the precision that file stores weights in (torch_dtype); "" if it names none
    unmodelled: str = ""  # what the file describes that the analysis leaves out (a vision encoder)
    quantization: Quantization | None = None  # how the file stores its weights (quantization_config)
    # The family counts a token's active parameters without the input embedding table, of
    # which a token reads one row (DeepSeek: V3's 37 B, V2-Lite's 2.4 B).
    active_without_embedding: bool = False

    item_unit = "tokens"

    @property
    def head_dim(self) -> int:
        return self.head_dim_value or self.d_model // self.heads

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def moe_layer(self, layer: int) -> bool:
        return self.moe and layer >= self.dense_layers and (layer + 1) % self.moe_step == 0

    def windowed(self, layer: int) -> bool:
        return self.sliding_window > 0 and layer in self.window_layers

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def _attention_parameters(self) -> int:
        if self.mla:
            return self._latent_attention_parameters()
        d, q, kv = self.d_model, self.q_dim, self.kv_dim
        weights = d * q + 2 * d * kv + q * d
        biases = (q + 2 * kv if self.bias or self.qkv_bias else 0) + (d if self.bias or self.o_bias else 0)
        sinks = self.heads if self.attention_sinks else 0
        return weights + biases + (2 * self.head_dim if self.qk_norm else 0) + sinks

    def _latent_attention_parameters(self) -> int:
        """Q down (d → q_lora), its norm, Q up (q_lora → heads × (nope + rope)); the KV latent
        and rotary key (d → kv_lora + rope), its norm, K and V up (kv_lora → heads × (nope +
        v)); the output projection (heads × v → d)."""
        d, h = self.d_model, self.heads
        qk = self.qk_nope_head_dim + self.qk_rope_head_dim
        if self.q_lora_rank:
            query = d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * h * qk
        else:
            query = d * h * qk
        latent = d * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
        up = self.kv_lora_rank * h * (self.qk_nope_head_dim + self.v_head_dim)
        return query + latent + up + h * self.v_head_dim * d

    def _mlp_parameters(self, width: int, bias: bool | None = None) -> int:
        d = self.d_model
        biased = self.bias if bias is None else bias
        biases = ((2 * width if self.gated_mlp else width) + d) if biased else 0
        return (3 if self.gated_mlp else 2) * d * width + biases

    def expert_parameters(self) -> int:
        """One routed expert's weights (0 for a dense model)."""
        return self._mlp_parameters(self.expert_width, self.bias or self.expert_bias) if self.moe else 0

    def _norm_parameters(self) -> int:
        """One norm's weights: a scale, and a shift for a LayerNorm with a bias."""
        return 2 * self.d_model if self.norm == "layernorm" and self.norm_bias else self.d_model

    def _moe_parameters(self, experts: int) -> int:
        """An MoE layer's MLP with ``experts`` of its routed experts (all, or those a token uses)."""
        router = self.d_model * self.experts + (self.experts if self.router_bias else 0)
        shared = self._mlp_parameters(self.shared_width) if self.shared_width else 0
        return router + experts * self.expert_parameters() + shared + \
            (self.d_model if self.shared_gate else 0)

    def layer_parameters(self, layer: int = 0, active: bool = False) -> int:
        """Parameters of ``layer``; ``active``: those one token uses (its routed experts only)."""
        norms = self.norms_per_layer * self._norm_parameters()
        if self.moe_layer(layer):
            mlp = self._moe_parameters(self.experts_per_token if active else self.experts)
        else:
            mlp = self._mlp_parameters(self.mlp_width)
        return self._attention_parameters() + mlp + norms

    def layer_parameter_classes(self, layer: int = 0, active: bool = False) -> dict[str, int]:
        """``layer_parameters`` by class of weight (``quantization``'s classes: attention with
        its biases, the dense MLP or shared experts, the routed experts, the router with its
        bias and the shared experts' gate, the layer's norms with the query/key (MLA: query
        and latent) norms inside attention, which the analysis reads as norms too)."""
        d = self.d_model
        inner = self._attention_norm_parameters()
        out = {ATTENTION: self._attention_parameters() - inner,
               NORM: self.norms_per_layer * self._norm_parameters() + inner}
        if self.moe_layer(layer):
            out[ROUTER] = d * self.experts + (self.experts if self.router_bias else 0) + \
                (d if self.shared_gate else 0)
            # each expert with its biases where it has them (GPT-OSS)
            out[EXPERTS] = (self.experts_per_token if active else self.experts) * self.expert_parameters()
            out[MLP] = self._mlp_parameters(self.shared_width) if self.shared_width else 0
        else:
            out[MLP] = self._mlp_parameters(self.mlp_width)
        return out

    def _attention_norm_parameters(self) -> int:
        """The norms inside attention (a query/key norm; MLA's query and latent norms): norm
        weights, which no quantization converts."""
        if self.mla:
            return (self.q_lora_rank if self.q_lora_rank else 0) + self.kv_lora_rank
        return 2 * self.head_dim if self.qk_norm else 0

    def end_parameter_classes(self) -> dict[str, int]:
        """The weights outside the layers by class: the embedding tables, the final norm, the
        LM head (none when tied to the embedding)."""
        return {EMBEDDING: self.embedding_parameters(),
                NORM: self._norm_parameters(),
                LM_HEAD: 0 if self.tied_embeddings else self.vocab * self.d_model}

    def embedding_parameters(self) -> int:
        """Token (and learned position) embedding tables."""
        positions = self.max_context * self.d_model if self.positions == "learned" else 0
        return self.vocab * self.d_model + positions

    def parameter_count(self, active: bool = False) -> int:
        """Every parameter; ``active``: those one token uses (a mixture of experts routes each
        token to a few of its experts; without the input embedding table where the family
        counts so, ``active_without_embedding``)."""
        final_norm = self._norm_parameters()
        lm_head = 0 if self.tied_embeddings else self.vocab * self.d_model
        embedding = 0 if active and self.active_without_embedding else self.embedding_parameters()
        if not self.moe:  # every layer alike
            return embedding + self.layers * self.layer_parameters() + final_norm + lm_head
        layers = sum(self.layer_parameters(i, active) for i in range(self.layers))
        return embedding + layers + final_norm + lm_head

    def matmul_parameters(self) -> int:
        """Weights used in matrix products by a dense model: every projection, plus the LM
        head's matrix."""
        per_layer = (self.d_model * (self.q_dim + 2 * self.kv_dim) + self.q_dim * self.d_model
                     + (3 if self.gated_mlp else 2) * self.d_model * self.mlp_width)
        return self.layers * per_layer + self.vocab * self.d_model

    def kv_values_per_token(self) -> int:
        """Cached values per token over all layers: a key and a value per KV head (layers
        with a sliding window hold at most the window's tokens: ``kv_cache_values``)."""
        if self.mla:
            return self.layers * (self.kv_lora_rank + self.qk_rope_head_dim)
        return 2 * self.layers * self.kv_heads * self.head_dim

    def kv_cache_values(self, tokens: int) -> int:
        """Values one sequence of ``tokens`` tokens holds in the KV cache, all layers (latent
        attention caches its latent and rotary key: kv_lora + rope values per token)."""
        per_layer = (self.kv_lora_rank + self.qk_rope_head_dim if self.mla
                     else 2 * self.kv_heads * self.head_dim)
        windowed = len(self.window_layers) if self.sliding_window else 0
        return per_layer * ((self.layers - windowed) * tokens + windowed * min(tokens, self.sliding_window))


@dataclass(frozen=True)
class Stage:
    """One stage of a convolutional network: its blocks, width and stride."""

    blocks: int
    width: int
    stride: int


@dataclass(frozen=True)
class CnnSpec:
    """A ResNet-style CNN: a stem (conv, norm, ReLU, max pool), bottleneck stages, a classifier.

    Bottleneck blocks follow torchvision's ResNet v1.5: 1×1 reduce, 3×3 (carrying
    the stage's stride), 1×1 expand, each followed by batch norm; the first block of
    a stage projects its shortcut with a 1×1 convolution and batch norm.
    """

    id: str
    name: str
    image_size: int
    in_channels: int
    stem_channels: int
    stem_kernel: int
    stem_stride: int
    pool_kernel: int
    pool_stride: int
    stages: tuple[Stage, ...]
    expansion: int
    classes: int
    source: str
    published_parameters: int
    parameters_source: str
    origin: str = ""
    architecture: str = "cnn"

    item_unit = "images"

    def kv_values_per_token(self) -> int:
        return 0

    def kv_cache_values(self, tokens: int) -> int:
        return 0

    def parameter_count(self, active: bool = False) -> int:
        total = self.stem_kernel**2 * self.in_channels * self.stem_channels + 2 * self.stem_channels
        c_in = self.stem_channels
        for stage in self.stages:
            width, c_out = stage.width, stage.width * self.expansion
            for block in range(stage.blocks):
                total += c_in * width + 2 * width
                total += 9 * width * width + 2 * width
                total += width * c_out + 2 * c_out
                if block == 0:
                    total += c_in * c_out + 2 * c_out
                c_in = c_out
        return total + c_in * self.classes + self.classes


@dataclass(frozen=True)
class VitSpec:
    """A vision transformer (ViT, Dosovitskiy et al. 2021): the image cut into patches, each
    embedded by a linear map (a convolution with the patch as kernel and stride), a class
    token and learned positions added, pre-norm encoder blocks (LayerNorm, fused QKV with
    biases, a GELU MLP), a final LayerNorm and a linear classifier on the class token."""

    id: str
    name: str
    image_size: int
    patch: int
    in_channels: int
    d_model: int
    layers: int
    heads: int
    mlp_width: int
    classes: int
    source: str
    published_parameters: int
    parameters_source: str
    origin: str = ""
    architecture: str = "vit"

    item_unit = "images"

    @property
    def tokens(self) -> int:
        """Patches plus the class token (224 / 16 = 14 × 14 = 196, + 1)."""
        return (self.image_size // self.patch) ** 2 + 1

    def kv_values_per_token(self) -> int:
        return 0

    def kv_cache_values(self, tokens: int) -> int:
        return 0

    def parameter_count(self, active: bool = False) -> int:
        d, f = self.d_model, self.mlp_width
        patches = self.in_channels * self.patch**2 * d + d
        embeddings = d + self.tokens * d  # the class token, the positions
        layer = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d)
        return patches + embeddings + self.layers * layer + 2 * d + d * self.classes + self.classes


ModelSpec = TransformerSpec | CnnSpec | VitSpec
