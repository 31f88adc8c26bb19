"""Write resources/profiles/runs/qwen1.5-0.5b-chat-h100.yaml, the profile the scene "Your model,
measured" shows, from the trace beside this file, as a session keeps a profile (its kernels
by name and product shape). Run from the repository root after a change to the trace reader:

    python tests/data/tracelens/write_shipped_profile.py

tests/profiles/test_shipped_profile.py fails while the shipped file differs from what this writes.
"""

from pathlib import Path

import yaml

from explorer.core.profile import profile_to_dict
from explorer.profiles.reading import read_profile

ROOT = Path(__file__).resolve().parents[3]
TRACE = Path(__file__).with_name("qwen1.5-0.5b-chat-h100.pt.trace.json.gz")
SHIPPED = ROOT / "resources" / "profiles" / "runs" / "qwen1.5-0.5b-chat-h100.yaml"
HEADER = """\
# One forward pass of Qwen1.5 0.5B (Qwen2Model, no output head; bf16, 16 prompts of 559
# tokens, PyTorch 2.6 eager with SDPA's FlashAttention) on an NVIDIA H100 80GB HBM3, as the
# PyTorch profiler recorded it, read by this app (explorer/profiles/kineto.py) and kept as a
# session keeps a profile: its kernels by name and product shape. The trace is
# tests/data/tracelens/qwen1.5-0.5b-chat-h100.pt.trace.json.gz, from TraceLens
# (https://github.com/AMD-AGI/TraceLens, tests/traces/h100/, commit 674f387), whose traces
# are for testing and education, not official performance figures. tests/profiles/test_shipped_profile.py
# keeps this file equal to what the app reads from the trace; tests/data/tracelens/README.md
# says how to write it again.
#
# MIT License. Copyright (c) 2024 - 2025 Advanced Micro Devices, Inc. All rights reserved.
# Permission is hereby granted, free of charge, to any person obtaining a copy of this software
# and associated documentation files (the "Software"), to deal in the Software without
# restriction, including without limitation the rights to use, copy, modify, merge, publish,
# distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
# Software is furnished to do so, subject to the following conditions: The above copyright
# notice and this permission notice shall be included in all copies or substantial portions of
# the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
# PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE
# LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
# OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
# DEALINGS IN THE SOFTWARE.
"""


def shipped_form() -> dict:
    """What the app reads from the trace, as a session keeps it."""
    return profile_to_dict(read_profile(TRACE))


def main() -> None:
    body = yaml.safe_dump(shipped_form(), sort_keys=False, width=100, allow_unicode=True)
    SHIPPED.write_text(HEADER + body, encoding="utf-8")
    print(f"wrote {SHIPPED}")


if __name__ == "__main__":
    main()
