"""Every test under lab/ carries the ``lab`` marker, so ``pytest -m "not lab"`` leaves the lab out."""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.lab)
