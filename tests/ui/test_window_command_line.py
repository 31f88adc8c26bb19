"""The window opens from the command line in any state ``analyze`` accepts, plus a theme,
presentation mode and a scene's step: a lecturer opens a deck, and every picture in the
README and docs/ can be made again from one command."""

import pytest

from explorer.chart.roofline_frame import default_title
from explorer.commands import window_options
from explorer.core.model.parameters import PARAMETERS, Kind
from explorer.ui.application import UsageError, build_window, run_window

from .conftest import window_args
from .test_user_files_ui import open_window


def test_every_workload_parameter_is_a_window_option():
    for p in PARAMETERS:
        other = next((c for c in p.choices if c != p.default), None) if p.choices else 2
        flag = p.flag if not p.default else "--no-" + p.flag[2:]  # a flag that is on by default is turned off
        argv = [flag] if p.kind is Kind.FLAG else [p.flag, str(other if p.kind is not Kind.SHARE else 0.5)]
        args = window_options.parse(argv)
        assert getattr(args, p.name) != p.default, p.name


def test_the_window_shows_what_analyze_would(qtbot, settings):
    argv = ["--hardware", "h100-sxm,mi300x", "--model", "llama-3-70b", "--phase", "prefill",
            "--batch", "8", "--tp", "2", "--theme", "dark"]
    window = open_window(qtbot, settings, **{k: v for k, v in vars(window_options.parse(argv)).items()
                                             if k not in ("command", "size")})
    session = window.state.session
    assert session.hardware == ("h100-sxm", "mi300x") and session.model == "llama-3-70b"
    assert (session.params.phase, session.params.batch, session.params.tp) == ("prefill", 8, 2)
    assert window.chart.theme.name == "dark"
    assert settings.value("theme") != "dark"  # the command line's choice is this run's only
    assert "TP 2 (2 devices)" in default_title(window.state)  # the chart says how the step is spread
    window.runs.shutdown()


def test_a_scene_step_and_presentation_mode(qtbot, settings):
    window = open_window(qtbot, settings, scene="decode-batching", step=2, presentation=True)
    assert window.player.scene.id == "decode-batching" and window.player.step == 1
    assert window.state.session.params.batch == 8  # the scene's second step
    assert window.presentation.active and window.size().width() == 1366  # the size it was given
    window.presentation.leave()
    window.runs.shutdown()


@pytest.mark.parametrize(("args", "words"), [
    ({"scene": "decode-batching", "step": 9}, "the scene decode-batching has steps 1 to 4, not 9"),
    ({"recompute": "full"}, "recompute applies to training (phase train)"),
    ({"hardware": ("h100-sxm", "nope")}, "nope"),
])
def test_choices_the_window_cannot_show_are_refused_by_name(tmp_path, capsys, args, words):
    code = run_window(window_args(screenshot=str(tmp_path / "w.png"), **args))
    assert code == 2 and words in capsys.readouterr().err and not (tmp_path / "w.png").exists()


def test_a_scene_step_out_of_range_raises_before_the_window_shows(settings):
    with pytest.raises(UsageError):
        build_window(window_args(scene="cpu-vs-gpu", step=0, size=(800, 600)), settings)


@pytest.mark.parametrize(("args", "words"), [
    ({"step": 2}, "--step chooses a step of --scene ID: name the scene too"),
    ({"session": "s.yaml", "batch": 8, "tp": 2}, "--batch, --tp would be ignored: --session opens"),
])
def test_options_that_would_be_ignored_are_refused(tmp_path, capsys, args, words):
    code = run_window(window_args(screenshot=str(tmp_path / "w.png"), **args))
    assert code == 2 and words in capsys.readouterr().err


def test_a_scene_that_cannot_be_filled_in_is_refused_on_the_command_line(tmp_path, capsys, monkeypatch):
    """(A user's device file replacing a shipped device can take away what a shipped
    caption names; the window fills a scene in only when it is asked for.)"""
    from explorer.core.words import scenes
    from explorer.ui import application

    def refuse(scene, catalog, models):
        raise scenes.StepError(scene, "steps[2].caption", "cannot fill in: {h100-sxm/latency}")

    monkeypatch.setattr(application, "fill_every_step", refuse)
    code = run_window(window_args(screenshot=str(tmp_path / "w.png"), scene="decode-batching"))
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "w.png").exists()
    assert ("the scene cannot be played: Why decode is memory-bound, and how batching helps, "
            "steps[2].caption: cannot fill in: {h100-sxm/latency}") in err


def test_a_second_start_parses_no_data_file_and_shows_the_same(qtbot, settings, tmp_path, monkeypatch):
    """The start-up parse cache (``core/files/parse_cache``): the window's data files are read
    back, not parsed, from the second start on, and the window shows the same numbers."""
    import yaml

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    parsed, real = [], yaml.load
    monkeypatch.setattr(yaml, "load", lambda *a, **k: parsed.append(1) or real(*a, **k))
    windows = []
    for _ in range(2):
        before = len(parsed)
        window = build_window(window_args(size=(1366, 768), hardware="h100-sxm,mi300x"), settings)
        qtbot.addWidget(window)
        windows.append((len(parsed) - before, window))
        window.runs.shutdown()
    (first, one), (second, two) = windows
    assert first >= 20 and second == 0  # every device, model and published efficiency file
    assert one.state.catalog["mi300x"] == two.state.catalog["mi300x"]
    assert one.state.analysis().totals.time_s == two.state.analysis().totals.time_s
    assert [t.text for t in one.chart.chart.texts] == [t.text for t in two.chart.chart.texts]
