"""compare, assert_close and the diagnosis, on tables made by pe_reference and by hand."""

import functools
import math
import random
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple, Type

import mpmath
import pytest

import pe_reference
from pe_reference import Report, assert_close, compare, compare_rope, encoding, rope
from tests import framework_tables as frameworks
from tests import reference
from tests.helpers import assert_call_reproduces, need, peer, subprocess_environment
from tests.peer_tables import paper_torch_float32


def test_exact_table_matches_exactly() -> None:
    report = compare(encoding(30, 16, exact=True))
    assert report.ok and report.failures == 0
    assert report.max_abs_error == 0.0 and report.max_ulp_error == 0.0
    assert report.shape == (30, 16) and report.count == 480
    assert report.convention == "paper" and report.dtype == "float64"
    assert report.diagnosis is None


def test_fast_table_is_within_the_default_tolerance() -> None:
    report = compare(encoding(2000, 64))
    assert report.ok and report.atol is None and report.ulps is None
    assert 0 < report.max_abs_error <= 2.0**-48 * (1 + 1999)


def allowance(position: int, dim: int, d_model: int, precision: int, value: float) -> float:
    """The documented default tolerance, computed here from its definition: u + 2**-p |value|."""
    angle: float = position / 10000.0 ** (2 * (dim // 2) / d_model)
    computing = max(precision, 24)
    return 2.0 ** (5 - computing) * (1.0 + abs(angle)) + 2.0**-precision * abs(value)


@pytest.mark.parametrize("dtype, precision", [("float64", 53), ("float32", 24)])
def test_the_default_tolerance_is_the_documented_rule(dtype: str, precision: int) -> None:
    # Just inside passes, just outside fails, at a small and a large angle; past 511 in float32 the
    # element is coarse, judged to its allowance all the same.
    for position, dim in ((3, 5), (900, 0), (900, 2)):
        for factor, passes in ((0.75, True), (1.25, False)):
            table = encoding(position + 1, 8, exact=True, dtype=dtype)
            exact = table[position][dim]
            table[position][dim] = exact + factor * allowance(position, dim, 8, precision, exact)
            assert compare(table, dtype=dtype).ok is passes, (position, dim, factor)


def test_an_element_whose_allowance_passes_2_to_the_minus_4_is_not_judged() -> None:
    # Position 40000 in pair 0 (frequency 1, columns 0 and 1) of a float32 table: u = 2**-19 * 40001 > 2**-4.
    table = encoding(40001, 8, exact=True, dtype="float32")
    table[40000][0] = -table[40000][0]
    report = compare(table, dtype="float32")
    assert report.ok and report.unjudged == 2 * (40000 - 32767) and report.unjudged_from == (32768, 0)
    table[40000][2] += 0.5  # column 2's angle is 400: judged, and 0.5 is far beyond its allowance
    assert compare(table, dtype="float32").failures == 1


@pytest.mark.parametrize("fields", [{"positions": [32767, 0]}, {"positions": [2457525, 0], "angle_scale": "1/75"}])
def test_an_element_whose_allowance_is_2_to_the_minus_4_is_judged_and_counted_so(fields: Dict[str, Any]) -> None:
    # Angle 32767 in float32: u = 2**-19 * 32768 = 2**-4 exactly, the last judged.  The count of elements not
    # judged and the verdict come from one decision, however float64 rounds the position and the frequency.
    table = encoding(2, 2, exact=True, dtype="float32", **fields)
    table[0][0] += 0.2
    report = compare(table, dtype="float32", **fields)
    assert report.unjudged == 0 and report.failures == 1


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(1, 2), (200, 64), (3000, 8)])
def test_a_table_of_zeros_never_passes(dtype: str, shape: Tuple[int, int]) -> None:
    zeros = [[0.0] * shape[1] for _ in range(shape[0])]
    report = compare(zeros, dtype=dtype)
    assert not report.ok
    assert report.diagnosis == "Diagnosis: every element of the table is 0."
    assert not compare(zeros, dtype=dtype, ulps=0).ok


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_an_error_of_1e_3_never_passes_by_default(dtype: str) -> None:
    # Beyond the format's own step at the value (2**-p |value|), in an element that is not coarse.
    precision = {"float64": 53, "float32": 24, "bfloat16": 8, "float16": 11}[dtype]
    generator = random.Random(10)
    for _ in range(40):
        seq_len = generator.choice([2, 50, 300, 512])
        r, c = generator.randrange(seq_len), generator.randrange(8)
        table = encoding(seq_len, 8, exact=True, dtype=dtype)
        exact = table[r][c]
        # A number of the format at least 1e-3 + 2**-p |value| away (towards 0, so it stays in range).
        with mpmath.workprec(reference.PRECISION):
            moved = mpmath.mpf(exact) - mpmath.mpf(1.001e-3) * (1 if exact > 0 else -1)
        changed = reference.round_to(moved, dtype)
        while abs(changed - exact) < 1e-3 + 2.0**-precision * abs(changed):
            changed = reference.neighbours(changed, dtype)[0 if exact > 0 else 1]
        table[r][c] = changed
        report = compare(table, dtype=dtype)
        assert report.coarse == 0 and not report.ok, (seq_len, r, c)


def test_a_wrong_convention_in_bfloat16_does_not_pass() -> None:
    # It passed before: the tolerance grew with the largest angle beyond 1.
    paper = encoding(512, 64, exact=True, dtype="bfloat16")
    assert not compare(paper, preset="tensor2tensor", dtype="bfloat16").ok
    assert not compare(paper[:200], preset="tensor2tensor", dtype="bfloat16").ok


def test_huge_positions_and_tiny_bases_get_no_free_pass() -> None:
    assert not compare([[0.0] * 4], start=2**53).ok
    table = encoding(5, 4, base=1e-300)
    table[2][1] += 0.5
    assert not compare(table, base=1e-300).ok


def test_a_table_computed_in_float32_and_stored_narrow_passes_at_positions_the_format_cannot_hold() -> None:
    # bfloat16 holds whole numbers only up to 256: a table stored in it is computed in float32.
    table = encoding(512, 8, exact=True, dtype="bfloat16")
    report = compare(table, dtype="bfloat16")
    assert report.ok and str(report).splitlines()[-1] == "0 of 4096 elements outside the tolerance: within tolerance"
    assert compare(table, dtype="bfloat16", atol=0).ok
    # Computed in bfloat16, its positions rounded: that table fails.
    positions = [reference.round_to(float(p), "bfloat16", exact=True) for p in range(512)]
    rounded = [
        [reference.round_to(x, "bfloat16", exact=True) for x in row] for row in encoding(512, 8, positions=positions)
    ]
    assert not compare(rounded, dtype="bfloat16").ok


def test_values_are_rounded_to_dtype_before_the_comparison() -> None:
    # Read from short decimal text, the exact bfloat16 values are not yet bfloat16.
    exact = encoding(50, 8, exact=True, dtype="bfloat16")
    as_text = [[float(f"{x:.4g}") for x in row] for row in exact]
    assert as_text != exact
    assert compare(as_text, dtype="bfloat16", atol=0).ok


def test_strict_tolerance_counts_every_difference() -> None:
    fast, exact = encoding(300, 32), encoding(300, 32, exact=True)
    differing = sum(a != b for fast_row, exact_row in zip(fast, exact) for a, b in zip(fast_row, exact_row))
    report = compare(fast, atol=0.0)
    assert report.failures == differing > 0
    assert report.diagnosis is not None and "every element is within the default tolerance" in report.diagnosis


def test_ulps_tolerance() -> None:
    table = encoding(100, 8, exact=True)
    table[5][3] = reference.neighbours(table[5][3], "float64")[1]  # one ulp up
    assert compare(table, atol=0.0).failures == 1
    assert compare(table, ulps=0).failures == 1
    assert compare(table, atol=0.0, ulps=1).ok
    assert compare(table, ulps=1).ok
    assert compare(table, ulps=1).max_ulp_error == 1


def test_ulps_count_the_numbers_of_the_format_between() -> None:
    table = encoding(3, 4, exact=True, dtype="float16")
    table[0][0] = 2.0**-24  # the exact value is 0: one float16 number away
    table[1][1] = -table[1][1]
    report = compare(table, dtype="float16", atol=0)
    places = compare([[-(2.0**-24), 1.0]], dtype="float16", atol=0).max_ulp_error
    assert places == 1
    assert report.max_ulp_error < math.inf
    # From x to -x: both halves of the number line up to x, in float16's 2**15 places per sign.
    assert report.max_ulp_error == 2 * struct.unpack("<H", struct.pack("<e", abs(table[1][1])))[0]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_a_perturbed_element_is_found(dtype: str) -> None:
    generator = random.Random(dtype)
    for _ in range(5):
        table = encoding(40, 12, exact=True, dtype=dtype)
        r, c = generator.randrange(40), generator.randrange(12)
        table[r][c] += 0.01 if table[r][c] < 0.5 else -0.01
        report = compare(table, dtype=dtype, atol=0.0)
        assert report.failures == 1
        assert report.worst is not None and report.worst[:2] == (r, c)
        assert abs(report.max_abs_error - 0.01) < 0.005
        assert report.diagnosis is not None and f"1 element: [{r}][{c}] is " in report.diagnosis


def test_report_text() -> None:
    table = encoding(6, 4, exact=True)
    table[2][1] = 0.5
    text = str(compare(table, atol=0.0))
    lines = text.splitlines()
    assert lines[0] == "6 x 4 table against the exact float64 values of the paper convention (atol=0, exact)"
    assert lines[2] == f"worst element [2][1]: 0.5, exact {encoding(3, 4, exact=True)[2][1]!r}"
    assert lines[3] == "1 of 24 elements outside the tolerance: MISMATCH"
    assert (
        lines[4]
        == "Diagnosis: the table follows the paper convention except for 1 element: [2][1] is 0.5, expected -0.416147."
    )
    assert repr(compare(table, atol=0.0)) == "<Report mismatch: 1 of 24 outside tolerance>"


def test_assert_close() -> None:
    assert_close(encoding(10, 10))
    with pytest.raises(AssertionError) as caught:
        assert_close(encoding(10, 10, preset="tf-tutorial"))
    message = str(caught.value)
    assert "MISMATCH" in message and "preset tf-tutorial" in message


def test_assert_close_checks_rotary_caches_with_kind() -> None:
    assert_close(rope(64, 8, base=500000)[0], kind="cos", base=500000)
    assert_close(rope(64, 8)[1], kind="sin")
    with pytest.raises(AssertionError) as caught:
        assert_close(rope(64, 8, base=500000)[0], kind="cos")
    first, *rest = str(caught.value).splitlines()
    # The verdict and the diagnosis's first sentence on the first line; the whole report after it.
    assert first.startswith("MISMATCH: with base 500000 instead of 10000; it reproduces every element. (")
    assert "The call that reproduces it" not in first
    assert rest[0].startswith("64 x 8 table against the exact float64 values of the RoPE cos cache")
    assert rest[-1].startswith("Diagnosis: ")


@pytest.mark.parametrize("on_ci", [False, True])
def test_a_failing_assert_close_in_pytest_shows_the_verdict_on_the_summary_line(tmp_path: Path, on_ci: bool) -> None:
    # What a user's pytest run prints, in a terminal 100 columns wide (its summary line cut to fit) and on CI
    # (the whole first line); the library's own source and docstring are not shown.
    test_file = tmp_path / "test_cache.py"
    test_file.write_text(
        "import pe_reference\n\n\n"
        "def test_cache():\n"
        "    cos, _ = pe_reference.rope(64, 8, base=500000)\n"
        '    pe_reference.assert_close(cos, kind="cos")\n',
        encoding="utf-8",
    )
    env = {key: value for key, value in subprocess_environment().items() if key not in ("CI", "BUILD_NUMBER")}
    env["COLUMNS"] = "100"
    if on_ci:
        env["CI"] = "true"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rf", "-q", test_file.name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    summary = [line for line in run.stdout.splitlines() if line.startswith("FAILED ")]
    assert len(summary) == 1, run.stdout
    # What differs comes first: it fits in a 100-column summary.
    assert summary[0].startswith("FAILED test_cache.py::test_cache - AssertionError: MISMATCH: with base 500000"), (
        summary
    )
    if on_ci:
        assert re.search(r"it reproduces every element\. \(\d+ of 512 elements outside the tolerance\)$", summary[0])
    assert "For a test suite" not in run.stdout and "__tracebackhide__" not in run.stdout


def test_the_report_measures_each_error_against_its_own_tolerance() -> None:
    # Issue 46: a passing float32 table printed "max 1.85e+09 ulps of float32", an element near zero counted
    # across it through all of float32's tiny numbers.  The default rule's report gives the largest error over
    # its element's own tolerance, 2**-48 (1 + |angle|) + 2**-53 |value| in float64.
    table = encoding(64, 8, exact=True)
    r, c = 50, 2  # angle 50 / 10000**(2/8) = 5
    tolerance = 2.0**-48 * (1 + 5.0) + 2.0**-53 * abs(table[r][c])
    table[r][c] += 0.5 * tolerance
    report = compare(table)
    assert report.ok and abs(report.share - 0.5) < 0.01, report.share
    assert (
        str(report).splitlines()[1]
        == f"max abs error {report.max_abs_error:.3g}, each error at most 0.5 of its element's tolerance"
    )
    table[r][c] += 2.5 * tolerance  # 3 tolerances off in all
    report = compare(table)
    assert not report.ok and abs(report.share - 3.0) < 0.05, report.share
    assert "errors up to 3 times their element's tolerance" in str(report)
    # The ulps rule measures numbers of the format apart: its report says so.
    assert "ulps of float64" in str(compare(table, ulps=4)) and "ulps" not in str(report).splitlines()[1]


def test_a_faithful_float32_table_near_zero_is_not_counted_across_it() -> None:
    # sin computed in float32 at angles near multiples of pi: values near 0 whose float32 error crosses zero.
    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    rows = []
    for p in range(4096):
        angles = [f32(p * f32(10000.0 ** (-2 * i / 16))) for i in range(8)]
        rows.append([f32(f(a)) for a in angles for f in (math.sin, math.cos)])
    report = compare(rows, dtype="float32")
    assert report.ok, str(report)
    assert report.max_ulp_error > 2**16  # the count across zero, still held, and no longer printed
    line = str(report).splitlines()[1]
    found = re.fullmatch(r"max abs error \S+, each error at most (\S+) of its element's tolerance", line)
    assert found is not None and 0 < float(found.group(1)) <= 1, line


def test_tables_of_any_sequence_type() -> None:
    table = encoding(5, 6)
    assert compare(tuple(tuple(row) for row in table)).ok
    assert compare(iter([iter(row) for row in table])).ok

    class TensorLike:
        def tolist(self) -> List[List[float]]:
            return table

    assert compare(TensorLike()).ok


def test_non_finite_elements_fail_and_are_named() -> None:
    table: List[List[Any]] = encoding(5, 4)
    table[1][1] = math.nan
    table[2][2] = math.inf
    table[3][3] = 10**400  # beyond float64: as far off as infinity
    report = compare(table)
    assert report.failures == 3 and not report.ok
    assert report.not_finite_count == 3
    assert [cell[:2] for cell in report.not_finite] == [(1, 1), (2, 2), (3, 3)]
    # The largest errors are those of the finite elements: here none.
    assert report.max_abs_error < 1e-15
    text = str(report)
    assert "3 elements are not finite numbers: [1][1] is nan, [2][2] is inf, [3][3] is inf" in text
    assert report.diagnosis is not None
    assert report.diagnosis.startswith("Diagnosis: 3 elements are not finite numbers: [1][1] is nan")
    assert "the other elements are within the default tolerance" in report.diagnosis
    assert not compare(table, atol=1.0, ulps=10**30).ok


def test_number_like_scalars_are_accepted_as_tolerances() -> None:
    class Scalar:
        def __init__(self, value: float) -> None:
            self.value = value

        def __float__(self) -> float:
            return self.value

    assert compare(encoding(3, 4), atol=Scalar(1e-12), ulps=Scalar(2.0)).ok  # type: ignore[arg-type]


def test_numpy_scalars_are_accepted_as_tolerances_and_fields() -> None:
    numpy = need("numpy")
    report = compare(encoding(3, 4), atol=numpy.float32(1e-6), base=numpy.float64(10000.0), start=numpy.int64(0))
    assert report.ok and report.atol == float(numpy.float32(1e-6))


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
        (3.0, TypeError, "actual must be a 2-D table of numbers, got float 3.0"),
        ("table", TypeError, "actual must be a 2-D table of numbers, got str 'table'"),
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
        ({"ulps": math.inf}, ValueError, "ulps must be finite and at least 0, got inf"),
        ({"dtype": "int8"}, ValueError, "dtype must be one of float64, float32, bfloat16, float16, got 'int8'"),
        (
            {"preset": "bert"},
            ValueError,
            "preset must be one of paper, tensor2tensor, fairseq, tf-tutorial, guided-diffusion, xlm, keras-hub, tatp22, marian, gpt-j, transformer-xl, whisper, m2m100, diffusers, pyg, mlx, got 'bert'",
        ),
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
    table = encoding(30, 16, preset=preset)
    text = diagnosis(table)
    assert f"(preset {preset}" in text and "; it reproduces every element. The call that reproduces it: " in text
    assert_call_reproduces(text, table)


def test_diagnosis_of_shifted_positions() -> None:
    text = diagnosis(encoding(30, 16, start=1))
    assert "keras-hub and tatp22): sin and cos interleaved per pair, with positions from 1 instead of 0" in text
    assert "positions from 3 instead of 0" in diagnosis(encoding(30, 16, start=3))


def test_diagnosis_of_another_base() -> None:
    assert "with base 1000 instead of 10000" in diagnosis(encoding(30, 16, base=1000.0))


def test_diagnosis_of_a_transposed_table() -> None:
    transposed = [list(column) for column in zip(*encoding(30, 16))]
    assert "the transposed table" in diagnosis(transposed)


def test_diagnosis_of_the_odd_exponent_cosine() -> None:
    # Seed 000's mistake: cos(pos / 10000**(j/d)) in odd column j.
    table = [
        [math.sin(p / 10000 ** (j / 16)) if j % 2 == 0 else math.cos(p / 10000 ** (j / 16)) for j in range(16)]
        for p in range(30)
    ]
    assert "odd column index in the exponent" in diagnosis(table)


def test_diagnosis_of_float32_positions() -> None:
    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    # A float32 pipeline rounds the position, the frequency and their product.
    def element(p: int, j: int) -> float:
        angle = f32(f32(p) * f32(10000 ** -(2 * (j // 2) / 8)))
        return f32(math.sin(angle) if j % 2 == 0 else math.cos(angle))

    table = [[element(p, j) for j in range(8)] for p in range(4000)]
    assert diagnosis(table) == (
        "Diagnosis: every value of the table is a float32 number, and float64 was asked: checked as float32"
        " (dtype='float32'), it passes; its values were rounded to float32."
    )


def test_diagnosis_when_only_the_precision_is_off() -> None:
    # Every element 1e-9 off: no candidate reproduces one, and none is named as closer (the candidates' order
    # is not a distance).
    table = [[x + 1e-9 for x in row] for row in encoding(30, 16)]
    text = diagnosis(table)
    assert text.startswith("Diagnosis: nothing known explains the table: no candidate reproduces any"), text


def test_diagnosis_of_marians_odd_rule_names_its_difference() -> None:
    # [sin | cos] with an odd width and one more sine: not guided-diffusion (a reused loop variable named it).
    text = diagnosis(encoding(20, 9, layout="sin-cos", odd="sine"), layout="sin-cos", odd="zero")
    assert "the table follows HF Marian's and Pegasus's convention (preset marian)" in text
    assert "guided-diffusion" not in text


@pytest.mark.parametrize("seq_len", [2, 4, 8, 16, 64])
def test_rows_counting_down_are_named_as_the_convention_at_every_length(seq_len: int) -> None:
    # At 8 rows every row is "swapped" with its mirror: a convention that reproduces every element is the story.
    text = diagnosis(encoding(seq_len, 16, descending=True))
    assert "with positions counting down; it reproduces every element" in text, text
    assert "swapped" not in text
    # Damage on some rows only is still told as damage, at a length where reversing would explain nothing.
    table = encoding(8, 16)
    table[0], table[7] = table[7], table[0]
    table[1], table[6] = table[6], table[1]
    assert diagnosis(table).endswith("except for rows 0 and 7, swapped; and rows 1 and 6, swapped."), diagnosis(table)


def test_diagnosis_of_local_damage() -> None:
    table = encoding(20, 8)
    table[5], table[6] = table[6], table[5]
    assert diagnosis(table) == "Diagnosis: the table follows the paper convention except for rows 5 and 6, swapped."
    table = encoding(21, 8)
    del table[7]
    assert diagnosis(table).endswith(
        "except for rows 7 to 19, each one position later (as if a row were missing before them)."
    )
    table = encoding(20, 8)
    table.insert(7, list(table[6]))
    assert diagnosis(table[:20]).endswith(
        "except for rows 7 to 19, each one position earlier (as if a row were repeated before them)."
    )
    table = encoding(20, 8, preset="tensor2tensor")
    table[1] = [0.0] * 8
    text = diagnosis(table, preset="fairseq")
    assert "follows tensor2tensor's convention (preset tensor2tensor, the same as whisper, diffusers and pyg)" in text
    assert "except for row 1, all zeros (as the row of a padding index is). The call that computes" in text
    table = encoding(20, 8)
    for row in table:
        row[3] = 0.0
    assert diagnosis(table).endswith("except for column 3, all zeros.")


@pytest.mark.parametrize("preset", ["tf-tutorial", "paper"])
@pytest.mark.parametrize("shape", [(5, 4), (1, 2), (3, 4), (4, 3), (2, 5)])
def test_no_crash_on_any_readable_table(preset: str, shape: Tuple[int, int]) -> None:
    # The transposed candidate used to build a table of odd width in a convention without an odd rule.
    table = [[0.25 * ((r + c) % 3) for c in range(shape[1])] for r in range(shape[0])]
    keywords: Dict[str, Any]
    for keywords in ({}, {"odd": "error"}, {"atol": 0.0}):
        report = compare(table, preset=preset, **keywords)
        assert not report.ok and report.diagnosis is not None


def test_an_odd_width_in_a_convention_without_an_odd_rule_is_a_mismatch() -> None:
    report = compare(encoding(5, 5), preset="tf-tutorial")
    assert not report.ok and report.failures == 0
    assert "the tf-tutorial convention has no table of odd width, and this one has 5 columns" in str(report)
    assert "no element compared: CANNOT BE CHECKED" in str(report)
    # tatp22's table differs from the paper's at an odd width.
    assert report.diagnosis is not None and "(preset paper, the same as xlm and keras-hub)" in report.diagnosis


def test_no_crash_at_positions_beyond_float64() -> None:
    table = encoding(3, 4)
    for atol in (None, 0.0):
        report = compare(table, start=2**1100, atol=atol)
        assert not report.ok
        assert (
            report.diagnosis is not None and "(preset paper, the same as xlm, keras-hub and tatp22)" in report.diagnosis
        )


def test_no_crash_at_the_smallest_base() -> None:
    for atol in (None, 0.0):
        report = compare(encoding(5, 4), base=5e-324, preset="tensor2tensor", atol=atol)
        assert not report.ok and report.diagnosis is not None


def test_report_is_exported() -> None:
    assert isinstance(compare(encoding(2, 2)), Report)


def tensor2tensor_table(seq_len: int, d_model: int, min_timescale: float = 1.0) -> List[List[float]]:
    """tensor2tensor's get_timing_signal_1d, retyped: inv_timescales = min * exp(-i ln(max/min) / (h - 1))."""
    half = d_model // 2
    increment = math.log(10000.0 / min_timescale) / (half - 1)
    inverse = [min_timescale * math.exp(-i * increment) for i in range(half)]
    return [[math.sin(p * w) for w in inverse] + [math.cos(p * w) for w in inverse] for p in range(seq_len)]


def test_an_unknown_convention_is_not_given_a_name() -> None:
    # tensor2tensor with min_timescale=2 was once called "fairseq's", with an error of 1.96; its frequencies are
    # 2 * 5000**(-i/(h-1)), read from the table.
    assert "(preset tensor2tensor, the same as whisper, diffusers and pyg)" in diagnosis(tensor2tensor_table(50, 16))
    for preset in ("paper", "tensor2tensor", "fairseq"):
        table = tensor2tensor_table(50, 16, min_timescale=2.0)
        text = diagnosis(table, preset=preset)
        assert "frequencies spaced by i/(h-1), with base 5000 instead of 10000 and angles times 2 instead of 1" in text
        assert_call_reproduces(text, table)
    # Frequencies that no law of the module gives: nothing is named.
    table = tensor2tensor_table(50, 16)
    for row in table:
        for c in (1, 3, 5, 7):  # more columns than local damage: each column's sine taken twice
            row[c] = math.sin(row[c])
    text = diagnosis(table)
    assert text.startswith("Diagnosis: nothing known explains the table. The closest candidate, "), text


def test_float32_errors_are_named_by_their_size_and_mark() -> None:
    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    stored = [
        [
            f32(math.sin(f32(p * f32(10000 ** -(2 * (j // 2) / 16)))))
            if j % 2 == 0
            else f32(math.cos(f32(p * f32(10000 ** -(2 * (j // 2) / 16)))))
            for j in range(16)
        ]
        for p in range(2000)
    ]
    # Stored in float32: checked as float32, it passes.
    assert "every value of the table is a float32 number, and float64 was asked: checked as float32" in diagnosis(
        stored
    )
    # Frequencies in float32, the rest in float64 (facebookresearch/DiT#7).
    frequencies_only = [
        [(math.sin if j % 2 == 0 else math.cos)(p * f32(10000 ** -(2 * (j // 2) / 16))) for j in range(16)]
        for p in range(2000)
    ]
    assert diagnosis(frequencies_only).endswith(
        "its values are not float32 numbers: frequencies or angles rounded to float32 leave this mark."
    )
    # Noise far below float32's roundings is not called float32.
    noisy = [[x + 1e-9 for x in row] for row in encoding(30, 16)]
    assert "float32" not in diagnosis(noisy)


def test_values_beyond_the_format_are_infinite_there() -> None:
    # 70000 is finite in float64 but beyond float16's range: it crashed compare().
    report = compare([[70000.0], [1.0]], dtype="float16")
    assert not report.ok and report.not_finite_count == 1
    assert "1 element is not a finite number: [0][0] is 70000.0, beyond float16's range" in str(report)
    assert compare([[70000.0]], dtype="float16").failures == 1
    report = compare([[1e308, 1.0]], dtype="float32")
    assert report.max_abs_error < math.inf and "[0][0] is 1e+308, beyond float32's range" in str(report)


def test_a_one_row_table_at_a_position_beyond_float64() -> None:
    report = compare([[0.5, 0.5]], preset="guided-diffusion", start=10**400)
    assert not report.ok and report.diagnosis is not None


def test_swapped_columns_are_named_by_the_columns_they_hold() -> None:
    table = encoding(20, 512)
    for row in table:
        row[500], row[502] = row[502], row[500]
    assert diagnosis(table).endswith("except for columns 500 and 502, swapped.")
    table = encoding(4, 16, preset="tensor2tensor", dtype="float16", exact=True)
    for row in table:
        row[5], row[15] = row[15], row[5]
    assert diagnosis(table, preset="tensor2tensor", dtype="float16").endswith("except for columns 5 and 15, swapped.")


def test_a_table_wrong_in_every_column_is_not_local_damage() -> None:
    generator = random.Random(3)
    noise = [[generator.uniform(-1, 1) for _ in range(2)] for _ in range(30)]
    assert diagnosis(noise).startswith("Diagnosis: nothing known explains the table")


def test_the_share_is_rounded_down() -> None:
    # 16 wrong elements in the first 8 rows, which are always sampled: 16 of 48 * 32 is 98.96%, printed 98.9%.
    table = encoding(60, 32, preset="tf-tutorial")
    for r in range(8):
        table[r][3] += 0.3
        table[r][20] += 0.3
    text = diagnosis(table, preset="tf-tutorial")
    assert "reproduces 98.9% of the elements compared (on 48 of 60 rows); a candidate must reproduce 99%" in text, text


def test_damage_outside_the_sampled_rows_is_mentioned() -> None:
    table = encoding(100, 16, preset="tensor2tensor")
    table[9][3] = 0.5  # row 9 is not among the sampled rows
    text = diagnosis(table)
    assert "except for 1 element: [9][3] is 0.5, expected 0.17289. The call that computes it without the damage" in text
    assert_call_reproduces(text, table)
    table = encoding(100, 16)
    for r in range(9, 27, 2):
        table[r][3] = 0.5
    text = diagnosis(table)
    assert text.endswith("but 9 elements in 9 rows are outside the default tolerance: more than local damage.")


def test_a_table_of_nan_has_no_other_elements() -> None:
    assert diagnosis([[math.nan] * 4] * 3).endswith("; no element is a finite number.")


def test_small_float32_tables_are_recognised() -> None:
    text = diagnosis(encoding(2, 4, base=100.0, dtype="float32"), base=100.0)
    assert "every value of the table is a float32 number, and float64 was asked: checked as float32" in text
    text = diagnosis([[x + 2**-30 for x in row] for row in encoding(2, 4, base=100.0, dtype="float32")], base=100.0)
    assert "with errors of float32 size" in text


def test_a_huge_first_position_is_shown_short() -> None:
    report = compare([[0.5, 0.5]], preset="guided-diffusion", start=10**400)
    text = str(report)
    assert "start=100000000000000000000000000000... (401 characters)" in text
    assert "0" * 100 not in text


# The format comes with the data ------------------------------------------------------------------


class Array:
    """What compare reads of an array or tensor, and nothing else: tolist() and dtype."""

    def __init__(self, rows: List[List[float]], dtype: str) -> None:
        self.rows, self.dtype = rows, dtype

    def tolist(self) -> List[List[float]]:
        return self.rows


FLOAT32_TABLE = encoding(64, 512, exact=True, dtype="float32")


def first_line(report: Report) -> str:
    return str(report).splitlines()[0]


@pytest.mark.parametrize(
    "dtype, held, origin",
    [
        ("float32", "float32", "the array's dtype"),
        ("torch.float32", "float32", "the tensor's dtype"),
        ("float16", "float16", "the array's dtype"),
        ("torch.bfloat16", "bfloat16", "the tensor's dtype"),
        ("float64", "float64", "the array's dtype"),
    ],
)
def test_an_array_is_checked_in_its_own_dtype(dtype: str, held: str, origin: str) -> None:
    table = encoding(64, 512, exact=True, dtype=held)
    report = compare(Array(table, dtype))
    assert report.ok and report.dtype == held and report.dtype_origin == origin
    assert first_line(report).startswith(f"64 x 512 table against the exact {held} values ({origin}) of the paper")
    # The same values as a list are float64's to judge: a narrow table fails there.
    assert compare(table).ok == (held == "float64")


class DtypeWithName:
    """numpy's dtype of a big-endian float32 array: str() is '>f4', its name 'float32'."""

    name = "float32"

    def __str__(self) -> str:
        return ">f4"


def test_a_dtype_is_read_by_its_name_whatever_its_byte_order() -> None:
    report = compare(Array(FLOAT32_TABLE, DtypeWithName()))  # type: ignore[arg-type]
    assert report.ok and report.dtype == "float32" and report.dtype_origin == "the array's dtype"


def test_a_dtype_given_is_honoured_and_the_report_says_the_data_holds_another() -> None:
    report = compare(Array(FLOAT32_TABLE, "torch.float32"), dtype="float64")
    assert not report.ok and report.dtype == "float64"
    assert "float64 values (as given; the tensor's dtype is float32) of" in first_line(report)
    same = compare(Array(FLOAT32_TABLE, "float32"), dtype="float32")
    assert same.ok and same.dtype_origin == "the array's dtype"


@pytest.mark.parametrize("dtype", ["int64", "torch.int32", "object", "float128", ""])
def test_a_dtype_that_is_no_format_leaves_float64(dtype: str) -> None:
    report = compare(Array(encoding(8, 8), dtype))
    assert report.ok and report.dtype == "float64" and report.dtype_origin is None
    assert "values of the paper" in first_line(report)


@pytest.mark.parametrize("narrow", ["float32", "bfloat16", "float16"])
def test_a_failing_list_names_the_narrower_format_that_holds_it(narrow: str) -> None:
    table = encoding(64, 64, exact=True, dtype=narrow)
    report = compare(table)
    assert not report.ok and report.narrower == narrow
    assert (
        f"every value is a {narrow} number: to check the table as {narrow}, give dtype={narrow!r} (--dtype {narrow})"
        in str(report)
    )
    assert compare(table, dtype=narrow).ok


def test_no_narrower_format_is_named_where_none_holds_the_values_or_the_check_passes() -> None:
    damaged = encoding(64, 64)
    damaged[3][3] += 0.01
    assert compare(damaged).narrower is None  # float64 values: no narrower format holds them
    assert compare(encoding(64, 64)).narrower is None  # passes
    # Given the format of an array, nothing narrower is suggested.
    assert compare(Array(encoding(64, 64, exact=True, dtype="float16"), "float32")).narrower is None


def test_numpy_and_torch_tables_are_checked_in_their_dtype() -> None:
    numpy = need("numpy")
    torch = need("torch")
    # tensor2tensor's float32 code, as the user wrote it: exp(arange * -ln(1e4) / (h - 1)).
    h = 256
    inverse = numpy.exp(numpy.arange(h, dtype=numpy.float32) * numpy.float32(-math.log(1e4) / (h - 1)))
    angles = numpy.arange(64, dtype=numpy.float32)[:, None] * inverse[None, :]
    t2t = numpy.concatenate([numpy.sin(angles), numpy.cos(angles)], axis=1)
    assert t2t.dtype == numpy.float32
    report = compare(t2t, preset="tensor2tensor")
    assert report.ok and report.dtype == "float32" and report.dtype_origin == "the array's dtype"
    assert not compare(t2t, preset="tensor2tensor", dtype="float64").ok
    big_endian = t2t.astype(">f4")
    assert str(big_endian.dtype) == ">f4" and compare(big_endian, preset="tensor2tensor").dtype == "float32"
    for dtype in ("float32", "float16", "bfloat16"):
        tensor = torch.tensor(encoding(100, 32), dtype=getattr(torch, dtype))
        report = compare(tensor)
        assert report.ok and report.dtype == dtype and report.dtype_origin == "the tensor's dtype"


def test_a_float16_element_one_thousandth_off_fails() -> None:
    # Issue 24: t[299][0] += 0.001 on a 300 x 8 table passed as float16 (stored, 2 steps and 1.07e-3 from the
    # true value; the allowance there is 2**-19 * 300 + 2**-11 * 0.52, 8.3e-4).
    table = encoding(300, 8, exact=True)
    table[299][0] += 0.001
    report = compare(table, dtype="float16")
    assert not report.ok and report.failures == 1 and report.coarse == 0


# ---------------------------------------------------------------------------
# compare()'s and Report's rules: rounding before the comparison, odd widths, values not finite
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# The check's fast references: float64 rows with a bound, and the same verdict as the exact rows
# ---------------------------------------------------------------------------
#
# compare() of a table in a narrow format makes its references as the fast path does (sin and cos of float64
# angles) and settles near the tolerance's edge, or near a midpoint of the format, with the exact kernel.  Each
# test builds a table whose elements sit at such an edge, finds the truth from the exact float64 values itself,
# and checks the report against it and against the exact rows' report (the fast references turned off).


def exact_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn the fast references off: every row from the exact kernel, as before they existed."""
    original = pe_reference._references

    def references(
        exact_rows: Callable[[str], Iterator[List[float]]],
        dtype: str,
        exact_row: Callable[[int], List[float]],
        fast: object,
    ) -> Iterator[Tuple[List[float], Callable[[], List[float]], None]]:
        return original(exact_rows, dtype, exact_row, None)  # type: ignore[return-value]

    monkeypatch.setattr(pe_reference, "_references", references)


def counted(monkeypatch: pytest.MonkeyPatch, name: str) -> List[int]:
    """Count the calls of one of the module's functions: [calls]."""
    calls = [0]
    original = getattr(pe_reference, name)

    def wrapper(*arguments: object) -> object:
        calls[0] += 1
        return original(*arguments)

    monkeypatch.setattr(pe_reference, name, wrapper)
    return calls


def decided_rows(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """Count the rows whose verdicts _Comparison._decided gives from the float64 row alone, and of those measured
    the rows it shows cannot reach the largest errors: [rows, short rows]."""
    rows = [0, 0]
    original = pe_reference._Comparison._decided

    def wrapper(self: Any, *arguments: Any) -> Any:
        decided, judged, short = original(self, *arguments)
        rows[0] += decided is not None
        rows[1] += self.measure and short
        return decided, judged, short

    monkeypatch.setattr(pe_reference._Comparison, "_decided", wrapper)
    return rows


def summary(report: Report) -> Tuple[object, ...]:
    return (
        str(report),
        report.ok,
        report.failures,
        report.max_abs_error,
        report.max_ulp_error,
        report.worst,
        report.coarse,
        report.unjudged,
    )


def float32(x: float) -> float:
    result: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return result


def float32_next(x: float, places: int) -> float:
    """The number of float32 ``places`` away from a positive float32 number x."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    result: float = struct.unpack("<f", struct.pack("<I", bits + places))[0]
    return result


@pytest.mark.parametrize("flipped", [False, True], ids=["passing", "a sign flipped first"])
def test_elements_at_the_tolerances_edge_get_the_exact_verdict(monkeypatch: pytest.MonkeyPatch, flipped: bool) -> None:
    # Pair 0 of a float32 table (frequency 1, angle = position), positions 8192 to 32767 (judged, coarse):
    # each element set to the float32 number nearest the edge of its tolerance, kept when it lies within
    # 2**-48 (1 + angle) of the edge, closer than the float64 values' own error (about 2**-52 angle) can tell.
    # With cos 0 negated first, the largest errors are reached at once, and the rows are tallied from their
    # float64 rows where those decide them (_Comparison._decided), the verdicts alone too.
    n = 32768
    exact = encoding(n, 2, exact=True)  # the float64 roundings the rule judges against
    table = encoding(n, 2, exact=True, dtype="float32")
    unit, storing = 2.0**-19, 2.0**-24  # the rule in float32: 2**-19 (1 + |angle|) + 2**-24 |value|
    outside = inside = 0
    for r in range(8192, n):
        growing = unit * float(r)
        for c in (0, 1):
            e = exact[r][c]
            for sign in (1.0, -1.0):
                v = float32(e + sign * (unit + growing + storing * abs(e)))
                found = [
                    x
                    for x in (float32_next(abs(v), k) * (1.0 if v > 0 else -1.0) for k in (-1, 0, 1))
                    if abs(abs(x - e) - ((unit + growing) + storing * abs(x))) < 2.0**-48 * (1 + r)
                ]
                if found and table[r][c] == float32(e):
                    table[r][c] = found[0]
                    if abs(found[0] - e) <= (unit + growing) + storing * abs(found[0]):
                        inside += 1
                    else:
                        outside += 1
    assert inside > 100 and outside > 100, (inside, outside)
    if flipped:
        table[0][1] = -1.0
        outside += 1
    settled = counted(monkeypatch, "_exact_value")
    decided = decided_rows(monkeypatch)
    report = compare(table, dtype="float32")
    assert report.failures == outside
    assert settled[0] > 0  # the nearest went to the exact kernel
    if flipped:  # most of compare()'s own rows, which cannot reach cos 0's error, are not measured either
        assert decided[0] > n // 2 and decided[1] > n // 2, decided
    decided[0] = 0
    source = pe_reference._source(table)
    source.rounding = "float32"
    verdicts = pe_reference._tally(source, pe_reference.Convention(), "float32", None, None, measure=False)
    assert verdicts.failures == outside
    assert decided[0] > n // 2  # the verdicts alone: most rows
    monkeypatch.undo()
    exact_only(monkeypatch)
    assert summary(compare(table, dtype="float32")) == summary(report)


def test_elements_whose_exact_value_is_near_a_midpoint_of_float32_get_its_exact_rounding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Elements whose float64 value lies within 2**-48 (1 + angle) of a midpoint between two float32 numbers:
    # their float32 rounding cannot be told from a float64 value within that bound.  Each is set to the number
    # on the midpoint's other side, one place from the exact rounding; with atol=0 exactly those fail.
    n = 65536
    exact = encoding(n, 2, exact=True)
    rounded = encoding(n, 2, exact=True, dtype="float32")
    table = [row[:] for row in rounded]
    moved = 0
    for r in range(n):
        for c in (0, 1):
            e, x = exact[r][c], rounded[r][c]
            if e == x or x == 0.0:
                continue
            # The neighbour of x on e's side, and the midpoint between them (a float64 number).
            toward = 1 if (e > x) == (x > 0) else -1
            other = math.copysign(float32_next(abs(x), toward), x)
            if abs(e - (x + other) / 2) < 2.0**-48 * (1 + r):
                table[r][c] = other
                moved += 1
    assert moved > 20, moved
    settled = counted(monkeypatch, "_exact_value")
    report = compare(table, dtype="float32", atol=0)
    assert report.failures == moved and report.max_ulp_error == 1
    assert settled[0] > 0  # the nearest went to the exact kernel
    default = compare(table, dtype="float32")
    assert default.ok and default.max_ulp_error == 1
    monkeypatch.undo()
    exact_only(monkeypatch)
    assert summary(compare(table, dtype="float32", atol=0)) == summary(report)
    assert summary(compare(table, dtype="float32")) == summary(default)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_a_table_computed_in_float32_gets_the_exact_rows_verdict(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    # A float32 pipeline's table (angle and value rounded to float32), one element in 64 off by 2**-9:
    # fast and exact references give the same report, in every rule.
    n, d_model = 3000, 64
    frequencies = [float32(10000.0 ** (-(2 * (c // 2)) / d_model)) for c in range(d_model)]
    table = [
        [float32((math.sin if c % 2 == 0 else math.cos)(float32(r * w))) for c, w in enumerate(frequencies)]
        for r in range(n)
    ]
    for k in range(0, n * d_model, 64):
        table[k // d_model][k % d_model] += 2.0**-9
    fast = [summary(compare(table, dtype=dtype, **rule)) for rule in ({}, {"atol": 1e-6}, {"ulps": 2})]
    assert not fast[0][1]
    rows = counted(monkeypatch, "_fixed_rows")
    exact_only(monkeypatch)
    assert [summary(compare(table, dtype=dtype, **rule)) for rule in ({}, {"atol": 1e-6}, {"ulps": 2})] == fast
    assert rows[0] >= 3


@pytest.mark.parametrize("error", [lambda x: 2.0**-40, lambda x: x * 2.0**-35])
def test_a_runtime_whose_sine_is_off_gets_the_exact_rows(
    monkeypatch: pytest.MonkeyPatch, error: Callable[[float], float]
) -> None:
    # The fast references take sin and cos within 2 units of 2**-53; the runtime's are tried first, once.  A sine
    # off by 2**-40, or by a relative 2**-35 (small beside the bound at a large angle, not at a small one), fails.
    table = encoding(100000, 2, exact=True, dtype="float32")
    truth = summary(compare(table, dtype="float32", atol=0))
    assert truth[2] == 0
    sine = math.sin
    monkeypatch.setattr(math, "sin", lambda x: sine(x) + error(x))  # the module pe_reference uses
    monkeypatch.delitem(pe_reference._RUNTIME, "sine", raising=False)
    rows = counted(monkeypatch, "_fixed_rows")
    assert summary(compare(table, dtype="float32", atol=0)) == truth
    assert rows[0] > 0 and pe_reference._RUNTIME["sine"] is False


def test_a_runtime_without_the_operator_module_gets_the_same_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    # MicroPython has no operator module: the arithmetic of whole rows falls back to lambdas, the exact rows are
    # used, and every report is the same.
    table = [[float(x) for x in row] for row in encoding(500, 16)]
    for k in range(0, 500 * 16, 7):
        table[k // 16][k % 16] += 2.0 ** -(8 + k % 16)
    rules: Tuple[Dict[str, Any], ...] = ({}, {"atol": 1e-4}, {"ulps": 3})
    reports = [summary(compare(table, dtype=dtype, **rule)) for dtype in ("float32", "float16") for rule in rules]
    monkeypatch.setitem(sys.modules, "operator", None)  # import operator raises ImportError
    rows = counted(monkeypatch, "_fixed_rows")
    assert [
        summary(compare(table, dtype=dtype, **rule)) for dtype in ("float32", "float16") for rule in rules
    ] == reports
    assert rows[0] > 0


CONVENTIONS = [
    {"preset": name} for name in ("paper", "tensor2tensor", "fairseq", "guided-diffusion", "marian", "tatp22")
] + [
    {"scale": "sqrt(512)"},
    {"scale": "sqrt(1/d)"},
    {"full_turns": True, "base": 100},
    {"positions": [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]},
    {"descending": True},
    {"start": "1/3", "step": "2/7"},
    {"odd": "round-up", "layout": "cos-sin"},
]


@pytest.mark.parametrize("fields", CONVENTIONS, ids=lambda fields: ",".join(f"{k}={v}" for k, v in fields.items()))
@pytest.mark.parametrize("d_model", [1, 7, 16])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_every_convention_gets_the_same_report_from_fast_and_exact_references(
    monkeypatch: pytest.MonkeyPatch, fields: Dict[str, Any], d_model: int, dtype: str
) -> None:
    # The fast table in dtype, with a few elements moved by growing amounts: some pass, some fail.
    seq_len = 12 if "positions" in fields else 120
    table = [[float(x) for x in row] for row in encoding(seq_len, d_model, **fields)]
    for k in range(0, seq_len * d_model, 5):
        table[k // d_model][k % d_model] += 2.0 ** -(8 + k % 16)
    kernel = counted(monkeypatch, "_exact_rows")
    reports = [summary(compare(table, dtype=dtype, **rule, **fields)) for rule in ({}, {"atol": 1e-4}, {"ulps": 3})]
    assert kernel[0] == 0  # the fast references made every row
    exact_only(monkeypatch)
    assert [
        summary(compare(table, dtype=dtype, **rule, **fields)) for rule in ({}, {"atol": 1e-4}, {"ulps": 3})
    ] == reports


@pytest.mark.parametrize("fields", [{}, {"scale": "sqrt(1/d)"}, {"preset": "tensor2tensor"}], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_a_failing_table_gets_the_same_report_from_rows_decided_by_the_float64_row(
    monkeypatch: pytest.MonkeyPatch, fields: Dict[str, Any], dtype: str
) -> None:
    # Once a sign has flipped (the largest distance in places past 2**p), a row whose errors from the float64 row
    # are clear of their tolerance by its bound, and that cannot reach the largest errors, is tallied without its
    # rounding to dtype.  Elements moved by amounts on both sides of the tolerance, of both signs, in every row:
    # the verdicts, the largest errors, the worst element and the damage found are those of the exact rows.
    seq_len, d_model = 300, 16
    table = [[float(x) for x in row] for row in encoding(seq_len, d_model, **fields)]
    table[0][1] = -table[0][1]  # cos 0 negated in the first row
    for k in range(d_model, seq_len * d_model, 3):
        table[k // d_model][k % d_model] += (-1) ** k * 2.0 ** -(4 + k % 23)
    table[200][5] = -table[200][5] * 1.5  # a larger distance in places, later

    def reports() -> List[Tuple[object, ...]]:
        rules: Tuple[Dict[str, Any], ...] = ({}, {"atol": 1e-4})
        found = [summary(compare(table, dtype=dtype, **rule, **fields)) for rule in rules]
        asked = pe_reference._convention("compare", d_model, None, dict(fields), refuse_odd=False)
        source = pe_reference._source(table)
        source.rounding = dtype
        verdicts = pe_reference._tally(source, asked, dtype, None, None, measure=False)
        return found + [(verdicts.failures, verdicts.damaged_rows, verdicts.damaged)]

    decided = decided_rows(monkeypatch)
    fast = reports()
    assert decided[0] > seq_len // 2 and decided[1] > 0, decided  # rows decided, some not measured
    exact_only(monkeypatch)
    assert reports() == fast


def test_a_value_past_the_format_is_measured_as_an_infinite_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Values times 65600 in float16: some exact values round to infinity, and a table that saturates them at
    # 65504 is infinitely far from them.  No row can be taken as short of the largest errors by a finite margin.
    table = [[max(-65504.0, min(65504.0, x)) for x in row] for row in encoding(40, 2, scale=65600, start=1)]
    table[0][1] = -table[0][1]

    def report() -> Tuple[object, ...]:
        return summary(compare(table, dtype="float16", scale=65600, start=1))

    fast = report()
    assert fast[3] == math.inf  # the largest error
    exact_only(monkeypatch)
    assert report() == fast


def captured_rows(monkeypatch: pytest.MonkeyPatch) -> List[Tuple[Any, int, List[float], Any, List[float], List[float]]]:
    """Record each row compare() tallies with the fast references: (comparison, r, row, float64 row, exact row in dtype, bound)."""
    rows: List[Tuple[Any, int, List[float], Any, List[float], List[float]]] = []
    original = pe_reference._Comparison.add

    def add(self: Any, r: int, row: List[float], exact: Any, expect: Any, bad: bool, bound: Any, settle: Any) -> None:
        if bound is not None and not bad:
            rows.append((self, r, row, exact, expect(), bound))
        original(self, r, row, exact, expect, bad, bound, settle)

    monkeypatch.setattr(pe_reference._Comparison, "add", add)
    return rows


def places(values: List[float], dtype: str) -> List[int]:
    return list(pe_reference._ordered(values, dtype, True))


FAILING: List[Tuple[Dict[str, Any], float]] = [  # (fields the table is made with, its factor): checked as the paper's
    ({"preset": "tensor2tensor"}, 1.0),
    ({"scale": "sqrt(1/d)"}, 1.0),
    ({"base": 500000}, -1.0),
    ({}, 0.5),
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_rows_decided_by_the_float64_row_keep_to_the_rule(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    # The three facts _Comparison._decided rests on, on each row of failing tables (other layouts, scales,
    # bases, signs): an error at most the pass line passes the rule by 2 B, one beyond the fail line fails it
    # by 2 B; no error from the exact rounding is more than the error from the float64 row + _reach's margin,
    # nor further from 0 in places than its place; and _beyond_places says so whenever an element is further
    # in places from its exact rounding than the largest distance so far (at 64 columns, more than the 16
    # elements whose signs may differ it measures one by one).
    rows = captured_rows(monkeypatch)
    for d_model in (16, 64):
        for fields, factor in FAILING:
            table = [[factor * float(x) for x in row] for row in encoding(96, d_model, **fields)]
            compare(table, dtype=dtype)
    assert len(rows) >= 8 * 96  # the diagnosis tallies others
    told = 0
    for comparison, r, row, exact, expected, bound in rows:
        allowance = comparison.allowance
        largest = max(abs(x) for x in row)
        tolerances = allowance.row(r, row)
        for bounds in (bound, [b * 2.0**30 for b in bound]):  # the bound given, and one the margins cannot hide
            lines = allowance.lines(r, bounds, row, largest)
            assert lines is not None
            for c, (passing, failing, tolerance, b) in enumerate(zip(*lines, tolerances, bounds)):
                assert passing <= tolerance - 2 * b and failing >= tolerance + 2 * b, (r, c)
        margin, top = comparison._reach(bound)
        judged = max(abs(x - f) for x, f in zip(row, exact))
        assert max(abs(x - e) for x, e in zip(row, expected)) <= judged + margin
        assert max(map(abs, places(expected, dtype))) <= top
        distance = max(abs(a - b) for a, b in zip(places(row, dtype), places(expected, dtype)))
        if distance > 1 << allowance.precision:
            comparison.max_ulps = distance - 1
            assert comparison._beyond_places(row, exact, bound, largest), r
            told += 1
    assert told > 100


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("count", [4, 40])  # measured one by one, and bounded together
def test_an_exact_value_that_may_round_to_the_next_number_is_taken_as_it(
    monkeypatch: pytest.MonkeyPatch, dtype: str, count: int
) -> None:
    # A float64 row f is within B of the exact values: where f lies just below a midpoint of dtype and f + B
    # beyond it, the exact value may round to the number above, one place further from an element of the other
    # sign.  _beyond_places must count that place, whether it measures the elements one by one or together.
    rows = captured_rows(monkeypatch)
    compare(encoding(8, 64), dtype=dtype)
    comparison, _, _, _, _, bound = rows[-1]  # a comparison, and the bound of one of its rows
    step = 2.0**-24 if dtype == "float32" else 2.0**-11  # one unit of dtype at 0.5
    lows = [0.5 + c * step for c in range(count)]
    row = [-low for low in lows] + [0.25] * (64 - count)  # the table: signs opposite to the exact values'
    exact = [low + step / 2 - b / 2 for low, b in zip(lows, bound)] + [0.25] * (64 - count)
    assert all(pe_reference._round_row([f], dtype) == [low] for f, low in zip(exact, lows))  # f rounds down
    assert all(f + b > low + step / 2 for f, b, low in zip(exact, bound, lows))  # f + B rounds up
    distances = [a + b for a, b in zip(places(lows, dtype), places(lows, dtype))]
    comparison.max_ulps = max(distances)  # reached if the exact value rounds as f does; beyond if it rounds up
    assert comparison._beyond_places(row, exact, bound, lows[-1])


# ---------------------------------------------------------------------------
# Tables made by numpy and torch, as the seed documents and the frameworks make them, checked
# ---------------------------------------------------------------------------
# numpy and torch are optional test dependencies: these tests are skipped
# without them (CI installs both).  The implementations below are written
# from each convention's definition; none is pe_reference's.

numpy = peer("numpy")  # imported on first use: a test without it skips (peers mark)
torch = peer("torch")  # imported on first use: a test without it skips (peers mark)


def seed_000_numpy(seq_len: int, d_model: int) -> Any:
    """Seed 000's mistake: the cosine of odd column j uses 10000**(j/d), in float32."""
    position = numpy.arange(seq_len, dtype=numpy.float32)[:, None]
    table = numpy.zeros((seq_len, d_model), dtype=numpy.float32)
    table[:, 0::2] = numpy.sin(position / numpy.power(10000, numpy.arange(0, d_model, 2) / d_model))
    table[:, 1::2] = numpy.cos(position / numpy.power(10000, numpy.arange(1, d_model, 2) / d_model))
    return table


def seed_000_torch(seq_len: int, d_model: int) -> Any:
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    table = torch.zeros(seq_len, d_model)
    table[:, 0::2] = torch.sin(
        position * torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    )
    table[:, 1::2] = torch.cos(
        position * torch.exp(torch.arange(1, d_model, 2).float() * (-math.log(10000.0) / d_model))
    )
    return table


def paper_loops(seq_len: int, d_model: int) -> Any:
    """Element by element in float64, then a float32 tensor (seed 001's first version)."""
    table = numpy.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for j in range(d_model):
            angle = pos / 10000 ** ((2 * (j // 2)) / d_model)
            table[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return torch.tensor(table, dtype=torch.float32)


def paper_torch_stacked(seq_len: int, d_model: int) -> Any:
    """Sines and cosines stacked then flattened to interleave them (seed 003's way)."""
    position = torch.arange(seq_len, dtype=torch.float32).reshape(-1, 1)
    divisor = torch.pow(10000, torch.arange(0, d_model, 2).float() / d_model)
    stacked = torch.stack([torch.sin(position / divisor), torch.cos(position / divisor)], dim=2)
    return torch.flatten(stacked, start_dim=1, end_dim=2)


def tensor2tensor_numpy(seq_len: int, d_model: int, start: int = 0) -> Any:
    """tensor2tensor's get_timing_signal_1d in numpy float64: [sin | cos], increment log(base)/(h-1)."""
    half = d_model // 2
    increment = math.log(10000.0) / max(half - 1, 1)
    inverse = numpy.exp(numpy.arange(half) * -increment)
    scaled = numpy.arange(start, start + seq_len)[:, None] * inverse[None, :]
    table = numpy.concatenate([numpy.sin(scaled), numpy.cos(scaled)], axis=1)
    return numpy.pad(table, [[0, 0], [0, d_model % 2]])


def tf_tutorial_numpy(seq_len: int, d_model: int) -> Any:
    depth = d_model / 2
    rates = 1 / (10000 ** (numpy.arange(depth)[None, :] / depth))
    angles = numpy.arange(seq_len)[:, None] * rates
    return numpy.concatenate([numpy.sin(angles), numpy.cos(angles)], axis=-1)


def guided_diffusion_torch(seq_len: int, d_model: int) -> Any:
    """OpenAI guided-diffusion's timestep_embedding: [cos | sin], exp(-log(base) i / half), zero column for odd d."""
    half = d_model // 2
    frequencies = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    arguments = torch.arange(seq_len, dtype=torch.float32)[:, None] * frequencies[None]
    table = torch.cat([torch.cos(arguments), torch.sin(arguments)], dim=-1)
    if d_model % 2:
        table = torch.cat([table, torch.zeros_like(table[:, :1])], dim=-1)
    return table


@pytest.mark.peers("numpy", "torch")
def test_seed_000_is_diagnosed() -> None:
    for table in (seed_000_numpy(64, 16), seed_000_torch(64, 16)):
        report = compare(table, dtype="float32")
        assert not report.ok and report.max_abs_error > 0.5
        assert "odd column index in the exponent" in str(report.diagnosis)


@pytest.mark.peers("numpy", "torch")
@pytest.mark.parametrize("make", [paper_loops, paper_torch_float32, paper_torch_stacked])
def test_correct_float32_tables_pass_as_float32(make: Any) -> None:
    table = make(512, 64)
    report = compare(table, dtype="float32")
    assert report.ok, str(report)


@pytest.mark.peers("numpy", "torch")
def test_float32_table_against_float64_names_the_float32_pipeline() -> None:
    table = paper_torch_float32(2048, 64)
    # In its own dtype the float32 table passes; against float64, given, it is a float32 pipeline.
    assert compare(table).ok
    report = compare(table, dtype="float64")
    assert not report.ok
    assert report.diagnosis == (
        "Diagnosis: every value of the table is a float32 number, and float64 was asked: checked as float32"
        " (dtype='float32'), it passes; its values were rounded to float32."
    )


@pytest.mark.peers("numpy", "torch")
@pytest.mark.parametrize(
    "make, preset, dtype",
    [
        (lambda: tensor2tensor_numpy(50, 16), "tensor2tensor", "float64"),
        (lambda: tensor2tensor_numpy(50, 15), "tensor2tensor", "float64"),
        (lambda: tensor2tensor_numpy(50, 16, start=2), "fairseq", "float64"),
        (lambda: tf_tutorial_numpy(50, 16), "tf-tutorial", "float64"),
        (lambda: guided_diffusion_torch(50, 16), "guided-diffusion", "float32"),
        (lambda: guided_diffusion_torch(50, 17), "guided-diffusion", "float32"),
    ],
)
def test_framework_conventions(make: Any, preset: str, dtype: str) -> None:
    table = make()
    report = compare(table, dtype=dtype)
    assert not report.ok
    assert f"(preset {preset}" in str(report.diagnosis), report.diagnosis
    assert compare(table, dtype=dtype, preset=preset).ok


@pytest.mark.peers("numpy", "torch")
def test_check_a_saved_torch_table(tmp_path: Path) -> None:
    environment = subprocess_environment()
    path = tmp_path / "diffusion.npy"
    numpy.save(path, guided_diffusion_torch(100, 32).numpy())

    def run(*args: str) -> "subprocess.CompletedProcess[str]":
        command = [sys.executable, "-m", "pe_reference", "--check", str(path), *args]
        return subprocess.run(command, capture_output=True, text=True, env=environment)

    mismatch = run("--dtype", "float32")
    assert mismatch.returncode == 1 and "(preset guided-diffusion)" in mismatch.stdout
    assert run("--dtype", "float32", "--preset", "guided-diffusion").returncode == 0


# ---------------------------------------------------------------------------
# The default verdict at the lengths models use, on tables the frameworks' own code builds
# ---------------------------------------------------------------------------
# docs/checking.md promises, for lengths up to 131072: a faithful computation in the table's
# format passes; zeros, a wrong convention, shifted, swapped or missing rows and an error of 1e-3 in
# an element judged to 2**-10 fail; the elements the format holds too coarsely are counted, and a
# table mostly not judged cannot be checked. Each promise is checked here at 131072 positions (rows
# spread over the table and its last 64, with their positions: the rule is per element), and the
# coarse and unjudged counts on a whole table against the angles computed here.


LENGTH = 131072
WIDTH = 512
ROWS = sorted(set(range(0, LENGTH, 256)) | set(range(LENGTH - 64, LENGTH)))


def numpy_float64(seq_len: int, d_model: int) -> Any:
    """numpy's float64 formula, pos * exp(-ln(10000) 2i/d), interleaved."""
    frequencies = numpy.exp(numpy.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    angles = numpy.arange(seq_len)[:, None] * frequencies[None, :]
    table = numpy.empty((seq_len, d_model))
    table[:, 0::2], table[:, 1::2] = numpy.sin(angles), numpy.cos(angles)
    return table


def numpy_float32(seq_len: int, d_model: int) -> Any:
    """The same in numpy float32 throughout."""
    f32 = numpy.float32
    frequencies = numpy.exp(numpy.arange(0, d_model, 2, dtype=f32) * f32(-(math.log(10000.0) / d_model)))
    angles = numpy.arange(seq_len, dtype=f32)[:, None] * frequencies[None, :]
    table = numpy.empty((seq_len, d_model), dtype=f32)
    table[:, 0::2], table[:, 1::2] = numpy.sin(angles), numpy.cos(angles)
    return table


@functools.lru_cache(maxsize=None)
def pytorch_tutorial() -> Any:
    return paper_torch_float32(LENGTH, WIDTH)


@functools.lru_cache(maxsize=None)
def tensor2tensor_rows() -> Any:
    return torch.as_tensor(frameworks.tensor2tensor(LENGTH, WIDTH)[ROWS])


# name: (build(seq_len, d_model) -> rows 0..seq_len-1, the preset it computes, its first position)
FAITHFUL: Dict[str, Tuple[Callable[[int, int], Any], str, int]] = {
    "numpy float64": (numpy_float64, "paper", 0),
    "numpy float32": (numpy_float32, "paper", 0),
    "PyTorch tutorial": (lambda n, d: pytorch_tutorial(), "paper", 0),
    "tensor2tensor": (frameworks.tensor2tensor, "tensor2tensor", 0),
    "fairseq": (frameworks.fairseq, "fairseq", 2),
    "guided-diffusion": (lambda n, d: frameworks.guided_diffusion(range(n), d), "guided-diffusion", 0),
    # Marian's own module is slow at this size (a minute at width 512): width 128.
    "transformers Marian": (lambda n, d: frameworks.marian(n, 128), "marian", 0),
    "transformers Whisper": (frameworks.whisper, "whisper", 0),
    "transformers M2M100": (frameworks.m2m100, "fairseq", 2),
    "PyTorch tutorial stored as bfloat16": (lambda n, d: pytorch_tutorial().to(torch.bfloat16), "paper", 0),
    "PyTorch tutorial stored as float16": (lambda n, d: pytorch_tutorial().half(), "paper", 0),
}


@pytest.mark.peers("numpy", "torch", "transformers")
@pytest.mark.parametrize("name", sorted(FAITHFUL))
def test_a_faithful_table_passes_at_131072_positions(name: str) -> None:
    build, preset, first = FAITHFUL[name]
    table = build(LENGTH, WIDTH)
    report = compare(table[ROWS], preset=preset, positions=[r + first for r in ROWS])
    assert report.ok, str(report)
    # Computed in float32, a quarter or more of the elements sit past angle 511; float64 holds them all.
    assert (report.coarse > report.count / 4) is (report.dtype != "float64"), str(report)
    assert report.unjudged < report.count / 10, str(report)


def right_table(dtype: str) -> Any:
    """A faithful table in dtype: numpy's float64 formula, or the PyTorch tutorial's float32 stored in dtype."""
    if dtype == "float64":
        return torch.as_tensor(numpy_float64(LENGTH, WIDTH))
    return pytorch_tutorial().to(getattr(torch, dtype))


def moved_from_the_true_value(table: Any, r: int, c: int, true: float, dtype: str) -> Any:
    """The table with [r][c] at least 1e-3 + 2**-p |value| from the true value (p the format's precision)."""
    precision = {"float64": 53, "float32": 24, "bfloat16": 8, "float16": 11}[dtype]
    toward_zero = -math.copysign(1.0, true)
    moved = torch.tensor(true + toward_zero * 1e-3, dtype=torch.float64).to(table.dtype)
    while abs(float(moved) - true) < 1e-3 + 2.0**-precision * abs(float(moved)):
        moved = torch.nextafter(moved, torch.tensor(toward_zero * 2, dtype=table.dtype))
    changed = table.clone()
    changed[r, c] = moved
    return changed


@pytest.mark.peers("numpy", "torch", "transformers")
@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_wrong_tables_fail_at_131072_positions(dtype: str) -> None:
    right = right_table(dtype)
    sampled = right[ROWS]
    assert compare(sampled, positions=ROWS).ok
    half = len(ROWS) // 2
    # An element judged to 2**-10: the last row, the first column whose angle is at most 511.
    frequencies = [10000.0 ** -(2 * (c // 2) / WIDTH) for c in range(WIDTH)]
    column = next(c for c in range(WIDTH) if ROWS[-1] * frequencies[c] <= 511)
    true = math.sin(ROWS[-1] * frequencies[column]) if column % 2 == 0 else math.cos(ROWS[-1] * frequencies[column])
    tensor2tensor = tensor2tensor_rows().to(right.dtype)
    wrong: Dict[str, Tuple[Any, List[int]]] = {
        "zeros": (torch.zeros_like(sampled), ROWS),
        "tensor2tensor's table": (tensor2tensor, ROWS),
        "rows one position later": (right[[min(r + 1, LENGTH - 1) for r in ROWS]], ROWS),
        "two rows swapped": (right[ROWS[:-2] + [ROWS[-1], ROWS[-2]]], ROWS),
        "a row missing": (right[[r + 1 if i >= half else r for i, r in enumerate(ROWS[:-1])]], ROWS[:-1]),
        "1e-3 off": (moved_from_the_true_value(sampled, len(ROWS) - 1, column, true, dtype), ROWS),
    }
    for name, (table, positions) in wrong.items():
        report = compare(table, positions=positions)
        assert report.failures > 0 and not report.ok, f"{name}\n{report}"


@pytest.mark.peers("numpy", "torch", "transformers")
def test_the_coarse_and_unjudged_counts_of_a_whole_table_are_the_angles_past_511_and_32767() -> None:
    # The whole 131072 x 64 table of the PyTorch tutorial; the angles counted here in float64.
    table = paper_torch_float32(LENGTH, 64)
    report = compare(table)
    assert report.ok, str(report)
    pairs = [10000.0 ** -(2 * i / 64) for i in range(32)]
    positions = numpy.arange(LENGTH, dtype=numpy.float64)
    u = [2.0**-19 * (1 + positions * w) for w in pairs]
    coarse = 2 * sum(int(((x > 2.0**-10) & (x <= 2.0**-4)).sum()) for x in u)
    unjudged = 2 * sum(int((x > 2.0**-4).sum()) for x in u)
    assert (report.coarse, report.unjudged) == (coarse, unjudged)
    assert report.coarse_from == (512, 0) and report.unjudged_from == (32768, 0)


@pytest.mark.peers("numpy", "torch", "transformers")
def test_the_pytorch_tutorials_float32_module_at_32768_by_32_passes() -> None:
    # Issue 24: it failed with 235 elements beyond the cap 2**-10, "more than local damage".
    report = compare(paper_torch_float32(32768, 32))
    assert report.ok and report.dtype == "float32" and report.dtype_origin == "the tensor's dtype", str(report)


@pytest.mark.peers("numpy", "torch", "transformers")
def test_a_table_whose_angles_mostly_pass_32767_cannot_be_checked() -> None:
    table = paper_torch_float32(70000, 2)
    report = compare(table)
    assert report.failures == 0 and not report.ok
    assert report.unjudged == 2 * (70000 - 32768)
    lines = str(report).splitlines()
    assert lines[-2].endswith("0 of 140000 elements outside the tolerance, 74464 not judged: CANNOT BE CHECKED")
    assert "most elements are not judged: the table cannot be checked in float32" in str(report)


def test_a_candidate_is_named_closest_only_when_it_reproduces_an_element() -> None:
    # 56 rows of 100 sampled, 32 columns: one element of 1792 reproduced is under 0.1%, not "0%"; none, no name.
    table = [[7.0] * 32 for _ in range(100)]
    table[0][1] = 1.0  # cos 0
    text = str(compare(table).diagnosis)
    assert "The closest candidate, the paper's convention" in text and "reproduces under 0.1% of the elements" in text
    table[0][1] = 7.0
    text = str(compare(table).diagnosis)
    assert "nothing known explains the table: no candidate reproduces any of the elements compared" in text, text
    assert "closest" not in text


@pytest.mark.parametrize("far, checkable", [(3, True), (5, True), (6, False)])
def test_a_table_cannot_be_checked_only_when_more_than_half_its_elements_are_not_judged(
    far: int, checkable: bool
) -> None:
    # d_model 2 in float32: the rows at positions past 32767 are not judged, the others are; 10 rows.
    positions = list(range(10 - far)) + [40000 + r for r in range(far)]
    table = encoding(10, 2, positions=positions, exact=True, dtype="float32")
    report = compare(table, positions=positions, dtype="float32")
    assert report.unjudged == 2 * far
    assert report.ok == checkable
    assert (report.uncheckable is None) == checkable


def test_a_padding_column_is_judged_as_the_zero_it_is_at_every_position() -> None:
    # An odd width's zero column has no angle: its allowance is the angle 0's at every row, so an error of 1e-3
    # fails at position 4000 too, where an angle of 4000 would allow 2**-19 * 4001, about 0.0076.
    table = encoding(5000, 3, odd="zero", dtype="float32", exact=True)
    for r in (1, 4000):
        damaged = [row[:] for row in table]
        damaged[r][2] = 1e-3
        report = compare(damaged, odd="zero", dtype="float32")
        assert (report.ok, report.failures, report.worst[:2] if report.worst else None) == (False, 1, (r, 2))
