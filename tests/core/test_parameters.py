"""One table of workload parameters drives validation, sessions, the flags and docs/commands.md:
a loop over the table checks each of them for every row."""

import io
import json
import re
from pathlib import Path

import pytest

from explorer.commands import main as cli
from explorer.core.model.parameters import PARAMETERS, TRAINING_ONLY, Kind, reference_table
from explorer.core.model.session import Session, load_session
from explorer.core.model.workload import WorkloadError, WorkloadParams

DOC = Path(__file__).resolve().parents[2] / "docs" / "commands.md"


def other_value(p):
    """A valid value of ``p`` that is not its default."""
    if p.kind is Kind.FLAG:
        return not p.default
    if p.kind is Kind.CHOICE:
        return next(c for c in p.choices if c != p.default)
    if p.kind is Kind.COUNT:
        return 2
    return 0.5


def valid_params(p, value) -> WorkloadParams:
    """WorkloadParams with ``p`` set to ``value`` and what that value needs to be valid."""
    needs = {name: {"phase": "train"} for name in TRAINING_ONLY}
    needs = {**needs, "vpp": {"phase": "train", "pp": 2, "batch": 2},
             "zero": {"phase": "train", "dp": 2, "batch": 2},
             "micro_batch": {"phase": "train", "batch": 4}, "sp": {"phase": "train", "tp": 2},
             "dp": {"batch": 2}, "ep": {"batch": 2}, "prefix": {"phase": "prefill"},
             "cp": {"phase": "prefill"}, "pp_trim": {"pp": 2},
             "dispatch": {"ep": 2, "batch": 2}}.get(p.name, {})
    if p.name == "phase" and value == "train":
        needs = {}
    return WorkloadParams(**{**needs, p.name: value})


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("p", PARAMETERS, ids=lambda p: p.name)
def test_every_row_is_a_field_with_its_default(p):
    assert getattr(WorkloadParams(), p.name) == p.default


@pytest.mark.parametrize("p", PARAMETERS, ids=lambda p: p.name)
def test_every_row_round_trips_through_a_session_file(p, tmp_path):
    params = valid_params(p, other_value(p))
    Session(model="llama-3-8b", params=params).save(tmp_path / "s.yaml")
    text = (tmp_path / "s.yaml").read_text()
    assert re.search(rf"^  {p.name}: ", text, re.M)  # written under its session key
    assert load_session(tmp_path / "s.yaml").params == params


@pytest.mark.parametrize("p", PARAMETERS, ids=lambda p: p.name)
def test_every_row_s_flag_is_accepted_by_analyze(p):
    params = valid_params(p, other_value(p))
    model = "mixtral-8x7b" if p.name in ("ep", "routing", "dispatch") else "llama-3-70b"  # experts to spread
    argv = ["analyze", "--hardware", "h100-sxm", "--model", model, "--json"]
    for q in PARAMETERS:
        value = getattr(params, q.name)
        if value == q.default or value is None:
            continue
        if q.kind is Kind.FLAG:
            argv.append(q.flag if value else "--no-" + q.flag[2:])
        else:
            argv += [q.flag, str(value)]
    code, out, err = run(*argv)
    assert code == 0, err
    assert json.loads(out)["ops"]


@pytest.mark.parametrize("p", [p for p in PARAMETERS if p.kind is not Kind.FLAG], ids=lambda p: p.name)
def test_every_row_refuses_what_its_limits_exclude(p):
    bad = {Kind.CHOICE: "nope", Kind.COUNT: int(p.maximum) + 1, Kind.SHARE: 1.5}[p.kind]
    with pytest.raises(WorkloadError, match=p.name):
        WorkloadParams(**{p.name: bad})


def test_params_json_lists_every_row_and_the_readme_holds_the_table():
    code, out, _ = run("params", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["name"] for r in rows] == [p.name for p in PARAMETERS]
    assert all(r["session_key"] == r["name"] and r["flag"].startswith("--") for r in rows)
    text = DOC.read_text()
    block = text.split("<!-- parameters: start -->\n")[1].split("\n<!-- parameters: end -->")[0]
    assert block == reference_table(), "docs/commands.md's table is stale: paste `params --markdown`"
