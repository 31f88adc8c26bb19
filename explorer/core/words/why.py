"""The "why" paragraphs: our own words on the ideas the app shows, with every number
filled in from the hardware catalogue when the text is read (resources/explain/why.yaml):
``{h100-sxm/bandwidth}`` becomes "3.35 TB/s" (see ``placeholders`` for every field).
Scene captions use the same placeholders."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.files.datafile import DataFileError, Fields, read_entries
from explorer.paths import resource_path

if TYPE_CHECKING:  # (the words are read when a topic is shown, not at start-up)
    from explorer.core.hardware.hardware import Hardware
    from explorer.core.model.models import ModelSpec
    from explorer.core.model.presets import ModelCatalog
    from explorer.core.words.sentences import Explanation

__all__ = ["Topic", "explain_topic", "load_topics", "render"]

SCHEMA = 1


@dataclass(frozen=True)
class Topic:
    """An explanation the Explain panel shows: its text with placeholders, filled in when shown
    (``explain_topic``)."""

    id: str
    title: str
    text: str  # with placeholders
    origin: str = ""


def explain_topic(topic: Topic, catalog: Mapping[str, Hardware],
                  models: Mapping[str, ModelSpec] | None = None) -> Explanation:
    """The paragraph with its numbers filled in, and the claims behind them. ``models``
    default to the shipped presets (placeholders such as ``{faster:…}`` analyse one)."""
    from explorer.core.words.placeholder_context import Context  # (not at start-up: 40 ms)
    from explorer.core.words.placeholders import fill_with_claims
    from explorer.core.words.sentences import Explanation

    text, claims = fill_with_claims(topic.text, Context(catalog, models or _shipped_models()))
    return Explanation(topic.title, text, tuple(claims))


def render(topic: Topic, catalog: Mapping[str, Hardware],
           models: Mapping[str, ModelSpec] | None = None) -> str:
    """The paragraph with its numbers filled in (KeyError names a placeholder that cannot be)."""
    from explorer.core.words.placeholders import fill  # (not at start-up: 40 ms)

    return fill(topic.text, catalog, models or _shipped_models())


def _read_topic(fields: Fields) -> Topic:
    return Topic(id=fields.identifier("id"), title=fields.text("title"), text=fields.text("text"),
                 origin=fields.file)


def load_topics(catalog: Mapping[str, Hardware], path: str | Path | None = None,
                models: Mapping[str, ModelSpec] | None = None, check: bool = True) -> list[Topic]:
    """The topics, checked: every placeholder must resolve against ``catalog`` (and
    ``models``, for placeholders that analyse a model). ``check`` False: read only (a window
    at start-up fills a topic in when it is shown; the suite checks every shipped one)."""
    path = Path(path) if path else resource_path("explain", "why.yaml")
    topics = read_entries(path, "topics", SCHEMA, _read_topic)
    for topic in topics if check else ():
        try:
            render(topic, catalog, models)
        except KeyError as exc:
            raise DataFileError(path, f"cannot fill in: {exc.args[0]}", topic.id, "text") from None
    return topics


@cache
def _shipped_models() -> ModelCatalog:
    from explorer.core.model.presets import load_models

    return load_models()
