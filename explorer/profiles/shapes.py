"""What a PyTorch op's recorded shapes say of its work: the FLOPs of a matrix product and
the bytes of any op, each input read once and its result written once (the way the app
counts a predicted op), from the profiler's ``Input Dims`` and ``Input type``
(``record_shapes=True``). Estimates from shapes, not counts: a kernel that rereads an
operand or keeps it in a cache moves more or less than this.

- FLOPs (2 per multiply-add) of ``aten::mm`` [M, K] × [K, N], ``aten::addmm`` (bias, then
  the two matrices), ``aten::bmm`` [B, M, K] × [B, K, N], ``aten::linear`` ([..., K] input,
  [N, K] weight), ``aten::matmul`` of two matrices or batches of them; attention
  (``scaled_dot_product`` in the name: ``aten::scaled_dot_product_attention`` and the
  kernels it calls) [..., Lq, D] queries, [..., Lk, D] keys, [..., Lk, Dv] values, and
  FlashAttention's own entry (``aten::_flash_attention_forward``, [B, L, H, D]); keys and
  values may have fewer heads than the queries (grouped-query attention): the scores and
  the weighted sum, 2·(D + Dv) per pair of a query and a key, every pair, or under a
  causal mask (``is_causal`` true in the op's ``Concrete Inputs``) the pairs it keeps,
  Lq·(Lq + 1)/2 for a square mask, as the predicted attention counts them (aligned to the
  first key by PyTorch's ops, to the last by FlashAttention's when Lq ≠ Lk);
- bytes: every tensor input's elements × its type's size, plus the result: a product's
  from its shape, attention's as large as its queries with Dv columns, any other op's as
  large as its largest input (elementwise ops, norms, softmax); a lookup in a table
  (``aten::embedding``, ``aten::index_select`` along the rows) reads and writes the rows
  its indices pick, not the table. A view or an allocation (``VIEWS``) moves none.
"""

from __future__ import annotations

import math

DTYPE_BYTES = {"c10::BFloat16": 2, "c10::Half": 2, "float": 4, "double": 8, "c10::Float8_e4m3fn": 1,
               "c10::Float8_e5m2": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int": 4,
               "long int": 8, "short int": 2}
PRECISIONS = {"c10::BFloat16": "bf16", "c10::Half": "fp16", "float": "fp32", "double": "fp64"}
MATMULS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::linear", "aten::matmul")
VIEWS = frozenset(f"aten::{name}" for name in (
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "t", "transpose", "permute",
    "expand", "unsqueeze", "squeeze", "slice", "select", "narrow", "split", "chunk", "unbind", "alias",
    "detach", "resolve_conj", "resolve_neg", "empty", "empty_strided", "empty_like", "resize_",
    "result_type", "lift_fresh", "to", "contiguous", "dropout"))  # no bytes (a no-op at inference)
LOOKUPS = ("aten::embedding", "aten::index_select")  # a table's looked-up rows, not the whole table
# Where each attention op's ``is_causal`` sits among its inputs (``Concrete Inputs``), by
# its signature in ATen's native_functions.yaml. (cuDNN's moved between releases: its
# causal mask is not read, every pair counted.)
CAUSAL_AT = {"aten::scaled_dot_product_attention": 5, "aten::_scaled_dot_product_flash_attention": 4,
             "aten::_scaled_dot_product_efficient_attention": 6, "aten::_flash_attention_forward": 8,
             "aten::_scaled_dot_product_flash_attention_for_cpu": 4,
             "aten::_scaled_dot_product_attention_math": 5}
# FlashAttention's own entry: [B, L, H, D] (not [B, H, L, D]), its causal mask aligned to
# the last key (a query sees the keys up to its own place counted from the end); the others
# align it to the first (PyTorch's is_causal: query i sees keys 0 … i).
FLASH_LAYOUT = ("aten::_flash_attention_forward",)
MAX_DIMS, MAX_ELEMENTS = 8, 1 << 48  # a tensor beyond these is not a recorded shape: skipped


def _tensors(dims: list, types: list, list_type: str | None = None) -> list[tuple[tuple[int, ...], int]]:
    """(shape, bytes per element) of each tensor input (scalars skipped; a tensor list's
    elements taken as ``list_type``, skipped without one)."""
    out = []
    pairs = []
    for shape, dtype in zip(dims, types, strict=False):
        if dtype == "TensorList" and list_type and isinstance(shape, list) and len(shape) <= 1024:
            pairs += [(s, list_type) for s in shape]
        else:
            pairs.append((shape, dtype))
    for shape, dtype in pairs:
        size = DTYPE_BYTES.get(dtype) if isinstance(dtype, str) else None
        if size is None or not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(
                isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40 for d in shape):
            continue
        if math.prod(shape) > MAX_ELEMENTS:
            continue
        out.append((tuple(shape), size))
    return out


def _product(name: str, shapes: list[tuple[int, ...]]) -> tuple[int, tuple[int, ...]] | None:
    """(multiply-adds, result shape) of a matrix product, None if ``name`` is none or its
    shapes do not fit one."""
    if name == "aten::addmm" and len(shapes) >= 3:
        shapes = shapes[1:3]
    if name == "aten::linear" and len(shapes) >= 2 and shapes[0] and len(shapes[1]) == 2:
        *batch, k = shapes[0]
        n, k2 = shapes[1]
        return (math.prod(batch) * k * n, (*batch, n)) if k == k2 else None
    if name not in MATMULS or len(shapes) < 2:
        return None
    a, b = shapes[0], shapes[1]
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2] or (len(b) > 2 and a[:-2] != b[:-2]):
        return None
    leading = a[:-2]
    m, k, n = a[-2], a[-1], b[-1]
    return math.prod(leading) * m * k * n, (*leading, m, n)


def _pairs(lq: int, lk: int, causal: bool, from_end: bool) -> int:
    """Query–key pairs attention computes: all, or those a causal mask keeps, aligned to the
    last key (``from_end``) or to the first."""
    if not causal:
        return lq * lk
    if from_end:  # query i sees keys up to i + lk − lq
        return lq * lk - lq * (lq - 1) // 2 if lq <= lk else lk * (lk + 1) // 2
    return lq * (lq + 1) // 2 if lq <= lk else lk * (lk + 1) // 2 + (lq - lk) * lk


def _attention(shapes: list[tuple[int, ...]], causal: bool = False,
               flash: bool = False) -> tuple[int, tuple[int, ...]] | None:
    """(multiply-adds, result shape) of attention over queries, keys and values ([..., L, D];
    ``flash``: FlashAttention's [B, L, H, D] and its mask's alignment), None if the shapes
    do not fit it. Keys and values may have fewer heads than the queries, each shared by as
    many query heads (grouped-query attention)."""
    if len(shapes) < 3 or any(len(s) < (4 if flash else 2) for s in shapes[:3]):
        return None
    q, k, v = ((*s[:-3], s[-2], s[-3], s[-1]) if flash else s for s in shapes[:3])
    grouped = len(q) == len(k) >= 3 and q[:-3] == k[:-3] and k[-3] > 0 and q[-3] % k[-3] == 0
    if (q[:-2] != k[:-2] and not grouped) or k[:-1] != v[:-1] or q[-1] != k[-1]:
        return None
    pairs = _pairs(q[-2], k[-2], causal, flash)
    return math.prod(q[:-2]) * pairs * (q[-1] + v[-1]), (*shapes[0][:-1], v[-1])


def _causal(name: str, concrete) -> bool:
    """Whether an attention op's recorded concrete inputs say ``is_causal`` true."""
    at = CAUSAL_AT.get(name)
    return (at is not None and isinstance(concrete, list) and len(concrete) > at
            and concrete[at] in ("True", "true", "1"))


def weight_shape(name: str, dims, types) -> tuple[int, int] | None:
    """(K, N) of a matrix product whose second operand is a matrix, as a layer's weights
    are (``aten::linear``'s [N, K], ``aten::mm``'s and ``aten::addmm``'s [K, N]): the
    shape a predicted op is matched by. None for any other op, and for batched products
    (attention's)."""
    if name not in MATMULS or not isinstance(dims, list) or not isinstance(types, list):
        return None
    shapes = [shape for shape, _ in _tensors(dims, types)]
    if name == "aten::addmm" and len(shapes) >= 3:
        shapes = shapes[1:3]
    if len(shapes) < 2 or len(shapes[1]) != 2 or _product(name, shapes) is None:
        return None
    rows, cols = shapes[1]
    return (cols, rows) if name == "aten::linear" else (rows, cols)


def op_work(name: str, dims, types, list_type: str | None = None,
            concrete=None) -> tuple[int | None, int]:
    """(FLOPs, bytes) of an op from its recorded shapes (and ``concrete``: its recorded
    ``Concrete Inputs``, for attention's causal mask): FLOPs None unless it is a matrix
    product or attention whose shapes fit; bytes 0 when no tensor input's shape is known
    and for a view."""
    if not isinstance(dims, list) or not isinstance(types, list) or name in VIEWS:
        return None, 0
    tensors = _tensors(dims, types, list_type)
    if not tensors:
        return None, 0
    if name in LOOKUPS and len(tensors) >= 2 and len(tensors[0][0]) == 2:
        (table, size), (index, index_size) = tensors[0], tensors[-1]
        rows = math.prod(index) * table[1] * size
        return None, 2 * rows + math.prod(index) * index_size
    read = sum(math.prod(shape) * size for shape, size in tensors)
    shapes = [shape for shape, _ in tensors]
    attention = "scaled_dot_product" in name or name in FLASH_LAYOUT
    product = (_attention(shapes, _causal(name, concrete), name in FLASH_LAYOUT) if attention
               else _product(name, shapes))
    if product is not None:
        macs, result = product
        return 2 * macs, read + math.prod(result) * tensors[0][1]
    return None, read + max(math.prod(shape) * size for shape, size in tensors)
