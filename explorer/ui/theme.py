"""The window's theme: the chart's colours (``explorer.chart.palette``) carried to every
dock, table, toolbar, menu and dialog through the application's QPalette. Dark and high
contrast use the Fusion style, which draws everything from the palette; light keeps the
platform's own style and palette."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

from explorer.chart.palette import Theme

_native: tuple[str, QtGui.QPalette] | None = None  # the platform's style and palette, kept for light
_applied: str = "light"  # the theme the application has now (at start: the platform's look)


def window_palette(theme: Theme) -> QtGui.QPalette:
    """A palette in ``theme``'s colours: panels, fields, text, selection, links, tooltips."""
    role, group = QtGui.QPalette.ColorRole, QtGui.QPalette.ColorGroup
    colour = QtGui.QColor
    palette = QtGui.QPalette()
    text, panel, field = colour(theme.foreground), colour(theme.panel), colour(theme.background)
    selected_text = colour("#000000" if theme.name == "contrast" else "#ffffff")
    for r, c in ((role.Window, panel), (role.WindowText, text), (role.Base, field),
                 (role.AlternateBase, panel), (role.Text, text), (role.Button, panel),
                 (role.ButtonText, text), (role.BrightText, colour(theme.selected)),
                 (role.Highlight, colour(theme.highlight)), (role.HighlightedText, selected_text),
                 (role.ToolTipBase, field), (role.ToolTipText, text),
                 (role.PlaceholderText, colour(theme.track)),
                 (role.Link, colour(theme.devices[1])), (role.LinkVisited, colour(theme.devices[1])),
                 (role.Light, colour(theme.axis)), (role.Midlight, panel), (role.Mid, colour(theme.track)),
                 (role.Dark, colour(theme.track)), (role.Shadow, colour("#000000"))):
        palette.setColor(r, c)
    for r in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(group.Disabled, r, colour(theme.track))
    return palette


def apply(theme: Theme) -> None:
    """Style the whole application in ``theme`` (light: the platform's own look). Nothing
    is done for the theme the application already has: setting a style, even the same
    one, polishes every widget again (tens of milliseconds at start-up)."""
    global _native, _applied
    app = QtWidgets.QApplication.instance()
    if not isinstance(app, QtWidgets.QApplication):  # (none, or no widgets)
        return
    if theme.name == _applied:
        return
    if _native is None:  # (asking for the style makes it: not before it is needed)
        _native = (app.style().name(), app.palette())
    _applied = theme.name
    if theme.name == "light":
        app.setStyle(_native[0])
        app.setPalette(_native[1])
        return
    app.setStyle("Fusion")
    app.setPalette(window_palette(theme))
