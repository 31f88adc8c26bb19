"""A CuPy double built on NumPy, with CuPy's module shape (``cupy.cuda.runtime``,
``cupy.cuda.Event``, ``cupy.RawModule``, ``cupy._core._routines_linalg``), so that the GPU
scripts' planning, timing and reporting run in the ordinary test suite.

Arrays are NumPy arrays and the device is "host memory"; CUDA events read
``time.perf_counter``. What truly needs a GPU, launching compiled CUDA (``RawKernel``), raises
``NoGpu`` with a message that says so: a script that fails under the double fails there
only. ``ElementwiseKernel`` evaluates its one-line operation with NumPy (the STREAM kernels),
which is what CuPy would compute. ``install(monkeypatch)`` puts it in ``sys.modules``.
"""

from __future__ import annotations

import re
import sys

import numpy as np
from numpy import (  # noqa: F401 - CuPy's names, re-exported as CuPy has them
    add,
    allclose,
    divide,
    empty,
    empty_like,
    exp,
    float16,
    float32,
    float64,
    int32,
    int64,
    matmul,
    multiply,
    ones,
    sqrt,
    square,
    subtract,
    tanh,
    uint64,
    zeros,
)

from tests.fakes.cupy_double import cuda, cupyx
from tests.fakes.cupy_double._core import _routines_linalg

__version__ = "14.0.0+numpy-double"
NO_GPU = "the CuPy double has no GPU"


class NoGpu(RuntimeError):
    """Work only a GPU can do, asked of the double."""


def asnumpy(array) -> np.ndarray:
    return np.asarray(array)


class _Pool:
    def free_all_blocks(self) -> None:
        """Host memory is freed by Python."""

    def used_bytes(self) -> int:
        return 0


_POOL = _Pool()


def get_default_memory_pool() -> _Pool:
    return _POOL


class random:  # a module in CuPy
    default_rng = staticmethod(np.random.default_rng)


class RawKernel:
    """A compiled CUDA function: cannot run without a GPU."""

    def __init__(self, code: str, name: str, options=(), **_kwargs) -> None:
        self.code, self.name, self.options = code, name, tuple(options)

    def __call__(self, grid, block, args, **_kwargs):
        raise NoGpu(f"{NO_GPU}: the CUDA kernel {self.name!r} needs one to run")


class RawModule:
    """CUDA source to compile: accepted (compiling is lazy in CuPy too), its kernels cannot run."""

    def __init__(self, code: str = "", options=(), name_expressions=(), **_kwargs) -> None:
        self.code, self.options, self.name_expressions = code, tuple(options), tuple(name_expressions)

    def get_function(self, name: str) -> RawKernel:
        """As CuPy: a template instance must be one of ``name_expressions`` (it compiled only
        those), any other kernel must be defined in the source (else the module has no such
        function, which on a GPU fails only at this call)."""
        if "<" in name and name not in self.name_expressions:
            raise RuntimeError(f"the CuPy double: {name!r} is not among the module's name_expressions "
                               f"{list(self.name_expressions)}")
        if not re.search(rf"\b{re.escape(name.split('<')[0])}\s*[<(]", self.code):
            raise RuntimeError(f"the CuPy double: no kernel named {name!r} in the module's source")
        return RawKernel(self.code, name, self.options)


_PARAM = re.compile(r"^\s*\w+\s+(\w+)\s*$")


class ElementwiseKernel:
    """CuPy's elementwise kernel, for one-line operations NumPy can evaluate (``c = a + q * b``):
    the inputs then the outputs, written in place."""

    def __init__(self, in_params: str, out_params: str, operation: str, name: str = "kernel") -> None:
        self.inputs = [_name(p) for p in in_params.split(",")]
        self.outputs = [_name(p) for p in out_params.split(",")]
        target, expression = (part.strip() for part in operation.split("=", 1))
        if self.outputs != [target]:
            raise NotImplementedError(f"the CuPy double evaluates one assignment to the output: "
                                      f"{operation!r}")
        self.expression = compile(expression, name, "eval")
        self.name = name

    def __call__(self, *args):
        names = [*self.inputs, *self.outputs]
        if len(args) != len(names):
            raise TypeError(f"{self.name} takes {len(names)} arguments ({', '.join(names)})")
        values = dict(zip(names, args, strict=True))
        out = values[self.outputs[0]]
        out[...] = eval(self.expression, {"__builtins__": {}}, values)
        return out


def _name(param: str) -> str:
    match = _PARAM.match(param)
    if match is None:
        raise ValueError(f"not a CuPy kernel parameter: {param!r}")
    return match.group(1)


def install(monkeypatch) -> None:
    """This double as ``cupy`` for the test (and ``cupy.cuda``, its runtime, ``cupy._core``,
    ``cupyx.profiler``)."""
    package = sys.modules[__name__]
    for name, module in (("cupy", package), ("cupy.cuda", cuda), ("cupy.cuda.runtime", cuda.runtime),
                         ("cupy._core", sys.modules[f"{__name__}._core"]),
                         ("cupy._core._routines_linalg", _routines_linalg),
                         ("cupyx", cupyx), ("cupyx.profiler", cupyx.profiler)):
        monkeypatch.setitem(sys.modules, name, module)
    cuda.reset()
