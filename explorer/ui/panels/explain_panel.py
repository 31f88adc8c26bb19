"""Explain panel: what the chart shows, in words, with numbers from core; and short "why"
paragraphs on the ideas behind it. Its words are worked out while it can be seen: behind
another tab (as at start-up) it only notes that they are due, and writes them when its tab
comes to the front."""

from __future__ import annotations

from html import escape

from PySide6 import QtCore, QtWidgets

from explorer.core.files.datafile import DataFileError
from explorer.core.words.why import load_topics, render
from explorer.state import AppState
from explorer.ui.follow import Follower


class ExplainPanel(QtWidgets.QWidget):
    def __init__(self, state: AppState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.text = QtWidgets.QTextBrowser()
        self.text.setToolTip("Every number here is computed for the state shown. Select an op to "
                             "explain it; tick a CPU and a GPU in the Hardware panel to compare them.")
        self.topic = QtWidgets.QComboBox()
        self.topic.setToolTip("Why GPUs suit deep learning: one idea at a time")
        self.why = QtWidgets.QTextBrowser()
        self.why.setMaximumHeight(170)
        try:
            self.topics = load_topics(state.catalog, models=state.models, check=False)  # filled when shown
        except DataFileError as exc:  # a broken resource file must not stop the app
            self.topics = []
            self.why.setPlainText(str(exc))
        for topic in self.topics:
            self.topic.addItem(topic.title, topic.id)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.text, 1)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Why:"))
        row.addWidget(self.topic, 1)
        layout.addLayout(row)
        layout.addWidget(self.why)
        self.topic.currentIndexChanged.connect(self._show_topic)
        self._follower = Follower(state, (state.sig_workload_changed, state.sig_hardware_changed,
                                          state.sig_catalog_changed, state.sig_selection_changed),
                                  self.refresh, self)
        self._due = True  # the words (and the topic's) wait for the panel to be seen (``follow``)

    def follow(self, dock: QtWidgets.QDockWidget) -> None:
        """Write the words when ``dock`` (which holds this panel) comes to the front; until
        then changes only mark them due (a tab behind another counts as visible to Qt, but
        shows nothing)."""
        dock.visibilityChanged.connect(lambda shown: self.refresh(seen=True) if shown and self._due else None)
        # A tab torn out of its group while behind another says nothing to visibilityChanged:
        # look once it has settled where it went.
        dock.topLevelChanged.connect(lambda _floating: QtCore.QTimer.singleShot(0, self._if_seen))

    def showEvent(self, event) -> None:  # Qt override
        super().showEvent(event)
        QtCore.QTimer.singleShot(0, self._if_seen)

    def _if_seen(self) -> None:
        if self._due and not self.visibleRegion().isEmpty():
            self.refresh(seen=True)

    def refresh(self, *_args, seen: bool = False) -> None:
        if self.state.in_gesture:
            return  # once, when the drag ends
        if not seen and self.visibleRegion().isEmpty():
            self._due = True
            return
        self._due = False
        from explorer.core.words.explain import explain_state  # (not at start-up)

        self._show_topic(self.topic.currentIndex())
        explanations = explain_state(self.state.model, self.state.params, self.state.devices(),
                                     self.state.session.selected_op)
        self.text.setHtml("".join(f"<h4>{escape(e.title)}</h4><p>{escape(e.text)}</p>" for e in explanations))

    def show_topic(self, ident: str) -> None:
        index = self.topic.findData(ident)
        if index >= 0:
            self.topic.setCurrentIndex(index)

    def _show_topic(self, index: int) -> None:
        if not 0 <= index < len(self.topics):
            return
        try:
            text = render(self.topics[index], self.state.catalog, self.state.models)
        except KeyError as exc:  # a topic file edited by hand: say which number, keep the panel
            text = f"This topic cannot be filled in: {exc.args[0] if exc.args else exc}"
        if text != self.why.toPlainText():  # (the words follow every change: keep the reader's place)
            self.why.setPlainText(text)
