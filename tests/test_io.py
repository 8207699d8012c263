"""Input and output: the readers of tables to check, the tables written, the golden vectors, streaming.

The .npy files are built by hand, as NumPy's format description gives them: version 1.0 has a 2-byte header
length and a Latin-1 header, versions 2.0 and 3.0 a 4-byte length, 3.0 a UTF-8 header.
"""

import contextlib
import io
import json
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any, Dict, List

import mpmath
import pytest

import pe_reference
from pe_reference import apply_rope, compare, encoding, main
from tests import reference
from tests.helpers import ROOT, parse, run_main, subprocess_environment

ROW = struct.pack("<2d", 0.0, 1.0)
HEADER = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }"


def npy(header: bytes, data: bytes, version: int) -> bytes:
    preamble = 10 if version == 1 else 12
    header += b" " * ((64 - (preamble + len(header) + 1) % 64) % 64) + b"\n"
    length = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header + data


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_npy_version_is_read(version: int) -> None:
    assert list(parse(npy(HEADER.encode("ascii"), ROW, version), "t.npy", ".npy")) == [[0.0, 1.0]]


@pytest.mark.parametrize("version", [1, 2])
def test_a_version_1_or_2_header_is_latin_1(version: int) -> None:
    # A comment with an e-acute, one byte in Latin-1 (not UTF-8).
    data = npy((HEADER + " # caf\u00e9").encode("latin-1"), ROW, version)
    assert list(parse(data, "t.npy", ".npy")) == [[0.0, 1.0]]


def test_a_version_3_header_is_utf_8() -> None:
    # A no-break space (U+00A0, two bytes in UTF-8) ends the header: whitespace only when read as UTF-8.
    data = npy((HEADER + "\u00a0").encode("utf-8"), ROW, 3)
    assert list(parse(data, "t.npy", ".npy")) == [[0.0, 1.0]]


def test_a_version_2_file_too_short_for_its_header_length_is_refused() -> None:
    # Versions 2 and 3 need 12 bytes before the header: magic, version, 4 bytes of length.
    with pytest.raises(pe_reference._Unreadable, match=r"^t\.npy: unsupported \.npy version 2\.0$"):
        parse(b"\x93NUMPY\x02\x00\x00\x00\x00", "t.npy", ".npy")


def test_a_file_larger_than_the_limit_is_refused_and_one_at_the_limit_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pe_reference, "_MAX_BYTES", 16)
    at_limit, over = tmp_path / "at.csv", tmp_path / "over.csv"
    at_limit.write_bytes(b"0.0,1.0\n" * 2)  # 16 bytes
    over.write_bytes(b"0.0,1.0\n" * 2 + b"\n")  # 17
    assert list(pe_reference._read_table(str(at_limit))) == [[0.0, 1.0], [0.0, 1.0]]
    with pytest.raises(pe_reference._Unreadable, match="is larger than 16 bytes"):
        pe_reference._read_table(str(over))


def rope_vectors(capsys: "pytest.CaptureFixture[str]", *args: str) -> Dict[str, object]:
    status, out, err = run_main(capsys, "--format", "vectors", *args)
    assert (status, err) == (0, "")
    document: Dict[str, object] = json.loads(out)
    return document


def test_the_rotary_golden_vectors_say_how_they_were_rounded(capsys: "pytest.CaptureFixture[str]") -> None:
    # The sentence docs/vectors.md shows for the tables' vectors.
    document = rope_vectors(capsys, "3", "4", "--rope", "cos")
    assert document["rounding"] == "the exact real value rounded once to each format, to nearest, ties to even"
    assert list(document) == ["schema", "generator", "formula", "rounding", "parameters", "pairs", "bits"]


def test_the_rotated_vectors_golden_file_holds_the_vectors_before_rotation(
    capsys: "pytest.CaptureFixture[str]", tmp_path: Path
) -> None:
    vectors: List[List[float]] = [[1.0, -2.0, 0.5, 3.0], [0.25, 1.0, -1.0, 2.0]]
    source = tmp_path / "x.csv"
    source.write_text("".join(",".join(repr(x) for x in row) + "\n" for row in vectors))
    document = rope_vectors(capsys, "--rope", "rotated", "--input", str(source))
    assert document["x"] == vectors
    bits = document["bits"]
    assert isinstance(bits, dict)
    rotated = apply_rope(vectors, exact=True)
    assert [[int(b, 16) for b in row] for row in bits["float64"]] == [
        [struct.unpack("<Q", struct.pack("<d", x))[0] for x in row] for row in rotated
    ]
    assert rotated[0] == vectors[0]  # position 0 turns nothing


@pytest.mark.parametrize("seq_len", [1, 9, 10, 11, 100, 101])
def test_a_table_for_a_person_gives_its_longest_position_two_spaces_before_it(
    capsys: "pytest.CaptureFixture[str]", seq_len: int
) -> None:
    status, out, _ = run_main(capsys, str(seq_len), "2")
    assert status == 0
    lines = out.splitlines()
    width = max(len("pos"), len(str(seq_len - 1)) + 2)
    assert lines[0].startswith(" " * (width - 3) + "pos  0 sin_0")
    for pos, line in enumerate(lines[1:]):
        assert line[:width] == str(pos).rjust(width) and line[width] == " ", (pos, line)


# ---------------------------------------------------------------------------
# --format vectors: golden test vectors, checked against mpmath and against docs/vectors.md
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# A check streams: arrays, tensors, .npy and CSV files read a block of rows at a time, in memory that does not grow
# ---------------------------------------------------------------------------
#
# The figures of time and peak RSS at 20000 x 1024 and 131072 x 1024 are benchmarks/bench_check.py's;
# these tests check the rules that keep memory flat: no whole-table read of an array, rows read from a
# file by offset equal rows read in order, the damage the diagnosis keeps is bounded, and the Python
# memory a check allocates (tracemalloc) stays far below what the table would take as lists.


class Sliced:
    """A 2-D array as compare() reads one: shape, slicing by rows, tolist() of a slice; never tolist() of the whole."""

    def __init__(self, rows: List[List[float]], dtype: str = "float64", whole: bool = True) -> None:
        self.rows, self.dtype, self.whole = rows, dtype, whole
        self.shape = (len(rows), len(rows[0]))
        self.largest = 0

    def __getitem__(self, index: slice) -> "Sliced":
        part = Sliced(self.rows[index], self.dtype, whole=False)
        self.largest = max(self.largest, len(part.rows) * self.shape[1])
        return part

    def tolist(self) -> List[List[float]]:
        assert not self.whole, "the whole array was read at once"
        return [list(row) for row in self.rows]


def test_an_array_is_read_a_block_of_rows_at_a_time() -> None:
    table = Sliced(encoding(3000, 64, exact=True))
    report = compare(table)
    assert report.ok and report.shape == (3000, 64)
    assert 0 < table.largest <= 1 << 16  # a block holds at most 64K values
    # A failing one too, diagnosis included: its rows are read by index.
    wrong = Sliced(encoding(3000, 64, preset="tensor2tensor"))
    report = compare(wrong)
    assert report.diagnosis is not None and "tensor2tensor's convention" in report.diagnosis, report.diagnosis


def csv_with_everything(path: Path) -> List[List[float]]:
    """A CSV file with a header, blank lines, CRLF, a form feed between two rows and a BOM; its rows."""
    rows = encoding(40, 6)
    lines = [",".join(map(repr, row)) for row in rows]
    text = "\ufeffsin_0,cos_0,sin_1,cos_1,sin_2,cos_2\r\n" + "\r\n".join(lines[:10]) + "\r\n\r\n"
    text += lines[10] + "\x0c" + "\n".join(lines[11:]) + "\n"
    path.write_bytes(text.encode("utf-8"))
    return rows


def test_a_csv_files_rows_read_by_offset_are_its_rows_read_in_order(tmp_path: Path) -> None:
    path = tmp_path / "table.csv"
    rows = csv_with_everything(path)
    read = pe_reference._read_table(str(path))
    assert (read.count, read.width) == (40, 6)
    assert list(read) == rows
    assert [read.row(r) for r in range(40)] == rows
    assert compare(read).ok


def test_standard_input_is_spooled_and_read_as_a_file(tmp_path: Path) -> None:
    path = tmp_path / "table.csv"
    rows = csv_with_everything(path)
    wrong = [list(row) for row in rows]
    wrong[20][3] = 0.5
    data = "\n".join(",".join(map(repr, row)) for row in wrong).encode("ascii")

    class Input:
        buffer = io.BytesIO(data)

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        import sys

        saved, sys.stdin = sys.stdin, Input()
        try:
            status = main(["--check", "-"])
        finally:
            sys.stdin = saved
    assert status == 1
    assert "except for 1 element: [20][3] is 0.5" in out.getvalue(), out.getvalue()


def npy_float32(path: Path, seq_len: int, d_model: int) -> None:
    """A float32 .npy file of the fast table, written with the standard library."""
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({seq_len}, {d_model}), }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin-1"))
        for row in pe_reference.rows(seq_len, d_model):
            out.write(struct.pack(f"<{d_model}f", *row))


def peak_of_check(path: Path, *options: str) -> int:
    """The peak of Python memory allocated while --check reads and checks the file, in bytes."""
    tracemalloc.start()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            status = main(["--check", str(path), *options])
        assert status == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.at_size
def test_checking_a_npy_file_allocates_far_less_than_its_table_as_lists(tmp_path: Path) -> None:
    # 2048 x 512 float32: 1M values, 32 MB as lists of Python floats; a block is 64K values.
    path = tmp_path / "table.npy"
    npy_float32(path, 2048, 512)
    peak = peak_of_check(path)
    assert peak < 16 << 20, peak


def test_a_table_wrong_everywhere_keeps_a_bounded_damage(tmp_path: Path) -> None:
    # tensor2tensor's table checked as the paper's: every row damaged, more elements than the diagnosis keeps.
    table = encoding(2048, 256, preset="tensor2tensor")
    report = compare(table)
    assert report.failures > pe_reference._Comparison.KEPT_CELLS
    assert report.diagnosis is not None and "tensor2tensor's convention" in report.diagnosis, report.diagnosis
