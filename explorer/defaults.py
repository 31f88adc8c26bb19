"""Defaults every entry point shares (the window, the commands, exports): what is shown at
first, the chart's themes and the limits of an exported picture. Standard library only."""

from __future__ import annotations

DEVICE = "h100-sxm"  # shown at first
MODEL = "llama-3-8b"
LAB_CPU, LAB_GPU = "xeon-platinum-8480", "a100-80gb-sxm"  # the design lab's ends

# Chart themes and their menu names; all use the Okabe–Ito palette.
THEMES = {"light": "&Light", "dark": "&Dark", "contrast": "High &contrast (projectors)"}
THEME = "light"

EXPORT_WIDTH_PX = 3840  # a 4K slide
EXPORT_WIDTH_RANGE = (200, 16384)
EXPORT_DPI_MAX = 1200
