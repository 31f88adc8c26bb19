"""The profile job folds what it read as a session keeps it (``core.model.profile.kept``)
before the GUI thread gets it: folding the tens of thousands of kernels of a large trace
takes a third of a second, which the window would stop for."""

import json

from explorer.core.model.profile import kept
from explorer.kernels.timing import CancelToken
from explorer.profiles.reading import read_profile
from explorer.ui.profile_import import read_in_job
from tests.profiles.test_kineto import trace


def test_the_job_returns_the_profile_as_a_session_keeps_it(tmp_path):
    path = tmp_path / "run.pt.trace.json"
    path.write_text(json.dumps(trace()))
    reports = []
    got = read_in_job(path)(CancelToken(), lambda kind, payload: reports.append(payload))
    expected = kept(read_profile(path))
    assert got == expected and got.source == "run.pt.trace.json"  # (its name only, as kept)
    assert kept(got) == got  # so that showing it folds nothing again
    assert reports[-1] == 1.0
