"""The workload's ops as a sortable table: one row per op (with its layer count), what the
user compares first (share of the step, time, bound) first, the op's group (as on the
chart's key) last."""

from __future__ import annotations

from PySide6 import QtCore, QtGui

from explorer.chart.palette import ROLE_GROUP
from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.roofline import MEMORY
from explorer.core.units import format_count, format_number, format_si, format_time

COLUMNS = ("op", "share", "time each", "bound", "FLOP/B", "count", "FLOPs", "bytes", "group")
NUMBERS = ("share", "time each", "FLOP/B", "count", "FLOPs", "bytes")  # right-aligned
SHARE_COLUMN = COLUMNS.index("share")
SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1
NAME_ROLE = QtCore.Qt.ItemDataRole.UserRole + 2


class OpTableModel(QtCore.QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[tuple] = []
        self._tips: list[str] = []

    def set_analysis(self, a: Analysis) -> None:
        self.beginResetModel()
        share, bounds = a.time_share, a.bounds
        self._rows, self._tips = [], []
        for i, o in enumerate(a.ops):
            intensity = float(a.flops[i] / a.bytes[i])
            self._rows.append((o.name, float(share[i]), float(a.time_s[i]),
                               str(bounds[i]), intensity, o.count,
                               int(a.flops[i]), int(a.bytes[i]), ROLE_GROUP.get(o.role, "elementwise")))
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
        row = self._rows[index.row()]
        value = row[index.column()]
        if role == SORT_ROLE:
            return value
        if role == NAME_ROLE:
            return row[0]
        if role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return self._tips[index.row()]
        column = COLUMNS[index.column()]
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and column in NUMBERS:
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        if role == QtCore.Qt.ItemDataRole.ForegroundRole and column == "bound" and value == MEMORY:
            return QtGui.QGuiApplication.palette().color(QtGui.QPalette.ColorRole.Link)  # themed
        if role != QtCore.Qt.ItemDataRole.DisplayRole:
            return None
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

    def row_of(self, name: str) -> int:
        return next((i for i, row in enumerate(self._rows) if row[0] == name), -1)
