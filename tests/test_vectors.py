"""--format vectors: golden test vectors, checked against mpmath and against docs/vectors.md."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

from tests import reference
from tests.test_conventions import independent

ROOT = Path(__file__).resolve().parent.parent


def vectors(*args: str) -> Dict[str, Any]:
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.run(
        [sys.executable, "-m", "pe_reference", *args, "--format", "vectors"], capture_output=True, text=True, env=environment, check=True
    )
    document: Dict[str, Any] = json.loads(process.stdout)
    return document


def test_schema_and_bits_of_the_paper_table() -> None:
    document = vectors("5", "6")
    assert document["schema"] == "pe_reference.vectors/1"
    assert document["parameters"] == {
        "seq_len": 5,
        "d_model": 6,
        "base": 10000.0,
        "base_hex": "0x1.3880000000000p+13",
        "convention": "paper",
        "layout": "interleaved",
        "spacing": "paper",
        "start": 0,
        "odd": "sine",
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
    assert (parameters["convention"], parameters["layout"], parameters["odd"], parameters["base"]) == ("tensor2tensor", "sin-cos", "zero", 500000.0)
    assert document["columns"][-1] == {"function": "zero", "pair": 0, "exponent": [0, 1]}
    assert document["columns"][1] == {"function": "sin", "pair": 1, "exponent": [1, 1]}
    truth = independent("tensor2tensor", 4, 5, 500000.0)
    for dtype, table in document["bits"].items():
        for pos in range(4):
            assert [int(cell, 16) for cell in table[pos]] == [reference.bits(reference.round_to(x, dtype), dtype) for x in truth[pos]]


def test_the_schema_is_documented() -> None:
    page = (ROOT / "docs" / "vectors.md").read_text(encoding="utf-8")
    document = vectors("2", "2")
    for key in list(document) + list(document["parameters"]) + ["function", "pair", "exponent"]:
        assert f"`{key}`" in page, key
