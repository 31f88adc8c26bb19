"""The roofline analysis: roofs and bounds, a step's totals, batching, drags, scaling laws, and
the text report."""
