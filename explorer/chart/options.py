"""How a roofline chart is to be drawn (``ChartOptions``), and the style slot each shown
device keeps from one chart to the next."""

from __future__ import annotations

from dataclasses import dataclass, field

from explorer.chart.geometry import Rect


@dataclass(frozen=True)
class ChartOptions:
    """How a chart is drawn: titles, theme, key, size and what it shows."""

    title: str | None = None  # None: the workload and the devices
    subtitle: str | None = None
    theme: str = "light"
    key: bool = True
    annotations: bool = True  # roof and ridge labels
    slots: dict[str, int] = field(default_factory=dict)  # device id → style slot (kept while shown)
    suites: frozenset[str] | None = None  # measured suites drawn (None: all)
    ranges: tuple | None = None  # ((x low, x high), (y low, y high)) kept (a zoom, a drag); None: fitted
    hints: tuple[int, ...] = ()  # the label places taken last time (``Chart.placement``), tried first
    key_place: str | None = None  # where the key went last time (``Chart.key_place``): a drag keeps it
    plot: Rect | None = None  # the plot last time: a drag keeps it where only the key's width changed
    heading: bool = True  # the title and subtitle (a slide deck sets them as the slide's own text)


def style_slots(previous: dict[str, int], shown: tuple[str, ...]) -> dict[str, int]:
    """Each shown device keeps the style slot it had; a new one takes the lowest free."""
    slots = {ident: slot for ident, slot in previous.items() if ident in shown}
    for ident in shown:
        if ident not in slots:
            slots[ident] = min(set(range(len(shown) + 1)) - set(slots.values()))
    return slots

