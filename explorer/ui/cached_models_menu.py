"""File › Models on this machine: the models in the Hugging Face cache (``hf_cache``).

The cache is read off the GUI thread, as the app's job ``hf-cache`` (``explorer.runs``):
the first time the menu opens, and again only when the cache folder has changed since (its
modification time moves when a download adds a repository, or one is deleted), so opening
the menu never waits on the disk (a thousand repositories take most of a second). Until the
read is done the menu says it is reading; when it is done the menu fills, open or not. A
model is listed under its repository, with the id ``--model`` takes for it; a cache of more
than ``MAX_REPOSITORIES`` says how many it left out and why, and one that cannot be read is
shown disabled with its reason.

The GGUF files of LM Studio, Ollama and the folders ``$ROOFLINE_EXPLORER_GGUF_DIRS`` names
(``gguf_models``) are read in the same job and listed after the cache, under their names
and the store that holds them; the read is made again when one of those folders changes
(its own time: a file added in a new subfolder of LM Studio's moves the subfolder's only,
so such a file shows at the cache's next change or the next start). Each read's models go
to ``sig_listed`` too (the Workload panel's *Compare with* box lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from PySide6 import QtCore, QtWidgets

if TYPE_CHECKING:  # read when the menu first opens, not at start-up
    from explorer.core.model.hf_cache import Scan
    from explorer.core.model.local_models import Listed
    from explorer.runs import Jobs

Scanner = Callable[[Path], "Scan"]
GgufReader = Callable[[], "list[Listed]"]

JOB = "hf-cache"
READING = "Reading the Hugging Face cache…"
STORES = {"lm-studio": "LM Studio", "ollama": "Ollama", "folder": "folder"}


class Listing(NamedTuple):
    """What a read of the cache gives the menu."""

    found: Scan
    models: list[Listed]  # the cache's, under the ids --model takes
    ggufs: list[Listed]  # the GGUF files found (``local_models.gguf_models``)


def read_listing(folder: Path, taken: Collection[str], scanner: Scanner | None = None,
                 ggufs: GgufReader | None = None) -> Listing:
    """The cache in ``folder`` read (on a worker thread) with the ids ``--model`` gives its
    models (``taken``: the presets' ids; ``scanner``: ``hf_cache.scan`` by default), and the
    GGUF files found (``ggufs``: ``local_models.gguf_models`` by default)."""
    from explorer.core.model.hf_cache import scan
    from explorer.core.model.local_models import CACHE, gguf_models, local_models

    found = (scanner or scan)(folder)
    cached = [e for e in local_models(taken, found) if e.kind == CACHE]
    return Listing(found, cached, (ggufs or gguf_models)())


Stamp = tuple[tuple[Path, int | None], ...]


def _stamp(folder: Path) -> tuple[Path, int | None]:
    """The folder and its modification time (None when it is not there)."""
    try:
        return folder, folder.stat().st_mtime_ns
    except OSError:
        return folder, None


def _stamps(folder: Path) -> Stamp:
    """The cache's and the GGUF folders' stamps (``gguf_models.watched``)."""
    from explorer.core.model.gguf_models import watched

    return tuple(_stamp(f) for f in (folder, *watched()))


class CachedModelsMenu(QtCore.QObject):
    """Fills ``menu`` with the cache's models and the GGUF files found; ``open_config(path)``
    opens one (a config.json or a GGUF file)."""

    sig_listed = QtCore.Signal(object)  # a finished read's Listing

    def __init__(self, menu: QtWidgets.QMenu, runs: Jobs, open_config: Callable[[Path], Any],
                 taken: Collection[str] = (), scanner: Scanner | None = None,
                 folder: Callable[[], Path] | None = None, ggufs: GgufReader | None = None) -> None:
        super().__init__(menu)
        self.menu, self.runs, self.open_config = menu, runs, open_config
        self.taken, self.scanner, self.folder, self.ggufs = tuple(taken), scanner, folder, ggufs
        self.listing: Listing | None = None
        self._read_for: Stamp | None = None  # the folders and times the listing is of
        self._reading: Stamp | None = None  # those of the read under way
        menu.setToolTipsVisible(True)
        menu.aboutToShow.connect(self.refresh)
        runs.sig_finished.connect(self._on_finished)
        runs.sig_failed.connect(self._on_failed)

    def refresh(self) -> None:
        """Start a read unless the listing shown is of the cache as it is (one stat)."""
        if self.folder is None:
            from explorer.core.model.hf_cache import hub_folder

            self.folder = hub_folder
        stamp = _stamps(self.folder())
        if stamp == self._read_for and self.listing is not None:
            return
        if stamp == self._reading and self.runs.running(JOB):
            return
        self._reading = stamp
        self.menu.clear()
        self.menu.addAction(READING).setEnabled(False)
        folder, taken, scanner, ggufs = stamp[0][0], self.taken, self.scanner, self.ggufs
        self.runs.submit(JOB, lambda _token, _emit: read_listing(folder, taken, scanner, ggufs))

    def _on_finished(self, job: str, listing: Listing) -> None:
        if job != JOB:
            return
        self.listing, self._read_for = listing, self._reading
        self._fill(listing)
        self.sig_listed.emit(listing)

    def _on_failed(self, job: str, message: str) -> None:
        if job != JOB:
            return
        self._reading = None  # the next opening tries again
        self.menu.clear()
        self.menu.addAction(f"The cache could not be read: {message}").setEnabled(False)

    def _fill(self, listing: Listing) -> None:
        menu = self.menu
        menu.clear()
        if not listing.models:
            menu.addAction(f"(none in {listing.found.folder})").setEnabled(False)
        for entry in listing.models:
            if entry.spec is None:
                action = menu.addAction(f"{entry.repository} (cannot be read)")
                action.setEnabled(False)
                action.setToolTip(entry.problem)
            else:
                action = menu.addAction(entry.repository)
                action.setToolTip(f"--model {entry.id} ({entry.path})")
                action.triggered.connect(lambda _checked=False, path=entry.path: self.open_config(path))
        if listing.found.left_out:
            menu.addSeparator()
            cut = menu.addAction(f"{listing.found.left_out:,} more not listed (only the first "
                                 f"{len(listing.found.models):,} are read)")
            cut.setEnabled(False)
            cut.setToolTip(listing.found.cut_notice())
        if listing.ggufs:
            menu.addSeparator()
        for entry in listing.ggufs:
            text = f"{entry.repository} ({STORES.get(entry.store, entry.store)}, GGUF)"
            if entry.spec is None:
                action = menu.addAction(f"{text} (cannot be read)")
                action.setEnabled(False)
                action.setToolTip(entry.problem)
            else:
                action = menu.addAction(text)
                action.setToolTip(f"--model {entry.id} ({entry.path})")
                action.triggered.connect(lambda _checked=False, path=entry.path: self.open_config(path))
