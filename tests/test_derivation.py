"""derivation(): every '=' joins forms equal as real numbers; '≈' forms are close."""

import random
import re
from typing import List, Tuple

import mpmath
import pytest

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
