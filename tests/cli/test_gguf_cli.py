"""``--model-config model.gguf``: the commands that take a model analyse a GGUF file with its
weights at the bytes its tensors take; export, which draws a session, says it cannot keep one."""

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


def test_export_says_a_gguf_file_cannot_be_kept_in_a_session(tmp_path):
    code, _, err = run("export", "--model-config", str(TINY), "--out", str(tmp_path / "c.svg"))
    assert code == 2 and "GGUF file" in err and not (tmp_path / "c.svg").exists()
