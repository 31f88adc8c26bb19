"""The label placement's overlap tests against the plain separating-axis test on every edge
of both shapes: they check fewer normals (none for level and plumb sides, two for a
parallelogram), and the layout's own (``split`` of each shape's ``bands``, made once)
projects only the other shape, never with a different answer."""

import math
import random

from explorer.chart.geometry import apart, bands, box, nearest, overlap, quad, split, square
from explorer.chart.layout import stroke_shape


def every_edge(a, b) -> bool:
    """Two convex polygons overlap unless one of their edges' normals separates them."""
    for poly in (a, b):
        for i in range(len(poly)):
            (x1, y1), (x2, y2) = poly[i], poly[(i + 1) % len(poly)]
            nx, ny = y1 - y2, x2 - x1
            on_a = [x * nx + y * ny for x, y in a]
            on_b = [x * nx + y * ny for x, y in b]
            if max(on_a) <= min(on_b) or max(on_b) <= min(on_a):
                return False
    return True


def shapes(rng: random.Random):
    """A turned or level label box, a marker's square, a slanted, level or plumb segment,
    and a point's small triangle, on a 20-pixel grid so that edges often meet exactly."""
    def point():
        return (rng.randrange(0, 10) * 20.0, rng.randrange(0, 10) * 20.0)

    kind = rng.randrange(6)
    if kind == 5:  # a wide line's stroke (``stroke_shape``), level or plumb (corners on the grid)
        (x, y), length = point(), rng.randrange(1, 8) * 20.0
        end = (x + length, y) if rng.random() < 0.5 else (x, y + length)
        return stroke_shape((x, y), end, rng.choice([10.0, 20.0]))
    if kind == 0:
        angle = rng.choice([0.0, 0.0, math.radians(rng.uniform(-80, 80))])
        return quad(point(), rng.uniform(10, 120), rng.uniform(8, 30), angle, rng.uniform(-60, 0), -20.0)
    if kind == 1:
        return square(point(), rng.choice([5.0, 10.0, 20.0]))
    if kind == 2:
        return (point(), point())
    if kind == 3:
        (x, y), length = point(), rng.randrange(1, 8) * 20.0
        return ((x, y), (x + length, y)) if rng.random() < 0.5 else ((x, y), (x, y + length))
    (x, y) = point()
    return ((x, y), (x + 0.1, y), (x, y + 0.1))


def test_overlap_agrees_with_every_edge_on_ten_thousand_pairs():
    rng = random.Random(20261202)
    pairs = [(shapes(rng), shapes(rng)) for _ in range(10_000)]
    pairs = [(a, b) for a, b in pairs if a[0] != a[1] and b[0] != b[1]]  # no empty segment
    disagree = [(a, b) for a, b in pairs if overlap(a, b) != every_edge(a, b)]
    assert not disagree
    assert 0.05 < sum(overlap(a, b) for a, b in pairs) / len(pairs) < 0.95  # both answers tested


def test_split_of_bands_agrees_with_every_edge_on_ten_thousand_pairs():
    """The layout's test (boxes, then each shape's bands against the other's points)."""
    rng = random.Random(20261203)
    pairs = [(shapes(rng), shapes(rng)) for _ in range(10_000)]
    pairs = [(a, b) for a, b in pairs if a[0] != a[1] and b[0] != b[1]]
    layout = [not apart(box(a), box(b)) and not split(bands(a), b) and not split(bands(b), a)
              for a, b in pairs]
    assert layout == [every_edge(a, b) for a, b in pairs]
    assert 0.05 < sum(layout) / len(layout) < 0.95
    assert {len(a) for a, _ in pairs} == {2, 3, 4}  # each of split's three ways to project


def test_a_stroke_s_band_holds_the_points_within_half_its_width_of_the_segment():
    """What a label keeps clear of (issue 58: a label on a projector's 6 px roof): a point
    is inside the band exactly when it lies within half the width of the segment, beside it."""
    rng = random.Random(58)
    for _ in range(2000):
        start = (rng.uniform(0, 200), rng.uniform(0, 200))
        end = (rng.uniform(0, 200), rng.uniform(0, 200))
        half = rng.uniform(1.0, 6.0)
        band = stroke_shape(start, end, half)
        p = (rng.uniform(0, 200), rng.uniform(0, 200))
        foot = nearest(p, start, end)
        beside = foot not in (start, end)  # (the band is square at its ends, not rounded)
        distance = math.dist(p, foot)
        if beside and abs(distance - half) > 1e-6:
            dot = ((p[0], p[1]), (p[0] + 1e-3, p[1]), (p[0], p[1] + 1e-3))
            assert overlap(band, dot) == (distance < half), (p, start, end, half)
