"""The roofline chart: plot widget, axes, colours and the data <-> view conversion."""
