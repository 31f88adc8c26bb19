"""Colour science for the palette's tests: CIEDE2000 colour differences (Sharma, Wu and
Dalal 2005, checked against their test data) between sRGB colours, and how people with
protanopia, deuteranopia or tritanopia see a colour (Machado, Oliveira and Fernandes 2009,
severity 1, applied to linear RGB)."""

import math

import numpy as np

MACHADO = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}
SHARMA = [  # (Lab 1, Lab 2, ΔE00) pairs from Sharma, Wu and Dalal's test data
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, -1.3802, -84.2814), (50.0, 0.0, -82.7485), 1.0),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((22.7233, 20.0904, -46.694), (23.0331, 14.973, -42.5619), 2.0373),
]


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _encoded(c: float) -> float:
    c = min(1.0, max(0.0, c))
    return 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def simulate(colour: str, kind: str | None) -> list[float]:
    """``colour`` (#rrggbb) as a dichromat of ``kind`` sees it (None: as it is), sRGB 0 to 1."""
    rgb = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    if kind is None:
        return rgb
    return [_encoded(c) for c in MACHADO[kind] @ np.array([_linear(c) for c in rgb])]


def lab(srgb: list[float]) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour (components 0 to 1)."""
    r, g, b = (_linear(c) for c in srgb)
    xyz = ((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b,
           (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)
    fx, fy, fz = (t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def _hue(b: float, a: float) -> float:
    return math.degrees(math.atan2(b, a)) % 360 if (a or b) else 0.0


def ciede2000(lab1, lab2) -> float:
    """ΔE00 between two CIELAB colours."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1, h2 = _hue(b1, a1), _hue(b2, a2)
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_big_h = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh) / 2)
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + (360 if h1 + h2 < 360 else -360)) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6)) - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    rotation = -math.sin(math.radians(60 * math.exp(-(((h_mean - 275) / 25) ** 2)))) \
        * 2 * math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_mean, 1 + 0.015 * c_mean * t
    dl, dc, dh_ = (l2 - l1) / s_l, (c2 - c1) / s_c, d_big_h / s_h
    return math.sqrt(dl ** 2 + dc ** 2 + dh_ ** 2 + rotation * dc * dh_)


def difference(a: str, b: str, kind: str | None = None) -> float:
    """ΔE00 between two #rrggbb colours as a viewer of ``kind`` sees them."""
    return ciede2000(lab(simulate(a, kind)), lab(simulate(b, kind)))
