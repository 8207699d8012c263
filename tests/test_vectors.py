"""--format vectors: golden test vectors, checked against mpmath and against docs/vectors.md."""

import json
import subprocess
import sys
from typing import Any, Dict

import mpmath

from tests import reference
from tests.helpers import ROOT, subprocess_environment


def vectors(*args: str) -> Dict[str, Any]:
    environment = subprocess_environment()
    process = subprocess.run(
        [sys.executable, "-m", "pe_reference", *args, "--format", "vectors"],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
    )
    document: Dict[str, Any] = json.loads(process.stdout)
    return document


def test_schema_and_bits_of_the_paper_table() -> None:
    document = vectors("5", "6")
    assert document["schema"] == "pe_reference.vectors/2"
    assert document["parameters"] == {
        "seq_len": 5,
        "d_model": 6,
        "convention": "paper",
        "layout": "interleaved",
        "spacing": "paper",
        "shift": "1",
        "base": "10000",
        "angle_scale": "1",
        "full_turns": False,
        "odd": "sine",
        "scale": "1",
        "positions": ["0", "1", "2", "3", "4"],
    }
    assert document["columns"][3] == {"function": "cos", "pair": 1, "exponent": [2, 6]}
    assert set(document["bits"]) == {"float64", "float32", "bfloat16", "float16"}
    for dtype, table in document["bits"].items():
        width = {"float64": 16, "float32": 8, "bfloat16": 4, "float16": 4}[dtype]
        assert len(table) == 5 and all(len(row) == 6 for row in table)
        for pos, row in enumerate(table):
            for dim, cell in enumerate(row):
                assert len(cell) == width
                assert int(cell, 16) == reference.bits(reference.expected(pos, dim, 6, 10000.0, dtype), dtype)


def test_a_preset_with_a_padding_column() -> None:
    document = vectors("4", "5", "--preset", "tensor2tensor", "--base", "500000")
    parameters = document["parameters"]
    assert (parameters["convention"], parameters["layout"], parameters["odd"], parameters["base"]) == (
        "tensor2tensor (base=500000)",
        "sin-cos",
        "zero",
        "500000",
    )
    assert document["columns"][-1] == {"function": "zero", "pair": 0, "exponent": [0, 1]}
    assert document["columns"][1] == {"function": "sin", "pair": 1, "exponent": [1, 1]}
    truth = reference.convention_table("tensor2tensor", 4, 5, 500000.0)
    for dtype, table in document["bits"].items():
        for pos in range(4):
            assert [int(cell, 16) for cell in table[pos]] == [
                reference.bits(reference.round_to(x, dtype), dtype) for x in truth[pos]
            ]


def test_real_positions_are_written_exactly() -> None:
    document = vectors("3", "4", "--preset", "diffusers", "--positions", "999.5,0.3,-1/3", "--scale", "sqrt(2/d)")
    parameters = document["parameters"]
    assert parameters["positions"] == ["999.5", "0.3", "-1/3"]
    assert parameters["scale"] == "sqrt(2/d)"
    with mpmath.workprec(reference.PRECISION):
        first = mpmath.sqrt(mpmath.mpf(1) / 2) * mpmath.sin(mpmath.mpf(1999) / 2)
        last_cosine = mpmath.sqrt(mpmath.mpf(1) / 2) * mpmath.cos(mpmath.mpf(-1) / 3 * mpmath.mpf(10000) ** -1)
    for dtype, table in document["bits"].items():
        assert int(table[0][0], 16) == reference.bits(reference.round_to(first, dtype), dtype)
        assert int(table[2][3], 16) == reference.bits(reference.round_to(last_cosine, dtype), dtype)


def test_the_schema_is_documented() -> None:
    page = (ROOT / "docs" / "vectors.md").read_text(encoding="utf-8")
    document = vectors("2", "2")
    for key in list(document) + list(document["parameters"]) + ["function", "pair", "exponent"]:
        assert f"`{key}`" in page, key
