"""``cupy._core._routines_linalg``'s compute types: what an fp32 product computes in (the
double computes in FP32 whatever is set, as NumPy does; the setting is kept and read back)."""

from __future__ import annotations

COMPUTE_TYPE_DEFAULT, COMPUTE_TYPE_PEDANTIC, COMPUTE_TYPE_FP16, COMPUTE_TYPE_FP32 = 0, 1, 2, 3
COMPUTE_TYPE_FP64, COMPUTE_TYPE_BF16, COMPUTE_TYPE_TF32 = 4, 5, 6
_set: dict[object, int] = {}


def get_compute_type(dtype) -> int:
    return _set.get(dtype, COMPUTE_TYPE_DEFAULT)


def set_compute_type(dtype, compute_type: int) -> None:
    _set[dtype] = compute_type
