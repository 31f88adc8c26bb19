"""What a PyTorch op's recorded shapes say of its work: the FLOPs of a matrix product and
the bytes of any op, each input read once and its result written once (the way the app
counts a predicted op), from the profiler's ``Input Dims`` and ``Input type``
(``record_shapes=True``). Estimates from shapes, not counts: a kernel that rereads an
operand or keeps it in a cache moves more or less than this.

- FLOPs (2 per multiply-add) of ``aten::mm`` [M, K] × [K, N], ``aten::addmm`` (bias, then
  the two matrices), ``aten::bmm`` [B, M, K] × [B, K, N], ``aten::linear`` ([..., K] input,
  [N, K] weight), ``aten::matmul`` of two matrices or batches of them;
- bytes: every tensor input's elements × its type's size, plus the result: a product's
  from its shape, any other op's as large as its largest input (elementwise ops, norms,
  softmax).
"""

from __future__ import annotations

import math

DTYPE_BYTES = {"c10::BFloat16": 2, "c10::Half": 2, "float": 4, "double": 8, "c10::Float8_e4m3fn": 1,
               "c10::Float8_e5m2": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int": 4,
               "long int": 8, "short int": 2}
MATMULS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::linear", "aten::matmul")
MAX_DIMS, MAX_ELEMENTS = 8, 1 << 48  # a tensor beyond these is not a recorded shape: skipped


def _tensors(dims: list, types: list) -> list[tuple[tuple[int, ...], int]]:
    """(shape, bytes per element) of each tensor input (scalars and lists skipped)."""
    out = []
    for shape, dtype in zip(dims, types, strict=False):
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
    batch = a[:-2]
    m, k, n = a[-2], a[-1], b[-1]
    return math.prod(batch) * m * k * n, (*batch, m, n)


def op_work(name: str, dims, types) -> tuple[int | None, int]:
    """(FLOPs, bytes) of an op from its recorded shapes: FLOPs None unless it is a matrix
    product whose shapes fit; bytes 0 when no tensor input's shape is known."""
    if not isinstance(dims, list) or not isinstance(types, list):
        return None, 0
    tensors = _tensors(dims, types)
    if not tensors:
        return None, 0
    read = sum(math.prod(shape) * size for shape, size in tensors)
    product = _product(name, [shape for shape, _ in tensors])
    if product is not None:
        macs, result = product
        return 2 * macs, read + math.prod(result) * tensors[0][1]
    return None, read + max(math.prod(shape) * size for shape, size in tensors)
