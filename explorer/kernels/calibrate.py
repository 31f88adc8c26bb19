"""Calibrating the expected time on this machine: the ``shapes`` and ``stream`` suites
measured, the efficiency factors of matrix products fitted to them, and a device profile
written that ``--efficiency calibrated`` uses.

The fit takes the model the expected time uses (``expected.product_time``): a product's
arithmetic at peak × gemm × K / (K + gemm_depth) with its rows padded to tiles of
gemm_tile, and its bytes at bandwidth × gemm_bandwidth, the shorter hidden under the
longer as far as gemm_overlap says, plus a launch. Times are the fast end of each
kernel's timings (``quiet_time``). The launch is the tiny product's time; the other five
factors are searched on a grid that minimises the squared log error over the rows and
depth sweeps (the held-out shapes are left out, to check the fit). The peak and bandwidth
are the catalogue's for a device it lists (a GPU by its name, a CPU by its model); for a
CPU it does not list, the derived peak and the best stream rate of the same run (whose
share is then 1 by definition), and the profile applies to no device.

Where this machine's energy can be read (``energy.meter_for``), the run adds the intensity
sweep, and the profile keeps the energy constants fitted to its powers (``energy.fitted``):
the sweep tells a FLOP's energy from a byte's, which the stream suite alone cannot.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import numpy as np

from explorer.core.analysis.expected import product_time
from explorer.core.files.atomic import write_text_atomic
from explorer.core.files.fallback import NOWHERE, Placed, fallbacks, place, temporary
from explorer.core.hardware.efficiency import (
    CALIBRATED_FOLDER,
    FACTORS,
    Efficiency,
    Factor,
    MeasuredEnergy,
    efficiency_for,
    published,
    to_text,
)
from explorer.core.hardware.hardware import GPU, DeviceKind
from explorer.kernels.cases import Preset
from explorer.kernels.cpuinfo import ClockSource
from explorer.kernels.journal import Journal
from explorer.kernels.reference import DERIVED, match_device
from explorer.kernels.results import Point, Results, new_results_name
from explorer.kernels.suites.shapes import HELD_OUT, SUITE
from explorer.paths import user_file

SUITES = (SUITE, "stream")
SWEEP = "intensity"  # added where power can be read: the energy fit needs a sweep of intensities
TILES = (1, 2, 4, 8, 16, 32, 64, 128)
DEPTHS = (0.0, *np.geomspace(4, 8192, 23).tolist())
SHARES = np.linspace(0.01, 1.0, 100)
OVERLAPS = (0.0, 0.25, 0.5, 0.75, 1.0)
METHOD = "measured on this machine (roofline-explorer calibrate)"
# A profile is put where --efficiency calibrated reads it only when it predicts the run's
# held-out products (shapes it was not fitted to) within these errors: the median, and each.
HELD_OUT_MEDIAN = 0.15
HELD_OUT_EACH = 0.40
REJECTED_FOLDER = "rejected"  # under efficiency/: kept for a look, never read


class CalibrationError(RuntimeError):
    """A run that cannot be fitted; the message says what was missing."""


@dataclass(frozen=True)
class Calibration:
    """A calibration's run and, when it was fitted, its profile, where it was written (None:
    nowhere would take it; ``to_text(profile)`` is all that is left of it), the roofs its
    shares are of, and how well it predicts the held-out products ((label, predicted ÷
    measured) each). Beside them: where the run's results file went (``keep_run``), each
    place that refused the profile and why, why the run could not be fitted, and why the
    profile failed its held-out check (``held_out_problem``)."""

    results: Results
    profile: Efficiency | None = None
    path: Path | None = None
    held_out: tuple[tuple[str, float], ...] = ()
    roofs: Roofs | None = None
    kept: Placed = NOWHERE
    refused: tuple[str, ...] = ()
    error: str = ""
    rejected: str = ""  # why the profile failed its held-out check (then it is kept aside, not used)

    @property
    def in_data_folder(self) -> bool:
        """The profile went where ``--efficiency calibrated`` looks for it."""
        return self.path is not None and self.path.parent == user_file(CALIBRATED_FOLDER)

    @property
    def median_error(self) -> float | None:
        errors = [abs(ratio - 1) for _, ratio in self.held_out]
        return statistics.median(errors) if errors else None


CLOCK_WORDS = {ClockSource.MAXIMUM: "the highest clock cpufreq reports",
               ClockSource.CURRENT: "the clock /proc/cpuinfo reports"}


@dataclass(frozen=True)
class Roofs:
    """What the shares are shares of, and where those figures come from."""

    peak_flops: float
    bandwidth: float
    device: str  # the catalogue id (a matched device), else the machine's name
    matched: bool  # the device is a catalogue entry
    kind: DeviceKind
    bandwidth_source: str
    peak_source: str


def suites_for(meter) -> list[str]:
    """The suites a calibration runs: ``SUITES``, and the intensity sweep where ``meter``
    (``energy.meter_for``: read once, as the run then reads it) can read the energy."""
    from explorer.kernels.energy import Unmeasurable

    return [*SUITES, *([] if isinstance(meter, Unmeasurable) else [SWEEP])]


def measured_energy(results: Results) -> tuple[MeasuredEnergy | None, str]:
    """The energy constants a calibration keeps (None: why not, in words): fitted to the
    run's metered kernels, each of them above 0 (π₀ at least 0) to mean anything."""
    from explorer.kernels import energy

    if not any(p.power_w is not None for p in results.points):
        return None, "no power was measured (see the run's notes)"
    dtype, _ = energy.metered(results)
    constants = energy.fitted(results)
    if isinstance(constants, str):
        return None, constants
    if constants.flop_j <= 0 or constants.byte_j <= 0 or constants.constant_w < 0:
        return None, ("the fit gave a constant below 0 (too few or too alike kernels, or a noisy "
                      "meter): not kept")
    return MeasuredEnergy(replace(constants, source=f"{constants.source}; {METHOD}"), dtype), ""


def quiet_time(p: Point) -> float:
    """A kernel's time on a quiet machine: the fast end of its timings (the 20th
    percentile), since other programs and clock drift only ever add time."""
    return p.time_p20_s


def _products(results: Results, held_out: bool) -> list[Point]:
    retrust = _peak_no_ceiling(results)
    return [p for p in results.points if p.suite == SUITE and p.kernel != "launch"
            and (p.trusted or (retrust and p.check is None and p.contended is None))
            and p.kernel.endswith(HELD_OUT) == held_out]


def clock_source(results: Results) -> ClockSource | None:
    """Where the clock of a CPU run's derived peaks was read (None: a GPU run, or a run saved
    before the source was recorded)."""
    value = results.machine.get("cpu", {}).get("clock_source")
    try:
        return ClockSource(value) if value else None
    except ValueError:
        return None


def _peak_no_ceiling(results: Results) -> bool:
    """Whether the run judged its products against a CPU peak derived at a clock that is no
    maximum (or not known to be one): a product it flagged only for beating that peak is
    real (a run saved before ``reference.Reference.from_cpu`` stopped judging them so)."""
    return results.reference.startswith(DERIVED) and clock_source(results) != ClockSource.MAXIMUM


def _efficiency(values: dict[str, float], notes: dict[str, str], ident: str, name: str, roofs: Roofs,
                measured: str, error: float | None, energy: MeasuredEnergy | None) -> Efficiency:
    factors = {spec.name: Factor(float(values[spec.name]), METHOD, notes[spec.name]) for spec in FACTORS
               if not spec.absent}  # (no attention kernel of a choice is calibrated)
    if roofs.matched:
        return Efficiency(ident, name, (roofs.device,), None, factors, "", measured, error, energy=energy)
    # Shares of this machine's own roofs (a derived peak, a measured stream): they mean nothing
    # for another device, so the profile applies to none until the machine is catalogued.
    return Efficiency(ident, name, (), None, factors, "", measured, error, roofs.device, energy)


def _grid_fit(points: list[Point], roofs: Roofs, launch_s: float) -> tuple[dict[str, float], float]:
    """gemm, gemm_depth, gemm_tile, gemm_bandwidth minimising the squared log error."""
    m, n, k = (np.array([p.size[axis] for p in points], dtype=float) for axis in "mnk")
    flops = 2 * m * n * k
    moved = np.array([p.bytes for p in points], dtype=float)
    measured = np.array([quiet_time(p) for p in points])
    best: tuple[float, dict | None] = (math.inf, None)
    memory = moved / (roofs.bandwidth * SHARES[None, :, None])  # gemm_bandwidth × points
    for tile, depth in itertools.product(TILES, DEPTHS):
        padded = np.where(m <= 1, 1.0, m / (np.ceil(m / tile) * tile))  # one row: a vector product
        reach = padded * (k / (k + depth) if depth else 1.0)
        compute = flops / (roofs.peak_flops * SHARES[:, None, None] * reach)  # gemm × points
        longer, shorter = np.maximum(compute, memory), np.minimum(compute, memory)
        for overlap in OVERLAPS:
            predicted = longer + (1 - overlap) * shorter + launch_s  # gemm × gemm_bandwidth × points
            loss = (np.log(predicted / measured) ** 2).sum(axis=-1)
            i, j = np.unravel_index(np.argmin(loss), loss.shape)
            if loss[i, j] < best[0]:
                best = (loss[i, j], {"gemm": SHARES[i], "gemm_depth": depth, "gemm_tile": tile,
                                     "gemm_bandwidth": SHARES[j], "gemm_overlap": overlap})
    values = best[1]
    assert values is not None
    error = math.sqrt(best[0] / len(points))  # RMS log error ≈ relative error
    return values, error


def fit(results: Results, roofs: Roofs, backend: str, measured: str = "") -> Efficiency:
    """The profile of ``results`` (a run of ``SUITES`` on ``backend``) against ``roofs``."""
    products = _products(results, held_out=False)
    launches = [p for p in results.points if p.suite == SUITE and p.kernel == "launch" and p.trusted]
    if len(products) < 6 or not launches:
        raise CalibrationError("too few trusted matrix products to fit (a quiet machine and the "
                               f"'{SUITE}' suite are needed): {len(products)} of at least 6, "
                               f"{len(launches)} launch measurement")
    stream = results.best_bandwidth()
    if stream is None:
        raise CalibrationError(_no_stream(results))
    launch_s = quiet_time(launches[0])
    values, error = _grid_fit(products, roofs, launch_s)
    values.update(kernel_us=launch_s * 1e6, bandwidth=min(1.0, stream.value / roofs.bandwidth))
    notes = {
        "gemm": f"fitted to {len(products)} matrix products (rows 4–1024, depths 32–8192): "
                f"RMS error {error:.0%}; a share of {roofs.peak_source}",
        "gemm_depth": "fitted with gemm", "gemm_tile": "fitted with gemm (tiles of 1 to 128 rows tried)",
        "gemm_overlap": "fitted with gemm",
        "gemm_bandwidth": f"fitted with gemm, a share of {roofs.bandwidth_source}",
        "bandwidth": f"best stream kernel ({stream.kernel}) over {roofs.bandwidth_source}",
        "kernel_us": "median time of an 8 × 8 × 8 product: a launch and nothing else",
    }
    values, notes = _unmeasured(values, notes, roofs)
    when = measured or datetime.now().astimezone().isoformat(timespec="seconds")
    ident = "calibrated-" + re.sub(r"[^a-z0-9._-]+", "-", roofs.device.lower()).strip("-")[:48]
    return _efficiency(values, notes, ident, f"{roofs.device}, calibrated {when[:10]}", roofs,
                       f"{when}, {backend}", error, measured_energy(results)[0])


def roofs_for(results: Results, catalog) -> Roofs:
    """The peak and bandwidth a calibration from ``results`` takes shares of (what the run
    measured: its machine description and its products' precision)."""
    products = _products(results, held_out=False)
    if not products:
        raise CalibrationError(f"the run has no trusted '{SUITE}' products: run the {SUITE} suite")
    dtype, machine = products[0].dtype, results.machine
    if machine.get("device_kind") == GPU:
        name = machine.get("gpu", {}).get("name", "an unnamed GPU")
        hw = match_device(name, catalog)
        if hw is None or hw.peak(dtype) is None:
            raise CalibrationError(f"no catalogue entry with a {dtype} peak matches {name!r}: add the "
                                   "device (Hardware › Duplicate and edit) so its roofs are known")
        return Roofs(hw.peak_flops(dtype), hw.bandwidth_bytes_per_s, hw.id, True, DeviceKind.GPU,
                     f"{hw.name}'s datasheet bandwidth", f"{hw.name}'s datasheet {dtype} peak")
    cpu = machine.get("cpu", {})
    model = cpu.get("model", "this CPU")
    hw = _match_cpu(model, catalog)
    if hw is not None and hw.peak(dtype) is not None:
        return Roofs(hw.peak_flops(dtype), hw.bandwidth_bytes_per_s, hw.id, True, DeviceKind.CPU,
                     f"{hw.name}'s datasheet bandwidth", f"{hw.name}'s datasheet {dtype} peak")
    peak = next((p["flops_per_s"] for p in cpu.get("derived_peaks", ()) if p["precision"] == dtype), None)
    if not peak:
        raise CalibrationError(f"no {dtype} peak can be derived for {model} (its SIMD width or clock "
                               "is not known)")
    stream = results.best_bandwidth()
    if stream is None:
        raise CalibrationError(_no_stream(results))
    # No datasheet bandwidth for an uncatalogued CPU: the best stream rate of the same run.
    peak, peak_source = _uncatalogued_peak(peak, dtype, products, clock_source(results))
    return Roofs(peak, stream.value, model, False, DeviceKind.CPU, "this run's best stream rate", peak_source)


def _uncatalogued_peak(derived: float, dtype: str, products: list[Point],
                       source: ClockSource | None) -> tuple[float, str]:
    """The peak an uncatalogued CPU's shares are of: the derived one, unless a fitted product
    of the run went faster (a peak derived at the clock the OS reports, which a virtual
    machine's or a boosting CPU's cores exceed), then the fastest fitted product's rate: the
    roof is never below a rate the fit takes shares of, and shares of one below would pin
    gemm at 1 (a held-out product may still beat it: its prediction then says so)."""
    fastest = max(products, key=lambda p: p.flops / quiet_time(p))
    rate = fastest.flops / quiet_time(fastest)
    derived_from = f"derived {dtype} peak, {derived / 1e9:.4g} GFLOP/s"
    if rate <= derived:
        return derived, f"this CPU's {derived_from}"
    clock = CLOCK_WORDS[source] if source else "a clock whose source the run did not record"
    size = "×".join(str(fastest.size[axis]) for axis in "mnk")
    return rate, (f"the run's fastest product ({size}), {rate / 1e9:.4g} GFLOP/s: above the {derived_from} "
                  f"at {clock}")


def _no_stream(results: Results) -> str:
    """Why ``results`` give no main-memory bandwidth to fit against."""
    if results.preset == Preset.SMOKE:
        return ("a smoke run's working sets stay in the caches, so its stream rate is not main "
                "memory's: calibrate with --preset quick")
    return "the run has no trusted stream rate (was the machine busy? run again when it is quiet)"


def _match_cpu(name: str, catalog):
    """The catalogue CPU whose id's words all appear in the CPU's name ("AMD EPYC 9654
    96-Core Processor" → epyc-9654); None if none or several."""
    words = set(re.split(r"[^a-z0-9]+", name.lower()))
    found = [hw for hw in catalog.values() if hw.kind == DeviceKind.CPU
             and all(w in words for w in hw.id.split("-") if w)]
    return found[0] if len(found) == 1 else None


def _unmeasured(values: dict, notes: dict, roofs: Roofs) -> tuple[dict, dict]:
    """Factors a calibration does not measure: the published family's where the device
    has one, else stand-ins named as such."""
    family = None
    if roofs.matched:
        from explorer.core.hardware.catalog import open_catalogue

        family = efficiency_for(open_catalogue()[roofs.device], published())
    for name, stand_in, why in (("decode_attention", values["bandwidth"], "the stream share is taken"),
                                ("prefill_attention", values["gemm"], "the products' share is taken"),
                                ("gemm_8bit", values["gemm"], "the measured products' share is taken"),
                                ("gemv_overlap", values["gemm_overlap"],
                                 "the fitted products' overlap is taken (no one-row product is timed)"),
                                ("link", 1.0, "links run at their full rate"),
                                ("nccl_link", 1.0, "links run at their full rate"),
                                ("nccl_ring", 1.0, "links run at their full rate"),
                                ("nccl_us", 0.0, "no fixed cost is added to a collective"),
                                ("step_ms", 0.0, "no engine's host work is added")):
        if family is not None and not family.factors[name].stand_in:
            values[name] = family.value(name)
            notes[name] = f"not calibrated: published for {family.name} ({family.factors[name].source})"
        else:
            values[name] = stand_in
            notes[name] = f"not calibrated (no kernel of it runs here): {why}"
    return values, notes


def keep_run(results: Results, out: Path | None = None, journal: Journal | None = None) -> Placed:
    """Save a calibration's measured run beside where its profile goes (``out``'s folder,
    else the data folder's ``efficiency/``), before the fit, so that no failure after
    minutes of measuring loses it; refused there, in the data folder's results or the
    temporary folder. The run's ``journal`` then goes (``Journal.settle``); a run that
    measured nothing writes nothing."""
    if not results.points:
        if journal is not None:
            journal.discard()
        return NOWHERE
    folder = out.parent if out is not None else user_file(CALIBRATED_FOLDER)
    name = new_results_name("calibrate", results.created)
    kept = place(results.save, [folder / name, *fallbacks("results", name)])
    if journal is not None:
        journal.settle(kept.path)
    return kept


def calibrate_and_write(results: Results, catalog, path: Path | None = None,
                        kept: Placed | None = None) -> Calibration:
    """Fit ``results``, check the profile on the held-out products and write it: to
    ``path``, else the data folder's ``efficiency/`` (where ``--efficiency calibrated``
    reads it) when it passes the check, its ``rejected/`` folder when it does not; refused
    there, to the temporary folder. ``kept``: where the run itself was saved
    (``keep_run``). Raises CalibrationError only; a profile no folder takes has ``path``
    None."""
    roofs = roofs_for(results, catalog)
    profile = fit(results, roofs, results.machine.get("backend", ""))
    held_out = tuple(held_out_errors(results, profile, roofs))
    rejected = held_out_problem(held_out) or ""
    name = f"{profile.id}.yaml"
    text = to_text(profile)
    home = user_file(CALIBRATED_FOLDER, *([REJECTED_FOLDER] if rejected else []), name)
    written = place(lambda target: write_text_atomic(target, text), [path or home, temporary(name)])
    return Calibration(results, profile, written.path, held_out, roofs, kept or NOWHERE, written.refused,
                       rejected=rejected)


def held_out_problem(held_out: tuple[tuple[str, float], ...]) -> str | None:
    """Why a profile with these (label, predicted ÷ measured) held-out ratios must not be
    used (None: it predicts them within ``HELD_OUT_MEDIAN`` and ``HELD_OUT_EACH``)."""
    errors = [abs(ratio - 1) for _, ratio in held_out]
    if not errors:
        return "the run has no held-out products to check the fit on"
    median, worst = statistics.median(errors), max(errors)
    if median <= HELD_OUT_MEDIAN and worst <= HELD_OUT_EACH:
        return None
    return (f"it predicts the held-out products within {median:.0%} (median) and {worst:.0%} (the "
            f"worst), where {HELD_OUT_MEDIAN:.0%} and {HELD_OUT_EACH:.0%} are needed: measure again on "
            "a quiet machine (another program, a clock that moves or a BLAS that changes its code "
            "path from one shape to the next makes products disagree)")


def held_out_errors(results: Results, profile: Efficiency, roofs: Roofs) -> list[tuple[str, float]]:
    """(label, predicted ÷ measured) for each held-out product of ``results``."""
    out = []
    for p in _products(results, held_out=True):
        m, n, k = (p.size[axis] for axis in "mnk")
        predicted = product_time(profile, 2 * m * n * k, p.bytes, m, k, roofs.peak_flops, roofs.bandwidth)
        predicted += profile.value("kernel_us") * 1e-6
        out.append((f"{m}×{n}×{k}", predicted / quiet_time(p)))
    return out
