"""The valid file of every format the loader fuzz covers (``test_loaders.loaders``), shared
by its tests and by test_huge_numbers."""

import pytest


@pytest.fixture(scope="module")
def cases(catalog, models, tmp_path_factory):
    from .test_loaders import loaders
    return loaders(catalog, models, tmp_path_factory.mktemp("valid"))
