"""python -m pe_reference --check FILE: readers, exit status, and hostile input."""

import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

import pe_reference
from pe_reference import encoding
from tests.helpers import HOSTILE, ROOT, need, npy, subprocess_environment


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
    assert err.startswith("python -m pe_reference: error: ") and message in err, err


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
