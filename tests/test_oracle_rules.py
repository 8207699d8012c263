"""compare()'s and Report's rules the mutation run found untested."""

import math
from typing import Iterator, List

import pytest

import pe_reference
from pe_reference import compare, compare_rope, encoding, rope


@pytest.mark.parametrize(
    "actual, rounded",
    [
        # bfloat16 keeps 8 significant bits: near 1 its numbers are 2**-7 apart.
        (1 + 2**-7 + 2**-8, 1 + 2**-6),  # halfway between 1 + 2**-7 and 1 + 2**-6: to the even one, up
        (1 + 2**-6 + 2**-8, 1 + 2**-6),  # halfway between 1 + 2**-6 and 1 + 3 * 2**-7: to the even one, down
        (1 + 2**-8 + 2**-20, 1 + 2**-7),  # past halfway: up
        (1 + 2**-8 - 2**-20, 1.0),  # short of halfway: down
    ],
)
def test_a_bfloat16_table_is_rounded_to_nearest_ties_to_even_before_the_comparison(
    actual: float, rounded: float
) -> None:
    # The exact 1 x 2 table is [sin 0, cos 0] = [0, 1]: the error is the rounded value's distance from 1.
    report = compare([[0.0, actual]], dtype="bfloat16", atol=0)
    assert report.max_abs_error == rounded - 1.0
    assert report.ok == (rounded == 1.0)
    if rounded != 1.0:
        assert report.worst == (0, 1, rounded, 1.0)


def test_a_table_of_odd_width_against_a_convention_without_one_compares_nothing() -> None:
    report = compare([[0.0, 1.0, 0.0], [0.8, 0.5, 0.0]], odd="error")
    assert not report.ok and report.failures == 0
    assert math.isnan(report.max_abs_error) and math.isnan(report.max_ulp_error)
    lines = str(report).splitlines()
    assert lines[-2] == "no element compared: CANNOT BE CHECKED"
    assert not any(line.startswith("max abs error") for line in lines)


@pytest.mark.parametrize("odd", ["error", "sine"])
def test_a_report_keeps_the_first_five_elements_that_are_not_finite_and_counts_them_all(odd: str) -> None:
    table = [[math.nan] * 7, [0.0] * 7]
    report = compare(table, odd=odd)
    assert report.not_finite_count == 7
    assert [(r, c) for r, c, _ in report.not_finite] == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)]
    assert (
        "7 elements are not finite numbers: [0][0] is nan, [0][1] is nan, [0][2] is nan, [0][3] is nan,"
        " [0][4] is nan, and 2 more" in str(report)
    )


@pytest.mark.parametrize(
    "dtype, rule",
    [
        # u = 2**(5 - q), q the computing format's precision: the table's own, float32's for the narrow ones;
        # storing adds 2**-p of the value.
        ("float64", "default tolerance 2**-48 * (1 + |angle|) + 2**-53 * |value|"),
        ("float32", "default tolerance 2**-19 * (1 + |angle|) + 2**-24 * |value|"),
        ("bfloat16", "default tolerance 2**-19 * (1 + |angle|) + 2**-8 * |value|"),
        ("float16", "default tolerance 2**-19 * (1 + |angle|) + 2**-11 * |value|"),
    ],
)
def test_a_rotary_reports_tolerance_is_the_rule_its_comparison_set(dtype: str, rule: str) -> None:
    cos, _ = rope(4, 8, exact=True, dtype=dtype)
    report = compare_rope(cos, dtype=dtype)
    assert report.ok
    assert report.tolerance() == rule
    assert str(report).splitlines()[0].endswith(f"({rule})")


def test_a_tables_report_says_its_own_default_rule() -> None:
    report = compare(encoding(4, 4))
    assert report.tolerance() == "default tolerance 2**-48 * (1 + |angle|) + 2**-53 * |value|"
    # A factor on the values scales the errors too.
    report = compare(encoding(4, 4, scale=0.5), scale=0.5)
    assert report.tolerance() == "default tolerance 2**-48 * (1 + |angle|) * 0.5 + 2**-53 * |value|"


# The smallest positive number of each format (its smallest subnormal).
SMALLEST = {"float64": 2.0**-1074, "float32": 2.0**-149, "bfloat16": 2.0**-133, "float16": 2.0**-24}


@pytest.mark.parametrize("dtype", sorted(SMALLEST))
def test_ulps_are_counted_across_zero_one_place_per_number_of_the_format(dtype: str) -> None:
    # sin(0) is exactly 0; the numbers just below it are -smallest, -2 smallest: one and two places away.
    table = encoding(3, 4, exact=True, dtype=dtype)
    table[0][0] = -SMALLEST[dtype]
    report = compare(table, dtype=dtype, ulps=1)
    assert report.ok and report.max_ulp_error == 1
    table[0][0] = -2 * SMALLEST[dtype]
    report = compare(table, dtype=dtype, ulps=1)
    assert not report.ok and report.max_ulp_error == 2


def test_a_report_lists_each_infinity_and_nan_it_found_with_its_place() -> None:
    table = encoding(3, 4)
    table[1][2], table[2][0], table[2][3] = math.inf, -math.inf, math.nan
    report = compare(table)
    assert report.not_finite_count == 3 and not report.ok
    assert [(r, c) for r, c, _ in report.not_finite] == [(1, 2), (2, 0), (2, 3)]
    assert report.not_finite[0][2] == math.inf and report.not_finite[1][2] == -math.inf


@pytest.mark.parametrize("preset", ["paper", "tensor2tensor", "fairseq"])
def test_a_report_names_the_convention_it_compared_with(preset: str) -> None:
    assert compare(encoding(2, 4, preset=preset), preset=preset).convention == preset


# p of each format: the default tolerance is 2**(5 - q) (1 + |angle|) + 2**-p |value|, q = max(p, 24).
PRECISION = {"float64": 53, "float32": 24, "bfloat16": 8, "float16": 11}


@pytest.mark.parametrize("dtype", sorted(PRECISION))
def test_a_reports_first_line_states_the_default_tolerance_of_its_format(dtype: str) -> None:
    report = compare(encoding(2, 4, exact=True, dtype=dtype), dtype=dtype)
    p = PRECISION[dtype]
    rule = f"2**{5 - max(p, 24)} * (1 + |angle|) + 2**-{p} * |value|"
    assert str(report).splitlines()[0].endswith(f"(default tolerance {rule})")


@pytest.mark.parametrize(
    "dtype, tie, below, above",
    [
        ("float32", 1 + 2.0**-24, 1.0, 1 + 2.0**-23),
        ("bfloat16", 1 + 2.0**-8, 1.0, 1 + 2.0**-7),
        ("float16", 1 + 2.0**-11, 1.0, 1 + 2.0**-10),
        ("float16", 2.0**-25, 0.0, 2.0**-24),  # halfway between 0 and float16's smallest subnormal
    ],
)
def test_a_float64_reference_halfway_between_two_numbers_takes_the_kernels_rounding(
    dtype: str, tie: float, below: float, above: float
) -> None:
    # The float64 rounding of an exact value can land on a midpoint of dtype, where rounding it again (to even)
    # need not give the exact value's rounding: the row then comes from the kernel in dtype.
    asked: List[str] = []

    def exact_rows(rounding: str) -> Iterator[List[float]]:
        asked.append(rounding)
        return iter([[tie, 0.5]])

    for truth in (below, above):
        (exact, expect, _), *rest = list(pe_reference._references(exact_rows, dtype, lambda r: [truth, 0.5], None))
        assert not rest and exact == [tie, 0.5] and expect() == [truth, 0.5]
    assert asked == ["float64", "float64"]
