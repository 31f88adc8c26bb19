"""Adding a workload parameter is one row of the parameter table plus its maths (here only
its field): a throw-away row, added before anything reads the table, is validated, saved and
read back, offered by the commands with where it applies, listed by ``params --json``, and
shown in the workload panel only where it applies. Run in a fresh interpreter, so the row is
there from the start, as a real one would be."""

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r'''
import dataclasses, io, json, sys, tempfile
from pathlib import Path

from explorer.core.model import parameters
from explorer.core.model.applicability import TRAINING

ROW = parameters.Parameter("warmup", parameters.Kind.COUNT, 0, "Warm-up steps",
                           "Training: steps of learning-rate warm-up (a throw-away row)", unit="steps",
                           minimum=0, maximum=10, applies=TRAINING)
parameters.PARAMETERS = (*parameters.PARAMETERS, ROW)
parameters.BY_NAME[ROW.name] = ROW

from explorer.core.model import workload  # its maths: the field

workload.WorkloadParams = dataclasses.make_dataclass(
    "WorkloadParams", [("warmup", int, 0)], bases=(workload.WorkloadParams,), frozen=True)

from explorer.commands import main as cli
from explorer.core.model.session import Session, load_session
from explorer.core.model.workload import WorkloadError, WorkloadParams

found = {}
for bad in ({"warmup": 11, "phase": "train"}, {"warmup": 2}):  # its limits; its phase
    try:
        WorkloadParams(**bad)
    except WorkloadError as exc:
        found.setdefault("refused", []).append(str(exc))
params = WorkloadParams(phase="train", warmup=3)
path = Path(tempfile.mkdtemp()) / "s.yaml"
Session(model="llama-3-8b", params=params).save(path)
found["saved"] = "warmup: 3" in path.read_text()
found["read back"] = load_session(path).params.warmup
args = cli.parse_args(["analyze", "--model", "gpt2", "--hardware", "h100-sxm", "--phase", "train",
                       "--warmup", "4"])
found["from the command line"] = WorkloadParams.from_options(args).warmup
out = io.StringIO()
cli.run(cli.parse_args(["params", "--json"]), out, io.StringIO())
found["params"] = [row for row in json.loads(out.getvalue()) if row["name"] == "warmup"][0]["applies"]["text"]

from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.presets import load_models
from explorer.state import AppState
from PySide6 import QtWidgets
from explorer.ui.panels.workload_panel import WorkloadPanel

app = QtWidgets.QApplication([])
state = AppState(load_catalog(), load_models(), Session(model="llama-3-8b"))
panel = WorkloadPanel(state)
editor = panel.editors["warmup"]
found["shown in decode"] = panel._form.isRowVisible(editor)
state.set_params(phase="train")
found["shown in training"] = panel._form.isRowVisible(editor)
editor.setValue(5)
found["set from the panel"] = state.params.warmup
state.set_params(phase="decode")
found["after training"] = state.params.warmup
print(json.dumps(found))
'''


@pytest.mark.slow
def test_a_parameter_added_in_one_row_is_validated_saved_offered_and_shown(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ROOFLINE_EXPLORER_DATA": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["refused"] == ["warmup must be at most 10, got 11",
                                "warmup applies to training (phase train); got 2 in phase decode"]
    assert found["saved"] and found["read back"] == 3 and found["from the command line"] == 4
    assert found["params"] == "training (phase train)"
    assert not found["shown in decode"] and found["shown in training"]
    assert found["set from the panel"] == 5 and found["after training"] == 0  # held at its default
