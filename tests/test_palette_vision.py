"""Devices and op groups can never be taken for each other: in every theme each op group's
colour is at least ΔE 20 (CIEDE2000) from each device's, for normal colour vision and as
protanopes, deuteranopes and tritanopes see them."""

import pytest

from explorer.chart.palette import THEMES, contrast
from tests.colour_science import MACHADO, SHARMA, ciede2000, difference

VIEWERS = (None, *MACHADO)


@pytest.mark.parametrize("lab1, lab2, expected", SHARMA)
def test_the_colour_difference_matches_the_published_test_data(lab1, lab2, expected):
    assert ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)


def test_a_dichromat_sees_red_and_olive_alike_and_a_trichromat_does_not():
    red, olive = "#FF0000", "#999900"  # far apart for most, nearly one colour for a deuteranope
    assert difference(red, olive) > 40 and difference(red, olive, "deuteranopia") < 5
    assert difference("#D55E00", "#009E73", "deuteranopia") > 20  # Okabe-Ito's pair stays apart


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_no_op_group_looks_like_a_device_for_any_viewer(theme):
    t = THEMES[theme]
    worst = min((difference(device, colour, viewer), viewer or "normal vision", device, group)
                for device in t.devices for group, colour in t.groups for viewer in VIEWERS)
    assert worst[0] >= 20, worst


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_devices_are_neutral_and_told_apart_by_lightness_in_order(theme):
    t = THEMES[theme]
    for device in t.devices:
        r, g, b = (int(device.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
        assert r == g == b, device  # grey: hue is the op groups'
        assert contrast(device, t.background) >= 4.5
    greys = [int(d[1:3], 16) for d in t.devices]
    assert greys == sorted(greys, reverse=t.background != "#ffffff")


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_every_pair_of_op_groups_differs_by_shape_or_by_colour_for_dichromats(theme):
    """Issue 58: attention and the head were ΔE 1.6 apart for a deuteranope (light theme),
    MLP and the head 1.4 for a protanope; hue alone cannot carry seven groups, so each has
    its own marker shape, and any pair sharing one would need ΔE ≥ 20 for both."""
    from itertools import combinations

    from explorer.chart.palette import GROUP_SHAPES, ROLE_GROUPS

    t = THEMES[theme]
    colours = dict(t.groups)
    assert set(GROUP_SHAPES) == set(ROLE_GROUPS) == set(colours)
    for a, b in combinations(ROLE_GROUPS, 2):
        apart = min(difference(colours[a], colours[b], viewer) for viewer in ("deuteranopia", "protanopia"))
        assert GROUP_SHAPES[a] != GROUP_SHAPES[b] or apart >= 20, (a, b, apart)
    # and the pairs the issue measured do collapse in colour: the shapes are what tells them apart
    if theme == "light":
        assert difference(colours["attention"], colours["embedding / head"], "deuteranopia") < 20


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_the_selection_ring_looks_like_no_op_group_for_any_viewer(theme):
    """It was nearly the communication purple (ΔE 5.0): now neutral, far from every group."""
    t = THEMES[theme]
    worst = min((difference(t.selected, colour, viewer), viewer or "normal vision", group)
                for group, colour in t.groups for viewer in VIEWERS)
    assert worst[0] >= 20, worst
    assert contrast(t.selected, t.background) >= 4.5
