"""What the kernel lab shows when a calibration ends: where its run and profile went, and
the profile put to use (Times: calibrated) when it can be."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6 import QtWidgets

from explorer.core.hardware.efficiency import efficiency_for
from explorer.runs import KERNELS

if TYPE_CHECKING:
    from explorer.kernels.calibrate import Calibration
    from explorer.ui.panels.kernel_panel import KernelPanel


def keep_calibration_run(panel: KernelPanel, done: Calibration) -> str:
    """A calibration's run is saved beside its profile by the job itself
    (``calibrate.keep_run``); shown here like any run. Saved nowhere, it is kept as any
    run is (``_keep_run``)."""
    if done.kept.path is None:
        return panel._keep_run(done.results) if done.results.points else "(nothing measured)"
    panel.runs.journals.pop(KERNELS, None)  # (discarded by the job once the file was written)
    for refusal in done.kept.refused:
        panel.state.sig_message.emit(f"The calibration's run {refusal}")
    panel.state.add_results(str(done.kept.path))
    return f"saved to {done.kept.path}"


def show_calibration(panel: KernelPanel, done: Calibration) -> None:
    """Show what the calibration found and use it (Times: calibrated; one undo step)."""
    profile = done.profile
    assert profile is not None  # (a finished calibration has one)
    gemm = profile.value("gemm")
    error = done.median_error
    held = f", held-out products predicted within {error:.0%} (median)" if error is not None else ""
    kept = "; energy constants fitted to its power" if profile.energy is not None else ""
    if done.path is None:
        panel.eta.setText(f"Calibrated: products at {gemm:.0%} of the peak{held}{kept}; the profile "
                          "could not be saved anywhere")
        QtWidgets.QMessageBox.warning(panel, "Kernel lab", "The calibration's profile could not be "
                                      "saved anywhere:\n" + "\n".join(done.refused) + "\nIts run is "
                                      "kept: roofline-explorer calibrate --results fits it again.")
        return
    if done.rejected:
        panel.eta.setText(f"Calibration not used: {done.rejected}")
        panel.state.sig_message.emit(f"The calibration is kept aside in {done.path}, not used: "
                                     f"{done.rejected}")
        return
    panel.eta.setText(f"Calibrated: products at {gemm:.0%} of the peak{held}{kept}; saved to "
                      f"{done.path.name}")
    if not done.in_data_folder:
        panel.state.sig_message.emit(f"The data folder refused the profile ({'; '.join(done.refused)}): "
                                     f"it is in {done.path}, which Times: calibrated does not read; "
                                     "copy it into the data folder's efficiency/")
        return
    panel.state.efficiency_changed()
    primary = panel.state.primary
    if profile.machine:
        panel.state.sig_message.emit(f"Calibrated {profile.name}: {profile.machine} is not in "
                                     "the catalogue, so it applies to no device until it is (Duplicate "
                                     "and edit, then calibrate again)")
        return
    if efficiency_for(primary, (profile,)) is None:
        panel.state.sig_message.emit(f"Calibrated {profile.name}: it is for "
                                     f"{', '.join(profile.devices)}, not {primary.name}")
        return
    if panel.state.session.params.efficiency != "calibrated":
        panel.state.set_params(efficiency="calibrated")
    panel.state.sig_message.emit(f"Calibrated {profile.name}: Times now use it "
                                 "(Ctrl+Z: the previous)")
