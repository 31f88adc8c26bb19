"""The user's own files: a broken one is skipped with its file and field, never fatal; a
user's device with a bundled id replaces the bundled one."""

import pytest
import yaml

from explorer.core.files.datafile import DataFileError
from explorer.core.files.userfiles import UnusableEntryError, notice
from explorer.core.hardware.catalog import hardware_to_dict, load_catalog, open_catalogue
from explorer.core.words.scenes import open_scenes

BROKEN_UNIT = "33.5 QFLOP/s"


def write_device(folder, catalog, ident="my-gpu", source="h100-sxm", **changes):
    """A user's device file: a copy of a catalogue entry under a new id, with changes."""
    entry = {**hardware_to_dict(catalog[source]), "id": ident, "name": f"My {ident}", **changes}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{ident}.yaml"
    path.write_text(yaml.safe_dump({"schema": 1, "devices": [entry]}, sort_keys=False))
    return path


def write_broken_device(folder, catalog):
    path = write_device(folder, catalog)
    path.write_text(path.read_text().replace("66.9 TFLOP/s", BROKEN_UNIT, 1))
    return path


def test_a_broken_user_device_is_skipped_with_its_file_and_field(tmp_path, catalog):
    broken = write_broken_device(tmp_path / "hardware", catalog)
    write_device(tmp_path / "hardware", catalog, "fine-gpu")
    loaded = load_catalog(user_directory=tmp_path / "hardware")
    assert set(catalog) <= set(loaded) and "fine-gpu" in loaded and "my-gpu" not in loaded
    (skipped,) = loaded.skipped
    assert skipped.path == broken and skipped.ids == ("my-gpu",)
    field = skipped.error.field
    assert field.startswith("compute[") and field.endswith("].peak")
    assert notice(loaded.skipped) == (
        f"1 of your devices could not be loaded: my-gpu.yaml, field {field}: "
        f"unknown unit 'QFLOP/s' for a compute rate: write it like '989.4 TFLOP/s'")
    # Asking for it names the file and the field; other ids still say "unknown".
    with pytest.raises(UnusableEntryError, match="your device 'my-gpu' could not be loaded") as info:
        loaded["my-gpu"]
    assert info.value.file == str(broken) and info.value.field == field
    with pytest.raises(KeyError, match="unknown hardware 'nope'"):
        loaded["nope"]


def test_files_that_are_not_even_yaml_are_skipped(tmp_path, catalog):
    folder = tmp_path / "hardware"
    folder.mkdir()
    (folder / "a.yaml").write_text("devices: [unclosed")
    (folder / "b.yaml").write_bytes(b"\xff\xfe not utf-8")
    (folder / "c.yaml").write_text("schema: 2\ndevices: []\n")
    loaded = load_catalog(user_directory=folder)
    reasons = {s.path.name: s.error.reason for s in loaded.skipped}
    assert "is not valid YAML" in reasons["a.yaml"]
    assert reasons["b.yaml"].startswith("is not UTF-8 text (byte 0 cannot be decoded)")
    assert "written by a newer version of the app (schema 2)" in reasons["c.yaml"]
    assert len(loaded) == len(catalog)


def test_the_user_s_version_of_a_bundled_device_wins(tmp_path, catalog):
    write_device(tmp_path / "hardware", catalog, "h100-sxm", notes="measured on our cluster")
    loaded = load_catalog(user_directory=tmp_path / "hardware")
    assert loaded["h100-sxm"].notes == "measured on our cluster"
    assert loaded.overrides == {"h100-sxm"} and list(loaded) == list(catalog)  # same place


def test_an_id_defined_by_two_user_files_keeps_the_first(tmp_path, catalog):
    write_device(tmp_path / "hardware", catalog, "mine")
    other = write_device(tmp_path / "hardware", catalog, "zz-other")
    other.write_text(other.read_text().replace("id: zz-other", "id: mine"))
    loaded = load_catalog(user_directory=tmp_path / "hardware")
    (skipped,) = loaded.skipped
    assert skipped.path == other and "defines 'mine' again (first in mine.yaml)" in skipped.error.reason


def test_open_catalogue_reads_the_data_folder(tmp_path, monkeypatch, catalog):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    write_device(tmp_path / "hardware", catalog, "fine-gpu")
    assert "fine-gpu" in open_catalogue()


def test_a_broken_bundled_file_still_stops_loading(tmp_path, catalog):
    (tmp_path / "x.yaml").write_text("schema: 1\ndevices: [{id: x}]\n")
    with pytest.raises(DataFileError, match=r"x\.yaml"):
        load_catalog(tmp_path)


def test_user_scenes_load_one_by_one(tmp_path, catalog, models):
    folder = tmp_path / "scenes"
    folder.mkdir()
    (folder / "mine.yaml").write_text(
        "schema: 1\nscenes:\n- id: mine\n  title: Mine\n"
        "  start: {hardware: [t4], workload: {model: gpt2}}\n"
        "  steps:\n  - caption: 'GPT-2 on a T4: {step/time}.'\n")
    (folder / "broken.yaml").write_text(
        "schema: 1\nscenes:\n- id: broken\n  title: Broken\n"
        "  start: {hardware: [t4], workload: {model: gpt2}}\n"
        "  steps:\n  - {caption: 'x', batch: 0}\n")
    scenes = open_scenes(catalog, models, folder)
    assert "mine" in scenes and "cpu-vs-gpu" in scenes and "broken" not in scenes
    assert len(scenes.skipped) == 1
    assert notice(scenes.skipped).startswith("1 of your scenes could not be loaded: broken.yaml, "
                                             "field steps[0].batch: must be positive")
    with pytest.raises(UnusableEntryError, match="your scene 'broken'"):
        scenes["broken"]


def test_the_device_editor_s_starting_text_loads_back_for_every_device(catalog):
    """Duplicate and edit starts from this YAML: for every catalogue device it must pass the
    loader and give back the same device (so an unchanged save never writes a broken file)."""
    from explorer.core.hardware.catalog import load_hardware_file

    for hw in catalog.values():
        text = yaml.safe_dump({"schema": 1, "devices": [hardware_to_dict(hw)]}, sort_keys=False,
                              allow_unicode=True, width=100)
        (back,) = load_hardware_file(f"{hw.id}.yaml", text=text)
        assert back == hw, hw.id
