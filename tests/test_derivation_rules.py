"""derivation()'s rules the mutation run found untested: the element's name, and where "=" is proven.

Each "=" joins two forms whose decimal texts are equal as real numbers; the worked values below are checked by
hand (and with fractions), not taken from the module.
"""

from fractions import Fraction

import pytest

import pe_reference
from pe_reference import derivation


@pytest.mark.parametrize(
    "pos, dim, d_model, name",
    [(9, 9, 12, "pos₉₉"), (10, 3, 4, "pos₁₀,₃"), (1, 10, 12, "pos₁,₁₀"), (10, 10, 12, "pos₁₀,₁₀")],
)
def test_the_subscripts_are_separated_by_a_comma_once_either_has_two_digits(
    pos: int, dim: int, d_model: int, name: str
) -> None:
    assert derivation(pos, dim, d_model).split(" = ")[0] == name


def test_an_exact_power_with_exponent_one_tenth_is_marked_equal() -> None:
    # 1024**(2/20) = 1024**0.1 = 2 exactly (2**10 = 1024).
    assert "sin(1 / 1024^0.1) = sin(1 / 2) = sin(0.5)" in derivation(1, 2, 20, base=1024)


def test_an_exact_power_with_a_three_quarter_exponent_of_a_fraction_is_marked_equal() -> None:
    # 5.0625 = (3/2)**4, so 5.0625**0.75 = (3/2)**3 = 3.375 exactly; 1 / 3.375 is no terminating decimal.
    assert Fraction("5.0625") ** 3 == Fraction("3.375") ** 4
    text = derivation(1, 6, 8, base=5.0625)
    assert "sin(1 / 5.0625^0.75) = sin(1 / 3.375) ≈ sin(0.2962962962962963)" in text


def test_a_power_of_base_1_is_exact_whatever_the_exponents_denominator() -> None:
    # 2/128 = 1/64: 1**(1/64) = 1 is proven even at the largest denominator tried (64).
    assert "sin(1 / 1^0.015625) = sin(1 / 1) = sin(1)" in derivation(1, 2, 128, base=1)


def test_powers_and_quotients_in_e_notation_are_read_as_their_exact_decimals() -> None:
    # 1e+40**0.5 = 1e+20, and 1 / 1e+20 = 1e-20, both exactly.
    text = derivation(1, 2, 4, base=1e40)
    assert "sin(1 / 1e+40^0.5) = sin(1 / 1e+20) = sin(1e-20) ≈ " in text


def test_a_quotient_by_a_decimal_denominator_is_marked_equal_when_exact() -> None:
    # 6.25**0.5 = 2.5 and 5 / 2.5 = 2, both exactly.
    assert "sin(5 / 6.25^0.5) = sin(5 / 2.5) = sin(2) ≈ " in derivation(5, 2, 4, base=6.25)


@pytest.mark.parametrize("text", ["-1.5e-05", "-0.25", "-3", "2.5e3", "1e+20", "0.1"])
def test_a_decimal_text_is_read_as_the_fraction_it_writes(text: str) -> None:
    n, m = pe_reference._decimal_ratio(text)
    assert Fraction(n, m) == Fraction(text)


def test_a_whole_angle_is_written_as_an_integer_below_2_to_the_53_and_as_a_float_from_there() -> None:
    # Below 2**53 every whole float is an integer of the same value; from 2**53 on, the text says it is a float.
    assert "= sin(4503599627370498) ≈" in derivation(2**52 + 2, 0, 2)
    assert "= cos(100000000000000) ≈" in derivation(10**14, 1, 2)
    assert "= sin(9007199254740992.0) ≈" in derivation(2**53, 0, 2)
