"""The float64 path's rules the mutation run found untested."""

import mpmath
import pytest

from pe_reference import encoding, rows


@pytest.mark.parametrize("layout", ["cos-sin", "sin-cos", "interleaved"])
def test_the_fast_path_of_an_odd_width_rounded_up_drops_the_last_column_of_the_wider_table(layout: str) -> None:
    # d = 5 rounded up is the table of 6 columns (3 pairs, exponents 2i/6) without its last column: in cos-sin
    # that is the last sine, so the row keeps three cosines and two sines.
    with mpmath.workprec(120):
        w = [mpmath.power(10000, -mpmath.mpf(2 * i) / 6) for i in range(3)]
        for p in range(6):
            sines = [mpmath.sin(p * x) for x in w]
            cosines = [mpmath.cos(p * x) for x in w]
            wide = {
                "cos-sin": cosines + sines,
                "sin-cos": sines + cosines,
                "interleaved": [v for s, c in zip(sines, cosines) for v in (s, c)],
            }[layout]
            got = encoding(6, 5, layout=layout, odd="round-up")[p]
            assert len(got) == 5
            for value, want in zip(got, wide[:5]):
                assert abs(value - want) <= 1e-15, (p, got)
            assert list(rows(6, 5, layout=layout, odd="round-up"))[p] == got
