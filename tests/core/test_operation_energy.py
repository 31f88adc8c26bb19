"""The circuit-level table of operation energies (Horowitz, ISSCC 2014; two GPU memories
from O'Connor et al., MICRO 2017) and the "why" paragraph that reads it: the published
figures, their ratios as checked claims, and a broken table refused by name."""

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.operation_energy import operations, read_operations
from explorer.core.words.energy_claims import operation_field

# Horowitz's table of rough energy costs, 45 nm at 0.9 V, as published (pJ; DRAM 1.3–2.6 nJ).
PUBLISHED_PJ = {"int8-add": 0.03, "int32-add": 0.1, "fp16-add": 0.4, "fp32-add": 0.9, "int8-mult": 0.2,
                "int32-mult": 3.1, "fp16-mult": 1.1, "fp32-mult": 3.7, "sram-8kb": 10, "sram-32kb": 20,
                "sram-1mb": 100, "dram": 1300}
# O'Connor et al.: HBM2 "approximately 3.97 pJ/bit", GDDR5 14.0 pJ/bit (Figure 1a), a 64-bit access each.
MEMORIES_PJ = {"hbm2": 3.97 * 64, "gddr5": 14.0 * 64}


def test_the_table_is_the_published_one():
    table = operations()
    assert {k: round(v.joules * 1e12, 6) for k, v in table.items()} == {**PUBLISHED_PJ, **MEMORIES_PJ}
    assert table["dram"].high == pytest.approx(2.6e-9) and table["dram"].text == "1.3–2.6 nJ"
    assert table["fp32-add"].text == "0.9 pJ" and table["sram-1mb"].text == "100 pJ"
    assert all(table[k].source == "https://doi.org/10.1109/ISSCC.2014.6757323" for k in PUBLISHED_PJ)
    assert all(table[k].source == "https://doi.org/10.1145/3123939.3124545" for k in MEMORIES_PJ)
    assert table["hbm2"].text == "254 pJ" and table["gddr5"].text == "896 pJ"


def test_the_placeholders_are_checked_claims():
    text, claim = operation_field("energy-ratio:dram:fp32-mult")
    assert text == "351" and claim.value == pytest.approx(1.3e-9 / 3.7e-12) and claim.check() is None
    text, claim = operation_field("energy:fp16-mult")
    assert text == "1.1 pJ" and claim.check() is None
    with pytest.raises(KeyError, match="name two of"):
        operation_field("energy-ratio:dram")
    with pytest.raises(KeyError, match="name one of"):
        operation_field("energy:hbm")


def test_the_why_paragraph_reads_the_table(catalog, models):
    from explorer.core.words.why import explain_topic, load_topics

    [topic] = [t for t in load_topics(catalog, models=models) if t.id == "energy"]
    shown = explain_topic(topic, catalog, models)
    assert "a 32-bit floating-point multiply costs 3.7 pJ and an add 0.9 pJ" in shown.text
    assert "from DRAM off the chip 1.3–2.6 nJ: 351 multiplies or more" in shown.text
    assert len(shown.claims) == 6 and all(c.check() is None for c in shown.claims)


@pytest.mark.parametrize("entry, field", [
    ("{id: x, name: x, joules: '1e-12', source: 'https://example.org'}", "joules"),
    ("{id: x, name: x, joules: 2.0e-12, high: 1.0e-12, source: 'https://example.org'}", "high"),
    ("{id: x, name: x, joules: 0.0, source: 'https://example.org'}", "joules"),
    ("{id: x, name: x, joules: 1e-12, source: 'https://example.org'}", "joules"),  # YAML: text
])
def test_a_broken_table_is_refused_by_field(tmp_path, entry, field):
    path = tmp_path / "operations.yaml"
    path.write_text(f"schema: 1\noperations:\n- {entry}\n")
    with pytest.raises(DataFileError, match=f"field '{field}'"):
        read_operations(path)


def test_an_empty_top_of_range_reads_as_none_and_text_gets_a_hint(tmp_path):
    path = tmp_path / "operations.yaml"
    path.write_text("schema: 1\noperations:\n- {id: x, name: x, joules: 1.0e-12, high: null, "
                    "source: 'https://example.org'}\n")
    assert read_operations(path)["x"].high is None
    path.write_text("schema: 1\noperations:\n- {id: x, name: x, joules: 1e-12, "
                    "source: 'https://example.org'}\n")
    with pytest.raises(DataFileError, match=r"as 1\.0e-12"):
        read_operations(path)
