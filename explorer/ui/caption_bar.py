"""The strip under the chart while a scene plays: its caption, the step counter, and
buttons to step back, on and out. Its colours follow the chart's theme and its text grows
with the chart in presentation mode."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.chart.palette import Theme

CAPTION_POINTS = 13.0
COUNTER_POINTS = 10.0


def chart_with_caption(chart: QtWidgets.QWidget, caption: QtWidgets.QWidget) -> QtWidgets.QWidget:
    """The chart with the caption strip under it, as one central widget."""
    central = QtWidgets.QWidget()
    column = QtWidgets.QVBoxLayout(central)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(0)
    column.addWidget(chart, 1)
    column.addWidget(caption)
    return central


class CaptionBar(QtWidgets.QFrame):
    sig_previous = QtCore.Signal()
    sig_next = QtCore.Signal()
    sig_stop = QtCore.Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("caption-bar")
        self.title = QtWidgets.QLabel(wordWrap=True)  # a long scene title never widens the window
        self.title.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.caption = QtWidgets.QLabel(wordWrap=True)
        self.caption.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        for label in (self.title, self.caption):
            label.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding,
                                QtWidgets.QSizePolicy.Policy.Preferred)
        self.counter = QtWidgets.QLabel()
        self.counter.setToolTip("Step of the scene")
        self.counter.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignTop)
        self.buttons: list[QtWidgets.QToolButton] = []
        for text, tip, signal in (("◀", "Previous step (Alt+Left; Left or Page Up when presenting)",
                                   self.sig_previous),
                                  ("▶", "Next step (Alt+Right; Right, Space or Page Down when presenting)",
                                   self.sig_next),
                                  ("✕", "Leave the scene and show what was shown before it", self.sig_stop)):
            button = QtWidgets.QToolButton(text=text, toolTip=tip)  # type: ignore[call-arg]  # (PySide6 takes Qt properties as keywords; its stubs do not say)
            button.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)  # Space steps, never clicks
            button.setAutoRaise(True)
            button.clicked.connect(signal.emit)
            self.buttons.append(button)
        texts = QtWidgets.QVBoxLayout()
        texts.setSpacing(2)
        texts.addWidget(self.title)
        texts.addWidget(self.caption)
        side = QtWidgets.QVBoxLayout()
        row = QtWidgets.QHBoxLayout()
        for button in self.buttons:
            row.addWidget(button)
        side.addLayout(row)
        side.addWidget(self.counter)
        side.addStretch(1)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 8, 8)
        layout.addLayout(texts, 1)
        layout.addLayout(side)
        self._scale, self._fitting = 1.0, False
        self._share: float | None = None
        self.set_scale(1.0)
        self.hide()

    def show_step(self, title: str, caption: str, step: int = 0, total: int = 0) -> None:
        """Step ``step`` (from 0) of ``total``; an empty caption hides the strip."""
        self.title.setText(title)
        self.caption.setText(caption)
        self.counter.setText(f"{step + 1} / {total}" if total else "")
        self.buttons[0].setEnabled(step > 0)
        self.buttons[1].setEnabled(step + 1 < total)
        self.setVisible(bool(caption))
        if self._share is not None:
            self._fit()

    def set_scale(self, factor: float, height_share: float | None = None) -> None:
        """Text ``factor`` times the window's; with ``height_share`` (presenting), smaller
        where the strip would take more than that share of the window's height, down to the
        window's own size."""
        self._scale, self._share = factor, height_share
        self._fit()

    def refit(self) -> None:
        """Fit the text to the window again (its size changed while presenting)."""
        if self._share is not None:
            self._fit()

    def _fit(self) -> None:
        if self._fitting:
            return
        self._fitting = True
        try:
            factor = self._scale
            self._fonts(factor)
            limit = None if self._share is None else self._share * self.window().height()
            width = self.window().width()  # presenting, the strip spans the window
            while limit is not None and factor > 1.0 and self._height_for(width) > limit:
                factor = max(1.0, factor * 0.92)
                self._fonts(factor)
        finally:
            self._fitting = False

    def _height_for(self, width: int) -> int:
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth():
            return layout.totalHeightForWidth(width)
        return self.sizeHint().height()

    def _fonts(self, factor: float) -> None:
        for label, points, bold in ((self.title, CAPTION_POINTS, True), (self.caption, CAPTION_POINTS, False),
                                    (self.counter, COUNTER_POINTS, False)):
            font = QtGui.QFont(label.font())
            font.setPointSizeF(points * factor)
            font.setBold(bold)
            label.setFont(font)
        for button in self.buttons:
            font = QtGui.QFont(button.font())
            font.setPointSizeF(COUNTER_POINTS * factor)
            button.setFont(font)

    def set_theme(self, theme: Theme) -> None:
        self.setStyleSheet(f"#caption-bar {{ background: {theme.background}; "
                           f"border-top: 1px solid {theme.axis}; }}"
                           f"#caption-bar QLabel, #caption-bar QToolButton {{ color: {theme.foreground}; }}")
