"""When a parameter applies is data (``applicability``): validation, the document's phase
changes, ``params --json`` and the panel all read it, and the sentences are written from it."""

import json

import pytest

from explorer.core.model.applicability import INFERENCE, Applies, Condition, Needs, Outside, Phase
from explorer.core.model.parameters import BY_NAME, PARAMETERS, held_outside
from explorer.core.model.workload import WorkloadError, WorkloadParams


def test_the_sentences_are_written_from_the_data():
    assert BY_NAME["sp"].applies.describe() == "training (phase train)"
    assert BY_NAME["kv_dtype"].applies.describe() == "a transformer, inference (phase prefill or decode)"
    assert BY_NAME["weight_group"].applies.describe() == "steps with weight_dtype fp4 or int4"
    assert BY_NAME["allreduce"].applies.describe() == (
        "steps with tp at least 2, or phase train and dp at least 2, or phase train and ep at least 2")
    assert BY_NAME["batch"].applies.describe() == "always"


@pytest.mark.parametrize(("changes", "applies"), [
    ({}, False), ({"tp": 2}, True), ({"dp": 2}, False), ({"phase": "train", "dp": 2}, True),
    ({"phase": "train", "ep": 2}, True), ({"phase": "train"}, False),
])
def test_a_condition_on_other_parameters_is_evaluated_on_the_step(changes, applies):
    assert BY_NAME["allreduce"].applies.holds(WorkloadParams(**changes)) is applies


def test_the_model_a_parameter_needs_is_part_of_it():
    decode = WorkloadParams()
    assert not BY_NAME["routing"].applies.holds(decode, transformer=True, moe=False)
    assert BY_NAME["routing"].applies.holds(decode, transformer=True, moe=True)
    assert not BY_NAME["attention"].applies.holds(decode, transformer=False)
    assert BY_NAME["dp"].applies.holds(decode, transformer=False)  # replicas of any model


def test_what_a_phase_holds_at_default_is_read_from_the_rows():
    assert {p.name for p in held_outside("decode")} == {"prefix", "sp", "recompute", "zero", "grad_dtype",
                                                        "micro_batch", "vpp"}
    assert {p.name for p in held_outside("train")} == {"prefix", "weight_dtype", "kv_dtype"}
    assert {p.name for p in held_outside("prefill")} == {"sp", "recompute", "zero", "grad_dtype",
                                                         "micro_batch", "vpp"}


@pytest.mark.parametrize("parameter", [p for p in PARAMETERS if p.applies.outside is Outside.DEFAULT])
def test_every_held_parameter_is_refused_outside_its_phases_naming_them(parameter):
    outside = next(phase for phase in Phase if phase not in parameter.applies.phases)
    value = {"prefix": 16, "weight_dtype": "int4", "kv_dtype": "fp8", "sp": True, "recompute": "full",
             "zero": 1, "grad_dtype": "fp32", "micro_batch": 1, "vpp": 2}[parameter.name]
    extra = {"tp": 2, "pp": 2} if parameter.name in ("sp", "vpp") else {}
    with pytest.raises(WorkloadError, match=f"{parameter.name} applies to .*got .* in phase {outside}"):
        WorkloadParams(phase=outside.value, **{parameter.name: value}, **extra)


def test_params_json_carries_applicability_as_data():
    from tests.cli.test_cli import run

    code, out, _ = run("params", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert code == 0
    assert rows["zero"]["applies"] == {"phases": ["train"], "needs": "any", "devices": [], "when": [],
                                       "outside": "default", "text": "training (phase train)"}
    assert rows["weight_scale"]["applies"]["when"] == [[{"parameter": "weight_dtype",
                                                          "one_of": ["fp4", "int4"]}]]
    assert rows["context"]["applies"]["phases"] == ["decode"]
    assert rows["context"]["applies"]["outside"] == "kept"
    assert rows["ep"]["applies"]["needs"] == "moe"
    assert rows["threads"]["applies"]["devices"] == ["cpu"]
    assert rows["threads"]["applies"]["text"] == "a CPU"


def test_an_applies_built_by_hand_reads_like_the_table():
    made = Applies(INFERENCE, Needs.TRANSFORMER, ((Condition("tp", at_least=2),),))
    assert made.describe() == "a transformer, inference (phase prefill or decode), steps with tp at least 2"
    assert made.holds(WorkloadParams(tp=2)) and not made.holds(WorkloadParams(phase="train", tp=2))


def test_the_commands_help_says_where_each_parameter_applies():
    import contextlib
    import io

    from explorer.commands import main as cli

    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), contextlib.suppress(SystemExit):
        cli.parse_args(["analyze", "--help"])
    words = " ".join(help_text.getvalue().split())  # argparse wraps lines
    assert "applies to training (phase train)" in words and "applies to a mixture of experts" in words
    assert "applies to steps with weight_dtype fp4 or int4" in words
