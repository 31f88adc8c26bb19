"""The peak resident memory of a stretch of work, on Linux: ``/proc/self/clear_refs`` sets
the process's peak (``VmHWM``) back to its current resident memory, so the peak read after
the work is the work's own, not an earlier one's (growth.py, gui_stalls.py)."""

from __future__ import annotations


def status_mb(field: str) -> float:
    """A /proc/self/status field (VmRSS, VmHWM) in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise KeyError(field)


def reset_peak() -> bool:
    """Set the peak back to the current resident memory; False where that cannot be done
    (then an earlier, larger peak may hide the work's)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        return False
    return True
