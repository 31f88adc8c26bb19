"""The bound and the expected time against published measurements of real runs
(resources/validation/published-runs.yaml): the bound is never above a measured time, the
expected time, held out source by source, falls near it, and docs/validation.md's table is
this table."""

import statistics
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from explorer.core.analysis import run_fit
from explorer.core.analysis.validation import (
    BAND,
    RunKind,
    check,
    held_out_runs,
    markdown_table,
    read_runs,
    share,
    summary,
)
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.efficiency import published
from explorer.core.hardware.hardware import DeviceKind
from explorer.core.model.parameters import ENGINES

WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}
DOC = Path(__file__).resolve().parents[2] / "docs" / "validation.md"
# Held out today: on GPUs 81 % of runs within BAND, median 1.01, the band (5th to 95th
# percentile) holding 87 %; on CPUs 90 %. The goal is 80 % within BAND and the band
# holding at least 80 %; these floors keep a change from making it worse unnoticed.
GPU_IN_BAND_AT_LEAST = 0.78
GPU_COVERED_AT_LEAST = 0.8
CPU_COVERED_AT_LEAST = 0.8


@pytest.fixture(scope="module")
def checked(models, catalog):
    return [check(run, models, catalog, published()) for run in read_runs()]


@pytest.fixture(scope="module")
def held(checked):
    return held_out_runs(checked)


def test_the_set_covers_sources_devices_batches_parallel_layouts_and_experts():
    runs = read_runs()
    assert len(runs) >= 80 and len({r.source_group for r in runs}) >= 10
    assert {r.hardware for r in runs} >= {"a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x", "rtx-4090",
                                          "apple-m3-max", "ryzen-9-7950x", "xeon-platinum-8480"}
    assert {r.kind for r in runs} >= {"generate", "prefill", "decode", "train"}
    assert {r.workload.get("tp", 1) for r in runs} >= {1, 2, 4, 8}
    assert max(r.workload["batch"] for r in runs) >= 128 and "mixtral-8x7b" in {r.model for r in runs}
    assert all(r.source.startswith("https://") and r.quote and r.derivation for r in runs)
    assert all(r.engine_id in ENGINES for r in runs)


def test_no_measured_time_is_derived_from_a_flop_count():
    """A time derived from a FLOP count checks the count against itself (Llama 3 405B's
    pre-training, given as TFLOP/s per GPU, was taken out for that reason); Megatron-LM's
    times are the paper's own, turned back from its throughput by its own Eq. 3."""
    for run in read_runs():
        assert "the app's count" not in run.derivation, run.id


def test_the_megatron_models_are_the_papers_count():
    """Eq. 2 of Narayanan et al. 2021, P = 12 l h² + 13 l h + (V + s) h, plus the final
    LayerNorm's 2 h (the equation leaves it out)."""
    from explorer.core.analysis.validation import run_models
    megatron = [m for m in run_models().values() if m.id.startswith("megatron-gpt-")]
    assert len(megatron) == 10
    for m in megatron:
        h, layers = m.d_model, m.layers
        assert m.parameter_count() == 12 * layers * h * h + 13 * layers * h + (51200 + 2048) * h + 2 * h


def test_the_bound_never_exceeds_a_measured_time(checked):
    over = [(c.run.id, round(c.bound_ratio, 3)) for c in checked if c.bound_s > c.run.measured_s]
    assert not over


def test_every_run_has_an_expected_time_at_or_above_its_kernels_and_the_bound(checked):
    assert all(c.expected_s is not None and c.kernels_s is not None for c in checked)
    assert all(c.bound_s <= c.kernels_s <= c.expected_s for c in checked)


def test_held_out_on_gpus_the_expected_time_falls_near_the_measured_one(checked, held):
    print("\n" + markdown_table(checked, held) + "\n" + summary(checked, held))
    gpu = [h for h in held.values() if h.row.kind == DeviceKind.GPU]
    ratios = [h.ratio for h in gpu]
    inside = sum(BAND[0] <= r <= BAND[1] for r in ratios) / len(ratios)
    assert inside >= GPU_IN_BAND_AT_LEAST, summary(checked, held)
    assert 0.95 <= statistics.median(ratios) <= 1.05
    assert sum(h.covered for h in gpu) / len(gpu) >= GPU_COVERED_AT_LEAST
    assert BAND == (0.8, 1.25)


def test_held_out_on_cpus_the_band_holds_the_measured_time(held):
    cpu = [h for h in held.values() if h.row.kind == DeviceKind.CPU]
    assert sum(h.covered for h in cpu) / len(cpu) >= CPU_COVERED_AT_LEAST


def _phase_band_coverage(held: list) -> float:
    """The share of ``held``'s runs the band used to hold: the 5th and 95th percentiles over
    the other sources' runs of the same phase, each run weighing as one."""
    covered = 0
    for h in held:
        apart = [o for o in held if o.row.group != h.row.group]
        same = [o.ratio for o in apart if o.row.phase == h.row.phase]
        low, high = np.percentile(same if len(same) >= 5 else [o.ratio for o in apart], (5, 95))
        covered += h.expected_s / max(high, 1.0) <= h.row.measured_s <= h.expected_s / min(low, 1.0)
    return covered / len(held)


def test_the_docs_say_what_a_band_by_phase_held_beside_what_this_one_holds(held):
    """Each source weighing as one, every phase together, the band holds more of the runs
    held out than the 5th and 95th percentiles over runs by phase did: on CPUs, most."""
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    kinds = {k: [h for h in held.values() if h.row.kind == k] for k in (DeviceKind.CPU, DeviceKind.GPU)}
    old = {k: _phase_band_coverage(v) for k, v in kinds.items()}
    new = {k: sum(h.covered for h in v) / len(v) for k, v in kinds.items()}
    assert all(new[k] > old[k] for k in kinds) and new[DeviceKind.CPU] - old[DeviceKind.CPU] > 0.1
    within = {k: sum(BAND[0] <= h.ratio <= BAND[1] for h in v) / len(v) for k, v in kinds.items()}
    assert (f"fell within 0.8–1.25 of the measured one (`within`): {share(within[DeviceKind.GPU])} of the "
            f"GPU runs, {share(within[DeviceKind.CPU])} of the CPU runs") in text
    assert (f"held the measured time for {share(old[DeviceKind.CPU])} of the CPU runs and "
            f"{share(old[DeviceKind.GPU])} of the GPU runs; this one holds it for "
            f"{share(new[DeviceKind.CPU])} and {share(new[DeviceKind.GPU])}") in text


def test_the_docs_hold_this_table(checked, held):
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- validation: start -->\n")[1].split("\n<!-- validation: end -->")[0]
    assert block == markdown_table(checked, held) + "\n\n" + summary(checked, held), \
        "regenerate with: roofline-explorer validate --markdown"


def test_the_docs_sentences_on_where_it_misses(checked, held):
    """"all 6 runs come out faster than measured, at 0.54–0.71"; "on two A100s (pull
    request 3240) comes out at 0.93–1.29"; the Xeon's prompts "at 0.4–13 % of the AMX int8
    roof"; the Ryzen's int8 prompts "reach 13–35 % of the VNNI roof"; the CPUs' token
    generation held out; Megatron-LM's ten runs "all fall in the band held out"."""
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    h100 = [held[c.run.id].ratio for c in checked if c.run.source_group == "vllm-pr-2542"]
    assert all(r < 1 for r in h100) and f"all {len(h100)} runs come out faster than measured, at " \
        f"{min(h100):.2f}–{max(h100):.2f}" in text
    a100 = [held[c.run.id].ratio for c in checked if c.run.source_group == "vllm-pr-3240"]
    assert f"comes out at {min(a100):.2f}–{max(a100):.2f}" in text
    xeon = [c.bound_ratio for c in checked if c.run.source_group == "intel-itrex" and c.run.kind == "prefill"]
    assert f"at {min(xeon) * 100:.1f}–{max(xeon) * 100:.0f} % of the AMX int8 roof" in text
    ryzen = [c.bound_ratio for c in checked if c.run.hardware == "ryzen-9-7950x" and c.run.kind == "prefill"
             and c.run.workload.get("dtype") == "int8"]
    assert f"reach {min(ryzen) * 100:.0f}–{max(ryzen) * 100:.0f} % of the VNNI roof" in text
    def decode_range(keep):
        ratios = [held[c.run.id].ratio for c in checked if c.run.kind == "decode" and keep(c.run)]
        assert ratios
        return f"{min(ratios):.2f}–{max(ratios):.2f}"

    assert f"the Xeon's at {decode_range(lambda r: r.source_group == 'intel-itrex')} held out" in text
    few = {c.run.id: held[c.run.id].ratio for c in checked}
    deepseek = [few[c.run.id] for c in checked if c.run.source_group == "ubergarm-6980p"
                and c.run.id.startswith("ubergarm-pr259") and c.run.kind == RunKind.PREFILL]
    assert (f"a Pi 5's 109-token prompt at {few['b4rtaz-llama-2-7b-q40-pi5-prompt109']:.2f} held out, "
            f"Graviton4's 14-token one at {few['arm-lp-llama-3.1-8b-q40-graviton4-prompt14']:.2f}, "
            "DeepSeek-R1's prompts on a Xeon 6980P with ik_llama.cpp's DeepSeek options at "
            f"{min(deepseek):.2f}–{max(deepseek):.2f})") in text
    every_core = decode_range(lambda r: r.hardware == "raspberry-pi-5" and not r.workload.get("threads"))
    assert f"the Raspberry Pi's at {every_core})" in text
    tmac = [f"{few[f'tmac-llama-2-7b-q40-pi5-tg-t{n}']:.2f}" for n in (1, 2)]
    assert f"held out, {tmac[0]} and {tmac[1]}; fitted with them" in text
    ryzen_tg = decode_range(lambda r: r.hardware == "ryzen-9-7950x")
    assert f"token generation comes out at {ryzen_tg} held out" in text
    megatron = [held[c.run.id] for c in checked if c.run.source == "https://arxiv.org/abs/2104.04473"]
    assert len(megatron) == 10 and all(h.covered and BAND[0] <= h.ratio <= BAND[1] for h in megatron)


def test_the_docs_say_how_far_a_factor_per_device_could_go(checked):
    """The most a factor of each device's own (then of each device, engine and phase) could
    place within BAND, chosen knowing the measured times, on top of the fit to every run:
    on CPUs under 80 % by device, over it only by device, engine and phase."""
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    rows = [c.row for c in checked if c.row is not None]
    figures = {}
    for kind in (DeviceKind.CPU, DeviceKind.GPU):
        mine = [r for r in rows if r.kind == kind]
        factors, engines = run_fit.fit(mine)
        fitted = sum(BAND[0] <= run_fit.predict(r, factors, engines) / r.measured_s <= BAND[1] for r in mine)
        figures[kind] = (len(mine), fitted, run_fit.ceiling(mine, lambda r: r.hardware, BAND),
                         run_fit.ceiling(mine, lambda r: (r.hardware, r.engine, r.phase), BAND))
    runs, fitted, device, cell = figures[DeviceKind.CPU]
    assert device < 0.8 * runs <= cell
    cells = Counter((r.hardware, r.engine, r.phase) for r in rows if r.kind == DeviceKind.CPU)
    single = sum(n == 1 for n in cells.values())
    cpus = {r.hardware for r in rows if r.kind == DeviceKind.CPU}
    alone = [d for d in cpus if len({r.group for r in rows if r.hardware == d}) == 1]
    assert (f"which places {fitted} of the {runs} CPU runs within 0.8–1.25, one factor for each "
            f"device, chosen knowing the measured times (which no prediction can), would place "
            f"{device} there ({device / runs:.0%}); one for each device, engine and phase, {cell} "
            f"({cell / runs:.0%}; {single} of those {len(cells)} cells hold one run, which such a factor "
            f"always places). With this kernel model only the last passes 80 %, and "
            f"{WORDS[len(alone)]} of the {WORDS[len(cpus)]} CPUs have runs from one source only"
            ).replace("%)", " %)").replace("%;", " %;") in text
    runs, fitted, device, cell = figures[DeviceKind.GPU]
    assert f"place {device} and {cell} of the {runs} runs ({fitted} fitted to every run)" in text


def test_a_run_setting_what_its_kind_sets_is_refused(tmp_path):
    path = tmp_path / "runs.yaml"
    path.write_text("schema: 1\nruns:\n- {id: x, kind: decode, model: gpt2, hardware: h100-sxm, "
                    "workload: {batch: 1, context: 9}, context: 10, measured_s: 0.01, "
                    "source: https://example.org, where: t, quote: q, derivation: d, engine: e}\n")
    with pytest.raises(DataFileError, match="context is not a workload parameter a run sets"):
        read_runs(path)


def test_the_readme_quotes_the_held_out_figures(checked, held):
    readme = " ".join((DOC.parents[1] / "README.md").read_text(encoding="utf-8").split())
    gpu = [h for h in held.values() if h.row.kind == DeviceKind.GPU]
    cpu = [h for h in held.values() if h.row.kind == DeviceKind.CPU]

    def inside(hs):
        return sum(BAND[0] <= h.ratio <= BAND[1] for h in hs) / len(hs)

    median = statistics.median(h.ratio for h in gpu)
    claim = (f"The bound is below every one of {len(checked)} published runs. The expected time, checked "
             f"on runs it was not fitted to (each source left out of the fit in turn), lands within "
             f"{BAND[0]:g}–{BAND[1]:g} of the measured time for {share(inside(gpu))} of {len(gpu)} GPU runs "
             f"from {len({h.row.group for h in gpu})} sources (median {median:.2f}), "
             f"and its band holds {share(sum(h.covered for h in gpu) / len(gpu))} of them; on CPUs, "
             f"{share(inside(cpu))} of {len(cpu)} runs from {len({h.row.group for h in cpu})} sources, "
             f"and the band holds {share(sum(h.covered for h in cpu) / len(cpu))}:")
    assert all(c.bound_s <= c.run.measured_s for c in checked) and claim in readme


def test_the_docs_hold_the_terms_table_and_its_sentence(checked):
    """"The engines' host costs close most of the gap on GPUs; the class factors … on their
    own overshoot the training runs."""
    from explorer.core.analysis.validation import terms_table

    table = terms_table(checked)
    text = DOC.read_text(encoding="utf-8")
    assert text.split("<!-- terms: start -->\n")[1].split("\n<!-- terms: end -->")[0] == table, \
        "regenerate with: roofline-explorer validate --terms"
    gpu = next(line for line in table.splitlines() if line.startswith("| **within") and "| GPU |" in line)
    alone, classes, engines, both = (float(cell.strip(" %")) for cell in gpu.split("|")[4:8])
    assert engines - alone > classes - alone > 0 and both > alone  # most of the gap: the engines' terms
    megatron = next(line for line in table.splitlines() if line.startswith("| megatron-lm-2021"))
    assert float(megatron.split("|")[5]) > 1.0  # the class factors alone: slower than measured
    cells = {line.split("|")[1].strip(): line.split("|")[4:6] for line in table.splitlines()
             if line.startswith(("| ikawrakow-7950x", "| slaren-13900k"))}
    ryzen, i9 = (tuple(c.strip() for c in cells[g]) for g in ("ikawrakow-7950x", "slaren-13900k"))
    words = " ".join(text.split())
    assert (f"lifts the Ryzen's median (ik_llama.cpp's runs) from {ryzen[0]} to {ryzen[1]} held out and the "
            f"Core i9-13900K's from {i9[0]} to {i9[1]}.") in words


def test_the_xeons_keep_the_desktop_read_because_their_own_predicts_worse(models, catalog, held):
    """published.yaml's x86 note: taken as the Xeons' memory shares, BSC's Mess all-core reads
    (0.78 of a Xeon 8480+'s DDR5-4800, 0.91 of a Xeon 6980P's RDIMM-6400) put fewer held-out
    CPU runs in the band than the desktop's read the family keeps: the note's figures are
    these."""
    from dataclasses import replace

    from explorer.core.hardware.hardware import DeviceKind

    base = published()
    x86 = next(f for f in base if f.id == "x86-cpu")
    mess = {"xeon-platinum-8480": 0.78, "xeon-6980p": 0.91}
    memory = ("gemm_bandwidth", "bandwidth", "decode_attention")

    def own(device: str, value: float):
        factors = {n: replace(f, value=value) if n in memory else f for n, f in x86.factors.items()}
        return replace(x86, id=f"{device}-mess", devices=(device,), factors=factors)

    families = (*(own(d, v) for d, v in mess.items()),
                replace(x86, devices=tuple(d for d in x86.devices if d not in mess)),
                *(f for f in base if f.id != "x86-cpu"))
    with_mess = held_out_runs([check(run, models, catalog, families) for run in read_runs()])

    def in_band(runs) -> int:
        return sum(BAND[0] <= h.ratio <= BAND[1] for h in runs.values() if h.row.kind == DeviceKind.CPU)

    cpus = sum(h.row.kind == DeviceKind.CPU for h in held.values())
    assert in_band(with_mess) < in_band(held)
    note = " ".join(x86.factors["bandwidth"].note.split())
    counts = f"fall from {in_band(held)} to {in_band(with_mess)} of {cpus}"
    assert f"within 0.8-1.25 of their measured times {counts}" in note
    assert "240.60 GB/s of a Xeon 8480+'s 307.2" in note and "561.26 of a Xeon 6980P's 614.4" in note
    doc = " ".join(DOC.read_text(encoding="utf-8").split())
    assert (f"with the Mess shares {in_band(with_mess)} rather than {in_band(held)} of the {cpus} CPU runs "
            "fall within 0.8–1.25 held out") in doc
