"""What the document's parts (the mixins ``Measurements`` and ``Derived``) use of
``Document``: declared once here, for the type checker; ``Document`` sets and defines it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.core.hardware.catalog import Catalog
from explorer.core.model.presets import ModelCatalog
from explorer.core.model.session import Session
from explorer.kernels.results import Point, Results

if TYPE_CHECKING:
    from explorer.core.model.models import ModelSpec
    from explorer.document.topics import Topic


class DocumentHost:
    """The fields and methods of ``Document`` its parts use (nothing here at run time)."""

    catalog: Catalog
    models: ModelCatalog
    _session: Session
    _results: dict[str, Results]  # measurement files loaded, by path
    _live: list[Point]  # points of a run in progress
    _memo_of: tuple[Session, Catalog] | None  # what ``Derived``'s memo below belongs to
    _memo_values: dict[tuple[str, str], object]
    _listed: dict[str, ModelSpec]  # models found by an id ``models`` lists ("hf-"), by id

    if TYPE_CHECKING:
        @property
        def model(self) -> ModelSpec: ...

        def _change(self, after: Session, text: str) -> None: ...

        def _emit(self, topic: Topic, *args: object) -> None: ...
