"""Input and output: the readers of tables to check, the tables written, the golden vectors, streaming.

The .npy files are built by hand, as NumPy's format description gives them: version 1.0 has a 2-byte header
length and a Latin-1 header, versions 2.0 and 3.0 a 4-byte length, 3.0 a UTF-8 header.
"""

import contextlib
import io
import json
import re
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_reference
from pe_reference import apply_rope, compare, encoding, main
from tests import reference
from tests.helpers import HOSTILE, ROOT, need, npy, parse, run_main, subprocess_environment

ROW = struct.pack("<2d", 0.0, 1.0)
HEADER = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }"


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


# ---------------------------------------------------------------------------
# python3 -m pe_reference --check FILE: readers, exit status, and hostile input
# ---------------------------------------------------------------------------


def check(*args: str, stdin: bytes = b"") -> Tuple[int, str, str]:
    environment = subprocess_environment()
    process = subprocess.run(
        [sys.executable, "-m", "pe_reference", "--check", *args],
        input=stdin,
        capture_output=True,
        env=environment,
        cwd=ROOT,
    )
    return process.returncode, process.stdout.decode(), process.stderr.decode()


def doubles(table: List[List[float]], order: str = "<") -> bytes:
    flat = [x for row in table for x in row]
    return struct.pack(f"{order}{len(flat)}d", *flat)


def test_csv_json_and_stdin(tmp_path: Path) -> None:
    table = encoding(12, 6)
    csv_file = tmp_path / "table.csv"
    csv_file.write_text(
        "sin_0,cos_0,sin_1,cos_1,sin_2,cos_2\n" + "\n".join(",".join(map(repr, row)) for row in table) + "\n"
    )
    json_file = tmp_path / "table.json"
    json_file.write_text(json.dumps(table))
    for args, stdin in (
        ([str(csv_file)], b""),
        ([str(json_file)], b""),
        (["-"], json_file.read_bytes()),
        (["-"], csv_file.read_bytes()),
    ):
        status, out, err = check(*args, stdin=stdin)
        assert (status, err) == (0, ""), err
        assert out.splitlines()[0] == (
            "12 x 6 table against the exact float64 values of the paper convention"
            " (default tolerance 2**-48 * (1 + |angle|) + 2**-53 * |value|)"
        )
        assert out.splitlines()[-1].endswith("within tolerance")


def test_npy_by_hand_in_every_layout(tmp_path: Path) -> None:
    table = encoding(7, 4, exact=True)
    transposed = [list(column) for column in zip(*table)]
    files = {
        "c_little.npy": npy("{'descr': '<f8', 'fortran_order': False, 'shape': (7, 4), }", doubles(table)),
        "c_big.npy": npy("{'descr': '>f8', 'fortran_order': False, 'shape': (7, 4), }", doubles(table, ">")),
        "fortran.npy": npy("{'descr': '<f8', 'fortran_order': True, 'shape': (7, 4), }", doubles(transposed)),
        "version2.npy": npy("{'descr': '<f8', 'fortran_order': False, 'shape': (7, 4), }", doubles(table), version=2),
    }
    for name, content in files.items():
        path = tmp_path / name
        path.write_bytes(content)
        assert list(pe_reference._read_table(str(path))) == table, name
        status, out, _ = check(str(path), "7", "4", "--atol", "0")
        assert status == 0, out


def test_a_npy_file_is_checked_in_its_dtype(tmp_path: Path) -> None:
    """The descr's format, said in the first line; --dtype given is honoured, and the line says what the file holds."""
    for code, struct_code, dtype in (("f2", "e", "float16"), ("f4", "f", "float32"), ("f8", "d", "float64")):
        table = encoding(300, 16, exact=True, dtype=dtype)
        flat = [x for row in table for x in row]
        header = f"{{'descr': '<{code}', 'fortran_order': False, 'shape': (300, 16), }}"
        path = tmp_path / f"{dtype}.npy"
        path.write_bytes(npy(header, struct.pack(f"<{len(flat)}{struct_code}", *flat)))
        status, out, err = check(str(path))
        assert (status, err) == (0, ""), out + err
        assert out.startswith(f"300 x 16 table against the exact {dtype} values (the file's dtype) of the paper")
        if dtype != "float64":
            status, out, _ = check(str(path), "--dtype", "float64")
            assert status == 1 and f"float64 values (as given; the file's dtype is {dtype}) of" in out, out
        # The same values as text carry no format: float64, and the line that names the narrower one.
        csv_file = tmp_path / f"{dtype}.csv"
        csv_file.write_text("\n".join(",".join(map(repr, row)) for row in table) + "\n")
        status, out, _ = check(str(csv_file))
        narrower = f"every value is a {dtype} number: to check the table as {dtype}, give dtype='{dtype}'"
        assert (status == 1 and narrower in out) if dtype != "float64" else status == 0, out
        assert out.startswith("300 x 16 table against the exact float64 values of the paper")


def test_a_rotary_npy_file_is_checked_in_its_dtype(tmp_path: Path) -> None:
    cos = pe_reference.rope(200, 64, base=500000, exact=True, dtype="float32")[0]
    flat = [x for row in cos for x in row]
    path = tmp_path / "cos.npy"
    path.write_bytes(
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (200, 64), }", struct.pack(f"<{len(flat)}f", *flat))
    )
    process = subprocess.run(
        [sys.executable, "-m", "pe_reference", "--rope", "cos", "--base", "500000", "--check", str(path)],
        capture_output=True,
        text=True,
        env=subprocess_environment(),
        cwd=ROOT,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    assert process.stdout.startswith("200 x 64 table against the exact float32 values (the file's dtype) of the RoPE")


def test_npy_written_by_numpy(tmp_path: Path) -> None:
    numpy = need("numpy")
    table = encoding(20, 10)
    for dtype in ("<f2", ">f2", "<f4", ">f4", "<f8", ">f8"):
        for order in ("C", "F"):
            array = numpy.asarray(table, dtype=dtype)
            array = numpy.asfortranarray(array) if order == "F" else array
            path = tmp_path / f"t{dtype[1:]}{dtype[0] == '>'}{order}.npy"
            numpy.save(path, array)
            assert list(pe_reference._read_table(str(path))) == numpy.load(path).astype(float).tolist()
            narrow = {"f2": "float16", "f4": "float32", "f8": "float64"}[dtype[1:]]
            status, out, err = check(str(path), "--dtype", narrow)
            assert (status, err) == (0, ""), (dtype, order, out)


def test_mismatch_exits_1_with_a_diagnosis(tmp_path: Path) -> None:
    path = tmp_path / "t2t.json"
    path.write_text(json.dumps(encoding(16, 8, preset="tensor2tensor")))
    status, out, err = check(str(path))
    assert status == 1 and err == ""
    assert (
        "MISMATCH" in out
        and "(preset tensor2tensor, the same as whisper, diffusers and pyg): all sines then all cosines" in out
    )
    status, out, _ = check(str(path), "--preset", "tensor2tensor")
    assert status == 0


def test_shape_given_must_match(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(encoding(4, 4)))
    assert check(str(path), "4", "4")[0] == 0
    status, out, _ = check(str(path), "5", "4")
    assert status == 1 and out == "shape mismatch: the table has 4 x 4 values, expected 5 x 4\n"


def test_check_usage_errors() -> None:
    for args, message in (
        (["-", "4"], "with --check give both SEQ_LEN and D_MODEL, or neither"),
        (["-", "--format", "csv"], "--check takes no --format"),
        (["-", "--atol", "-1"], "atol must be finite and at least 0, got -1.0"),
        (["-", "--atol", "x"], "atol must be a number, got 'x'"),
    ):
        status, out, err = check(*args)
        assert status == 2 and out == "" and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize("name, content, message", HOSTILE, ids=[case[0] for case in HOSTILE])
def test_hostile_input_exits_2_cleanly(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    status, out, err = check(str(path))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("python3 -m pe_reference: error: ") and message in err, err


def test_unreadable_paths(tmp_path: Path) -> None:
    for path, message in ((tmp_path / "missing.csv", "No such file or directory"), (tmp_path, "Is a directory")):
        status, out, err = check(str(path))
        assert status == 2 and out == "" and message in err and err.count("\n") == 1


def test_stdin_npy() -> None:
    content = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", doubles(encoding(2, 2)))
    status, out, _ = check("-", stdin=content)
    assert status == 0, out


NOT_FINITE: List[Tuple[str, bytes, str]] = [
    ("nan.csv", b"0.0,1.0\nnan,0.5403023058681398\n", "[1][0] is nan"),
    ("inf.csv", b"0.0,inf\n", "[0][1] is inf"),
    ("infinity.csv", b"0.0,-Infinity\n", "[0][1] is -inf"),
    ("huge.csv", b"0.0,1e999\n", "[0][1] is inf"),
    ("nan.json", b"[[0.0, NaN]]", "[0][1] is nan"),
    ("infinity.json", b"[[Infinity, 1.0]]", "[0][0] is inf"),
    ("huge.json", b"[[1e999, 1.0]]", "[0][0] is inf"),
    ("huge-integer.json", b"[[0, 1" + b"0" * 400 + b"]]", "[0][1] is inf"),
    (
        "nan.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }", struct.pack("<2d", 0.0, float("nan"))),
        "[0][1] is nan",
    ),
]


@pytest.mark.parametrize("name, content, message", NOT_FINITE, ids=[case[0] for case in NOT_FINITE])
def test_nan_and_infinity_are_read_and_fail(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    # A framework that emits NaN has a wrong table, not an unreadable file.
    path = tmp_path / name
    path.write_bytes(content)
    status, out, err = check(str(path))
    assert (status, err) == (1, ""), err
    assert "not a finite number: " + message in out and "MISMATCH" in out


def test_its_own_output_passes_its_own_exact_check(tmp_path: Path) -> None:
    environment = subprocess_environment()
    for dtype in ("float64", "float32", "bfloat16", "float16"):
        for output in ("csv", "json"):
            made = subprocess.run(
                [sys.executable, "-m", "pe_reference", "50", "8", "--exact", "--dtype", dtype, "--format", output],
                capture_output=True,
                env=environment,
                check=True,
            )
            path = tmp_path / f"table-{dtype}.{output}"
            path.write_bytes(made.stdout)
            status, out, err = check(str(path), "--dtype", dtype, "--atol", "0")
            assert (status, err) == (0, ""), (dtype, output, out)
            assert out.splitlines()[-1] == "0 of 400 elements outside the tolerance: within tolerance"


def test_tables_that_once_crashed_get_a_verdict(tmp_path: Path) -> None:
    five = tmp_path / "five.csv"
    five.write_text("\n".join(",".join(map(repr, row)) for row in encoding(5, 4)) + "\n")
    for args in (
        ["--preset", "tf-tutorial"],
        ["--odd", "error", "--layout", "sin-cos"],
        ["--start", str(2**1100)],
        ["--start", str(2**1100), "--atol", "0"],
        ["--base", "5e-324", "--preset", "tensor2tensor"],
        ["--base", "5e-324", "--preset", "tensor2tensor", "--atol", "0"],
    ):
        status, out, err = check(str(five), *args)
        assert (status, err) == (1, ""), (args, err)
        # Positions past float64: nothing is judged by default, and the table cannot be checked.
        verdict = "CANNOT BE CHECKED" if args == ["--start", str(2**1100)] else "MISMATCH"
        assert verdict in out and "Diagnosis: " in out, (args, out)
    odd = tmp_path / "odd.csv"
    odd.write_text("\n".join(",".join(map(repr, row)) for row in encoding(3, 5)) + "\n")
    status, out, err = check(str(odd), "--preset", "tf-tutorial")
    assert (status, err) == (1, "")
    assert "the tf-tutorial convention has no table of odd width, and this one has 5 columns" in out


def test_zeros_fail_whatever_the_tolerance_options(tmp_path: Path) -> None:
    zeros = tmp_path / "z.csv"
    zeros.write_text("\n".join(",".join(["0.0"] * 64) for _ in range(200)) + "\n")
    for args in ([], ["--ulps", "0"], ["--atol", "0"]):
        status, out, _ = check(str(zeros), "--dtype", "bfloat16", *args)
        assert status == 1 and "Diagnosis: every element of the table is 0." in out


# ---------------------------------------------------------------------------
# Fuzzing the readers (hypothesis)
# ---------------------------------------------------------------------------


def parse_or_refuse(data: bytes, source: str) -> Optional[List[List[float]]]:
    """Parse; the only error allowed is the documented one. Memory stays bounded."""
    tracemalloc.start()
    try:
        table: List[List[float]] = list(parse(data, "fuzz", source))
    except pe_reference._Unreadable as error:
        message = str(error)
        assert message.startswith("fuzz") and "\n" not in message, message
        return None
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # Inputs are a few KiB: a declared shape must never make it allocate for its size.
        assert peak < 64 * len(data) + (4 << 20), peak
    assert table and all(len(row) == len(table[0]) > 0 for row in table)
    assert all(isinstance(x, float) for row in table for x in row)
    return table


number_text = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["nan", "inf", "-", ".", "1e", "1_0", "0x10", "", " ", "1e999", "+.5", "5.", "true", '"1"']),
)


@given(
    st.lists(st.lists(number_text, max_size=6), max_size=6),
    st.sampled_from([",", ";", ", ", "\t"]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_fuzz_csv(cells: List[List[str]], separator: str, newline: str) -> None:
    text = newline.join(separator.join(row) for row in cells)
    parse_or_refuse(text.encode(), "fuzz.csv")


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers(-(10**400), 10**400) | st.text(max_size=4),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=30,
)


@given(json_values, st.integers(0, 40), st.binary(max_size=8))
def test_fuzz_json(document: Any, cut: int, junk: bytes) -> None:
    text = json.dumps(document).encode()
    parse_or_refuse(text, "fuzz.json")
    parse_or_refuse(text[: len(text) - cut] + junk, "fuzz.json")


npy_headers = st.fixed_dictionaries(
    {
        "descr": st.sampled_from(["<f8", ">f8", "<f4", ">f4", "<f2", ">f2", "=f8", "|O", "<i8", "<c16", "f8", "<f16"]),
        "fortran_order": st.sampled_from([True, False, 0, 1, None]),
        "shape": st.one_of(
            st.tuples(st.integers(-2, 6), st.integers(-2, 6)),
            st.tuples(st.integers(0, 10**15), st.integers(0, 10**15)),
            st.tuples(st.integers(0, 5)),
            st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
        ),
    }
)


@given(npy_headers, st.integers(1, 3), st.binary(max_size=400), st.booleans())
def test_fuzz_npy(header: Dict[str, Any], version: int, data: bytes, mangle: bool) -> None:
    text = repr(header).encode("latin-1")
    if mangle:
        text = text.replace(b"'", b'"', 1)[::-1] if data[:1] == b"\x00" else text[: len(text) // 2]
    length = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    parse_or_refuse(b"\x93NUMPY" + bytes([version, 0]) + length + text + data, "fuzz.npy")


@given(st.binary(max_size=600))
def test_fuzz_any_bytes(data: bytes) -> None:
    for source in ("fuzz", "fuzz.npy", "fuzz.json", "fuzz.csv"):
        parse_or_refuse(data, source)
    parse_or_refuse(b"\x93NUMPY" + data, "fuzz")


def test_a_table_held_in_memory_past_the_limit_of_values_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # JSON is read whole, so its size is checked: more than _MAX_VALUES values is refused.
    monkeypatch.setattr(pe_reference, "_MAX_VALUES", 8)
    assert list(parse(json.dumps([[0.5] * 4] * 2).encode(), "t.json", ".json")) == [[0.5] * 4] * 2  # 8: the limit
    with pytest.raises(pe_reference._Unreadable, match=re.escape("t.json: 3 x 3 values, more than the limit of 8")):
        list(parse(json.dumps([[0.5] * 3] * 3).encode(), "t.json", ".json"))
