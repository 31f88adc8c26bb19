"""The document's measurements: results files shown beside the prediction, the points of a
run in progress, and measured roofs. A part of ``Document`` (a mixin), kept apart so the
document stays readable: what it uses of the document is declared in ``DocumentHost``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from explorer.core.files.datafile import DataFileError
from explorer.core.files.userfiles import Skipped
from explorer.core.model.profile import Profile, kept
from explorer.core.model.session import Session
from explorer.document.host import DocumentHost
from explorer.document.topics import Topic
from explorer.kernels.results import Point, Results, load_results


class Measurements(DocumentHost):
    def add_results(self, path: str) -> Results:
        """Load a results file (raises DataFileError) and show it."""
        results = load_results(path)
        self.keep_results(path, results)
        return results

    def keep_results(self, name: str, results: Results) -> None:
        """Show ``results`` already in memory under ``name`` (a run just saved, or one that
        could not be written and lives in this session only)."""
        self._results[name] = results
        if name not in self._session.results:
            self._change(replace(self._session, results=(*self._session.results, name)),
                         f"Show measurements from {name}")
        else:
            self._emit(Topic.RESULTS)

    def show_profile(self, profile: Profile) -> None:
        """Show ``profile`` beside the prediction, instead of the one shown before: the
        session keeps it (its kernels by name, ``core.model.profile.kept``), one undo step."""
        self._change(replace(self._session, profile=kept(profile)),
                     f"Show profile {Path(profile.source).name}")

    def hide_profile(self) -> None:
        if self._session.profile is not None:
            self._change(replace(self._session, profile=None), "Hide profile")

    def with_results(self, session: Session) -> tuple[Session, list[Skipped]]:
        """Load the measurement files ``session`` shows, one by one: a broken one is
        skipped (returned, and dropped from the session) and the rest are kept."""
        skipped: list[Skipped] = []
        for path in session.results:
            try:
                if not path.lower().endswith(".json"):
                    raise DataFileError(path, "is not a results file: a session shows measurement "
                                              "files (.json) only")
                self._results[path] = load_results(path)
            except DataFileError as exc:
                skipped.append(Skipped("results file", exc))
        return replace(session, results=tuple(p for p in session.results if p in self._results)), skipped

    def set_live_points(self, points: list[Point]) -> None:
        """Points of a run in progress (not part of the session until saved)."""
        self._live = list(points)
        self._emit(Topic.LIVE)

    def set_measured_roofs(self, shown: bool) -> None:
        self._change(replace(self._session, measured_roofs=shown),
                     "Show measured roofs" if shown else "Hide measured roofs")

    def remove_results(self, path: str) -> None:
        self._change(replace(self._session, results=tuple(p for p in self._session.results if p != path)),
                     "Hide measurements")
