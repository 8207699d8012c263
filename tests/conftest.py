"""The --long option, the at_size and peers markers, and hypothesis's profiles.

The mpmath reference is tests/reference.py, which sets its own precision.
"""

import os
from typing import List

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import need

# hypothesis's properties and fuzzers: a bounded run by default; HYPOTHESIS_PROFILE=long runs 25000 inputs
# a test, as in python3 -m pytest -k fuzz --hypothesis-show-statistics.
settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=25000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_addoption(parser: "pytest.Parser") -> None:
    parser.addoption("--long", action="store_true", help="also run the long exact-mode run (over 10**6 values)")


def pytest_configure(config: "pytest.Config") -> None:
    config.addinivalue_line("markers", "long: the long runs, selected with --long")
    # CI's fresh runs on the oldest and newest CPython leave these to python3's (.ci/readme.py ci): how memory
    # grows with a table is the module's, not the interpreter version's.
    config.addinivalue_line("markers", "at_size: a measure of memory on a table at the sizes models use")
    config.addinivalue_line("markers", "peers(*names): the optional peers the test needs; it skips without one")


def pytest_runtest_setup(item: "pytest.Item") -> None:
    # A test marked peers("torch", ...) skips, naming the peer and how to install it, when one is missing;
    # the other tests of its module still run (a module-level skip would take them all).
    for mark in item.iter_markers("peers"):
        for name in mark.args:
            need(name)


def pytest_collection_modifyitems(config: "pytest.Config", items: "List[pytest.Item]") -> None:
    if config.getoption("--long"):
        return
    # Deselected, not skipped: a default run reports what it ran.
    kept = [item for item in items if "long" not in item.keywords]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if "long" in item.keywords])
        items[:] = kept
