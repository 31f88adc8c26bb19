"""``--model-config model.gguf``: the commands that take a model analyse a GGUF file with its
weights at the bytes its tensors take; export draws it (a session holds the file by reference)."""

import json
from pathlib import Path

from .test_cli import run

TINY = Path(__file__).parents[1] / "data" / "third_party" / "ollama" / "llama-2-tiny-random.gguf"


def test_analyze_holds_the_file_s_bytes():
    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model-config", str(TINY), "--json")
    report = json.loads(out)
    assert code == 0
    assert report["workload"]["parameters"] == 513_048  # the tensors' elements
    assert report["totals"]["weight_bytes"] == 1_026_144  # F16 tensors and F32 norms, as stored
    assert any("GGUF F16 file" in note for note in report["notes"])


def test_export_draws_a_gguf_file_s_model(tmp_path):
    """A session holds a GGUF file by reference (``gguf_models``), so export draws it."""
    code, _, err = run("export", "--model-config", str(TINY), "--out", str(tmp_path / "c.svg"))
    assert code == 0, err
    assert "LLaMA v2 on H100 SXM: decode, batch 1" in (tmp_path / "c.svg").read_text()
