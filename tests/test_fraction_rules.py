"""Exact numbers' rules the mutation run found untested: reading, converting and writing back fractions.

Expected values come from fractions.Fraction (Python's float(Fraction) is correctly rounded) and from hand.
"""

import random
import struct
from fractions import Fraction

import pytest

import pe_reference
from pe_reference import Convention


def ulp(x: float) -> float:
    """math.ulp(x) (Python 3.9+), on 3.8 too: the gap from |x| to the next float away from zero."""
    bits = struct.unpack("<q", struct.pack("<d", abs(x)))[0]
    return float(struct.unpack("<d", struct.pack("<q", bits + 1))[0]) - abs(x)


@pytest.mark.parametrize(
    "numerator_bits, denominator_bits",
    [(65, 1001), (1001, 65), (64, 1001), (1001, 64), (66, 1100), (1080, 66), (1050, 1040), (1, 1010), (1010, 1)],
)
def test_a_fraction_with_a_part_past_2_to_the_1000_converts_to_within_an_ulp_of_its_value(
    numerator_bits: int, denominator_bits: int
) -> None:
    generator = random.Random(numerator_bits * 10007 + denominator_bits)
    for _ in range(20):
        n = generator.getrandbits(numerator_bits) | 1 << (numerator_bits - 1)
        m = generator.getrandbits(denominator_bits) | 1 << (denominator_bits - 1)
        for sign in (1, -1):
            got = pe_reference._to_float((sign * n, m))
            want = float(Fraction(sign * n, m))
            assert abs(got - want) <= ulp(want), (n, m)


@pytest.mark.parametrize(
    "text, value",
    [
        ("+2.5", Fraction(5, 2)),
        ("+500", Fraction(500)),
        ("+1e-3", Fraction(1, 1000)),
        ("-2.5", Fraction(-5, 2)),
        ("+1/3", Fraction(1, 3)),
    ],
)
def test_a_decimal_may_carry_a_sign_and_a_plus_changes_nothing(text: str, value: Fraction) -> None:
    n, m = pe_reference._rational("start", text)
    assert Fraction(n, m) == value
    assert Fraction(str(Convention(start=text).start)) == value


@pytest.mark.parametrize(
    "given",
    [
        Fraction(-(2**53 + 1), 2),
        Fraction(2**53 + 1, 2),
        Fraction(-(2**54 - 1), 4),
        Fraction(-(2**53 - 1), 2),
        Fraction(-3, 2**1074),
        Fraction(7, 2**60),
        Fraction(-5, 8),
    ],
)
def test_a_conventions_number_reads_back_as_exactly_what_was_given(given: Fraction) -> None:
    # A float when one holds it exactly, else its decimal or n/m text: either way the same number.
    start = Convention(start=given).start
    assert Fraction(start) == given, start


def test_a_fraction_needing_more_than_30_decimal_places_is_written_as_n_over_m() -> None:
    # 1/2**30 has 30 decimal places; 1/2**31 would need 31.
    assert "p = 0.000000000931322574615478515625, " in str(Convention(start=Fraction(1, 2**30)))
    assert "p = 1/2147483648, 2147483649/2147483648, " in str(Convention(start=Fraction(1, 2**31)))
    assert "p = 1/3, 4/3, 7/3, ..." in str(Convention(start="1/3"))


class OnlyAnIndex:
    """An integer-like object with __index__ and nothing else (no numerator, no as_integer_ratio)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


def test_a_number_known_only_by_its_index_is_that_integer() -> None:
    convention = Convention(base=OnlyAnIndex(100), start=OnlyAnIndex(3))
    assert convention.base == 100 and convention.start == 3
    assert pe_reference.encoding(2, 4, base=OnlyAnIndex(100)) == pe_reference.encoding(2, 4, base=100)
