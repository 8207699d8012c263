"""Shared helpers: an independent high-precision reference built on mpmath."""

from typing import List

import mpmath
import pytest

# 300 bits: far beyond float64, so a reference value's own error is invisible.
mpmath.mp.prec = 300


def exact_element(pos: int, dim: int, d_model: int, base: float = 10000.0) -> "mpmath.mpf":
    """The true real PE(pos, dim): sin or cos of pos / base**(2i/d_model), i = dim // 2."""
    pair = dim // 2
    angle = mpmath.mpf(pos) / mpmath.power(mpmath.mpf(base), mpmath.mpf(2 * pair) / d_model)
    return mpmath.sin(angle) if dim % 2 == 0 else mpmath.cos(angle)


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
