"""compare, assert_close and the diagnosis, on tables made by pe_reference and by hand."""

import math
import random
from typing import Any, Dict, List, Type

import pytest

from pe_reference import Report, assert_close, compare, encoding
from tests import reference


def test_exact_table_matches_exactly() -> None:
    report = compare(encoding(30, 16, exact=True))
    assert report.ok and report.failures == 0
    assert report.max_abs_error == 0.0 and report.max_ulp_error == 0.0
    assert report.shape == (30, 16) and report.count == 480
    assert report.convention == "paper" and report.dtype == "float64"
    assert report.diagnosis is None


def test_fast_table_is_within_the_default_tolerance() -> None:
    report = compare(encoding(2000, 64))
    assert report.ok
    assert 0 < report.max_abs_error <= report.atol
    # The default is the angle's rounding: 2**-52 * (1 + largest angle).
    assert report.atol == 2.0**-52 * (1 + 1999)


def test_strict_tolerance_counts_every_difference() -> None:
    fast, exact = encoding(300, 32), encoding(300, 32, exact=True)
    differing = sum(a != b for fast_row, exact_row in zip(fast, exact) for a, b in zip(fast_row, exact_row))
    report = compare(fast, atol=0.0)
    assert report.failures == differing > 0


def test_ulps_tolerance() -> None:
    table = encoding(100, 8, exact=True)
    table[5][3] = reference.neighbours(table[5][3], "float64")[1]  # one ulp up
    assert compare(table, atol=0.0).failures == 1
    assert compare(table, atol=0.0, ulps=1).ok


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_a_perturbed_element_is_found(dtype: str) -> None:
    generator = random.Random(dtype)
    for _ in range(5):
        table = encoding(40, 12, exact=True, dtype=dtype)
        r, c = generator.randrange(40), generator.randrange(12)
        table[r][c] += 0.01
        report = compare(table, dtype=dtype, atol=0.0)
        assert report.failures == 1
        assert report.worst is not None and report.worst[:2] == (r, c)
        assert abs(report.max_abs_error - 0.01) < 1e-3


def test_report_text() -> None:
    table = encoding(6, 4, exact=True)
    table[2][1] = 0.5
    text = str(compare(table, atol=0.0))
    lines = text.splitlines()
    assert lines[0] == "6 x 4 table against the exact float64 values of the paper convention (atol=0)"
    assert lines[2] == f"worst element [2][1]: 0.5, exact {encoding(3, 4, exact=True)[2][1]!r}"
    assert lines[3] == "1 of 24 elements outside the tolerance: MISMATCH"
    assert lines[4].startswith("Diagnosis: ")
    assert "MISMATCH" in repr(compare(table, atol=0.0)) or "mismatch" in repr(compare(table, atol=0.0))


def test_assert_close() -> None:
    assert_close(encoding(10, 10))
    with pytest.raises(AssertionError) as caught:
        assert_close(encoding(10, 10, preset="tf-tutorial"))
    message = str(caught.value)
    assert "MISMATCH" in message and "preset tf-tutorial" in message


def test_tables_of_any_sequence_type() -> None:
    table = encoding(5, 6)
    assert compare(tuple(tuple(row) for row in table)).ok
    assert compare(iter([iter(row) for row in table])).ok

    class TensorLike:
        def tolist(self) -> List[List[float]]:
            return table

    assert compare(TensorLike()).ok


def test_non_finite_elements_fail() -> None:
    table: List[List[Any]] = encoding(5, 4)
    table[1][1] = math.nan
    table[2][2] = math.inf
    table[3][3] = 10**400  # beyond float64: as far off as infinity
    report = compare(table)
    assert report.failures == 3 and report.max_abs_error == math.inf


@pytest.mark.parametrize(
    "bad, error, message",
    [
        ([1.0, 2.0], ValueError, "actual must be a 2-D table of numbers, got row 0 of type float"),
        ([[1.0, 2.0], [1.0]], ValueError, "actual must be rectangular: row 1 has 1 values, row 0 has 2"),
        ([], ValueError, "actual must have at least one row and one column, got an empty table"),
        ([[]], ValueError, "actual must have at least one row and one column, got an empty table"),
        ([["0.5"]], TypeError, "actual[0][0] must be a number, got str '0.5'"),
        ([[True]], TypeError, "actual[0][0] must be a number, got bool True"),
        ([[1j]], TypeError, "actual[0][0] must be a number, got complex 1j"),
        (3.0, TypeError, "actual must be a 2-D table of numbers, got float"),
        ("table", TypeError, "actual must be a 2-D table of numbers, got str"),
    ],
)
def test_bad_tables(bad: object, error: Type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        compare(bad)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "keywords, error, message",
    [
        ({"atol": -1.0}, ValueError, "atol must be finite and at least 0, got -1.0"),
        ({"atol": math.nan}, ValueError, "atol must be finite and at least 0, got nan"),
        ({"ulps": "1"}, TypeError, "ulps must be a number, got str '1'"),
        ({"dtype": "int8"}, ValueError, "dtype must be one of float64, float32, bfloat16, float16, got 'int8'"),
        ({"preset": "bert"}, ValueError, "preset must be one of paper, tensor2tensor, fairseq, tf-tutorial, guided-diffusion, got 'bert'"),
    ],
)
def test_bad_keywords(keywords: Dict[str, Any], error: Type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        compare(encoding(2, 4), **keywords)
    assert str(caught.value) == message


def diagnosis(table: object, **keywords: object) -> str:
    report = compare(table, **keywords)  # type: ignore[arg-type]
    assert not report.ok and report.diagnosis is not None
    return report.diagnosis


@pytest.mark.parametrize("preset", ["tensor2tensor", "fairseq", "tf-tutorial", "guided-diffusion"])
def test_diagnosis_names_the_preset(preset: str) -> None:
    text = diagnosis(encoding(30, 16, preset=preset))
    assert f"(preset {preset}):" in text and "max abs error 0 " in text


def test_diagnosis_of_shifted_positions() -> None:
    assert "(preset paper), but with positions from 1 instead of 0" in diagnosis(encoding(30, 16, start=1))


def test_diagnosis_of_another_base() -> None:
    assert "with base 1000 instead of 10000" in diagnosis(encoding(30, 16, base=1000.0))


def test_diagnosis_of_a_transposed_table() -> None:
    transposed = [list(column) for column in zip(*encoding(30, 16))]
    assert "the transposed table" in diagnosis(transposed)


def test_diagnosis_of_the_odd_exponent_cosine() -> None:
    # Seed 000's mistake: cos(pos / 10000**(j/d)) in odd column j.
    table = [[math.sin(p / 10000 ** (j / 16)) if j % 2 == 0 else math.cos(p / 10000 ** (j / 16)) for j in range(16)] for p in range(30)]
    assert "odd column index in the exponent" in diagnosis(table)


def test_diagnosis_of_float32_positions() -> None:
    def f32(x: float) -> float:
        import struct

        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    # A float32 pipeline rounds the position, the frequency and their product.
    def element(p: int, j: int) -> float:
        angle = f32(f32(p) * f32(10000 ** -(2 * (j // 2) / 8)))
        return f32(math.sin(angle) if j % 2 == 0 else math.cos(angle))

    table = [[element(p, j) for j in range(8)] for p in range(4000)]
    assert "computed in float32" in diagnosis(table)


def test_diagnosis_when_only_the_precision_is_off() -> None:
    table = encoding(30, 16)
    table = [[x + 1e-9 for x in row] for row in table]
    assert "no other convention or known mistake fits better; the table follows the paper convention" in diagnosis(table)


def test_report_is_exported() -> None:
    assert isinstance(compare(encoding(2, 2)), Report)
