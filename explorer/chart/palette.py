"""Colours: the Okabe-Ito palette, distinguishable with the common colour-vision deficiencies."""

from __future__ import annotations

from dataclasses import dataclass

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}

# Op roles grouped by what they do, one colour per group.
ROLE_GROUPS = {
    "projection": ("q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj"),
    "mlp": ("gate_proj", "up_proj", "down_proj", "fc1", "fc2"),
    "attention": ("attn_score", "attn_softmax", "attn_value"),
    "elementwise": ("norm", "residual", "activation", "pool"),
    "embedding / head": ("embedding", "lm_head"),
    "convolution": ("conv",),
}
GROUP_COLOURS = {
    "projection": OKABE_ITO["blue"],
    "mlp": OKABE_ITO["green"],
    "attention": OKABE_ITO["vermillion"],
    "elementwise": OKABE_ITO["purple"],
    "embedding / head": OKABE_ITO["orange"],
    "convolution": OKABE_ITO["sky"],
}
ROLE_GROUP = {role: group for group, roles in ROLE_GROUPS.items() for role in roles}

ROOF_COMPUTE = OKABE_ITO["black"]
ROOF_VECTOR = "#555555"
ROOF_BANDWIDTH = OKABE_ITO["blue"]
STEP_POINT = OKABE_ITO["black"]


def role_colour(role: str) -> str:
    return GROUP_COLOURS[ROLE_GROUP.get(role, "elementwise")]


@dataclass(frozen=True)
class DeviceStyle:
    colour: str
    symbol: str  # ridge marker
    dash: str  # line style name of Qt.PenStyle


# Overlaid devices: colour plus a distinct ridge marker and the device name on every label,
# so nothing depends on telling colours apart.
DEVICE_STYLES = (
    DeviceStyle(OKABE_ITO["black"], "d", "SolidLine"),
    DeviceStyle(OKABE_ITO["blue"], "s", "DashLine"),
    DeviceStyle(OKABE_ITO["vermillion"], "t", "DashDotLine"),
    DeviceStyle(OKABE_ITO["green"], "o", "DotLine"),
)
ORIGINAL_ROOF = "#9a9a9a"  # where a what-if roof came from


def device_style(index: int, multi: bool) -> DeviceStyle:
    return DEVICE_STYLES[index % len(DEVICE_STYLES)] if multi else DEVICE_STYLES[0]


# Measured points: filled, one shape per suite.
SUITE_SYMBOLS = {"stream": "o", "intensity": "s", "gemm": "t", "decode-batch": "d",
                 "attention": "star", "parallelism": "h", "memory-bound-ops": "p"}
SUITE_SHAPES = {"stream": "circle", "intensity": "square", "gemm": "triangle", "decode-batch": "diamond",
                "attention": "star", "parallelism": "hexagon", "memory-bound-ops": "pentagon"}
MEASURED = OKABE_ITO["orange"]
STAR_FILL = OKABE_ITO["yellow"]
SUSPECT = "#999999"
SELECTED = OKABE_ITO["yellow"]


@dataclass(frozen=True)
class Theme:
    """Colours of the chart; every theme keeps to colour-blind-safe hues (Okabe–Ito)."""

    name: str
    background: str
    foreground: str  # text, markers' outlines
    axis: str
    compute: str  # the top compute roof of a single device
    vector: str  # other compute roofs of a single device
    bandwidth: str
    devices: tuple[str, str, str, str]  # overlaid devices
    point_fill: tuple[int, int, int, int]
    legend_fill: tuple[int, int, int, int]
    pen_factor: float = 1.0  # thicker lines for projectors


THEMES = {
    "light": Theme("light", "#ffffff", "#000000", "#444444", OKABE_ITO["black"], "#555555",
                   OKABE_ITO["blue"], (OKABE_ITO["black"], OKABE_ITO["blue"], OKABE_ITO["vermillion"],
                                       OKABE_ITO["green"]), (255, 255, 255, 160), (255, 255, 255, 220)),
    "dark": Theme("dark", "#1e1e1e", "#eeeeee", "#bbbbbb", "#ffffff", "#bbbbbb", OKABE_ITO["sky"],
                  ("#ffffff", OKABE_ITO["sky"], OKABE_ITO["orange"], OKABE_ITO["green"]),
                  (30, 30, 30, 160), (30, 30, 30, 220)),
    "contrast": Theme("contrast", "#000000", "#ffffff", "#ffffff", "#ffffff", OKABE_ITO["yellow"],
                      OKABE_ITO["sky"], ("#ffffff", OKABE_ITO["yellow"], OKABE_ITO["sky"],
                                         OKABE_ITO["vermillion"]),
                      (0, 0, 0, 200), (0, 0, 0, 230), pen_factor=1.6),
}
