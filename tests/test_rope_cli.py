"""The command line's rotary tables: --rope cos|sin|rotated, printed and checked."""

import json
import math
import struct
from pathlib import Path
from typing import List

import pytest

from pe_reference import apply_rope, rope
from tests.helpers import run_main

YARN = '{"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 16}'


def csv_rows(text: str) -> List[List[float]]:
    return [[float(x) for x in line.split(",")] for line in text.splitlines()]


def write_csv(path: Path, table: List[List[float]]) -> None:
    path.write_text("".join(",".join(repr(x) for x in row) + "\n" for row in table))


@pytest.mark.parametrize("kind", ["cos", "sin"])
def test_printed_cache_is_the_functions_cache(capsys: "pytest.CaptureFixture[str]", kind: str) -> None:
    status, out, err = run_main(capsys, "5", "8", "--rope", kind, "--format", "csv", "--rope-scaling", YARN, "--exact")
    assert (status, err) == (0, "")
    cos, sin = rope(5, 8, scaling=json.loads(YARN), exact=True)
    assert csv_rows(out) == (cos if kind == "cos" else sin)


def test_hex_is_each_values_bits(capsys: "pytest.CaptureFixture[str]") -> None:
    status, out, _ = run_main(capsys, "3", "4", "--rope", "sin", "--format", "hex", "--exact", "--dtype", "float32")
    assert status == 0
    expected = rope(3, 4, exact=True, dtype="float32")[1]
    bits = [[int(cell, 16) for cell in line.split(",")] for line in out.splitlines()]
    assert bits == [[struct.unpack("<I", struct.pack("<f", x))[0] for x in row] for row in expected]


def test_interleaved_header_names_each_columns_pair(capsys: "pytest.CaptureFixture[str]") -> None:
    status, out, _ = run_main(
        capsys, "1", "6", "--rope", "cos", "--rope-layout", "interleaved", "--format", "csv", "--header"
    )
    assert status == 0
    assert out.splitlines()[0] == "cos_0,cos_0,cos_1,cos_1,cos_2,cos_2"


def test_pairs_layout_prints_and_checks_one_column_per_pair(
    capsys: "pytest.CaptureFixture[str]", tmp_path: Path
) -> None:
    # D_MODEL is the head's width; a pairs cache has one column per pair, D_MODEL / 2 of them.
    status, out, _ = run_main(
        capsys, "4", "8", "--rope", "sin", "--rope-layout", "pairs", "--format", "csv", "--header", "--exact"
    )
    assert status == 0
    assert out.splitlines()[0] == "sin_0,sin_1,sin_2,sin_3"
    assert csv_rows("\n".join(out.splitlines()[1:])) == rope(4, 8, layout="pairs", exact=True)[1]
    table = tmp_path / "pairs.csv"
    write_csv(table, rope(40, 8, layout="pairs")[0])
    for shape in ([], ["40", "8"]):  # the head's width taken from the file's 4 columns, or given
        status, out, _ = run_main(capsys, *shape, "--check", str(table), "--rope", "cos", "--rope-layout", "pairs")
        assert status == 0 and out.startswith("40 x 4 table") and out.rstrip().endswith("within tolerance"), out
    status, out, _ = run_main(capsys, "40", "6", "--check", str(table), "--rope", "cos", "--rope-layout", "pairs")
    assert status == 1 and out.strip() == "shape mismatch: the table has 40 x 4 values, expected 40 x 3"
    # Checked without the layout, the diagnosis reads it and prints the call.
    status, out, _ = run_main(capsys, "--check", str(table), "--rope", "cos")
    assert status == 1 and "in the pairs layout (one column per pair: head_dim 8)" in out
    assert "--rope-layout pairs" in out


def test_golden_vectors_hold_all_four_formats(capsys: "pytest.CaptureFixture[str]") -> None:
    status, out, _ = run_main(
        capsys, "3", "4", "--rope", "cos", "--format", "vectors", "--positions", "0,0.5,1e4", "--base", "500000"
    )
    assert status == 0
    document = json.loads(out)
    assert document["schema"] == "pe_reference.rope-vectors/1"
    assert document["parameters"]["positions"] == ["0", "0.5", "10000"]
    cos = rope(3, 4, base=500000, positions=[0, 0.5, 10000], exact=True, dtype="float16")[0]
    assert [[int(b, 16) for b in row] for row in document["bits"]["float16"]] == [
        [struct.unpack("<H", struct.pack("<e", x))[0] for x in row] for row in cos
    ]


def test_check_passes_a_right_cache_and_fails_a_wrong_one(capsys: "pytest.CaptureFixture[str]", tmp_path: Path) -> None:
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    write_csv(good, rope(40, 8, base=500000)[0])
    write_csv(bad, rope(40, 8, base=10000)[0])
    status, out, _ = run_main(capsys, "--check", str(good), "--rope", "cos", "--base", "500000")
    assert status == 0 and out.rstrip().endswith("within tolerance")
    status, out, _ = run_main(capsys, "--check", str(bad), "--rope", "cos", "--base", "500000")
    assert status == 1 and "MISMATCH" in out and "with base 10000" in out


def test_rotated_vectors_printed_and_checked(capsys: "pytest.CaptureFixture[str]", tmp_path: Path) -> None:
    vectors = [[1.0, -2.0, 0.5, 3.0], [0.25, 1.0, -1.0, 2.0], [4.0, 0.0, 0.0, -4.0]]
    source = tmp_path / "x.csv"
    write_csv(source, vectors)
    status, out, _ = run_main(capsys, "--rope", "rotated", "--input", str(source), "--format", "csv", "--exact")
    assert status == 0
    assert csv_rows(out) == apply_rope(vectors, exact=True)
    rotated = tmp_path / "rotated.csv"
    write_csv(rotated, apply_rope(vectors))
    status, out, _ = run_main(capsys, "--check", str(rotated), "--rope", "rotated", "--input", str(source))
    assert status == 0, out
    write_csv(rotated, apply_rope(vectors, layout="interleaved"))
    status, out, _ = run_main(capsys, "--check", str(rotated), "--rope", "rotated", "--input", str(source))
    assert status == 1 and "interleaved layout" in out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["4", "4", "--rope", "cos", "--start", "2"], "--rope takes --base and --positions, not --start"),
        (["4", "4", "--rope", "cos", "--rope-scaling", "[1]"], "--rope-scaling must be a JSON object"),
        (["4", "4", "--rope", "sin", "--input", "x.csv"], "--input goes with --rope rotated"),
        (["4", "4", "--rope", "cos", "--explain"], "--rope takes no --explain"),
        (["4", "4", "--rope-scaling", YARN], "--rope-scaling goes with --rope"),
        (
            [
                "4",
                "6",
                "--rope",
                "cos",
                "--rope-scaling",
                '{"rope_type": "longrope", "original_max_position_embeddings": 8}',
            ],
            "needs 'short_factor'",
        ),
    ],
)
def test_usage_errors_are_one_line_and_status_2(
    capsys: "pytest.CaptureFixture[str]", arguments: List[str], message: str
) -> None:
    status, out, err = run_main(capsys, *arguments)
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err


def test_check_shape_mismatch_is_status_1(capsys: "pytest.CaptureFixture[str]", tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    write_csv(table, rope(3, 4)[0])
    status, out, _ = run_main(capsys, "5", "4", "--check", str(table), "--rope", "cos")
    assert status == 1 and "shape mismatch" in out


def test_fast_cache_agrees_with_exact_to_float64_rounding() -> None:
    # The fast path computes p * w_k and cos in float64: within a few ulps of the angle's size.
    scaling = {
        "rope_type": "llama3",
        "factor": 8,
        "low_freq_factor": 1,
        "high_freq_factor": 4,
        "original_max_position_embeddings": 64,
    }
    fast = rope(300, 16, base=500000, scaling=scaling)
    exact = rope(300, 16, base=500000, scaling=scaling, exact=True)
    for table_fast, table_exact in zip(fast, exact):
        for r, (row_fast, row_exact) in enumerate(zip(table_fast, table_exact)):
            for a, b in zip(row_fast, row_exact):
                assert abs(a - b) <= 2.0**-50 * (1 + r), (r, a, b)
    assert any(a != b for row_f, row_e in zip(fast[0], exact[0]) for a, b in zip(row_f, row_e))
    assert math.isfinite(fast[0][-1][0])
