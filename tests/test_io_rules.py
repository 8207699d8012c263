"""The readers' and the golden vectors' rules the mutation run found untested.

The .npy files are built by hand, as NumPy's format description gives them: version 1.0 has a 2-byte header
length and a Latin-1 header, versions 2.0 and 3.0 a 4-byte length, 3.0 a UTF-8 header.
"""

import json
import struct
from pathlib import Path
from typing import Dict, List

import pytest

import pe_reference
from pe_reference import apply_rope
from tests.helpers import parse, run_main

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
