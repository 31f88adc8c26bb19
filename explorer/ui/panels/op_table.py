"""The workload's ops as a sortable table: one row per op (with its layer count), what the
user compares first (share of the step, time, bound) first, the op's group (as on the
chart's key) last."""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.chart.palette import ROLE_GROUP
from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.roofline import MEMORY
from explorer.core.units import format_count, format_number, format_si, format_time

COLUMNS = ("op", "share", "time each", "bound", "FLOP/B", "count", "FLOPs", "bytes", "group")
NUMBERS = ("share", "time each", "FLOP/B", "count", "FLOPs", "bytes")  # right-aligned
SHARE_COLUMN = COLUMNS.index("share")
SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1
NAME_ROLE = QtCore.Qt.ItemDataRole.UserRole + 2
# Roles as plain numbers, looked up once: a view asks ``data`` for every cell and role
# many times over (sizing the columns to their contents alone asks for each about a dozen).
_DISPLAY, _TOOLTIP, _ALIGN, _FOREGROUND = (int(r) for r in (
    QtCore.Qt.ItemDataRole.DisplayRole, QtCore.Qt.ItemDataRole.ToolTipRole,
    QtCore.Qt.ItemDataRole.TextAlignmentRole, QtCore.Qt.ItemDataRole.ForegroundRole))
_RIGHT = int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
_RIGHT_ALIGNED = tuple(column in NUMBERS for column in COLUMNS)
_BOUND = COLUMNS.index("bound")


class OpTableModel(QtCore.QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[tuple] = []
        self._texts: list[tuple[str, ...]] = []  # each row as shown, written once
        self._tips: list[str] = []

    def set_analysis(self, a: Analysis) -> None:
        self.beginResetModel()
        share, bounds = a.time_share, a.bounds
        self._rows, self._texts, self._tips = [], [], []
        for i, o in enumerate(a.ops):
            intensity = float(a.flops[i] / a.bytes[i])
            row = (o.name, float(share[i]), float(a.time_s[i]), str(bounds[i]), intensity, o.count,
                   int(a.flops[i]), int(a.bytes[i]), ROLE_GROUP.get(o.role, "elementwise"))
            self._rows.append(row)
            self._texts.append(tuple(_shown(name, value) for name, value in zip(COLUMNS, row, strict=True)))
            self._tips.append(f"{o.name}: {o.detail}" if o.detail else o.name)
        self.endResetModel()

    def rowCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: B008 - Qt override
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: B008 - Qt override
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole):
        if orientation == QtCore.Qt.Orientation.Horizontal and role == QtCore.Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index, role=QtCore.Qt.ItemDataRole.DisplayRole):
        role, row, column = int(role), index.row(), index.column()
        if role == _DISPLAY:
            return self._texts[row][column]
        if role == SORT_ROLE:
            return self._rows[row][column]
        if role == NAME_ROLE:
            return self._rows[row][0]
        if role == _TOOLTIP:
            return self._tips[row]
        if role == _ALIGN and _RIGHT_ALIGNED[column]:
            return _RIGHT
        if role == _FOREGROUND and column == _BOUND and self._rows[row][column] == MEMORY:
            return QtGui.QGuiApplication.palette().color(QtGui.QPalette.ColorRole.Link)  # themed
        return None

    def column_texts(self, column: int) -> list[str]:
        return [texts[column] for texts in self._texts]

    def row_of(self, name: str) -> int:
        return next((i for i, row in enumerate(self._rows) if row[0] == name), -1)


def _shown(column: str, value) -> str:
    """A cell's text."""
    if column == "count":
        return f"×{value}" if value > 1 else ""
    if column == "FLOPs":
        return format_count(value)
    if column == "bytes":
        return format_si(value, "B")
    if column == "FLOP/B":
        return format_number(value)
    if column == "time each":
        return format_time(value)
    if column == "share":
        return f"{value:.1%}"
    return str(value)


def fit_columns(table: QtWidgets.QTableView, model: OpTableModel) -> None:
    """Each column as wide as its widest text or its header, as ``resizeColumnsToContents``
    makes it, from the texts themselves: Qt's own asks the model for every cell's font,
    alignment, icon, check state and size hint (a dozen calls into Python a cell, 8–14 ms
    for the table of a step; this takes well under one)."""
    metrics = QtGui.QFontMetricsF(table.font())
    focus = QtWidgets.QStyle.PixelMetric.PM_FocusFrameHMargin
    margin = 2 * (table.style().pixelMetric(focus, None, table) + 1)
    grid = 1 if table.showGrid() else 0
    header = table.horizontalHeader()
    for column in range(model.columnCount()):
        texts = [text for text in model.column_texts(column) if text]
        widest = max((math.ceil(metrics.horizontalAdvance(text)) for text in texts), default=None)
        content = 0 if widest is None else widest + margin + grid
        table.setColumnWidth(column, max(content, header.sectionSizeHint(column)))
