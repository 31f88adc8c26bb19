"""benchmarks/doc_tables.py: docs/benchmarks.md's stall and growth tables are written from the
JSON that gui_stalls.py and growth.py write, between their markers, and nothing else moves."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import doc_tables
finally:
    sys.path.pop(0)


def row(name, stall_s, rounds, total_s=1.5, finished=True, note="", peak_mb=None):
    return {"name": name, "stall_s": stall_s, "ticks": 100, "total_s": total_s, "finished": finished,
            "note": note, "at_s": 0.0, "rounds": rounds, "peak_mb": peak_mb}


def test_a_stall_row_gives_both_platforms_and_judges_the_worse():
    offscreen = [row("import a 10 MB trace", 0.012, [0.011, 0.012, 0.030], peak_mb=41.4),
                 row("export PDF", 0.090, [0.09, 0.08, 0.1], total_s=2.345)]
    x11 = [row("import a 10 MB trace", 0.020, [0.02, 0.02, 0.02]),
           row("export PDF", 0.140, [0.14, 0.15, 0.13])]
    lines = doc_tables.stalls_table(offscreen, x11).splitlines()
    assert lines[2] == "| import a 10 MB trace | 12 (11, 12, 30) | 20 (20, 20, 20) | 1.50 s | 41 MB | yes |"
    assert lines[3] == "| export PDF | 90 (90, 80, 100) | 140 (140, 150, 130) | 2.35 s | – | no |"  # X11 over


def test_an_operation_stopped_at_its_limit_or_not_run_on_x11_says_so():
    offscreen = [row("calibrate, quick preset", 0.05, [0.05], total_s=120.0, finished=False,
                     note="at most 120 s")]
    [line] = doc_tables.stalls_table(offscreen, None).splitlines()[2:]
    assert line == ("| calibrate, quick preset (at most 120 s) | 50 (50) | not run | "
                    "120.00 s (stopped at its limit) | – | no |")


def test_a_growth_row_lists_its_points_and_exponents():
    series = [{"name": "profile", "unit": "MB of trace", "note": "",
               "points": [{"work": 10, "seconds": 0.5, "peak_mb": 20},
                          {"work": 50, "seconds": 2.5, "peak_mb": 20},
                          {"work": 250, "seconds": 12.5, "peak_mb": 20}]},
              {"name": "analyze, dense", "unit": "parameters", "note": "",
               "points": [{"work": 1.2e9, "seconds": 0.1, "peak_mb": 0},
                          {"work": 8.0e9, "seconds": 0.1, "peak_mb": 0}]}]
    lines = doc_tables.growth_table(series).splitlines()
    assert lines[2] == ("| profile, against MB of trace | 10: 0.5 s, 20 MB; 50: 2.5 s, 20 MB; "
                        "250: 12.5 s, 20 MB | 1.00 | 0.00 |")
    assert lines[3] == ("| analyze, dense, against parameters | 1.2B: 0.1 s, 0 MB; 8.0B: 0.1 s, 0 MB "
                        "| 0.00 | – |")


def test_only_the_text_between_the_markers_is_replaced():
    page = "before\n<!-- growth: start -->\nold table\n<!-- growth: end -->\nafter\n"
    assert doc_tables.replace_block(page, "growth", "| new |") == (
        "before\n<!-- growth: start -->\n| new |\n<!-- growth: end -->\nafter\n")
    with pytest.raises(doc_tables.MarkerError, match="gui-stalls: start"):
        doc_tables.replace_block(page, "gui-stalls", "x")


def test_the_page_holds_both_tables_markers():
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    for name in (doc_tables.STALLS, doc_tables.GROWTH):
        assert doc_tables.replace_block(page, name, "x")  # (raises without its markers)


def test_main_writes_the_run_s_tables_into_the_page(tmp_path):
    (tmp_path / "stalls-offscreen.json").write_text(json.dumps([row("list cached models", 0.03, [0.03])]))
    doc = tmp_path / "benchmarks.md"
    doc.write_text("<!-- gui-stalls: start -->\n<!-- gui-stalls: end -->\n<!-- growth: start -->\nkept\n"
                   "<!-- growth: end -->\n")
    assert doc_tables.main(["--folder", str(tmp_path), "--doc", str(doc), "--note", "Run of today."]) == 0
    text = doc.read_text()
    assert "| list cached models | 30 (30) | not run | 1.50 s | – | yes |\n\nRun of today.\n" in text
    assert "kept" in text  # no growth.json: its table stays
    assert doc_tables.main(["--folder", str(tmp_path / "none"), "--doc", str(doc)]) == 1
