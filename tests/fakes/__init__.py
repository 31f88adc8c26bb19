"""Stand-ins for what a GPU machine has and this one does not (CuPy, NVML, Nsight Compute)."""
