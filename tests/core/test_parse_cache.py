"""The parsed-YAML cache: a text parsed once is not parsed again within ``parse_cache``, and a
damaged, foreign or odd cache file costs a parse, never a wrong value or a hang."""

from __future__ import annotations

import datetime
import marshal
import os

import pytest
import yaml

from explorer.core.files import parse_cache as pc
from explorer.core.files.datafile import DataFileError, load_yaml

DEVICE = "id: x1\nname: X1\npeaks:\n  fp32: 66.9 TFLOP/s\n  memory: [3.35, 80]\n"


@pytest.fixture
def parses(monkeypatch):
    """How many texts PyYAML parsed."""
    count = [0]
    real = yaml.load

    def counted(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(yaml, "load", counted)
    return count


def test_a_text_parsed_once_is_read_back_from_the_file_in_the_next_run(tmp_path, parses):
    path = tmp_path / "cache.bin"
    with pc.parse_cache(path):
        first = load_yaml(tmp_path / "a.yaml", DEVICE)
    assert parses[0] == 1 and path.is_file()
    with pc.parse_cache(path):
        again = load_yaml(tmp_path / "b.yaml", DEVICE)  # the text decides, not the name
    assert parses[0] == 1
    assert again == first == {"id": "x1", "name": "X1",
                              "peaks": {"fp32": "66.9 TFLOP/s", "memory": [3.35, 80]}}


def test_each_read_gives_fresh_objects(tmp_path):
    with pc.parse_cache(tmp_path / "cache.bin"):
        one = load_yaml(tmp_path / "a.yaml", DEVICE)
        one["peaks"]["memory"].append(1)  # a reader that changes what it got
        two = load_yaml(tmp_path / "a.yaml", DEVICE)
    assert two["peaks"]["memory"] == [3.35, 80]


def test_an_edited_text_is_parsed_afresh(tmp_path, parses):
    path = tmp_path / "cache.bin"
    with pc.parse_cache(path):
        load_yaml(tmp_path / "a.yaml", DEVICE)
    with pc.parse_cache(path):
        edited = load_yaml(tmp_path / "a.yaml", DEVICE.replace("66.9", "67.0"))
    assert parses[0] == 2 and edited["peaks"]["fp32"] == "67.0 TFLOP/s"


def test_outside_the_block_nothing_is_cached_or_written(tmp_path, parses):
    load_yaml(tmp_path / "a.yaml", DEVICE)
    load_yaml(tmp_path / "a.yaml", DEVICE)
    assert parses[0] == 2 and list(tmp_path.iterdir()) == []


def test_errors_are_not_cached(tmp_path, parses):
    with pc.parse_cache(tmp_path / "cache.bin"):
        for _ in range(2):
            with pytest.raises(DataFileError, match="duplicate key 'id'"):
                load_yaml(tmp_path / "a.yaml", "id: a\nid: b\n")
    assert parses[0] == 2


def test_a_value_marshal_cannot_hold_is_parsed_every_time(tmp_path, parses):
    with pc.parse_cache(tmp_path / "cache.bin"):
        for _ in range(2):
            assert load_yaml(tmp_path / "a.yaml", "day: 2024-05-01\n") == {"day": datetime.date(2024, 5, 1)}
    assert parses[0] == 2


@pytest.mark.parametrize("content", [b"", b"\x00garbage", marshal.dumps(("another app", {})),
                                     marshal.dumps([1, 2, 3]), marshal.dumps((pc.FORMAT, {("strict",): 1}))])
def test_a_damaged_or_foreign_cache_is_ignored_and_replaced(tmp_path, parses, content):
    path = tmp_path / "cache.bin"
    path.write_bytes(content)
    with pc.parse_cache(path):
        assert load_yaml(tmp_path / "a.yaml", DEVICE)["id"] == "x1"
    assert parses[0] == 1
    with pc.parse_cache(path):
        load_yaml(tmp_path / "a.yaml", DEVICE)
    assert parses[0] == 1  # replaced by a good one


def _payload(path):
    """(format, entries) of a cache file, read past its checked head."""
    return marshal.loads(path.read_bytes()[len(pc.MAGIC) + 12:])


def _damaged(path, offset: int, new: bytes) -> None:
    data = bytearray(path.read_bytes())
    data[offset:offset + len(new)] = new
    path.write_bytes(bytes(data))


def test_a_changed_value_or_text_on_disk_is_caught_before_it_is_read(tmp_path, parses):
    path = tmp_path / "cache.bin"
    with pc.parse_cache(path):
        load_yaml(tmp_path / "a.yaml", "seq: 512\nname: X1\n")
    good = path.read_bytes()
    for old, new in ((b"X1", b"Y2"), (b"seq: 512", b"seq: 513")):  # a value; the text it is found by
        path.write_bytes(good.replace(old, new, 1))
        with pc.parse_cache(path):
            assert load_yaml(tmp_path / "a.yaml", "seq: 513\nname: X1\n")["seq"] == 513
            assert load_yaml(tmp_path / "a.yaml", "seq: 512\nname: X1\n")["name"] == "X1"
    assert parses[0] == 5  # the damaged file was never read: both texts parsed each time
    assert path.read_bytes()[:len(pc.MAGIC)] == pc.MAGIC and len(_payload(path)[1]) == 2  # replaced


def test_a_bit_that_would_make_marshal_ask_for_gigabytes_is_caught(tmp_path, parses):
    path = tmp_path / "cache.bin"
    with pc.parse_cache(path):
        load_yaml(tmp_path / "a.yaml", DEVICE)
    head = len(pc.MAGIC) + 12
    assert path.read_bytes()[head:head + 1] == b")"  # a small tuple; "(" reads a length of up to 2**31
    _damaged(path, head, b"(")
    with pc.parse_cache(path):
        assert load_yaml(tmp_path / "a.yaml", DEVICE)["id"] == "x1"
    assert parses[0] == 2


def test_bytes_that_crash_marshal_never_reach_it(tmp_path):
    """A tuple holding itself as a dictionary key crashes Python 3.11's ``marshal.loads``;
    in a cache file it is refused by its head (run in a separate interpreter: were it read,
    the crash would take the test run with it)."""
    import subprocess
    import sys

    path = tmp_path / "cache.bin"
    path.write_bytes(pc.MAGIC + bytes(12) + bytes.fromhex("7ba90172000000004e30"))
    code = ("import sys; from pathlib import Path; from explorer.core.files import parse_cache as pc; "
            "from explorer.core.files.datafile import load_yaml\n"
            "with pc.parse_cache(Path(sys.argv[1])): print(load_yaml('a.yaml', 'id: x1\\n'))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "{'id': 'x1'}", done.stderr


def test_an_error_inside_the_block_leaves_no_cache_active(tmp_path):
    path = tmp_path / "cache.bin"
    with pytest.raises(RuntimeError), pc.parse_cache(path):
        load_yaml(tmp_path / "a.yaml", DEVICE)
        raise RuntimeError("the window could not be built")
    assert pc._active is None and path.is_file()  # what was parsed before the error is kept


def test_a_cache_from_another_python_or_pyyaml_is_ignored(tmp_path, parses, monkeypatch):
    path = tmp_path / "cache.bin"
    with pc.parse_cache(path):
        load_yaml(tmp_path / "a.yaml", DEVICE)
    monkeypatch.setattr(pc, "FORMAT", (*pc.FORMAT[:-1], "0.0"))
    with pc.parse_cache(path):
        load_yaml(tmp_path / "a.yaml", DEVICE)
    assert parses[0] == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
def test_a_pipe_in_the_caches_place_does_not_block(tmp_path, parses):
    path = tmp_path / "cache.bin"
    os.mkfifo(path)
    with pc.parse_cache(path):  # read with O_NONBLOCK and refused: no writer is waited for
        assert load_yaml(tmp_path / "a.yaml", DEVICE)["id"] == "x1"
    assert parses[0] == 1


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pc.parse_cache(blocker / "cache" / "cache.bin"):
        assert load_yaml(tmp_path / "a.yaml", DEVICE)["id"] == "x1"


def test_the_file_keeps_this_runs_entries_first_within_its_size(tmp_path, monkeypatch):
    path = tmp_path / "cache.bin"
    texts = [f"value: {i}\nfill: {'x' * 400}\n" for i in range(6)]
    with pc.parse_cache(path):
        for text in texts[:4]:
            load_yaml(tmp_path / "a.yaml", text)
    one = len(texts[0].encode()) + len(marshal.dumps({"value": 0, "fill": "x" * 400}))
    monkeypatch.setattr(pc, "MAX_BYTES", 3 * one)
    with pc.parse_cache(path):
        for text in texts[4:]:
            load_yaml(tmp_path / "a.yaml", text)
    kept = _payload(path)[1]
    assert [text for _, text in kept] == [texts[4], texts[5], texts[0]]  # this run's, then the oldest kept


def test_an_edit_of_the_loader_or_a_new_pyyaml_changes_the_format(tmp_path, monkeypatch):
    import yaml as installed

    code = pc._code()
    assert code[1] == (os.stat(installed.__file__).st_size, os.stat(installed.__file__).st_mtime_ns)
    assert None not in code  # PyYAML's folder and modules and the loader, in a checkout or a package
    loader = tmp_path / "yamltext.py"
    loader.write_text("# the loader\n")
    monkeypatch.setattr(pc, "__file__", str(tmp_path / "parse_cache.py"))
    before = pc._code()
    os.utime(loader, ns=(1, 1))
    assert pc._code() != before


def test_every_cut_and_random_damage_costs_a_parse_never_a_wrong_value(tmp_path):
    """The cache file of the shipped hardware files, cut at every 97th byte and with one to
    four bytes changed at random (seeded): each load gives the values a fresh parse gives."""
    import random

    from explorer.paths import resource_path

    texts = [(f, f.read_text(encoding="utf-8")) for f in sorted(resource_path("hardware").glob("*.yaml"))[:4]]
    truth = [load_yaml(f, text) for f, text in texts]
    path = tmp_path / "cache.bin"
    with pc.parse_cache(path):
        for f, text in texts:
            load_yaml(f, text)
    good = path.read_bytes()
    rng = random.Random(34)
    damaged = [good[:cut] for cut in range(0, len(good), 97)]
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        damaged.append(bytes(data))
    for data in damaged:
        path.write_bytes(data)
        cache = pc.ParseCache(path)
        assert all(cache.get(("strict", text)) in (pc._MISSING, value)
                   for (_, text), value in zip(texts, truth, strict=True))
        assert data == good or not cache._entries  # only the whole file is read
