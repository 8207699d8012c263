"""derivation(): every '=' joins forms equal as real numbers; '≈' forms are close."""

import random
import re
from fractions import Fraction
from typing import List, Tuple

import mpmath
import pytest

import pe_reference
from pe_reference import derivation, value

NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
# Far beyond float64, so that the reference's own error is invisible; set where used, never globally.
PRECISION = 300


def evaluate(form: str) -> "mpmath.mpf":
    """Evaluate one form of a derivation at 300 bits, reading every number as a decimal."""
    expression = NUMBER.sub(lambda match: f"mpf('{match.group()}')", form).replace("^", "**")
    with mpmath.workprec(PRECISION):
        return eval(expression, {"sin": mpmath.sin, "cos": mpmath.cos, "mpf": mpmath.mpf})


def steps(text: str) -> Tuple[str, List[str], List[str]]:
    pieces = re.split(r" (=|≈) ", text)
    return pieces[0], pieces[2::2], pieces[1::2][1:]


def check(text: str) -> List[str]:
    """Check each relation of a derivation; return the relations."""
    name, forms, relations = steps(text)
    assert name.startswith("pos")
    function = {"sin": mpmath.sin, "cos": mpmath.cos}[forms[0][:3]]
    # Every form but the last is function(angle): compare the angles, since a
    # rounded angle's error is relative to the angle, not to its sine.
    angles = [evaluate(form[4:-1]) for form in forms[:-1]]
    with mpmath.workprec(PRECISION):
        for left, right, relation in zip(angles, angles[1:], relations):
            if relation == "=":
                assert left == right, text
            else:
                assert abs(left - right) <= 1e-12 * abs(left), text
        exact, shown = function(angles[-1]), evaluate(forms[-1])
        if relations[-1] == "=":
            assert exact == shown, text
        else:
            # The shown angle is the shortest decimal of the float64 angle, up to
            # half an ulp away from it; sin and cos then move by as much.
            assert abs(exact - shown) <= 2.0**-52 * (1 + abs(angles[-1])), text
    return relations


def test_sixteen_d4_derivations_are_true_and_exact_where_exact() -> None:
    for pos in range(4):
        for dim in range(4):
            relations = check(derivation(pos, dim, 4))
            # Exponent 0 or 1/2, denominator 1 or 100, angle pos or pos/100:
            # all exact; only the sine or cosine of a non-zero angle rounds.
            assert relations == ["=", "=", "=", "=" if pos == 0 else "≈"]


def test_sixteen_d4_values_are_correctly_rounded() -> None:
    # The doctests print these in full: they must be the correctly rounded
    # sin/cos of the float64 angle, which every good libm gives.
    for pos in range(4):
        for dim in range(4):
            with mpmath.workprec(PRECISION):
                angle = mpmath.mpf(pos / (1.0 if dim < 2 else 100.0))  # the float64 angle, exact in mpmath
                exact = (mpmath.sin if dim % 2 == 0 else mpmath.cos)(angle)
            with mpmath.workprec(53):
                nearest = float(+exact)
            assert value(pos, dim, 4) == nearest


def test_random_derivations_are_true() -> None:
    generator = random.Random(7)
    for _ in range(300):
        d_model = generator.choice([1, 2, 3, 4, 6, 8, 10, 12, 16, 100, 512, 777])
        dim = generator.randrange(d_model)
        pos = generator.choice([0, 1, 2, generator.randrange(10**4), generator.randrange(10**12)])
        base = generator.choice([10000.0, 500000.0, 100.0, 16.0, 2.5, 0.5, 10000.5])
        check(derivation(pos, dim, d_model, base=base))


@pytest.mark.parametrize(
    "args, relations",
    [
        ((1, 2, 6), ["≈", "≈", "≈", "≈"]),  # 2/6 is no decimal
        ((1, 2, 8), ["=", "=", "=", "≈"]),  # 10000^0.25 = 10 exactly
        ((3, 2, 8), ["=", "=", "=", "≈"]),  # 3 / 10 = 0.3 as decimals, though float64 rounds it
        ((5, 0, 3), ["=", "=", "=", "≈"]),
        ((0, 5, 6), ["≈", "≈", "=", "="]),
        ((7, 1, 2), ["=", "=", "=", "≈"]),
        (
            (1, 2, 4 * 10**6),
            ["=", "≈", "≈", "≈"],
        ),  # 2/4e6 = 5e-07 exactly; its power is not  # 0 / anything = 0, cos(0) = 1
    ],
)
def test_relations_mark_rounding(args: Tuple[int, int, int], relations: List[str]) -> None:
    assert check(derivation(*args)) == relations


# ---------------------------------------------------------------------------
# The derivation's names, and where '=' is proven
# ---------------------------------------------------------------------------


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
    n, m = pe_reference._parse_number("", text)
    assert Fraction(n, m) == Fraction(text)


def test_a_whole_angle_is_written_as_an_integer_below_2_to_the_53_and_as_a_float_from_there() -> None:
    # Below 2**53 every whole float is an integer of the same value; from 2**53 on, the text says it is a float.
    assert "= sin(4503599627370498) ≈" in derivation(2**52 + 2, 0, 2)
    assert "= cos(100000000000000) ≈" in derivation(10**14, 1, 2)
    assert "= sin(9007199254740992.0) ≈" in derivation(2**53, 0, 2)
