"""Test setup shared by every test.

Qt must run offscreen: without a display and without this, Qt aborts the whole
run (rc 134) instead of failing a test.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from explorer.core.catalog import load_catalog
from explorer.core.models import load_models


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(scope="session")
def models():
    return load_models()
