"""``scaling``: the compute-optimal split of a training budget under each fit, and the days
it takes on a cluster."""

import json

import pytest

from explorer.core.analysis.scaling_laws import BESIROGLU, HOFFMANN, rule_of_thumb

from .test_cli import run


def test_scaling_json_gives_each_fit_and_the_rule_of_thumb():
    code, out, _ = run("scaling", "--budget", "5.76e23", "--hardware", "h100-sxm", "--devices", "1024",
                       "--json")
    report = json.loads(out)
    assert code == 0
    by_fit = {row["fit"]: row for row in report["optima"]}
    for fit in (HOFFMANN, BESIROGLU):
        n, d = fit.optimal(5.76e23)
        row = by_fit[fit.id]
        assert row["parameters"] == pytest.approx(n) and row["tokens"] == pytest.approx(d)
        assert by_fit[fit.id]["kind"] == "fit" and by_fit[fit.id]["source"].startswith("https://arxiv.org/")
    assert by_fit["rule-of-thumb"]["parameters"] == pytest.approx(rule_of_thumb(5.76e23)[0])
    assert by_fit["rule-of-thumb"]["kind"] == "rule of thumb" and by_fit["rule-of-thumb"]["loss"] is None
    cluster = report["cluster"]
    assert cluster["peak"] == "bf16 matrix" and cluster["mfu"] == 0.4
    assert cluster["seconds"] == pytest.approx(5.76e23 / (1024 * 989.4e12 * 0.4))


def test_scaling_text_and_bad_budgets():
    code, out, _ = run("scaling", "--budget", "1e24", "--fit", "besiroglu-2024")
    assert code == 0 and "Besiroglu et al. 2024, replication:" in out and "Hoffmann" not in out
    assert "about 20 tokens per parameter (approximate)" in out
    for bad in ("-1", "lots", "1e40"):
        assert run("scaling", "--budget", bad)[0] == 2
    assert run("scaling", "--budget", "1e24", "--mfu", "1.5")[0] == 2


def test_flops_and_short_fit_names_as_the_issue_spells_them():
    code, out, _ = run("scaling", "--flops", "5.76e23", "--fit", "besiroglu", "--hardware", "h100-sxm",
                       "--devices", "1024", "--json")
    assert code == 0
    row = json.loads(out)["optima"][0]
    assert row["fit"] == "besiroglu-2024"
    assert row["n_opt"] == pytest.approx(72e9, rel=0.05) and row["d_opt"] == pytest.approx(1.3e12, rel=0.1)
    assert row["training_seconds"] == pytest.approx(5.76e23 / (1024 * 989.4e12 * 0.4))
    code, out, _ = run("scaling", "--flops", "5.76e23", "--fit", "hoffmann", "--json")
    assert json.loads(out)["optima"][0]["n_opt"] == pytest.approx(32e9, rel=0.1)
