"""Protocols are enums beside their owner, never strings (docs/architecture.md): no module
compares a phase, a link tier, a kind or a suite preset with a string literal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

EXPLORER = Path(__file__).resolve().parent.parent / "explorer"
NAMES = r"(?:phase|tier|kind|preset)"
QUOTE = r"[rbfu]?[\"']"
PATTERNS = (
    re.compile(rf"\b{NAMES}\s*(?:==|!=)\s*{QUOTE}"),  # phase == "train", link.tier != "node"
    re.compile(rf"[\"'][\w\-. ]*[\"']\s*(?:==|!=)\s*[\w.]*\b{NAMES}\b"),  # "smoke" == preset
    re.compile(rf"\b{NAMES}\s+(?:not\s+)?in\s+[(\[{{]\s*{QUOTE}"),  # kind in ("attention", "mlp")
)


def string_comparisons() -> list[str]:
    found = []
    for path in sorted(EXPLORER.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(p.search(line) for p in PATTERNS):
                found.append(f"{path.relative_to(EXPLORER.parent)}:{number}: {line.strip()}")
    return found


def test_no_phase_tier_kind_or_preset_is_compared_with_a_string():
    found = string_comparisons()
    assert not found, "compare with the enum, not a string:\n" + "\n".join(found)


def test_the_patterns_catch_what_they_are_for():
    for line in ('if params.phase == "train":', "x = 1 if link.tier != 'node' else 2",
                 'elif layer.kind in ("attention", "mlp"):', 'if "smoke" == preset:',
                 'if kind not in {"png", "pdf"}:'):
        assert any(p.search(line) for p in PATTERNS), line
    for line in ("if params.phase == Phase.TRAIN:", "if p.kind in (Kind.COUNT, Kind.SHARE):",
                 'PRESETS = ("smoke", "quick", "full")'):
        assert not any(p.search(line) for p in PATTERNS), line


def test_files_hold_the_plain_values_and_read_them_back_as_enums(tmp_path, catalog, models):
    from explorer.core.files.datafile import DataFileError
    from explorer.core.hardware.catalog import hardware_to_dict
    from explorer.core.hardware.hardware import Tier
    from explorer.core.model.applicability import Phase
    from explorer.core.model.custom import Layer, LayerKind
    from explorer.core.model.session import Session, load_session
    from explorer.core.model.workload import WorkloadParams
    from explorer.kernels.cases import Preset
    from explorer.kernels.results import Results, load_results

    layers = (Layer("attention", (("d_model", 1024), ("heads", 16), ("kv_heads", 4))), Layer("norm"))
    session = Session(model="custom", custom_layers=layers, params=WorkloadParams(phase="train"))
    assert session.params.phase is Phase.TRAIN and layers[0].kind is LayerKind.ATTENTION
    path = tmp_path / "train.yaml"
    session.save(path)  # yaml.safe_dump refuses a str subclass: the file holds plain strings
    assert "phase: train" in path.read_text() and "kind: attention" in path.read_text()
    loaded = load_session(path, set(catalog), set(models))
    assert loaded == session and loaded.params.phase is Phase.TRAIN
    assert loaded.custom_layers[0].kind is LayerKind.ATTENTION

    link = next(link for hw in catalog.values() for link in hw.links if link.tier is Tier.NODE)
    entry = next(hw for hw in catalog.values() if link in hw.links)
    assert {x["tier"] for x in hardware_to_dict(entry)["links"]} <= {t.value for t in Tier}
    assert all(type(x["tier"]) is str for x in hardware_to_dict(entry)["links"])

    results = Results({"backend": "numpy"}, "perf_counter_ns", "smoke", ("stream",), ())
    assert results.preset is Preset.SMOKE and type(results.to_dict()["preset"]) is str
    results.save(tmp_path / "r.json")
    assert load_results(tmp_path / "r.json").preset is Preset.SMOKE
    (tmp_path / "r.json").write_text((tmp_path / "r.json").read_text().replace('"smoke"', '"tiny"'))
    with pytest.raises(DataFileError, match="preset"):
        load_results(tmp_path / "r.json")
