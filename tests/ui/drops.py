"""Dropping a file on the window in a test, as a user drags one from a file manager."""

from PySide6 import QtCore, QtGui


def drop_file(window, path) -> None:
    """Drag ``path`` over the middle of ``window`` (it must accept it) and drop it."""
    data = QtCore.QMimeData()
    data.setUrls([QtCore.QUrl.fromLocalFile(str(path))])
    point = QtCore.QPointF(window.width() / 2, window.height() / 2)
    actions = QtCore.Qt.DropAction.CopyAction
    enter = QtGui.QDragEnterEvent(point.toPoint(), actions, data, QtCore.Qt.MouseButton.LeftButton,
                                  QtCore.Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    window.dropEvent(QtGui.QDropEvent(point, actions, data, QtCore.Qt.MouseButton.LeftButton,
                                      QtCore.Qt.KeyboardModifier.NoModifier))
