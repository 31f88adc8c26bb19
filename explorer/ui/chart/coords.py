"""The one place that converts between data values and the chart's log10 view coordinates.

pyqtgraph's log mode transforms plotted curves only; text, lines and custom
items are placed in view coordinates, i.e. log10 of the data value.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def to_view(value: ArrayLike) -> NDArray:
    return np.log10(np.asarray(value, dtype=float))


def to_data(view: ArrayLike) -> NDArray:
    return np.power(10.0, np.asarray(view, dtype=float))


def view_point(x: float, y: float) -> tuple[float, float]:
    return float(np.log10(x)), float(np.log10(y))
