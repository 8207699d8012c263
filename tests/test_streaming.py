"""A check streams: arrays, tensors, .npy and CSV files are read a block of rows at a time, in memory that does not grow.

The figures of time and peak RSS at 20000 x 1024 and 131072 x 1024 are benchmarks/bench_check.py's;
these tests check the rules that keep memory flat: no whole-table read of an array, rows read from a
file by offset equal rows read in order, the damage the diagnosis keeps is bounded, and the Python
memory a check allocates (tracemalloc) stays far below what the table would take as lists.
"""

import contextlib
import io
import struct
import tracemalloc
from pathlib import Path
from typing import List

import pytest

import pe_reference
from pe_reference import compare, encoding, main


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
