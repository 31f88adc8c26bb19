"""Mutations of valid data files for the loader fuzz tests: the file is parsed, changed
where a user or a broken disk would change it (a field deleted, duplicated into another
entry, retyped; huge, negative, NaN or infinite numbers, integers of 400 digits,
subnormals; unicode; deep nesting), written back (files cut short are tested at every byte
in test_loaders)."""

from __future__ import annotations

import copy
import math

from hypothesis import strategies as st

NASTY = [None, True, False, 0, -1, 1, 2**31, 2**63, 2**64 + 1, 10**30, -(10**30), 1e308, -1e308,
         math.inf, -math.inf, math.nan, 0.5, -0.0, "", " ", "0", "-1", "1e999", "nan", "∞", "x" * 300,
         "ünïcødé ✓", "<b>html</b>", "\n", [], {}, [1, 2], {"a": 1}, [[[[[]]]]], "2 TB/s", "-3 GB",
         "1e400 FLOP/s", 4000000000000000000, 30000000,
         10**400 - 1, -(10**400 - 1), 1e-320, -1e-320, 5e-324]  # no float holds the first two

values = st.one_of(
    st.sampled_from(NASTY),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
    st.recursive(st.integers(), lambda inner: st.lists(inner, max_size=2), max_leaves=4),
)


def paths(tree, prefix=()):
    """Every place in a parsed file: (path, value)."""
    yield prefix, tree
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            yield from paths(value, (*prefix, index))


def _parent(tree, path):
    for step in path[:-1]:
        tree = tree[step]
    return tree


@st.composite
def mutated(draw, original):
    """``original`` (a parsed file) with one to four mutations."""
    tree = copy.deepcopy(original)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        places = [p for p, _ in paths(tree) if p]
        if not places:
            break
        path = draw(st.sampled_from(places))
        parent, key = _parent(tree, path), path[-1]
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "copy", "nest",
                                       "add", "repeat"]))
        if action == "replace":  # a copy: the samples must never change (hypothesis replays them)
            parent[key] = copy.deepcopy(draw(values))
        elif action == "delete":
            del parent[key]
        elif action == "copy":  # another place's content here (a field retyped as an entry)
            source = draw(st.sampled_from(places))
            parent[key] = copy.deepcopy(_parent(tree, source)[source[-1]])
        elif action == "nest":
            parent[key] = [parent[key]] if draw(st.booleans()) else {"x": parent[key]}
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = copy.deepcopy(draw(values))
        elif action == "repeat" and isinstance(parent, list):
            parent.extend(copy.deepcopy(parent[key]) for _ in range(draw(st.integers(1, 3))))
    return tree

