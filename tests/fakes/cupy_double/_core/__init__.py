"""``cupy._core``: only what the kernels reach into (the matrix product's compute type)."""
