"""Pure Python + NumPy domain code: units, hardware, catalogue, roofline math, workloads.

Nothing in this package imports Qt (a test checks it): the CLI uses it on
machines without a display.
"""
