"""The profile the scene "Your model, measured" shows (resources/profiles/runs) is what the app
reads from the trace it came from (tests/data/tracelens), as a session keeps a profile:
a change to the trace reader that changes it fails here until the file is written again
(``python tests/data/tracelens/write_shipped_profile.py``)."""

import importlib.util
from pathlib import Path

from explorer.core.files.datafile import Fields, load_yaml
from explorer.core.profile import read_saved_profile

WRITER = Path(__file__).parents[1] / "data" / "tracelens" / "write_shipped_profile.py"


def _writer():
    spec = importlib.util.spec_from_file_location("write_shipped_profile", WRITER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_profile_is_the_trace_as_the_app_reads_it():
    writer = _writer()
    shipped = load_yaml(writer.SHIPPED)
    assert shipped == writer.shipped_form()
    profile = read_saved_profile(Fields(shipped, writer.SHIPPED, None))  # a session reads it back
    assert sum(k.launches for k in profile.kernels) == 1029
    assert writer.SHIPPED.read_text(encoding="utf-8").startswith(writer.HEADER)  # origin and licence
