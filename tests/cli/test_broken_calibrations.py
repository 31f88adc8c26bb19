"""A calibration file in the data folder that cannot be read is named with its field, never
skipped in silence: `--efficiency calibrated` says which file is broken and why, where it
once advised running calibrate (the window's list: tests/ui/test_calibrate_window.py)."""

import io
import os

import pytest

from explorer.commands import main as cli
from explorer.core.hardware.efficiency import calibrated, to_text
from tests.kernels.test_calibrate_keeping import h100_run


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


def _good_profile() -> str:
    from explorer.core.hardware.catalog import load_catalog
    from explorer.kernels import calibrate

    run = h100_run()
    return to_text(calibrate.fit(run, calibrate.roofs_for(run, load_catalog()), "cupy", "2026-12-06"))


def _broken(folder, kind: str) -> tuple[str, str]:
    """A broken calibration file of ``kind`` in ``folder``: (its name, what the message says)."""
    good = _good_profile()
    path = folder / f"{kind}.yaml"
    if kind == "cut short":
        path.write_text(good[: good.rindex("\n", 0, len(good) // 2)])  # at a line's end: fields missing
        return path.name, "field"
    if kind in ("negative", "nan"):
        value = "-0.5" if kind == "negative" else ".nan"
        path.write_text(good.replace("id: calibrated-h100-sxm", f"id: {kind}")
                        .replace("gemm:\n    value: ", f"gemm:\n    value: {value} #", 1))
        return path.name, "field gemm.value"
    if kind == "fifo":
        os.mkfifo(path)
        return path.name, "is a named pipe (FIFO)"
    if kind == "dangling link":
        path.symlink_to(folder / "gone.yaml")
        return path.name, "it links to"
    raise ValueError(kind)


ANALYZE = ("analyze", "--model", "gpt2", "--hardware", "h100-sxm", "--efficiency", "calibrated")
KINDS = ("cut short", "negative", "nan", "fifo", "dangling link")


@pytest.mark.parametrize("kind", KINDS)
def test_a_broken_calibration_is_named_not_answered_with_run_calibrate(tmp_path, monkeypatch, kind):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    folder = tmp_path / "efficiency"
    folder.mkdir()
    name, says = _broken(folder, kind)
    code, out, err = _cli(*ANALYZE)
    assert code == 0
    assert f"1 of your calibrations could not be loaded: {name}" in err and says in err
    assert "no calibration in the data folder that could be read covers NVIDIA H100" in out
    assert f"{name}" in out and "mend or remove the file" in out
    [skipped] = calibrated(folder)[1]
    assert skipped.path.name == name


def test_a_broken_file_beside_a_good_calibration_is_still_named(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    folder = tmp_path / "efficiency"
    folder.mkdir()
    (folder / "calibrated-h100-sxm.yaml").write_text(_good_profile())
    name, _ = _broken(folder, "negative")
    code, out, err = _cli(*ANALYZE)
    assert code == 0 and "with calibrated efficiency" in out
    assert f"1 of your calibrations could not be loaded: {name}, field gemm.value" in err


def test_a_mutated_calibration_in_the_data_folder_is_used_or_named(tmp_path):
    """Fuzz: a calibrated profile changed as a user or a broken disk would change it, put in
    the data folder: it loads, or it is listed as skipped with its file named, and the note
    of a device it no longer covers names it. Never dropped without a word."""
    import yaml
    from hypothesis import HealthCheck, given, settings

    from explorer.core.analysis.analysis import analyze
    from explorer.core.analysis.expected import expected_for, missing_efficiency
    from explorer.core.hardware.catalog import load_catalog
    from explorer.core.model.presets import load_models
    from explorer.core.model.workload import WorkloadParams
    from tests.fuzz.mutate import mutated

    folder = tmp_path / "efficiency"
    folder.mkdir()
    path = folder / "mine.yaml"
    h100 = load_catalog()["h100-sxm"]
    model = load_models()["gpt2"]

    @settings(deadline=None, suppress_health_check=list(HealthCheck))
    @given(mutated(yaml.safe_load(_good_profile())))
    def run(tree):
        path.write_text(yaml.safe_dump(tree, allow_unicode=True, sort_keys=False), encoding="utf-8")
        loaded, skipped = calibrated(folder)
        assert len(loaded) + len(skipped) == 1
        if skipped:
            assert skipped[0].path == path and skipped[0].describe().startswith("mine.yaml")
            a = analyze(model, WorkloadParams(efficiency="calibrated"), h100)
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
                assert expected_for(a) is None and "mine.yaml" in missing_efficiency(a)

    run()
