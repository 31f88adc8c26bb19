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
    "mlp": ("gate_proj", "up_proj", "down_proj", "fc1", "fc2", "router", "expert_up", "expert_down",
            "shared_up", "shared_down"),
    "attention": ("attn_score", "attn_softmax", "attn_value"),
    "elementwise": ("norm", "residual", "activation", "pool"),
    "embedding / head": ("embedding", "lm_head"),
    "convolution": ("conv",),
    "communication": ("all_reduce", "all_to_all", "all_gather", "send_recv"),
}
ROLE_GROUP = {role: group for group, roles in ROLE_GROUPS.items() for role in roles}
# And one marker shape per group, so no two groups rest on hue alone (a colour-blind viewer
# tells attention from the head by ▲ and ⬢, whatever the theme); the key draws the same.
GROUP_SHAPES = {"projection": "square", "mlp": "diamond", "attention": "triangle", "elementwise": "circle",
                "embedding / head": "hexagon", "convolution": "pentagon", "communication": "triangle-down"}


def group_of(role: str) -> str:
    """The op group of ``role`` (an unknown role counts as elementwise)."""
    return ROLE_GROUP.get(role, "elementwise")

ROOF_BANDWIDTH = OKABE_ITO["blue"]  # the Little's-law plot's curve (light panels)
SUITE_SHAPES = {"stream": "circle", "intensity": "square", "gemm": "triangle", "decode-batch": "diamond",
                "attention": "star", "parallelism": "hexagon", "memory-bound-ops": "pentagon",
                "cache": "plus"}
MEASURED = OKABE_ITO["orange"]
TRACK_DASH = (1.5, 3.0)  # the batch track where the step fits in memory (dash, gap: line widths)
UNFIT_DASH = (6.0, 4.0)  # and where it does not
SELECTED = OKABE_ITO["yellow"]


@dataclass(frozen=True)
class Theme:
    """The colours of one theme, for the chart and the window around it. Every line, text
    and outline keeps at least 4.5:1 contrast against the background (WCAG AA for text);
    fills (the star, measured points) carry an outline that does.

    Devices and op groups can never be taken for each other: devices are neutral (black to
    grey, white to grey on dark backgrounds), told apart by their dash and ridge marker, and
    every op group is a hue at least ΔE 20 (CIEDE2000) from every device colour, also as
    people with protanopia, deuteranopia or tritanopia see them (Machado et al. 2009;
    tests/test_palette_vision.py checks it)."""

    name: str
    background: str
    foreground: str  # text and outlines
    axis: str
    devices: tuple[str, str, str, str]  # roofs by style slot
    groups: tuple[tuple[str, str], ...]  # op group → colour
    selected: str  # the ring around the selected op: neutral, unlike every op group
    star: str  # the whole step's fill (an opaque star under the ops)
    measured: str  # measured points' fill and measured ceilings
    suspect: str  # a measurement that may have run from cache
    track: str  # the batch track, datasheet roofs under a what-if
    panel: str  # the window's panels (docks, tables, toolbar)
    highlight: str  # selected rows and focus in the window
    pen_factor: float = 1.0  # thicker lines for projectors

    def group_colour(self, role: str) -> str:
        return dict(self.groups)[group_of(role)]

    def roles(self) -> dict[str, str]:
        """Every colour with contrast to keep, by what it shows."""
        out = {"text": self.foreground, "axis": self.axis, "selected": self.selected,
               "measured": self.measured, "suspect": self.suspect, "track": self.track}
        out.update({f"device {i + 1}": c for i, c in enumerate(self.devices)})
        out.update({f"ops: {g}": c for g, c in self.groups})
        return out


def _groups(*colours: str) -> tuple[tuple[str, str], ...]:
    return tuple(zip(ROLE_GROUPS, colours, strict=True))


THEMES = {
    "light": Theme("light", "#ffffff", "#000000", "#444444",
                   ("#000000", "#333333", "#4F4F4F", "#6B6B6B"),
                   _groups("#0073BF", "#117311", "#A64200", "#BF39BF", "#8C6200", "#4D5EFF", "#7B19A6"),
                   selected="#000000", star=OKABE_ITO["yellow"], measured="#8F6300", suspect="#767676",
                   track="#767676", panel="#f4f4f4", highlight="#0072B2"),
    "dark": Theme("dark", "#1e1e1e", "#eeeeee", "#bbbbbb",
                  ("#ffffff", "#D6D6D6", "#B8B8B8", "#A0A0A0"),
                  _groups("#49AEF2", "#00BF4D", "#FF824D", "#F26DF2", "#D99800", "#738FFF", "#FF4D4D"),
                  selected="#eeeeee", star=OKABE_ITO["yellow"], measured=OKABE_ITO["orange"],
                  suspect="#9a9a9a", track="#9a9a9a", panel="#2b2b2b", highlight="#2F6E94"),
    # High contrast (projectors): every role its own colour, lines 1.6× as wide.
    "contrast": Theme("contrast", "#000000", "#ffffff", "#ffffff",
                      ("#ffffff", "#D9D9D9", "#BDBDBD", "#A8A8A8"),
                      _groups("#49AEF2", "#00F279", "#FF4D4D", "#FF73FF", "#A8FF26", "#6FBF39", "#FFB973"),
                      selected="#ffffff", star="#FFB000", measured="#C39BFF", suspect="#A0A0A0",
                      track="#8C8C8C", panel="#000000", highlight="#FFB000", pen_factor=1.6),
}


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours (#rrggbb), 1 to 21."""
    def luminance(colour: str) -> float:
        r, g, b_ = (int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4))
        return sum(w * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
                   for w, c in zip((0.2126, 0.7152, 0.0722), (r, g, b_), strict=True))

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def blend(colour: str, background: str, alpha: float) -> str:
    """``colour`` seen at ``alpha`` over ``background``, as one opaque colour (#rrggbb)."""
    def channels(value: str) -> tuple[int, ...]:
        return tuple(int(value.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))

    pairs = zip(channels(colour), channels(background), strict=True)
    mixed = (round(alpha * c + (1 - alpha) * b) for c, b in pairs)
    return "#" + "".join(f"{v:02x}" for v in mixed)
