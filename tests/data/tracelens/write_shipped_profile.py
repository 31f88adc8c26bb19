"""Write the profiles the scene "Your model, measured" shows (resources/profiles/runs/), from
the traces beside this file, as a session keeps a profile (its kernels by name and product
shape). Run from the repository root after a change to the trace reader:

    python tests/data/tracelens/write_shipped_profile.py

tests/profiles/test_shipped_profile.py fails while a shipped file differs from what this writes.
"""

import textwrap
from pathlib import Path

import yaml

from explorer.core.model.profile import profile_to_dict
from explorer.profiles.reading import read_profile

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "resources" / "profiles" / "runs"
# name → (the GPU as the trace names it, its folder in TraceLens, the software that ran it)
RUNS = {"qwen1.5-0.5b-chat-h100": ("an NVIDIA H100 80GB HBM3", "h100",
                                   "PyTorch 2.6 (CUDA 12.4), eager, SDPA's FlashAttention 2"),
        "qwen1.5-0.5b-chat-mi300x": ("an AMD Instinct MI300X (VF)", "mi300",
                                     "PyTorch 2.7 (ROCm 6.4), eager, SDPA's attn_fwd kernel")}
ABOUT = ("One forward pass of Qwen1.5 0.5B (Qwen2Model, no output head; bf16, 16 prompts of 559 "
         "tokens; {software}) on {gpu}, as the PyTorch profiler recorded it, read by this app "
         "(explorer/profiles/kineto.py) and kept as a session keeps a profile: its kernels by name and "
         "product shape. The trace is tests/data/tracelens/{name}.pt.trace.json.gz, from TraceLens "
         "(https://github.com/AMD-AGI/TraceLens, tests/traces/{folder}/, commit 674f387), whose traces "
         "are for testing and education, not official performance figures. "
         "tests/profiles/test_shipped_profile.py keeps this file equal to what the app reads from the "
         "trace; tests/data/tracelens/README.md says how to write it again.")
LICENCE = """\
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


def trace(name: str) -> Path:
    return Path(__file__).with_name(f"{name}.pt.trace.json.gz")


def header(name: str) -> str:
    """The file's opening comment: where the profile comes from, and the trace's licence."""
    gpu, folder, software = RUNS[name]
    about = ABOUT.format(name=name, gpu=gpu, folder=folder, software=software)
    lines = textwrap.wrap(about, 90, break_long_words=False, break_on_hyphens=False)
    return "".join(f"# {line}\n" for line in lines) + "#\n" + LICENCE


def shipped_form(name: str) -> dict:
    """What the app reads from the trace, as a session keeps it."""
    return profile_to_dict(read_profile(trace(name)))


def main() -> None:
    for name in RUNS:
        body = yaml.safe_dump(shipped_form(name), sort_keys=False, width=100, allow_unicode=True)
        path = SHIPPED / f"{name}.yaml"
        path.write_text(header(name) + body, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
