"""Devices: the sourced catalogue, a device's roofs and links, its data sheet, and Little's law
(bandwidth from the bytes in flight and the memory latency)."""
