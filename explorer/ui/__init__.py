"""Qt views (PySide6 + pyqtgraph): wiring and drawing only, no domain math."""
