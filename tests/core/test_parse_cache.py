"""The parsed-YAML cache: a text parsed once is not parsed again within ``parse_cache``, and a
damaged, foreign or odd cache file costs a parse, never a wrong value or a hang."""

from __future__ import annotations

import datetime
import marshal
import os
import zlib

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


def test_a_changed_value_on_disk_is_caught_by_its_checksum(tmp_path, parses):
    path = tmp_path / "cache.bin"
    with pc.parse_cache(path):
        load_yaml(tmp_path / "a.yaml", DEVICE)
    header, entries = marshal.loads(path.read_bytes())
    [(key, (check, blob))] = entries.items()
    wrong = marshal.dumps(marshal.loads(blob) | {"name": "Y2"})  # a value changed, its checksum not
    path.write_bytes(marshal.dumps((header, {key: (check, wrong)})))
    with pc.parse_cache(path):
        assert load_yaml(tmp_path / "a.yaml", DEVICE)["name"] == "X1"
    assert parses[0] == 2
    assert zlib.crc32(marshal.loads(path.read_bytes())[1][key][1]) == check  # written right again


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
    one = len(texts[0]) + len(marshal.dumps({"value": 0, "fill": "x" * 400}))
    monkeypatch.setattr(pc, "MAX_BYTES", 3 * one)
    with pc.parse_cache(path):
        for text in texts[4:]:
            load_yaml(tmp_path / "a.yaml", text)
    kept = marshal.loads(path.read_bytes())[1]
    assert [text for _, text in kept] == [texts[4], texts[5], texts[0]]  # this run's, then the oldest kept


def test_an_edit_of_the_loader_or_a_new_pyyaml_changes_the_format(tmp_path, monkeypatch):
    import yaml as installed

    code = pc._code()
    assert code[0] == (os.stat(installed.__file__).st_size, os.stat(installed.__file__).st_mtime_ns)
    assert None not in code  # both files found in a checkout or an installed package
    loader = tmp_path / "yamltext.py"
    loader.write_text("# the loader\n")
    monkeypatch.setattr(pc, "__file__", str(tmp_path / "parse_cache.py"))
    before = pc._code()
    os.utime(loader, ns=(1, 1))
    assert pc._code() != before
