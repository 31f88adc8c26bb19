"""Mutations of a line-based file for the profile readers' fuzz tests: lines dropped,
doubled, swapped or cut, and cells replaced."""

import random


def mutated(rng: random.Random, lines: list[str], cells: list[str], replacements: list[str]) -> str:
    """``lines`` after one to four random mutations; a replaced cell is one of ``cells``
    (where a line holds it) swapped for one of ``replacements``."""
    lines = list(lines)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        action = rng.choice(["drop", "double", "swap", "cut", "cell"])
        if action == "drop":
            del lines[i]
        elif action == "double":
            lines.insert(i, lines[i])
        elif action == "swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif action == "cut":
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        else:
            lines[i] = lines[i].replace(rng.choice(cells), rng.choice(replacements), 1)
        if not lines:
            lines = [""]
    return "\n".join(lines)
