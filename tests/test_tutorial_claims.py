"""The numbers the pages state in prose, recomputed here without pe_reference.

Each test computes a claim independently (mpmath, numpy, or plain float
arithmetic) and checks that the page states that result, and no longer the
sentence it replaced (issue 15).  The doctests beside each sentence compute
the same numbers with pe_reference; these tests guard against both drifting.
"""

import math
import re
import struct
from pathlib import Path

import mpmath
import pytest

ROOT = Path(__file__).resolve().parent.parent


def page(name: str) -> str:
    """A page's text with its lines joined, so that a phrase split across lines is found."""
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def true_value(pos: int, dim: int, d_model: int, base: int = 10000) -> "mpmath.mpf":
    angle = mpmath.mpf(pos) / mpmath.power(base, mpmath.mpf(2 * (dim // 2)) / d_model)
    return mpmath.sin(angle) if dim % 2 == 0 else mpmath.cos(angle)


# Tutorial 5: which columns of a float32 table carry the large errors.


def test_tutorial_5_names_the_columns_with_the_large_errors() -> None:
    numpy = pytest.importorskip("numpy")
    d_model, seq_len = 512, 5000
    # The page's pipeline: float32 exponent, float64 exp rounded to float32, float32 product, float64 sin rounded.
    step = float(numpy.float32(-math.log(10000.0) / d_model))
    twice_pair = (numpy.arange(d_model) // 2 * 2).astype(numpy.float64)
    exponent = (twice_pair * step).astype(numpy.float32)
    w = numpy.exp(exponent.astype(numpy.float64)).astype(numpy.float32)
    angle = (numpy.arange(seq_len, dtype=numpy.float32)[:, None] * w[None, :]).astype(numpy.float64)
    sine = numpy.arange(d_model) % 2 == 0
    got = numpy.where(sine, numpy.sin(angle), numpy.cos(angle)).astype(numpy.float32).astype(numpy.float64)
    # The reference: float64 angles of the real formula, within 1e-12 of the true values here.
    true_angle = numpy.arange(seq_len, dtype=numpy.float64)[:, None] * 10000.0 ** (-twice_pair / d_model)[None, :]
    reference = numpy.where(sine, numpy.sin(true_angle), numpy.cos(true_angle))
    worst = numpy.abs(got - reference).max(axis=0)
    middle = worst[2:14]
    last = worst[510:].max()
    # The large errors are in the first columns, the small ones in the last.
    assert middle.min() > 1000 * last
    assert true_angle[-1, -1] < 0.52
    text = page("docs/tutorial/5-precision.md")
    assert "the last columns of a 5000-position table have errors of that size" not in text
    for figure in (worst[0], worst[1], middle.min(), middle.max(), last):
        assert f"{figure:.1e}" in text, f"{figure:.1e}"
    assert 2 + int(middle.argmax()) == 8 and "the worst being column 8" in text
    assert "Rounding the frequency costs as much as rounding the angle" in text


def test_the_fast_path_examples_at_large_positions_use_a_column_that_errs() -> None:
    mpmath.mp.prec = 300
    # Column 0 divides by 10000**0 = 1: the float64 angle is the position itself, exact.
    assert 10**9 / 10000 ** (0 / 512) == 10**9
    column_0 = abs(math.sin(1e9) - true_value(10**9, 0, 512))
    assert column_0 <= 2.0**-53
    errors = {dim: float(abs(math.sin(10**9 / 10000 ** (2 * (dim // 2) / 512)) - true_value(10**9, dim, 512))) for dim in (2, 100)}
    assert errors[100] > 1e-9
    tutorial = page("docs/tutorial/5-precision.md")
    for dim, error in errors.items():
        assert f"{error:.1e}" in tutorial, (dim, f"{error:.1e}")
    # No page shows the fast path at column 0 as its error at a large position: a
    # comparison there may only say that the two agree to the last bit.
    for name in ("README.md", "docs/tutorial/5-precision.md", "docs/accuracy.md"):
        text = page(name)
        assert not re.search(r"fast, exact = value\(10\*\*[69], 0, 512\)", text), name
        for bound in re.findall(r"abs\(value\(10\*\*[69], 0, 512\) - [^<]*< ([0-9.e-]+)", text):
            assert float(bound) <= 1e-15, (name, bound)


def test_accuracy_page_adds_the_denominator_to_the_half_ulp() -> None:
    mpmath.mp.prec = 300
    # The table's worst element at 10**9: the fast formula against mpmath.
    pos, dim = 10**9 + 9, 4
    angle = pos / 10000 ** (4 / 512)
    error = abs(math.sin(angle) - true_value(pos, dim, 512))
    half_ulp = 2.0 ** (math.frexp(angle)[1] - 54)
    assert error > 1.5 * half_ulp
    text = page("docs/accuracy.md")
    assert f"{float(error):.2e}" in text and f"{half_ulp:.1e}" in text
    # The sentence no longer bounds the error by the half ulp alone.
    assert "an absolute error of up to half an ulp of the angle, which grows with the position" not in text
    assert "the denominator's relative error, times the angle, adds to the division's" in text
