"""The headless commands (``roofline-explorer analyze``, ``bench``, ``export``, ...), one
module each, and the window's options. ``main`` parses every command and runs one; the
window's start imports only ``window_options`` (and ``common``), never a command's parser.
Nothing here imports Qt except ``export``, which draws PNG and PDF pictures through the
window's QPainter export (``explorer.ui.chart.export``) when it runs."""
