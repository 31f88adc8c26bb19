"""A device's hash is worked out once (charts look devices up in their caches on every
frame) and behaves as a frozen dataclass's: equal devices hash alike, a changed field
gives another device, and a pickle carries no hash (a text's differs between processes)."""

import pickle
import subprocess
import sys
from dataclasses import replace

from explorer.core.hardware.catalog import load_catalog


def test_equal_devices_hash_alike_and_a_changed_one_is_another():
    hw = load_catalog()["h100-sxm"]
    assert hash(hw) == hash(replace(hw, notes=hw.notes)) == hash(replace(hw, origin="elsewhere.yaml"))
    changed = replace(hw, name="H100 SXM (what-if)")
    assert changed != hw and len({hw, changed}) == 2
    assert {hw: 1}[replace(hw)] == 1


def test_a_pickled_device_carries_no_hash_into_another_process():
    hw = load_catalog()["h100-sxm"]
    hash(hw)
    data = pickle.dumps(hw)
    assert "_hash" not in pickle.loads(data).__dict__
    code = ("import pickle, sys; from explorer.core.hardware.catalog import load_catalog; "
            "hw = pickle.loads(sys.stdin.buffer.read()); "
            "print(hash(hw) == hash(load_catalog()['h100-sxm']))")
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""})
    assert out.stdout.strip() == b"True"
