"""The headless commands: output shapes, values, errors and exit codes."""

import argparse
import io
import json
import os
import subprocess
import sys

import pytest

from explorer.commands import main as cli
from explorer.commands import window_options


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    try:
        args = cli.parse_args(list(argv))
    except SystemExit as exc:  # argparse reports usage errors itself
        return exc.code, "", ""
    code = cli.run(args, out, err)
    return code, out.getvalue(), err.getvalue()


def test_hardware_list_table():
    code, out, _ = run("hardware", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["id", "name", "kind", "class"]
    assert len(lines) == 2 + 56
    assert next(line for line in lines if line.startswith("raspberry-pi-5")).split()[5:7] == ["cpu", "edge"]
    h100 = next(line for line in lines if line.startswith("h100-sxm"))
    assert "1.98 PFLOP/s fp8 matrix" in h100  # dense: the sparse headline is 3958 TFLOP/s
    assert "3.35 TB/s" in h100


def test_hardware_list_json():
    code, out, _ = run("hardware", "list", "--json")
    devices = json.loads(out)
    assert code == 0 and len(devices) == 56 >= 48
    h200 = next(d for d in devices if d["id"] == "h200-sxm")
    assert h200["bandwidth"] == 4.8e12 and h200["memory_bytes"] == 141 * 2**30
    assert h200["class"] == "datacenter"
    assert {d["class"] for d in devices} == {"datacenter", "workstation", "desktop", "laptop", "edge"}


def test_hardware_show_marks_derived_values_and_sources():
    code, out, _ = run("hardware", "show", "xeon-platinum-8480")
    assert code == 0
    assert "(derived)" in out
    assert "56 cores × 1024 BF16 FLOP per cycle" in out
    assert "https://www.intel.com/" in out


def test_hardware_show_json_has_a_source_for_every_number():
    code, out, _ = run("hardware", "show", "h100-sxm", "--json")
    detail = json.loads(out)
    assert code == 0
    bf16 = next(p for p in detail["peaks"] if p["precision"] == "bf16")
    assert bf16["flops_per_s"] == 989.4e12 and bf16["clock_hz"] == 1.83e9
    assert bf16["ridge"] == pytest.approx(295.34, rel=1e-4)
    for group in [detail["specs"], *detail["peaks"], *detail["memory"]]:
        assert group["source"].startswith("https://")


def test_analyze_json_shape_and_values():
    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model", "llama-2-7b",
                       "--batch", "1", "--context", "4096", "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) >= {"hardware", "workload", "ops", "totals"}
    assert set(doc["hardware"]) >= {"id", "name", "peak_flops", "bandwidth", "ridge"}
    assert set(doc["workload"]) >= {"model", "phase", "batch", "seq", "context", "dtype", "attention"}
    assert set(doc["totals"]) >= {"flops", "bytes", "time_s", "tokens_per_s", "weight_bytes",
                                  "kv_bytes_per_token", "kv_cache_bytes", "fits_in_memory"}
    assert doc["hardware"]["peak_flops"] == 989.4e12
    assert doc["hardware"]["bandwidth"] == 3.35e12
    assert doc["workload"] == {**doc["workload"], "model": "llama-2-7b", "phase": "decode",
                               "batch": 1, "context": 4096, "dtype": "bf16", "attention": "fused"}
    ops = doc["ops"]
    assert len(ops) == 32 * 14 + 3  # each op once per layer
    for op in ops:
        assert set(op) >= {"name", "role", "layer", "flops", "bytes", "intensity", "time_s", "bound"}
        assert isinstance(op["flops"], int) and isinstance(op["bytes"], int)
        assert op["bound"] in ("memory", "compute")
    q = next(op for op in ops if op["name"] == "layers.5.q_proj")
    assert (q["layer"], q["role"], q["flops"], q["bytes"]) == (5, "q_proj", 33_554_432, 33_570_816)
    assert ops[0]["layer"] is None and ops[0]["role"] == "embedding"
    totals = doc["totals"]
    assert isinstance(totals["flops"], int)
    assert totals["flops"] == sum(op["flops"] for op in ops)
    assert totals["kv_bytes_per_token"] == 524_288
    assert totals["kv_cache_bytes"] == 2 * 2**30
    assert totals["fits_in_memory"] is True


def test_analyze_table_lists_one_layer_with_counts():
    code, out, _ = run("analyze", "--hardware", "a100-80gb-sxm", "--model", "llama-3-70b",
                       "--phase", "prefill", "--seq", "2048")
    assert code == 0
    assert "×80" in out
    assert "DOES NOT FIT" in out  # 141 GB of bf16 weights in 80 GB
    assert "compute" in out


def test_analyze_all_ops_lists_every_layer():
    code, out, _ = run("analyze", "--hardware", "t4", "--model", "gpt2", "--all-ops")
    assert code == 0
    assert "layers.11.fc2" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--hardware", "h100", "--model", "gpt2"], "unknown hardware 'h100': did you mean h100-sxm"),
        (["--hardware", "t4", "--model", "llama3-8b"], "unknown model 'llama3-8b': did you mean"),
    ],
)
def test_unknown_ids_name_close_matches(argv, message):
    code, _, err = run("analyze", *argv)
    assert code == 2
    assert message in err


def test_invalid_numbers_name_the_flag(capsys):
    with pytest.raises(SystemExit) as info:
        cli.parse_args(["analyze", "--hardware", "t4", "--model", "gpt2", "--batch", "0"])
    assert info.value.code == 2
    assert "argument --batch: must be at least 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.parse_args(["analyze", "--hardware", "t4", "--model", "gpt2", "--seq", "many"])
    assert "argument --seq: must be a whole number, got 'many'" in capsys.readouterr().err


def test_too_large_a_step_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as info:
        cli.parse_args(["analyze", "--hardware", "t4", "--model", "gpt2", "--batch", "999999999"])
    assert info.value.code == 2
    assert "argument --batch: must be at most 1,048,576, got 999,999,999" in capsys.readouterr().err
    # Within the flag limits, a step too large to count in 64 bits is still a clear error.
    code, _, err = run("analyze", "--hardware", "t4", "--model", "llama-3-70b", "--phase", "prefill",
                       "--batch", "1048576", "--seq", "4194304", "--attention", "naive")
    assert code == 2
    assert "too large to count" in err


@pytest.mark.slow
def test_module_entry_point_runs_headless_without_importing_qt():
    code = (
        "import sys, runpy; sys.argv = ['roofline-explorer', 'analyze', '--hardware', 'l4', "
        "'--model', 'gpt2', '--json'];\n"
        "try:\n    runpy.run_module('explorer', run_name='__main__')\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'cupy')]\n"
        "assert not bad, bad"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hardware"]["id"] == "l4"


def test_integer_peaks_are_operations_not_flops():
    code, out, _ = run("hardware", "list")
    assert code == 0
    xeon = next(line for line in out.splitlines() if line.startswith("xeon-platinum-8480"))
    assert "436 TOP/s int8 matrix" in xeon  # AMX: 56 cores × 2048 OP × 3.8 GHz = 435.8 TOP/s
    assert "4 TiB" in xeon


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly():
    result = subprocess.run(
        f"{sys.executable} -m explorer analyze --hardware h100-sxm --model llama-3-70b --json | head -c 10",
        shell=True, capture_output=True, text=True, timeout=60)
    assert result.stdout == '{\n "hardwa'
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr


@pytest.mark.parametrize("argv", [[], ["--size", "800x600", "--hardware", "a100-80gb-sxm"],
                                  ["--session", "s.yaml", "--model", "gpt2", "--screenshot", "o.png"]])
def test_the_window_options_parse_as_the_full_parser_does(argv):
    assert not window_options.names_a_command(argv)
    assert vars(window_options.parse(argv)) == vars(cli.parse_args(argv))


def test_a_command_or_help_goes_to_the_full_parser():
    assert window_options.names_a_command(["--size", "800x600", "bench"])
    assert window_options.names_a_command(["--help"])


def test_opening_the_window_builds_no_command_parser():
    """The commands' modules (the kernel lab's backends, the explanations) cost a third of a
    second before the first paint; the window path never imports them."""
    code = ("import sys; from explorer import app; import explorer.ui.application as a; "
            "a.run_window = lambda args: print([m for m in ('explorer.commands.main', "
            "'explorer.commands.bench', 'explorer.commands.explain', 'explorer.commands.export') "
            "if m in sys.modules], args.size) or 0; "
            "app.main(['--size', '800x600'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] (800, 600)"


def test_every_command_s_help_prints(capsys):
    """argparse formats help with %: a help text holding "90%" once broke every --help. A
    description is printed as written, so "15 %%" there once showed both signs."""
    parser = cli.build_parser()

    def commands(p: argparse.ArgumentParser, path: tuple[str, ...] = ()):
        """Every command and subcommand (hardware list, scenes check, …) as its argv."""
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield [*path, name]
                    yield from commands(sub, (*path, name))

    every = [[], *commands(parser)]
    assert {c[0] for c in every if c} == set(window_options.COMMANDS) and ["scenes", "check"] in every
    for command in every:
        with pytest.raises(SystemExit) as stop:
            parser.parse_args([*command, "--help"])
        assert stop.value.code == 0, command
        out = capsys.readouterr().out
        assert "usage: roofline-explorer" in out
        assert "%%" not in out, command
    with pytest.raises(SystemExit):
        window_options.parse(["--help"])
    out = capsys.readouterr().out
    assert "--memory-fraction" in out and "%%" not in out


def test_a_command_s_short_options_are_not_taken_for_the_window_s():
    """The window's options live on the top-level parser too; a subcommand's abbreviations
    (export --w, bench --d) must still mean its own options."""
    args = cli.parse_args(["export", "--scene", "decode-batching", "--out", "a.png", "--w", "800"])
    assert args.width == 800
    assert cli.parse_args(["bench", "--d", "1"]).device == 1


@pytest.mark.parametrize("split", [(), ("--tp", "2"), ("--dp", "2")])
def test_analyze_gives_the_step_s_energy_estimate_and_lower_bound_each_named(split):
    """The estimate: every device at the power model's power (its 700 W TDP, the H100
    datasheet's, scaled by the share of the step its roofs are busy) for the expected step;
    the lower bound: its operations at the floor energies. Neither is called "at most"."""
    from explorer.core.analysis.energy import power_w

    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--batch", "8", *split,
                       "--json")
    assert code == 0
    doc = json.loads(out)
    devices = 2 if split else 1
    energy, totals = doc["energy"], doc["totals"]
    seconds = totals["expected_time_s"]
    from explorer.core.analysis.analysis import analyze
    from explorer.core.hardware.catalog import load_catalog
    from explorer.core.model.presets import load_models
    from explorer.core.model.workload import WorkloadParams

    tp, dp = (2, 1) if split == ("--tp", "2") else (1, 2) if split else (1, 1)
    t = analyze(load_models()["llama-3-8b"], WorkloadParams(batch=8, tp=tp, dp=dp),
                load_catalog()["h100-sxm"]).totals
    activity = min((t.compute_time_s + t.memory_time_s) / seconds, 1.0)  # the roofs' busy share
    assert energy["activity"] == pytest.approx(activity)
    assert energy["power_w_estimate"] == pytest.approx(power_w(700, activity) * devices)
    assert energy["joules_estimate"] == pytest.approx(power_w(700, activity) * devices * seconds)
    assert energy["joules_per_token_estimate"] == pytest.approx(energy["joules_estimate"] / 8)
    assert 0 < energy["joules_lower_bound"] < energy["joules_estimate"] < 700 * devices * seconds
    assert energy["joules_per_token_lower_bound"] == pytest.approx(energy["joules_lower_bound"] / 8)
    assert "gtc22-whitepaper-hopper" in energy["method"] and "expected step time" in energy["method"]
    assert "upper bound" not in out and "upper_bound" not in out
    code, text, _ = run("analyze", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--batch", "8", *split)
    from explorer.core.units import format_si

    per_token = format_si(energy["joules_per_token_estimate"], "J")
    assert f"energy estimate {format_si(energy['joules_estimate'], 'J')} a step, {per_token} a token " \
        "(power model: " in text
    assert f"energy lower bound {format_si(energy['joules_lower_bound'], 'J')} a step" in text
    assert "energy at most" not in text and "upper bound" not in text


def test_a_device_without_a_tdp_has_no_energy_and_says_why():
    code, out, _ = run("analyze", "--hardware", "apple-m2-max", "--model", "llama-3-8b", "--json")
    assert code == 0
    energy = json.loads(out)["energy"]
    assert energy["joules_estimate"] is None and energy["joules_per_token_lower_bound"] is None
    assert energy["method"] == "no energy data: the catalogue gives Apple M2 Max (38-core GPU) no TDP"
    _, out, _ = run("analyze", "--hardware", "apple-m2-max", "--model", "resnet-50")
    assert "energy: no data (the catalogue gives Apple M2 Max (38-core GPU) no TDP)" in out
