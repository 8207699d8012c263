"""The --long option, and the helper modules left out without their peers.

The mpmath reference is tests/reference.py, which sets its own precision.
"""

import importlib.util
from typing import List

import pytest

# The helper modules that import an optional peer at their top. They hold no doctest, but
# --doctest-modules imports every module under tests/: without the peer that import is a collection
# error, so they are left out. The tests that use them skip, naming the peer (tests.helpers.need).
PEER_MODULES = {"framework_tables.py": ("numpy", "torch"), "peer_tables.py": ("torch",), "rope_cases.py": ("torch",)}
collect_ignore = sorted(
    module for module, peers in PEER_MODULES.items() if any(importlib.util.find_spec(peer) is None for peer in peers)
)


def pytest_addoption(parser: "pytest.Parser") -> None:
    parser.addoption("--long", action="store_true", help="also run the long exact-mode run (over 10**6 values)")


def pytest_configure(config: "pytest.Config") -> None:
    config.addinivalue_line("markers", "long: the long runs, selected with --long")


def pytest_collection_modifyitems(config: "pytest.Config", items: "List[pytest.Item]") -> None:
    if config.getoption("--long"):
        return
    # Deselected, not skipped: a default run reports what it ran.
    kept = [item for item in items if "long" not in item.keywords]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if "long" in item.keywords])
        items[:] = kept
