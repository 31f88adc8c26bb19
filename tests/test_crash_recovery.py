"""Crash recovery under SIGKILL: a process edits its session continuously (a change every
0.2 s, ticking the autosaver every second as the window's timer does), is killed with
SIGKILL at a random moment, and what a new instance recovers is compared with the edit
log. Goal (docs/reliability.md): at most 5 s of work lost. 50 kills, ten processes at a time.

The process is the document, Recovery and Autosaver without Qt (the window only wires its
timer to ``Autosaver.tick`` and its changes to ``Autosaver.changed``; those are tested in
tests/ui). Kill times are random but seeded, so a failure can be replayed."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.core.model.session import load_session
from explorer.document.files import Recovery

EDITOR = r"""
import sys, time
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.presets import load_models
from explorer.document import Document
from explorer.document.files import Autosaver, Recovery

folder, log_path = sys.argv[1], sys.argv[2]
doc = Document(load_catalog(), load_models())
recovery = Recovery(folder)
recovery.claim()
saver = Autosaver(lambda: recovery.save(doc.session))
log = open(log_path, "a", buffering=1)
batch, next_tick = 1, time.monotonic() + 1.0
while True:
    batch += 1
    doc.set_params(batch=batch)
    saver.changed()
    log.write(f"{batch} {time.time()}\n")
    if time.monotonic() >= next_tick:  # the window's one-second timer
        saver.tick()
        next_tick += 1.0
    time.sleep(0.2)
"""
KILLS, AT_ONCE, LOST_AT_MOST_S = 50, 10, 5.0


def _edits(log: Path) -> dict[int, float]:
    out = {}
    for line in log.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:  # a line cut by the kill is not an edit that happened
            out[int(parts[0])] = float(parts[1])
    return out


def _lost(folder: Path, log: Path, killed_at: float, catalog, models) -> float:
    """Seconds of editing the recovered session does not hold."""
    edits = _edits(log)
    crashed = Recovery(folder).crashed()
    saved = load_session(crashed[0].autosave, catalog, models).params.batch if crashed else 1
    first_lost = min((t for batch, t in edits.items() if batch > saved), default=None)
    return 0.0 if first_lost is None else killed_at - first_lost


@pytest.mark.slow
def test_sigkill_during_continuous_editing_loses_at_most_five_seconds(tmp_path, catalog, models):
    rng = random.Random(20261130)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    losses = []
    for start in range(0, KILLS, AT_ONCE):
        running = []
        for i in range(start, min(start + AT_ONCE, KILLS)):
            folder, log = tmp_path / f"autosave-{i}", tmp_path / f"edits-{i}.log"
            process = subprocess.Popen([sys.executable, "-c", EDITOR, str(folder), str(log)], env=env)
            running.append((process, folder, log, rng.uniform(0.3, 9.0)))
        deadline = time.monotonic() + 60
        for _process, _folder, log, _after in running:  # every editor has made its first edit
            while not (log.exists() and _edits(log)) and time.monotonic() < deadline:
                time.sleep(0.05)
        began = time.monotonic()
        for process, folder, log, after in sorted(running, key=lambda r: r[3]):
            time.sleep(max(0.0, began + after - time.monotonic()))
            process.send_signal(signal.SIGKILL)
            killed_at = time.time()
            process.wait(timeout=10)
            losses.append(_lost(folder, log, killed_at, catalog, models))
    assert len(losses) == KILLS
    assert max(losses) <= LOST_AT_MOST_S, sorted(losses)[-5:]
