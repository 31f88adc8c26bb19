"""The profile the scene "Your model, measured" shows (resources/profiles/runs) is what the app
reads from the trace it came from (tests/data/tracelens), as a session keeps a profile:
a change to the trace reader that changes it fails here until the file is written again
(``python tests/data/tracelens/write_shipped_profile.py``)."""

import importlib.util
from pathlib import Path

import pytest

from explorer.core.files.datafile import Fields, load_yaml
from explorer.core.model.profile import read_saved_profile

WRITER = Path(__file__).parents[1] / "data" / "tracelens" / "write_shipped_profile.py"


def _writer():
    spec = importlib.util.spec_from_file_location("write_shipped_profile", WRITER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, launches", [("qwen1.5-0.5b-chat-h100", 1029),
                                             ("qwen1.5-0.5b-chat-mi300x", 1053)])
def test_a_shipped_profile_is_its_trace_as_the_app_reads_it(name, launches):
    writer = _writer()
    path = writer.SHIPPED / f"{name}.yaml"
    shipped = load_yaml(path)
    assert shipped == writer.shipped_form(name)
    profile = read_saved_profile(Fields(shipped, path, None))  # a session reads it back
    assert sum(k.launches for k in profile.kernels) == launches  # the kernels linked to the recorded step
    text = path.read_text(encoding="utf-8")
    assert text.startswith(writer.header(name)) and "MIT License" in text  # origin and licence


def test_every_shipped_profile_has_its_trace():
    writer = _writer()
    assert {p.stem for p in writer.SHIPPED.glob("*.yaml")} == set(writer.RUNS)
