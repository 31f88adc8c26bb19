"""Sentences and the claims they make: an ``Explanation`` is a titled paragraph with its
claims, and ``verify`` checks one. A sentence holds when every claim recomputes, the
words that state each claim appear in the text, and every direction word in the text
("faster", "memory-bound", "fits", "from batch") is backed by a claim of that kind. Tests
walk every scene step, design-lab stage and a grid of states through it;
``roofline-explorer scenes check`` does the same for a lecturer's scene file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from explorer.core.words.claims import Claim


@dataclass(frozen=True)
class Explanation:
    """A titled paragraph, the claims it makes, and any further numbers behind it."""

    title: str
    text: str
    claims: tuple[Claim, ...] = ()
    numbers: dict[str, float] = field(default_factory=dict)  # named, for tests and JSON
    declared: tuple[Claim, ...] = ()  # checked, but stated in the author's own words

    def problems(self) -> list[str]:
        return verify(self.text, self.claims, self.declared)

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "text": self.text,
                "claims": [c.to_dict() for c in self.claims + self.declared], "numbers": self.numbers}


# Direction words and the kinds of claim that must back them.
DIRECTIONS: tuple[tuple[re.Pattern[str], tuple[str, ...], str], ...] = (
    (re.compile(r"\b(faster|slower|quicker|speed-?ups?|speeds? up|twice as|as fast|does not move)\b", re.I),
     ("faster",), "a speed comparison"),
    (re.compile(r"\b(memory|compute)-bound\b", re.I), ("bound", "crossing"), "a bound"),
    (re.compile(r"\b(fits?|fit in|does not fit|do not fit)\b", re.I), ("fits", "max_batch", "crossing"),
     "a memory fit"),
    (re.compile(r"\bfrom (a )?batch\b|\bat a batch of\b", re.I), ("crossing",), "a batch crossing"),
)


def unbacked(text: str, claims: Iterable[Claim]) -> list[str]:
    """Direction words in ``text`` that no claim of the matching kind backs."""
    kinds = {c.kind for c in claims}
    out = []
    for pattern, needed, what in DIRECTIONS:
        match = pattern.search(text)
        if match and not kinds.intersection(needed):
            out.append(f"'{match.group(0)}' states {what} that no claim backs")
    return out


def verify(text: str, claims: Iterable[Claim], declared: Iterable[Claim] = ()) -> list[str]:
    """Everything wrong with a sentence: failing claims, claimed words missing from the
    text, direction words no claim backs. ``declared`` claims (a scene's ``check``) back
    the prose without words of their own. Empty when the sentence holds."""
    claims, declared = list(claims), list(declared)
    problems = []
    for claim in claims + declared:
        failure = claim.check()
        if failure:
            problems.append(f"{claim.kind}: {failure}")
    for claim in claims:
        if claim.phrase and claim.phrase not in text:
            problems.append(f"{claim.kind}: the text does not say '{claim.phrase}'")
    return problems + unbacked(text, claims + declared)
