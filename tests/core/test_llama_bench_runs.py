"""Published runs quoted as a llama-bench row (resources/validation/published-runs.yaml): the
measured time is the row's own t/s turned into a time, and the run's size is the row's test.
A pp<N> row is one N-token prompt (N / t/s); a tg<N> row, N tokens one at a time, costed as
one token (1 / t/s) at the middle context N / 2."""

import re

import pytest

from explorer.core.analysis.validation import RunKind, read_runs

# A llama-bench row with one measured figure: "... | pp512 |     77.28 ± 0.14 |" (the
# closing bar missing where a table was pasted without it).
ROW = re.compile(r"\|\s*(pp|tg)(\d+)\s*\|\s*([0-9.]+) ± [0-9.]+\s*\|?$")


def _llama_bench_runs():
    return [(run, m) for run in read_runs() if (m := ROW.search(run.quote)) and run.quote.count("±") == 1]


def test_rows_of_one_figure_are_found_in_several_sources():
    groups = {run.source_group for run, _ in _llama_bench_runs()}
    assert {"ubergarm-6980p", "slaren-13900k", "ikawrakow-7950x"} <= groups


@pytest.mark.parametrize("run, row", _llama_bench_runs(), ids=lambda x: getattr(x, "id", ""))
def test_the_measured_time_is_the_rows_rate(run, row):
    test, size, rate = row.group(1), int(row.group(2)), float(row.group(3))
    if test == "pp":
        assert run.kind is RunKind.PREFILL and run.prompt == size
        assert run.measured_s == pytest.approx(size / rate, rel=1e-4)
    else:
        assert run.kind is RunKind.DECODE and run.context == size // 2
        assert run.measured_s == pytest.approx(1 / rate, rel=1e-4)


def test_every_q8_0_row_of_ubergarms_6980p_tables_is_a_run():
    """PR #259's table has four Q8_0 thread counts, each a pp512 and a tg128 row; the table
    pasted in discussion #201 six (64 twice): 20 runs, none left out."""
    runs = [r for r in read_runs() if r.source_group == "ubergarm-6980p"]
    assert len(runs) == 20 and all(r.hardware == "xeon-6980p" and r.model == "deepseek-v3" for r in runs)
    cells = [re.search(r"\|\s*(\d+)\s*\|", r.quote.split("CPU", 1)[1]) for r in runs]
    threads = sorted(int(c.group(1)) for c in cells if c)
    assert threads == sorted([43, 64, 86, 128] * 2 + [64, 64, 43, 86, 128, 172] * 2)


BACKENDS = ("CPU", "Zen4", "AVX2")  # the backend column's words in the quoted tables (or the code path)


def _quoted_threads(quote: str) -> int | None:
    """The threads column of a llama-bench row: the count after its backend column ("CPU",
    or the code path, "Zen4"), else (a table without one) the count just before its test."""
    cells = [c.strip() for c in quote.strip().strip("|").split("|")]
    tests = [i for i, c in enumerate(cells) if re.fullmatch(r"(pp|tg)\d+", c)]
    if not tests:
        return None
    backend = next((i for i, c in enumerate(cells) if c in BACKENDS), None)
    cell = cells[backend + 1] if backend is not None else cells[tests[0] - 1]
    return int(cell) if cell.isdigit() else None


def test_a_run_on_fewer_threads_than_cores_is_costed_on_those_cores(catalog):
    """Where a CPU row's threads column is below the device's cores, the run's workload sets
    ``threads`` to it (its compute roofs are those cores'); at or above, it leaves every core.
    Every llama-bench row on a CPU, of one figure or several."""
    checked = set()
    for run in read_runs():
        device = catalog[run.hardware]
        quoted = _quoted_threads(run.quote)
        if device.kind != "cpu" or quoted is None:
            continue
        expected = quoted if quoted < device.specs.cores else None
        assert run.workload.get("threads") == expected, run.id
        checked.add(run.source_group)
    assert {"alcpz-m4-max", "ikawrakow-7950x", "slaren-13900k", "ubergarm-6980p"} <= checked
