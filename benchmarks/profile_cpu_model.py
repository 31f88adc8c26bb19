"""A real profile of a real model on this machine's CPU: GPT-2 small (transformers'
``GPT2LMHeadModel`` built from its released configuration, random weights: time and work do
not depend on their values), fp32, batch 1, decoding one token after a prompt of
``--context`` − 1 tokens, so each profiled step attends ``--context`` positions. The cache is
cut back after every step, so the ``--steps`` profiled steps are the same step.

The trace is PyTorch's profiler output (Kineto chrome-trace JSON, gzipped) with
``record_shapes=True``; ``roofline-explorer profile`` and ``analyze --profile`` read it.
tests/data/pytorch-cpu/ holds one made by this script (its README says on which machine).

Needs torch and transformers, which the app does not (kept out of its dependencies):

    python -m venv /tmp/tvenv && /tmp/tvenv/bin/pip install torch transformers
    /tmp/tvenv/bin/python benchmarks/profile_cpu_model.py --out gpt2-decode.pt.trace.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile
from transformers import DynamicCache, GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--context", type=int, default=512, help="positions each step attends (default 512)")
    parser.add_argument("--steps", type=int, default=4, help="decode steps profiled (default 4)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="torch threads (default: all)")
    parser.add_argument("--out", required=True, help="the trace to write (.json.gz)")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = GPT2LMHeadModel(GPT2Config()).eval()  # GPT2Config() is the released gpt2's shape
    prompt = torch.randint(0, model.config.vocab_size, (1, args.context - 1))
    token = torch.randint(0, model.config.vocab_size, (1, 1))
    with torch.inference_mode():
        cache = DynamicCache()
        model(prompt, cache=cache, use_cache=True)

        def step() -> None:
            model(token, cache=cache, use_cache=True)
            cache.crop(-1)  # the token just cached: the next step sees the same context

        for _ in range(3):  # warm-up: first calls allocate and pick their kernels
            step()
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            for _ in range(args.steps):
                step()
    with tempfile.TemporaryDirectory() as folder:
        plain = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(plain)
        with open(plain, encoding="utf-8") as handle:
            trace = json.load(handle)
    trace["roofline_explorer"] = {
        "model": "gpt2", "phase": "decode", "batch": 1, "context": args.context, "dtype": "fp32",
        "steps": args.steps, "threads": args.threads, "torch": torch.__version__,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs"}
    with gzip.open(args.out, "wt", encoding="utf-8") as handle:
        json.dump(trace, handle, separators=(",", ":"))
    print(f"wrote {args.out}: {args.steps} decode step(s) of gpt2 at context {args.context}")


if __name__ == "__main__":
    main()
