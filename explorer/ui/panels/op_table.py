"""The workload's ops as a sortable table: one row per op (with its layer count)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui

from explorer.core.analysis import Analysis
from explorer.core.units import format_count, format_number, format_si, format_time

COLUMNS = ("op", "role", "count", "FLOPs", "bytes", "FLOP/B", "time each", "share", "bound")
SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1
NAME_ROLE = QtCore.Qt.ItemDataRole.UserRole + 2


class OpTableModel(QtCore.QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[tuple] = []
        self._tips: list[str] = []

    def set_analysis(self, a: Analysis) -> None:
        self.beginResetModel()
        share, memory_bound = a.time_share, a.memory_bound
        self._rows, self._tips = [], []
        for i, o in enumerate(a.ops):
            intensity = float(a.flops[i] / a.bytes[i])
            self._rows.append((o.name, o.role, o.count, int(a.flops[i]), int(a.bytes[i]), intensity,
                               float(a.time_s[i]), float(share[i]),
                               "memory" if memory_bound[i] else "compute"))
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
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and index.column() >= 2 and index.column() < 8:
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        if role == QtCore.Qt.ItemDataRole.ForegroundRole and index.column() == 8:
            return QtGui.QColor("#0072B2" if value == "memory" else "#000000")
        if role != QtCore.Qt.ItemDataRole.DisplayRole:
            return None
        column = COLUMNS[index.column()]
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
