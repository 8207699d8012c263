"""Regressions from the review of the rotary code: each failed before its fix."""

import json
import math
from fractions import Fraction

import pytest

import pe_reference
from pe_reference import apply_rope, compare_rope, rope
from tests import rope_reference
from tests.rope_reference import rounded
from tests.helpers import run_main


def test_rotated_check_refuses_vectors_that_are_not_finite_or_overflow() -> None:
    with pytest.raises(ValueError, match=r"x\[0\]\[0\] must be finite, got inf"):
        compare_rope([[1.0, 2.0]], kind="rotated", x=[[math.inf, 0.0]], positions=[1])
    # |x[a]| + |x[b]| past float64 made the tolerance infinite, and any table passed.
    with pytest.raises(ValueError, match="finite for each pair"):
        compare_rope([[1.0, 2.0]], kind="rotated", x=[[1e308, 1e308]], positions=[1])
    with pytest.raises(ValueError, match="finite for each pair"):
        apply_rope([[1e308, -1e308]])


def test_a_constant_table_is_not_blamed_on_its_format() -> None:
    report = compare_rope([[0.5] * 8] * 64)
    assert not report.ok and report.causes == ()


def test_a_narrow_table_with_another_mistake_names_both() -> None:
    table = rope(64, 8, base=500000, dtype="bfloat16")[0]
    report = compare_rope(table, dtype="float32")
    assert set(report.causes) == {"base", "output:bfloat16"}
    assert compare_rope(rope(64, 8, dtype="float32")[0]).causes == ("output:float32",)


def test_angles_float32_is_named_only_for_a_pairs_own_error() -> None:
    # Rows of ones rotated, but pair 0 left unrotated: errors near 2, not a float32 angle's.
    positions = list(range(60000, 60064))
    x = [[1.0] * 128 for _ in positions]
    table = apply_rope(x, positions=positions)
    for row, vector in zip(table, x):
        row[0], row[64] = vector[0], vector[64]
    report = compare_rope(table, kind="rotated", x=x, positions=positions)
    assert not report.ok and "angles:float32" not in report.causes


def test_zeros_at_large_positions_are_not_a_float32_angle() -> None:
    positions = [2**22 + r for r in range(16)]
    report = compare_rope([[0.0, 0.0]] * 16, positions=positions)
    assert not report.ok and report.causes == ()


@pytest.mark.parametrize(
    "base, length",
    [(3, 4096), (10000, 4), ("1.5", 4096)],
)
def test_yarn_untruncated_with_bounds_clamped_out_of_order(base: object, length: int) -> None:
    scaling = {"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": length, "truncate": False}
    positions = [0, 1, 37, 1000]
    cos, sin = rope(len(positions), 16, base=base, scaling=scaling, positions=positions, exact=True)
    model = rope_reference.Rope(16, base, scaling)  # type: ignore[arg-type]
    expected_cos, expected_sin = model.table(positions)
    assert cos == [[rounded(v, "float64") for v in row] for row in expected_cos]
    assert sin == [[rounded(v, "float64") for v in row] for row in expected_sin]


def test_yarn_untruncated_fast_path_with_a_base_float64_rounds_to_one() -> None:
    scaling = {"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": 4096, "truncate": False}
    base = "1.0000000000000000000000000001"
    fast = rope(2, 16, base=base, scaling=scaling)[0]
    exact = rope(2, 16, base=base, scaling=scaling, exact=True)[0]
    assert all(abs(a - b) < 1e-12 for a, b in zip(fast[1], exact[1]))


def test_huge_attention_factor_at_a_tiny_angle_is_rounded_right() -> None:
    # A just above a float64 midpoint M; A cos(theta) lies below M by A theta**2 / 2, which the
    # tiny-angle cosine ignored: it returned M's upper neighbour.
    midpoint = 2**200 + 2**147
    factor = Fraction(3 * 2**20 * midpoint + 1, 3 * 2**20)
    scaling = {
        "rope_type": "yarn",
        "factor": 4,
        "original_max_position_embeddings": 64,
        "attention_factor": f"{factor.numerator}/{factor.denominator}",
    }
    cos = rope(1, 2, positions=[2.0**-105], scaling=scaling, exact=True)[0]
    assert cos[0][0] == 2.0**200


def test_golden_vectors_write_infinity_as_its_bits(capsys: "pytest.CaptureFixture[str]", tmp_path: object) -> None:
    assert pe_reference._bit_pattern(math.inf, "float16") == 0x7C00
    assert pe_reference._bit_pattern(-math.inf, "float32") == 0xFF800000
    assert pe_reference._bit_pattern(math.inf, "bfloat16") == 0x7F80


@pytest.mark.parametrize(
    "scaling",
    ['{"rope_type": "linear", "factor": true}', '{"rope_type": ["linear"]}', '{"factor": {"a": 1}}'],
)
def test_cli_scaling_of_a_wrong_type_is_a_usage_error(capsys: "pytest.CaptureFixture[str]", scaling: str) -> None:
    status, out, err = run_main(capsys, "2", "4", "--rope", "cos", "--rope-scaling", scaling)
    assert status == 2 and out == "" and len(err.splitlines()) == 1, err


def test_cli_shape_mismatch_names_both_shapes(capsys: "pytest.CaptureFixture[str]", tmp_path: "object") -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "x.csv").write_text("1,2\n3,4\n")
    (folder / "t.csv").write_text("1,2,3,4\n5,6,7,8\n")
    status, out, _ = run_main(
        capsys, "--rope", "rotated", "--input", str(folder / "x.csv"), "--check", str(folder / "t.csv")
    )
    assert status == 1 and "the table has 2 x 4 values, expected 2 x 2" in out


def test_rotated_header_names_columns(capsys: "pytest.CaptureFixture[str]", tmp_path: "object") -> None:
    from pathlib import Path

    source = Path(str(tmp_path)) / "x.csv"
    source.write_text("1,2,3,4\n")
    status, out, _ = run_main(capsys, "--rope", "rotated", "--input", str(source), "--format", "csv", "--header")
    assert status == 0 and out.splitlines()[0] == "x_0,x_1,x_2,x_3"
    assert json.loads("[" + out.splitlines()[1] + "]") == apply_rope([[1.0, 2.0, 3.0, 4.0]])[0]
