"""Traces read as a stream (``profiles.trace_stream``): the same profile as the whole file
parsed at once, on every trace shipped, and memory that follows the kernels kept, not the
size of the text."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pytest

from explorer.core.files.errors import DataFileError
from explorer.profiles import kineto, trace_stream

DATA = Path(__file__).resolve().parent.parent / "data"
TRACES = sorted(p for p in DATA.rglob("*.json*") if p.name.endswith((".json", ".json.gz")))


def _read(path):
    try:
        return kineto.read_kineto(path)
    except DataFileError as exc:
        return str(exc)


def _unstreamable(*_):
    raise trace_stream.Unstreamable


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_the_stream_reads_every_shipped_trace_as_the_whole_file_does(path, monkeypatch):
    trace_stream.streamed(path, kineto.MAX_TRACE_BYTES)  # (read as a stream, not handed back)
    streamed = _read(path)
    monkeypatch.setattr(kineto, "streamed", _unstreamable)
    whole = _read(path)
    assert streamed == whole  # kernels, FLOPs, bytes, steps, devices, notes; or the same refusal
    if not isinstance(whole, str):
        assert (streamed.time_s, streamed.steps) == (whole.time_s, whole.steps)


def test_at_least_the_shipped_traces_were_compared():
    assert len(TRACES) >= 10


@pytest.mark.parametrize("text, message", [
    ('{"traceEvents": [{"cat": "kernel", "cat": "x"}]}', "is written twice in one object"),
    ('{"traceEvents": [{"cat": "kernel"},]}', "is not valid JSON"),
    ('{"traceEvents": []} {}', "is not valid JSON: Extra data"),
    ('\ufeff{"traceEvents": []}', "is not valid JSON"),
])
def test_what_the_stream_cannot_read_is_refused_as_the_whole_file_was(tmp_path, text, message):
    path = tmp_path / "trace.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(trace_stream.Unstreamable):
        trace_stream.streamed(path, kineto.MAX_TRACE_BYTES)
    with pytest.raises(DataFileError, match=message):
        kineto.read_kineto(path)


def _large_trace(path: Path, kernels: int, megabytes: int) -> None:
    """A trace of ``kernels`` kernels in ``megabytes`` of events no profile reads."""
    filler = {"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1501): _call_impl",
              "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"Python id": 7, "Python thread": 0}}
    line = json.dumps(filler)
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write('{"traceEvents": [\n')
        for i in range(kernels):
            out.write(json.dumps({"ph": "X", "cat": "kernel", "name": f"k{i % 7}", "pid": 0, "tid": 7,
                                  "ts": 10 * i, "dur": 3, "args": {"correlation": i, "device": 0}}) + ",\n")
        out.write(",\n".join([line] * (megabytes * 2**20 // (len(line) + 2))))
        out.write("\n]}\n")


def test_memory_follows_the_kernels_kept_not_the_text(tmp_path):
    """A 20 MB trace of 2,000 kernels is read within 4 MB and 2 kB a kernel kept (8 MB;
    the text alone, once decoded, would take 20 MB, and parsed whole several times that):
    a megabyte of text and of bytes at a time, a pointer per event, and the kernels."""
    path = tmp_path / "large.json.gz"
    _large_trace(path, 2000, 20)
    tracemalloc.start()
    try:
        profile = kineto.read_kineto(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(profile.kernels) == 2000
    assert peak < (4 << 20) + 2048 * len(profile.kernels), f"{peak / 2**20:.1f} MB"


def test_progress_is_told_the_share_read_and_may_stop_the_read(tmp_path):
    """(As the window's import uses it: its cancel raises from ``progress``.)"""
    events = [{"ph": "X", "cat": "kernel", "name": f"k{i}", "ts": i, "dur": 1.0} for i in range(60_000)]
    text = json.dumps({"traceEvents": events})
    plain, packed = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        shares: list[float] = []
        doc, _ = trace_stream.streamed(path, 1 << 30, shares.append)
        assert len(doc["traceEvents"]) == 60_000
        assert shares == sorted(shares) and shares[-1] == 1.0
        assert len(shares) >= (2 if path == plain else 1)  # (one read a megabyte of the file)

    class Stop(Exception):
        pass

    def stop(share: float) -> None:
        if share > 0:
            raise Stop

    with pytest.raises(Stop):
        trace_stream.streamed(plain, 1 << 30, stop)


def test_no_collection_runs_while_a_trace_is_read_and_the_collector_is_as_it_was(tmp_path, monkeypatch):
    """A full collection walks every object the read keeps, holding Python's lock (the GUI
    thread stops meanwhile): none runs while a trace is read, through its last step."""
    import gc
    import json

    import explorer.profiles.kineto as kineto
    from explorer.profiles.reading import read_profile
    from tests.profiles.test_kineto import trace

    seen: list[bool] = []
    real = kineto._op_work

    def op_work(*args):
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(kineto, "_op_work", op_work)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace()))
    assert gc.isenabled()
    assert read_profile(path).tool.startswith("PyTorch profiler")
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        read_profile(path)
        assert not gc.isenabled()  # (off stays off)
    finally:
        gc.enable()


def _kernels_text(count: int, odd: dict[int, str]) -> str:
    """A trace of ``count`` kernels, the ``odd`` ones written as given."""
    events = [odd.get(i, json.dumps({"ph": "X", "cat": "kernel", "name": f"k{i}", "ts": i, "dur": 1,
                                     "args": {"device": 0, "correlation": i}})) for i in range(count)]
    return '{"traceEvents": [\n' + ",\n".join(events) + "\n]}"


@pytest.mark.parametrize("odd", [
    '{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"device": 0, "device": 1}}',
    '{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "ts": 2}',
    '{"ph": "X", "cat" : "kernel", "name": "k", "ts": 1, "dur": 1, "cat" :"x"}',
    '{"ph": "X", "cat": "kernel", "name": "k\\":", "ts": 1, "dur": 1, "args": {"a": {"b": 1, "b": 2}}}',
    '{"ph": "X", "cat": "python_function", "name": "f", "args": {"Python id": 1, "Python id": 2}}',
])
def test_a_key_written_twice_among_many_events_is_refused(tmp_path, odd):
    """(Events are decoded a run at a time: a key written twice in any of them, at any depth,
    however spaced, is refused as it is in a trace of one event.)"""
    path = tmp_path / "trace.json"
    path.write_text(_kernels_text(3000, {1500: odd}), encoding="utf-8")
    with pytest.raises(trace_stream.Unstreamable):
        trace_stream.streamed(path, kineto.MAX_TRACE_BYTES)
    with pytest.raises(DataFileError, match="is written twice in one object"):
        kineto.read_kineto(path)


@pytest.mark.parametrize("run", [trace_stream.BATCH, 180])  # (180: runs that often end inside an event)
def test_braces_commas_and_quotes_in_names_are_read_as_the_whole_file_reads_them(tmp_path, monkeypatch, run):
    monkeypatch.setattr(trace_stream, "BATCH", run)
    nested = {"x": [1, {"y": "}, {"}, {"z": 2}]}
    odd = {i: json.dumps({"ph": "X", "cat": "kernel", "name": name, "ts": i, "dur": 2,
                          "args": {"device": 0, "External id": i, "nested": nested}})
           for i, name in zip(range(10, 2920, 97), ["k}, {", 'a":b', "}]},", "\\", 'x" : }'] * 6,
                              strict=True)}
    path = tmp_path / "trace.json"
    path.write_text(_kernels_text(3000, odd), encoding="utf-8")
    doc, _ = trace_stream.streamed(path, kineto.MAX_TRACE_BYTES)  # (read as a stream, not handed back)
    assert len(doc["traceEvents"]) == 3000
    streamed = kineto.read_kineto(path)
    monkeypatch.setattr(kineto, "streamed", _unstreamable)
    assert streamed == kineto.read_kineto(path)
    assert len(streamed.kernels) == 3000
    assert sum(k.name == "k}, {" for k in streamed.kernels) == 6
