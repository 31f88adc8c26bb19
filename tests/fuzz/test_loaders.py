"""Every loader survives mutated files: it either loads a valid object or raises its own
``DataFileError`` naming the file (and, where there is one, the entry and field), within a
second; what loads also analyses within a second. Nothing else escapes.

Profiles (tests/conftest.py): ``ci`` by default, a few hundred examples per loader and
mutation kind; ``long`` (``make fuzz``) at least 50,000 per loader.
"""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.analysis.expected import expected
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.catalog import load_hardware_file
from explorer.core.hardware.efficiency import read_efficiencies
from explorer.core.hardware.operation_energy import read_operations
from explorer.core.model.hf_config import CONFIG_MODEL, read_config_file
from explorer.core.model.presets import load_model_file
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.core.model.session import Session, load_session, load_workload, save_workload
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.words.scenes import load_scene_file
from explorer.core.words.why import load_topics
from explorer.document import Document
from explorer.kernels.results import Point, Results, load_results
from explorer.paths import resource_path
from explorer.profiles.kineto import read_kineto
from tests.core.test_hf_config import MIXTRAL_8X7B
from tests.profiles.test_cpu_ops import linear_trace as cpu_trace
from tests.profiles.test_kineto import trace as kineto_trace
from tests.timeouts import no_block, no_hang

from .mutate import mutated

LIMIT_S = 1.0


def _session_text(tmp: Path) -> str:
    from explorer.core.model.custom import Layer
    from explorer.core.model.session import WhatIf

    session = Session(hardware=("h100-sxm", "epyc-9654"), model="custom",
                      params=WorkloadParams(phase="prefill", batch=4, seq=256),
                      custom_layers=(Layer("embedding", (("vocab", 1000), ("d", 256))),
                                     Layer("attention", (("d_model", 256), ("heads", 4), ("kv_heads", 2)),
                                           repeat=2),
                                     Layer("mlp", (("d_model", 256), ("width", 1024)), repeat=2)),
                      what_ifs=(("h100-sxm", WhatIf(1.5, (("bf16 matrix", 0.8),))),),
                      precisions=("bf16", "fp32"), selected_op="L1.qkv_proj",
                      profile=Profile("Nsight Compute (CSV, raw page)", "run.csv",
                                      (ProfiledKernel("gemm", 2e-3, {"fp16": 8_000}, {"dram": 64, "l2": 128},
                                                      2, 3),
                                       ProfiledKernel("other", 1e-5, launches=4)), ("a note",)))
    session.save(tmp / "s.yaml")
    return (tmp / "s.yaml").read_text()


def _results_text(tmp: Path) -> str:
    point = Point(suite="stream", kernel="triad", dtype="fp32", size={"n": 1000}, param={"threads": 2},
                  flops=2000, bytes=12000, time_median_s=1e-6, time_p20_s=0.9e-6, time_p80_s=1.2e-6,
                  convention="STREAM")
    Results(machine={"backend": "numpy"}, timer="perf_counter", preset="quick", suites=("stream",),
            points=(point, point)).save(tmp / "r.json")
    return (tmp / "r.json").read_text()


def _workload_text(tmp: Path) -> str:
    save_workload(tmp / "w.yaml", Session(model="llama-3-8b", params=WorkloadParams(batch=8)))
    return (tmp / "w.yaml").read_text()


def _analyse_session(session, catalog, models) -> None:
    with contextlib.suppress(WorkloadError):  # the analysis's own message, shown to the user
        Document(catalog, models, session).analysis()


def loaders(catalog, models, tmp: Path):
    """name → (valid text, "yaml" or "json", load(path) that also analyses what loaded)."""
    topic_ids = {t.id for t in load_topics(catalog, models=models)}

    def session(path):  # each returns what it loaded (test_huge_numbers looks into it)
        loaded = load_session(path, set(catalog), set(models))
        _analyse_session(loaded, catalog, models)
        return loaded

    def model_config(path):
        config = read_config_file(path).config
        _analyse_session(Session(model=CONFIG_MODEL, model_config=config), catalog, models)
        return config

    def efficiency(path):  # a user's or calibrated profile, then an expected time with it
        families = read_efficiencies(path)
        for family in families:
            a = Document(catalog, models, Session(hardware=("h100-sxm",))).analysis()
            expected(a, family)
        return families

    def workload(path):
        loaded = load_workload(path, set(models))
        model, params, layers, config = loaded
        _analyse_session(Session(model=model, params=params, custom_layers=layers, model_config=config),
                         catalog, models)
        return loaded

    return {
        "hardware": (resource_path("hardware", "h100-sxm.yaml").read_text(), "yaml", load_hardware_file),
        "models": (resource_path("models", "llama-3.yaml").read_text(), "yaml", load_model_file),
        "scenes": (resource_path("scenes", "02-decode-batching.yaml").read_text(), "yaml",
                   lambda path: load_scene_file(path, catalog, models, topic_ids)),
        "session": (_session_text(tmp), "yaml", session),
        "workload": (_workload_text(tmp), "yaml", workload),
        "results": (_results_text(tmp), "json", load_results),
        "why": (resource_path("explain", "why.yaml").read_text(), "yaml",
                lambda path: load_topics(catalog, path, models)),
        "model_config": (json.dumps(MIXTRAL_8X7B), "json", model_config),
        "efficiency": (resource_path("efficiency", "published.yaml").read_text(), "yaml", efficiency),
        "kineto": (json.dumps(kineto_trace()), "json", read_kineto),
        "kineto_cpu": (json.dumps(cpu_trace()), "json", read_kineto),
        "operations": (resource_path("energy", "operations.yaml").read_text(), "yaml", read_operations),
    }


NAMES = ["hardware", "models", "scenes", "session", "workload", "results", "why", "model_config",
         "efficiency", "kineto", "kineto_cpu", "operations"]


def check(load, path: Path):
    """The loader's own outcome only: a value (returned), or a DataFileError naming the
    file (None)."""
    try:
        with no_hang(LIMIT_S), no_block():
            return load(path)
    except DataFileError as exc:
        assert str(path) in str(exc)
    return None


def _dump(tree, kind: str) -> str:
    if kind == "json":
        return json.dumps(tree)
    return yaml.safe_dump(tree, allow_unicode=True, sort_keys=False)


FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", NAMES)
def test_mutated_files_load_or_are_refused_with_the_field(name, cases, tmp_path):
    text, kind, load = cases[name]
    original = json.loads(text) if kind == "json" else yaml.safe_load(text)
    path = tmp_path / f"fuzzed.{kind}"

    @FUZZ
    @given(mutated(original))
    def run(tree):
        path.write_text(_dump(tree, kind), encoding="utf-8")
        check(load, path)

    run()


@pytest.mark.parametrize("name", NAMES)
def test_files_cut_short_load_or_are_refused(name, cases, tmp_path):
    """A copy that stopped anywhere (a full disk, a crash), at a byte (a character may be
    cut in half): every end when the profile runs as many examples as there are ends (the
    long one does), else an even sample of them."""
    text, kind, load = cases[name]
    data = text.encode("utf-8")
    path = tmp_path / f"cut.{kind}"
    ends = range(len(data) + 1)
    budget = settings.default.max_examples
    if budget < len(ends):
        ends = sorted(random.Random(name).sample(ends, budget))
    for end in ends:
        path.write_bytes(data[:end])
        check(load, path)


def _special(kind: str, path: Path) -> None:
    """Put a file that is not a regular file (or leads nowhere) at ``path``."""
    import os
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind in ("device", "endless"):
        path.symlink_to("/dev/null" if kind == "device" else "/dev/zero")
    elif kind == "symlink loop":
        path.symlink_to(path)
    elif kind == "dangling symlink":
        path.symlink_to(path.with_name("gone"))


SPECIAL = {"fifo": "is a named pipe (FIFO)", "folder": "is a folder", "device": "is a character device",
           "endless": "is a character device", "symlink loop": "Too many levels of symbolic links",
           "dangling symlink": "No such file or directory"}


@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize("name", NAMES)
def test_special_files_are_refused_by_name_at_once(name, kind, cases, tmp_path):
    """A FIFO would block an open() forever and /dev/zero never ends: every loader refuses
    what is not a regular file, naming it, without waiting or reading."""
    _, kind_of_file, load = cases[name]
    path = tmp_path / f"special.{kind_of_file}"
    _special(kind, path)
    with no_block(), no_hang(LIMIT_S), pytest.raises(DataFileError) as caught:
        load(path)
    assert caught.value.file == str(path) and SPECIAL[kind] in caught.value.reason


@pytest.mark.parametrize("name", NAMES)
def test_bytes_that_are_not_utf8_are_refused_with_the_file(name, cases, tmp_path):
    text, kind, load = cases[name]
    data = text.encode("utf-8")
    path = tmp_path / f"bytes.{kind}"

    @FUZZ
    @given(st.integers(0, len(data)), st.binary(min_size=1, max_size=8))
    def run(at, inserted):
        path.write_bytes(data[:at] + inserted + data[at:])
        check(load, path)

    run()
    path.write_bytes(b"\xff\xfe" + data)  # UTF-16's mark: no UTF-8 file starts so
    with pytest.raises(DataFileError, match="is not UTF-8 text") as caught:
        load(path)
    assert caught.value.file == str(path)


@pytest.mark.parametrize("name", [n for n in NAMES
                                  if n not in ("model_config", "results", "kineto", "kineto_cpu")])
def test_an_alias_bomb_under_any_count_limit_is_refused(name, cases, tmp_path):
    """Eight levels of ten aliases each (80 aliases, 10^9 values once expanded), added to a
    valid file: refused on reading, before anything is built."""
    text, _, load = cases[name]
    lines = ["bomb0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"bomb{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    sealed = text.endswith("# end\n")  # the bomb goes before the seal of a file the app wrote
    body = text.removesuffix("# end\n")
    path.write_text(body.rstrip("\n") + "\n" + "\n".join(lines) + "\n" + "# end\n" * sealed)
    with no_hang(LIMIT_S), pytest.raises(DataFileError, match="aliases expand it to more than"):
        load(path)
