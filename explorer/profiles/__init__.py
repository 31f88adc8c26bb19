"""Profiles of real runs, read offline: each kernel's time, FLOPs by precision and bytes by
memory level (``profile.Profile``), from Nsight Compute CSV exports (``ncu``). Qt-free."""
