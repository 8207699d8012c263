"""The --long option, and the at_size marker.

The mpmath reference is tests/reference.py, which sets its own precision.
"""

from typing import List

import pytest


def pytest_addoption(parser: "pytest.Parser") -> None:
    parser.addoption("--long", action="store_true", help="also run the long exact-mode run (over 10**6 values)")


def pytest_configure(config: "pytest.Config") -> None:
    config.addinivalue_line("markers", "long: the long runs, selected with --long")
    # CI's fresh runs on the oldest and newest CPython leave these to python3's (.ci/readme.py ci): how memory
    # grows with a table is the module's, not the interpreter version's.
    config.addinivalue_line("markers", "at_size: a measure of memory on a table at the sizes models use")


def pytest_collection_modifyitems(config: "pytest.Config", items: "List[pytest.Item]") -> None:
    if config.getoption("--long"):
        return
    # Deselected, not skipped: a default run reports what it ran.
    kept = [item for item in items if "long" not in item.keywords]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if "long" in item.keywords])
        items[:] = kept
