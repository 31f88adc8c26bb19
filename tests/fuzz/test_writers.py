"""Every writer of the app (each a user of ``core.files.atomic``) pointed at a FIFO or a
device node, named or through the user's link: the write is refused by name (or, for the
parse cache, skipped as any unwritable cache is) and the special file stays what it was.
The commands that write are tested the same way in tests/test_file_writes.py."""

from __future__ import annotations

import json
import os
import stat
import struct
import zlib
from pathlib import Path

import pytest

from explorer.core.model.session import Session, save_workload
from tests.test_file_writes import SPECIAL
from tests.timeouts import no_block, no_hang


def _png() -> bytes:
    """A 1×1 PNG (a deck's slide needs a picture)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x00\x00\x00")) + chunk(b"IEND", b""))


def _results(path: Path) -> None:
    from tests.fuzz.test_loaders import _results_text
    path.write_text(_results_text(path.parent / "valid"))  # (Results.save writes through atomic)


def _deck(path: Path) -> None:
    from explorer.commands.pptx_deck import Picture, Slide, write_deck
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'
    write_deck(path, [(Slide("A title", "A caption", "notes"), Picture(svg, _png()))])


def _chart(path: Path) -> None:
    from explorer.chart.elements import Page
    from explorer.chart.serving_chart import serving_chart
    from explorer.core.analysis.serving import plan
    from explorer.core.hardware.catalog import load_catalog
    from explorer.core.model.presets import load_models
    from explorer.core.model.workload import WorkloadParams
    from explorer.ui.chart.export import write_chart
    result = plan(load_models()["gpt2"], WorkloadParams(), load_catalog()["h100-sxm"], 512, 512)
    write_chart(serving_chart(result, Page.slide(1600, 900), "dark", "t", None), path)


def _calibration(path: Path):
    from explorer.core.hardware.catalog import load_catalog
    from explorer.kernels import calibrate
    from explorer.kernels.results import Results
    from tests.kernels.test_calibrate import TRUE, _profile, _results
    run = _results(_profile(TRUE))
    machine = {"backend": "cupy", "device_kind": "gpu", "gpu": {"name": "NVIDIA H100 80GB HBM3"}}
    measured = Results(machine, "t", "quick", run.suites, run.points)
    return calibrate.calibrate_and_write(measured, load_catalog(), path)


def _results_save(path: Path) -> None:
    from explorer.kernels.results import Point, Results
    point = Point("stream", "triad", "fp32", {"n": 1000}, {}, 2000, 12000, 1e-6, 0.9e-6, 1.2e-6)
    Results({"backend": "numpy"}, "perf_counter", "quick", ("stream",), (point,)).save(path)


def _recent(path: Path) -> None:
    from explorer.document.files import RecentFiles
    RecentFiles(path).remember("/tmp/s.yaml")


def _text(path: Path) -> None:
    from explorer.core.files.atomic import write_text_atomic
    write_text_atomic(path, json.dumps({"a": 1}))


WRITERS = {  # name → (write(path), suffix)
    "session": (lambda path: Session(model="gpt2").save(path), ".yaml"),
    "workload": (lambda path: save_workload(path, Session(model="gpt2")), ".yaml"),
    "results": (_results_save, ".json"),
    "pptx deck": (_deck, ".pptx"),
    "chart svg": (_chart, ".svg"),
    "chart png": (_chart, ".png"),
    "recent files": (_recent, ".json"),
    "text": (_text, ".json"),
}


@pytest.mark.parametrize("through", ["named", "link"])
@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_refuses_a_special_file_by_name(tmp_path, request, writer, kind, through):
    write, suffix = WRITERS[writer]
    if suffix == ".png":
        request.getfixturevalue("qapp")  # QPainter draws the picture
    make, what = SPECIAL[kind]
    special = make(tmp_path / f"node{suffix}")
    path = special if through == "named" else tmp_path / f"out{suffix}"
    if through == "link":
        path.symlink_to(special)
    with no_block(), no_hang(30.0), pytest.raises(OSError) as caught:
        write(path)
    assert caught.value.filename == str(path)
    assert f"{what}, not a file: only regular files are written" in str(caught.value)
    assert not stat.S_ISREG(os.lstat(special).st_mode)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


@pytest.mark.parametrize("through", ["named", "link"])
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_calibrated_profile_refuses_a_special_file_by_name_and_goes_elsewhere(tmp_path, kind, through):
    """The calibration's run took minutes: its profile, refused where it was asked to go, is
    written to the temporary folder, and the refusal names the file and what it is."""
    import tempfile
    make, what = SPECIAL[kind]
    special = make(tmp_path / "node.yaml")
    path = special if through == "named" else tmp_path / "out.yaml"
    if through == "link":
        path.symlink_to(special)
    with no_block(), no_hang(30.0):
        done = _calibration(path)
    [refusal] = done.refused
    assert str(path) in refusal and f"{what}, not a file: only regular files are written" in refusal
    assert done.path == Path(tempfile.gettempdir()) / f"roofline-{done.profile.id}.yaml"
    assert done.path.exists()
    assert not stat.S_ISREG(os.lstat(special).st_mode)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


@pytest.mark.parametrize("kind", SPECIAL)
def test_the_parse_cache_leaves_a_special_file_as_it_is(tmp_path, kind):
    """A cache that cannot be written is skipped (it is only a cache): never replaced."""
    from explorer.core.files.parse_cache import cached, parse_cache
    make, _ = SPECIAL[kind]
    special = make(tmp_path / "node")
    link = tmp_path / "cache.bin"
    link.symlink_to(special)
    with no_block(), parse_cache(link):
        assert cached("a: 1\n", "yaml", lambda: {"a": 1}) == {"a": 1}
    assert not stat.S_ISREG(os.lstat(special).st_mode) and link.is_symlink()
