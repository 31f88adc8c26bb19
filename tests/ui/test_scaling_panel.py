"""The scaling-laws panel: both fits' optima and why they differ, the model on the isoFLOP
curves, a budget in days on the chosen devices, and a training step's roofline time."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.analysis.scaling_laws import BESIROGLU, HOFFMANN, Placement
from explorer.ui.panels.scaling_panel import ScalingPanel


@pytest.fixture
def panel(qtbot, state):
    state.set_devices(["h100-sxm"])
    state.set_model("llama-3-70b")
    widget = ScalingPanel(state)
    qtbot.addWidget(widget)
    return widget


def test_both_fits_their_optima_and_why_they_differ(panel):
    text = panel.text.toPlainText()
    assert "32.2 B" in text and "72.2 B" in text  # Hoffmann's Approach 3; the replication
    assert "rule of thumb, 20 tokens per parameter (approximate)" in text
    assert "Why the fits differ." in text and "N ∝ C^0.45" in text and "N ∝ C^0.51" in text
    for fit in (HOFFMANN, BESIROGLU):
        n, d = fit.optimal(5.76e23)
        xs, ys = panel.optima[fit.id].getData()
        assert xs[0] == pytest.approx(np.log10(n)) and ys[0] == pytest.approx(fit.loss(n, d))
        xs, ys = panel.models[fit.id].getData()
        at = Placement(fit, 5.76e23, panel.state.model.parameter_count())
        assert ys[0] == pytest.approx(at.loss)


def test_a_budget_in_days_on_the_chosen_devices(panel):
    panel.devices.setValue(1024)
    panel.mfu.setValue(0.5)
    days = 5.76e23 / (1024 * 989.4e12 * 0.5) / 86400
    assert f"{days:,.1f} days" in panel.text.toPlainText()
    panel.budget.setText("1e25")
    panel.budget.editingFinished.emit()
    assert f"{1e25 / (1024 * 989.4e12 * 0.5) / 86400:,.1f} days" in panel.text.toPlainText()


def test_a_bad_budget_is_named(panel):
    panel.budget.setText("lots")
    panel.budget.editingFinished.emit()
    assert "The budget must be a number of FLOPs" in panel.text.toPlainText()


def test_a_training_step_sets_the_devices_and_adds_the_roofline_time(panel):
    panel.state.set_params(phase="train", batch=64, seq=4096, tp=8, pp=4, dp=2, recompute="full")
    assert panel.devices.value() == 64
    text = panel.text.toPlainText()
    assert "At the roofline's step time for the training step" in text and "64 devices" in text


def test_the_frontier_joins_the_optima_of_neighbouring_budgets(panel):
    for fit in (HOFFMANN, BESIROGLU):
        xs, _ = panel.frontiers[fit.id].getData()
        # stored in log10 for the log axis: each point is the optimum of its budget
        sizes = 10 ** np.asarray(xs)
        assert sizes.min() < fit.optimal(5.76e23)[0] < sizes.max()
        n10 = fit.optimal(5.76e24)[0]
        xs10, ys10 = panel.neighbours[(fit.id, 10.0)].getData()
        best = int(np.argmin(ys10))
        assert 10 ** xs10[best] == pytest.approx(n10, rel=0.1)  # the tenfold budget's curve bottoms out there


def started_window(tmp_path, then: str) -> list[str]:
    """What ``then`` prints in a fresh interpreter after a window (``w``; its application
    ``app``) has started and painted its first frame: the modules loaded at start-up are
    those of a real start, not of this test run's (``painted``: those loaded by the first
    paint, in the order they were)."""
    import os
    import subprocess
    import sys

    code = ("import sys; from explorer.app import window_module; "
            "build_window = window_module().build_window; "
            "from PySide6 import QtCore, QtWidgets; app = QtWidgets.QApplication([]); "
            "from explorer.commands.window_options import parse; "
            "w = build_window(parse(['--size', '1024x768']), "
            "QtCore.QSettings(sys.argv[1], QtCore.QSettings.Format.IniFormat)); w.show(); w.grab(); "
            "painted = list(sys.modules); "
            f"app.processEvents(); app.processEvents(); {then}; w.runs.shutdown()")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "settings.ini")], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                                                       "ROOFLINE_EXPLORER_DATA": str(tmp_path / "data")})
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def raised(dock: str) -> str:
    return f"w.docks[{dock!r}].raise_(); app.processEvents(); app.processEvents()"


def test_the_window_imports_pyqtgraph_only_when_the_scaling_laws_are_first_shown(tmp_path):
    """Start-up builds no hidden pyqtgraph panel (a quarter of the window's import time);
    raising the Scaling laws tab builds it."""
    printed = started_window(tmp_path, "before = 'pyqtgraph' in sys.modules; " + raised("scaling") +
                             "; print(before, 'pyqtgraph' in sys.modules, w.scaling_panel.built, "
                             "type(w.scaling_panel.panel).__name__)")
    assert printed == ["False", "True", "True", "ScalingPanel"]


def test_start_up_reads_no_caption_or_explanation_machinery(tmp_path):
    """The placeholders, claims and explanations (a tenth of the window's own imports) load
    when a scene step, a topic or the Explain panel is first shown, not at start-up."""
    words = ("explorer.core.words.placeholders", "explorer.core.words.placeholder_context",
             "explorer.core.words.catalogue_claims", "explorer.core.words.step_claims",
             "explorer.core.words.claims", "explorer.core.words.explain")
    loaded = f"print(*[m in sys.modules for m in {words!r}])"
    printed = started_window(tmp_path, f"{loaded}; {raised('explain')}; {loaded}")
    assert printed == ["False"] * len(words) + ["True"] * len(words)


def test_start_up_imports_nothing_the_first_paint_does_not_use(tmp_path):
    """The kernels' timing, backends, GPU probe and reference devices load with the first job
    (a kernel run, the GPU probe after the first paint); a profile's matching, a compared
    model's costing and the scaling-law fits when one is shown: none before the first paint."""
    later = ("explorer.kernels.timing", "explorer.kernels.backends", "explorer.kernels.gpuinfo",
             "explorer.kernels.reference", "explorer.core.analysis.profile_match",
             "explorer.core.analysis.compared", "explorer.core.analysis.scaling_laws")
    printed = started_window(tmp_path, f"print(*[m in painted for m in {later!r}])")
    assert printed == ["False"] * len(later)


def test_the_window_imports_its_qt_free_modules_before_pyside6(tmp_path):
    """PySide6 reads the source of every module imported after it (its ``__feature__`` hook):
    a start imports NumPy and every Qt-free module of the window first
    (``explorer.app.WINDOW_QT_FREE``), so only modules that use Qt are read. (PyYAML's
    loader is imported when a file is parsed: at this first start, with no parse cache yet.)"""
    late = ("qt = painted.index('PySide6'); print('numpy' in painted[:qt]); "
            "print(*[n for n in painted[qt:] if n.startswith('explorer') and "
            "not sys.modules[n].__file__.endswith('__init__.py') and n != 'explorer.core.files.yamltext' and "
            "'PySide6' not in open(sys.modules[n].__file__).read()] or ['none'])")
    assert started_window(tmp_path, late) == ["True", "none"]


def test_the_kernel_lab_is_built_when_first_shown_or_used(tmp_path):
    """Its suites and runner load when its tab comes to the front (or Run kernels is used),
    not at start-up."""
    before = "print('explorer.ui.panels.kernel_panel' in sys.modules, w.kernel_lab.built)"
    after = "print(w.kernel_lab.built, type(w.kernel_panel).__name__, w.kernel_panel.run_button.isEnabled())"
    printed = started_window(tmp_path, f"{before}; {raised('kernels')}; {after}")
    assert printed == ["False", "False", "True", "KernelPanel", "True"]


def test_a_second_start_imports_no_yaml_parser(tmp_path):
    """From the second start on, the data files come from the parse cache and PyYAML (a
    twentieth of the time to the first frame) is not imported; the first start parses."""
    loaded = "print('yaml' in sys.modules, len(w.state.catalog.keys()) >= 16)"
    assert started_window(tmp_path, loaded) == ["True", "True"]
    assert started_window(tmp_path, loaded) == ["False", "True"]


def test_a_repaint_of_the_window_hands_no_work_to_other_threads(tmp_path, monkeypatch):
    """Qt's fills stay on the GUI thread (``fills_on_the_gui_thread``): with Qt's pool, ten
    full repaints of the window waited on its threads 570 times on a 2-core VM (each a
    voluntary context switch), two to three times as long as the same repaints without."""
    monkeypatch.delenv("QT_NO_GUI_THREADPOOL", raising=False)  # (set by a window built in this run)
    waits = ("import resource; before = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw; "
             "[w.repaint() for _ in range(10)]; "
             "print(resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - before)")
    assert int(started_window(tmp_path, waits)[0]) < 10
