"""Live micro-kernels on the local CPU (NumPy) and GPU (CuPy); Qt-free like ``core``."""
