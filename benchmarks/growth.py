"""How the cost of the long commands grows with their work: time and peak memory of
``profile`` against the trace's size, ``analyze`` against the model's parameters (dense and
MoE), ``layouts`` against the device count and a PowerPoint deck (``export``) against its
slides, each series with its growth exponent: the slope of a straight line fitted to
log(cost) against log(work) (1: linear; below: less than linear; 2: quadratic).

Each point runs in a fresh interpreter: the command (as ``roofline-explorer`` runs it,
in-process) once on the smallest work of its series, to pay the imports and first-use costs
that do not grow, then on the point's work, timed alone. Its memory is the peak resident
memory of that run above the resident memory before it (Linux: the peak is set back to the
current with ``/proc/self/clear_refs`` before the run and read from ``VmHWM`` after; where
that cannot be done, the warm-up's peak may hide a smaller one and the script says so).

- ``profile``: PyTorch profiler traces of about 10, 50 and 250 MB (``profile_size.make_trace``:
  whole copies of a 5 MB trace).
- ``analyze``: Llama-shaped dense models of about 1B, 8B, 70B, 405B and 1T parameters and
  Mixtral-shaped MoE models of about 1B, 47B, 141B and 1T (config.json files made here; the
  count is the one ``analyze --json`` gives), decoding on an H100.
- ``layouts``: DeepSeek-V3 decoding on 8, 64, 512, 4,096 and 65,536 H100s.
- ``export``: decks of 1, 4, 16 and 55 slides, as ``export --all-scenes --format pptx``
  draws each slide, in one deck: the scenes' steps in order (whose slides differ), and the
  first step repeated (the same slide each time: the cost of the count alone).

    python benchmarks/growth.py [--quick] [--only profile,analyze,layouts,export]

The figures depend on the machine and its load (the load over the run is printed last).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

from peak_memory import reset_peak, status_mb

ROOT = Path(__file__).resolve().parent.parent
HARDWARE = "h100-sxm"
LAYOUTS_MODEL = "deepseek-v3"
# (hidden size, layers, MLP width): about 1B, 8B, 70B, 405B and 1T parameters, Llama-shaped
DENSE = ((2048, 16, 8192), (4096, 32, 14336), (8192, 80, 28672), (16384, 126, 53248), (25600, 128, 86016))
# (hidden size, layers, expert MLP width, experts): about 1B, 47B, 141B and 1T, Mixtral-shaped
MOE = ((1024, 16, 2048, 8), (4096, 32, 14336, 8), (6144, 56, 16384, 8), (8192, 64, 4096, 160))


class Point(NamedTuple):
    work: float  # MB, parameters, devices or slides
    seconds: float
    peak_mb: float  # above the resident memory before the run


class Series(NamedTuple):
    name: str
    unit: str
    points: list[Point]
    note: str = ""


def exponent(points: list[Point], value: str) -> float | None:
    """The slope of log(``value``) against log(work), least squares (None: fewer than two
    points, or a value of zero or less, which has no logarithm)."""
    xs = [math.log(p.work) for p in points]
    ys = [getattr(p, value) for p in points]
    if len(points) < 2 or min(ys) <= 0:
        return None
    ys = [math.log(y) for y in ys]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else None


# -- the child: one point, in a fresh interpreter ------------------------------------------------
def _command(argv: list[str]) -> str:
    from explorer.commands import main as cli

    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(argv), out, err)
    if code:
        raise SystemExit(f"{' '.join(argv)}: exit {code}: {err.getvalue()[-500:]}")
    return out.getvalue()


def _deck(slides: int, folder: str, repeated: bool = False) -> str:
    """A PowerPoint deck of the first ``slides`` scene steps (``repeated``: the first one,
    ``slides`` times), as ``export --all-scenes --format pptx`` draws each (its own
    functions), in one file."""
    from explorer.chart.slides import ExportOptions
    from explorer.commands import export
    from explorer.commands import main as cli
    from explorer.commands.common import open_catalog
    from explorer.core.model.presets import load_models
    from explorer.document import Document

    args = cli.parse_args(["export", "--all-scenes", "--format", "pptx", "--out-dir", folder])
    err = io.StringIO()
    catalog, models = open_catalog(err), load_models()
    jobs = export._jobs(args, catalog, models, err)
    deck = Path(folder) / f"deck-{slides}.pptx"
    steps = jobs[:1] * slides if repeated else (jobs * (1 + slides // len(jobs)))[:slides]
    chosen = [(session, deck, *rest) for session, _, *rest in steps]
    out = io.StringIO()
    if export._decks(chosen, Document(catalog, models), ExportOptions(), None, out, err):
        raise SystemExit(err.getvalue())
    return out.getvalue()


def child(kind: str, warm: Any, measured: Any) -> dict[str, Any]:
    """One point: ``kind``'s work ``warm`` (untimed), then ``measured``, timed."""
    def run(work: Any) -> str:
        return _deck(*work) if kind == "deck" else _command(work)

    run(warm)
    before = status_mb("VmRSS")
    reset = reset_peak()
    start = time.perf_counter()
    text = run(measured)
    seconds = time.perf_counter() - start
    peak = status_mb("VmHWM")
    parameters = None
    if kind == "analyze":
        parameters = json.loads(text)["workload"]["parameters"]
    return {"seconds": seconds, "peak_mb": max(0.0, peak - before), "reset": reset, "parameters": parameters}


def _point(kind: str, warm: Any, measured: Any) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", kind, json.dumps(warm), json.dumps(measured)],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if out.returncode:
        raise SystemExit(f"{kind} {measured}: {out.stderr[-1500:]}")
    return json.loads(out.stdout.splitlines()[-1])


# -- the series ----------------------------------------------------------------------------------
def _config(path: Path, hidden: int, layers: int, width: int, experts: int = 0) -> Path:
    config: dict[str, Any] = {
        "architectures": ["MixtralForCausalLM" if experts else "LlamaForCausalLM"],
        "model_type": "mixtral" if experts else "llama", "hidden_act": "silu", "hidden_size": hidden,
        "intermediate_size": width, "num_hidden_layers": layers, "num_attention_heads": hidden // 128,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128256, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    if experts:
        config.update(num_local_experts=experts, num_experts_per_tok=2)
    path.write_text(json.dumps(config))
    return path


def profile_series(folder: Path, quick: bool) -> Series:
    from profile_size import make_trace

    points, resets = [], []
    sizes = (6, 12, 23) if quick else (11, 50, 250)  # (quick: 1, 2 and 4 copies of the 5 MB trace)
    smallest = folder / "warm.pt.trace.json"
    make_trace(smallest, 0.5)
    for mb in sizes:
        trace = folder / f"trace-{mb}.pt.trace.json"
        make_trace(trace, mb)
        got = _point("profile", ["profile", str(smallest)], ["profile", str(trace)])
        points.append(Point(trace.stat().st_size / 2**20, got["seconds"], got["peak_mb"]))
        resets.append(got["reset"])
        trace.unlink()
    return Series("profile", "MB of trace", points, _reset_note(resets))


def analyze_series(folder: Path, quick: bool, moe: bool) -> Series:
    shapes = MOE if moe else DENSE
    points, resets = [], []
    warm = ["analyze", "--hardware", HARDWARE, "--model", "gpt2", "--json"]
    for i, shape in enumerate(shapes[:3] if quick else shapes):
        config = _config(folder / f"{'moe' if moe else 'dense'}-{i}.json", *shape)
        measured = ["analyze", "--hardware", HARDWARE, "--model-config", str(config), "--json"]
        got = _point("analyze", warm, measured)
        points.append(Point(got["parameters"], got["seconds"], got["peak_mb"]))
        resets.append(got["reset"])
    return Series(f"analyze, {'MoE' if moe else 'dense'}", "parameters", points, _reset_note(resets))


def layouts_series(quick: bool) -> Series:
    points, resets = [], []
    base = ["layouts", "--hardware", HARDWARE, "--model", LAYOUTS_MODEL, "--json", "--devices"]
    for devices in (8, 64, 512) if quick else (8, 64, 512, 4096, 65536):
        got = _point("layouts", [*base, "2"], [*base, str(devices)])
        points.append(Point(devices, got["seconds"], got["peak_mb"]))
        resets.append(got["reset"])
    return Series(f"layouts, {LAYOUTS_MODEL}", "devices", points, _reset_note(resets))


def export_series(folder: Path, quick: bool, repeated: bool) -> Series:
    points, resets = [], []
    for slides in (1, 2, 4) if quick else (1, 4, 16, 55):
        got = _point("deck", [1, str(folder), repeated], [slides, str(folder), repeated])
        points.append(Point(slides, got["seconds"], got["peak_mb"]))
        resets.append(got["reset"])
    what = "one scene step repeated" if repeated else "the scenes' steps in order"
    return Series(f"export, PowerPoint deck of {what}", "slides", points, _reset_note(resets))


def _reset_note(resets: list[bool]) -> str:
    return "" if all(resets) else "peak not set back before the run: a warm-up's peak may hide a smaller one"


def report(series: Series) -> str:
    lines = [f"{series.name}: time and peak memory against {series.unit}"]
    for p in series.points:
        work = f"{p.work:,.0f}" if float(p.work).is_integer() else f"{p.work:,.1f}"
        lines.append(f"  {work:>20s} {series.unit:14s} {p.seconds:9.3f} s {p.peak_mb:9.1f} MB")
    time_k, memory_k = exponent(series.points, "seconds"), exponent(series.points, "peak_mb")
    shown = [f"{k:.2f}" if k is not None else "–" for k in (time_k, memory_k)]
    lines.append(f"  growth exponent (log-log slope): time {shown[0]}, memory {shown[1]}"
                 + (f" ({series.note})" if series.note else ""))
    return "\n".join(lines)


KINDS = ("profile", "analyze", "layouts", "export")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds), for a test")
    parser.add_argument("--only", metavar="KIND[,KIND…]", help=f"only these: {', '.join(KINDS)}")
    parser.add_argument("--json", type=Path, help="also write the series here, as JSON")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, warm, measured = args.child
        print(json.dumps(child(kind, json.loads(warm), json.loads(measured))))
        return 0
    kinds = args.only.split(",") if args.only else KINDS
    out: list[Series] = []
    with tempfile.TemporaryDirectory(prefix="growth-") as name:
        folder = Path(name)
        makers = {"profile": lambda: [profile_series(folder, args.quick)],
                  "analyze": lambda: [analyze_series(folder, args.quick, moe) for moe in (False, True)],
                  "layouts": lambda: [layouts_series(args.quick)],
                  "export": lambda: [export_series(folder, args.quick, again) for again in (False, True)]}
        for kind in kinds:
            for series in makers[kind]():
                print(report(series), flush=True)
                out.append(series)
    if args.json:
        args.json.write_text(json.dumps([{"name": s.name, "unit": s.unit, "note": s.note,
                                          "points": [p._asdict() for p in s.points]} for s in out], indent=1))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    if "--child" in sys.argv:
        sys.exit(main())
    from common import watched

    with watched():
        code = main()
    sys.exit(code)
