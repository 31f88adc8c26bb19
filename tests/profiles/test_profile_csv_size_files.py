"""benchmarks/profile_csv_size.py's files: each format's real corpus file, its rows repeated
and renumbered, reads as that many launches or dispatches (so the benchmark times a real
read, not a refusal), and each is about the size asked for."""

import sys
from pathlib import Path

from explorer.profiles.reading import read_profile

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import profile_csv_size
finally:
    sys.path.pop(0)


def test_each_format_s_file_reads_as_its_copies_of_the_real_one(tmp_path):
    files = profile_csv_size.make_files(tmp_path, 0.5)
    # launches or dispatches in one copy of each source file (as the reader reads the file itself)
    one = {"ncu raw page": 3, "ncu details page": 162, "rocprof-compute": 3, "rocprofv3 trace": 7}
    sources = {"ncu raw page": profile_csv_size.RAW, "ncu details page": profile_csv_size.DETAILS,
               "rocprof-compute": profile_csv_size.PMC, "rocprofv3 trace": profile_csv_size.TRACE}
    assert set(files) == set(one)
    for name, path in files.items():
        size, copy = path.stat().st_size, sources[name].stat().st_size
        assert 0.5e6 <= size < 0.5e6 + 1.1 * copy, (name, size)  # the size asked, and a copy more at most
        kernels = len(read_profile(path).kernels)
        assert kernels % one[name] == 0 and kernels >= one[name], (name, kernels)
        assert kernels // one[name] >= size // (1.1 * copy), (name, kernels)  # every copy read
