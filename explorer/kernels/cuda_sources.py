"""CUDA C++ sources compiled at run time by CuPy (NVRTC). A test compiles them with nvcc
to PTX where nvcc exists, so a typo cannot reach a user.

- ``fma_chain<T, K>`` (float, double) and ``fma_chain_h2<K>``: the intensity sweep.
  Each element is loaded once, goes through a chain of K fused multiply-adds, and is
  stored once: 2·K FLOPs per element for 2·sizeof(T) bytes. K is a template parameter,
  so the compiler unrolls the chain and the FLOP count is exact. ``half2`` packs two
  fp16 lanes: K ``__hfma2`` do 4·K FLOPs per pair of elements.
- ``copy_f4``: a grid-stride float4 copy whose block count is chosen by the caller:
  bandwidth versus the parallelism in flight (Little's law).
- ``triad_f4``: a float4 STREAM triad, the raw-kernel reference for bandwidth.
"""

INTENSITY_KERNELS = {"fp32": "fma_chain<float, {k}>", "fp64": "fma_chain<double, {k}>",
                     "fp16": "fma_chain_h2<{k}>"}
# Every chain length the suites use: one module per precision compiles them all at once.
CHAIN_LENGTHS = tuple(2**i for i in range(12))

SOURCE = r"""
template<typename T, int K>
__global__ void fma_chain(T* x, unsigned long long n, T a, T b) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n; i += stride) {
        T v = x[i];
#pragma unroll
        for (int k = 0; k < K; ++k) v = fma(v, a, b);  // float and double overloads
        x[i] = v;
    }
}

extern "C" __global__ void copy_f4(const float4* __restrict__ src, float4* __restrict__ dst,
                                   unsigned long long n4) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n4; i += stride) {
        dst[i] = src[i];
    }
}

extern "C" __global__ void triad_f4(float4* __restrict__ a, const float4* __restrict__ b,
                                    const float4* __restrict__ c, float q, unsigned long long n4) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n4; i += stride) {
        float4 bv = b[i], cv = c[i];
        a[i] = make_float4(bv.x + q * cv.x, bv.y + q * cv.y, bv.z + q * cv.z, bv.w + q * cv.w);
    }
}
"""

# Half precision needs the toolkit's cuda_fp16.h (CuPy 13+ no longer bundles it: install
# the [gpu] extra, which pulls the CUDA toolkit wheels), so it is compiled only for fp16.
FP16_SOURCE = r"""
#include <cuda_fp16.h>

template<int K>
__global__ void fma_chain_h2(__half2* x, unsigned long long n2, float a, float b) {
    const __half2 a2 = __float2half2_rn(a);
    const __half2 b2 = __float2half2_rn(b);
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n2; i += stride) {
        __half2 v = x[i];
#pragma unroll
        for (int k = 0; k < K; ++k) v = __hfma2(v, a2, b2);
        x[i] = v;
    }
}
"""


def template_name(dtype: str, k: int) -> str:
    return INTENSITY_KERNELS[dtype].format(k=k)


# Keyed by (device, precision): a RawModule is loaded into the context of the device that
# was current when it was built, and a kernel from it cannot launch on another device.
_modules: dict[tuple[int, str], object] = {}


def module(cp, dtype: str | None = None):
    """The compiled module for the current device: the plain kernels, or the intensity
    chains of ``dtype`` (every chain length at once). CuPy also caches the binaries on disk."""
    key = (cp.cuda.runtime.getDevice(), dtype or "plain")
    if key not in _modules:
        if dtype is None:
            _modules[key] = cp.RawModule(code=SOURCE, options=("-std=c++17",))
        else:
            code = FP16_SOURCE if dtype == "fp16" else SOURCE
            names = tuple(template_name(dtype, k) for k in CHAIN_LENGTHS)
            _modules[key] = cp.RawModule(code=code, options=("-std=c++17",), name_expressions=names)
    return _modules[key]
