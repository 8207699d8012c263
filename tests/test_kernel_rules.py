"""The exact kernel's rules the mutation run found untested: ties to even, and every format's bit patterns.

Expected values come from struct (IEEE conversions of the C library), from hand-worked binary fractions, and
from mpmath (with its own precision).
"""

import math
import random
import struct
from typing import List, Tuple

import mpmath
import pytest

import pe_reference
from tests import reference
from pe_reference import encoding
from tests.helpers import run_main


def struct_bits(x: float, dtype: str) -> int:
    """x's IEEE bits in dtype, which holds x exactly: by struct (bfloat16: float32's top half)."""
    if dtype == "float64":
        return int(struct.unpack("<Q", struct.pack("<d", x))[0])
    if dtype == "float16":
        return int(struct.unpack("<H", struct.pack("<e", x))[0])
    bits = int(struct.unpack("<I", struct.pack("<f", x))[0])
    return bits >> 16 if dtype == "bfloat16" else bits


# (a tie that rounds down to the even neighbour, a tie that rounds up to it), each with its rounding.
TIES = {
    "float32": [(1 + 2**-24, 1.0), (1 + 3 * 2**-24, 1 + 2**-22)],
    "float16": [(1 + 2**-11, 1.0), (1 + 3 * 2**-11, 1 + 2**-9)],
    "bfloat16": [(1 + 2**-8, 1.0), (1 + 3 * 2**-8, 1 + 2**-6)],
}


@pytest.mark.parametrize("dtype", sorted(TIES))
@pytest.mark.parametrize("exact", [True, False])
def test_a_value_halfway_between_two_numbers_of_the_format_rounds_to_the_even_one(dtype: str, exact: bool) -> None:
    # cos(0) times the scale is the scale itself, exactly: a tie in the narrower format (exact=False: the
    # float64 value rounded to the format).
    for scale, rounded in TIES[dtype]:
        if dtype != "bfloat16":  # the C library's conversion agrees with the hand-worked rounding
            code = "<f" if dtype == "float32" else "<e"
            assert struct.unpack(code, struct.pack(code, scale))[0] == rounded
        assert encoding(1, 2, scale=scale, exact=exact, dtype=dtype) == [[0.0, rounded]]
        # cos of half a turn is -1 exactly, and -1.0 in float64 too: the negative tie.
        half_turn = encoding(1, 2, scale=scale, full_turns=True, positions=[0.5], exact=exact, dtype=dtype)
        assert half_turn[0][1] == -rounded


def special_values(dtype: str) -> List[float]:
    precision, emin, exponent_bits = {
        "float64": (53, -1022, 11),
        "float32": (24, -126, 8),
        "bfloat16": (8, -126, 8),
        "float16": (11, -14, 5),
    }[dtype]
    smallest_normal = 2.0**emin
    largest = (2 - 2.0 ** (1 - precision)) * 2.0 ** (2 ** (exponent_bits - 1) - 1)
    values = [
        0.0,
        -0.0,
        math.inf,
        -math.inf,
        smallest_normal,
        -smallest_normal,
        largest,
        -largest,
        2.0 ** (emin - precision + 1),
        smallest_normal - 2.0 ** (emin - precision + 1),
        1.0,
        -1.0,
        -0.5,
    ]
    generator = random.Random(precision)
    for _ in range(200):  # numbers of the format: a random significand at a random exponent, both signs
        e = generator.randint(emin - precision + 1, 2 ** (exponent_bits - 1) - 1)
        m = generator.getrandbits(precision) | 1 << (precision - 1)
        value = math.ldexp(m, e - precision + 1)
        if e < emin:  # subnormal: keep only the bits the format has
            value = math.ldexp(m >> (emin - e), emin - precision + 1)
        values += [value, -value]
    return values


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_each_values_bit_pattern_is_its_ieee_encoding(dtype: str) -> None:
    for x in special_values(dtype):
        assert pe_reference._bit_pattern(x, dtype) == struct_bits(x, dtype), (x, dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_the_hex_table_prints_each_values_ieee_bits_negative_ones_too(
    capsys: "pytest.CaptureFixture[str]", dtype: str
) -> None:
    status, out, err = run_main(capsys, "5", "4", "--exact", "--dtype", dtype, "--format", "hex")
    assert (status, err) == (0, "")
    table = encoding(5, 4, exact=True, dtype=dtype)
    assert any(x < 0 for row in table for x in row)  # cos(2), cos(3), sin(4)
    printed = [[int(cell, 16) for cell in line.split(",")] for line in out.splitlines()]
    assert printed == [[struct_bits(x, dtype) for x in row] for row in table]


# The largest finite number of each format: its bits, its largest exponent and its precision.
LARGEST = {"float32": (0x7F7FFFFF, 127, 24), "bfloat16": (0x7F7F, 127, 8), "float16": (0x7BFF, 15, 11)}


@pytest.mark.parametrize("dtype", sorted(LARGEST))
def test_the_largest_number_of_a_format_is_kept_and_the_midpoint_above_it_rounds_to_infinity(dtype: str) -> None:
    bits, emax, precision = LARGEST[dtype]
    largest = (2 - 2.0 ** (1 - precision)) * 2.0**emax
    assert struct_bits(largest, dtype) == bits
    # Halfway to 2**(emax + 1): a tie, and the even neighbour is 2**(emax + 1), past the format: infinity.
    midpoint = (2 - 2.0**-precision) * 2.0**emax
    just_below = midpoint - 2.0 ** (emax - precision - 20)
    for sign in (1, -1):
        assert pe_reference._round_float(sign * largest, dtype) == sign * largest
        assert pe_reference._round_float(sign * just_below, dtype) == sign * largest
        assert pe_reference._round_float(sign * midpoint, dtype) == sign * math.inf


@pytest.mark.parametrize("position", [(1, 1), (-5, 3), (10**6, 1), (10**12 + 3, 7), (1, 10**9)])
@pytest.mark.parametrize("exponent", [(0, 1), (1, 4), (5, 8)])
def test_sin_and_cos_are_within_the_error_the_kernel_states(
    position: Tuple[int, int], exponent: Tuple[int, int]
) -> None:
    # _sin_cos promises sin and cos of position * 10000**(-t) with F fraction bits, each within E units;
    # large positions take many quarter turns off, each paying for pi/2's error.
    frequencies = pe_reference._Frequencies((10000, 1), (1, 1), False)
    for bits in (60, 120):
        sine, cosine, F, error = pe_reference._sin_cos(position, exponent, frequencies, bits)
        assert error >= 1
        with mpmath.workprec(F + 200):
            theta = mpmath.mpf(position[0]) / position[1] * mpmath.power(10000, -mpmath.mpf(exponent[0]) / exponent[1])
            scale = mpmath.ldexp(1, F)
            assert abs(sine - mpmath.sin(theta) * scale) <= error
            assert abs(cosine - mpmath.cos(theta) * scale) <= error


def test_full_turns_at_each_twenty_fourth_of_a_turn_give_the_correctly_rounded_sine_and_cosine() -> None:
    # sin and cos of 2 pi j / 24: rational (0, +-1/2, +-1) at some j, where no series can decide and the
    # kernel must know the number; irrational at the others. Zeros are exact zeros.
    positions = [f"{j}/24" for j in range(24)]
    table = encoding(24, 2, exact=True, full_turns=True, positions=positions)
    for j, (sine, cosine) in enumerate(table):
        with mpmath.workprec(reference.PRECISION):
            angle = 2 * mpmath.pi * j / 24
            true_sine, true_cosine = mpmath.sin(angle), mpmath.cos(angle)
        assert sine == (0.0 if j % 12 == 0 else reference.round_to(true_sine, "float64")), j
        assert cosine == (0.0 if j % 12 == 6 else reference.round_to(true_cosine, "float64")), j
    assert [table[j][0] for j in (2, 10, 14, 22)] == [0.5, 0.5, -0.5, -0.5]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_the_cosine_of_a_tiny_angle_times_an_irrational_scale_is_correctly_rounded(dtype: str) -> None:
    # cos(1e-40) differs from 1 by 5e-81: the value is sqrt(2/3) a hair below, which only the scale decides.
    got = pe_reference.value(0, 1, 2, exact=True, dtype=dtype, positions=["1e-40"], scale="sqrt(2/3)")
    with mpmath.workprec(reference.PRECISION):
        want = mpmath.sqrt(mpmath.mpf(2) / 3) * mpmath.cos(mpmath.mpf("1e-40"))
    assert got == reference.round_to(want, dtype)


def test_an_exact_row_computed_alone_is_that_row_of_the_whole_table() -> None:
    # The pictures ask for a few rows of a long table one by one: row r alone starts its recurrence at r.
    convention = pe_reference.Convention(start=5, step=3)
    whole = encoding(9, 6, exact=True, start=5, step=3)
    for first in (1, 4, 8):
        assert next(pe_reference._rows(convention, 9, 6, True, "float64", first)) == whole[first], first
    assert whole[4] == encoding(1, 6, exact=True, start=17)[0]
