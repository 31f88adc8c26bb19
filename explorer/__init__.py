"""Roofline Explorer: why deep learning runs on GPUs, on an interactive roofline chart."""

__version__ = "0.1.0"
