"""The command line: python3 -m pe_reference SEQ_LEN D_MODEL [options]."""

import contextlib
import io
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_reference
from pe_reference import derivation, encoding, main, rope, rows
from tests import reference
from tests.helpers import ROOT, npy, run_main, subprocess_environment


def run(*args: str) -> Tuple[int, str, str]:
    """Run ``python3 -m pe_reference ARGS`` from the repository root, as a user would."""
    environment = subprocess_environment()
    process = subprocess.run(
        [sys.executable, "-m", "pe_reference", *args], capture_output=True, text=True, env=environment, cwd=ROOT
    )
    return process.returncode, process.stdout, process.stderr


def parse_table(text: str) -> List[List[float]]:
    lines = text.splitlines()
    return [[float(cell) for cell in line.split()[1:]] for line in lines[1:]]


def digit_columns(lines: List[str], column: int) -> Set[int]:
    """Where the first digit of a column's values stands; a minus sign goes to its left."""
    starts = set()
    for line in lines[1:]:
        cell = line.split()[column]
        starts.add(line.index(" " + cell) + 1 + cell.startswith("-"))
    return starts


def test_front_door() -> None:
    status, out, err = run("4", "4")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["pos", "0", "sin_0", "1", "cos_0", "2", "sin_1", "3", "cos_1"]
    assert parse_table(out) == encoding(4, 4)
    assert len(digit_columns(lines, 2)) == 1


def test_table_values_round_trip(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "7", "9", "--base", "500")
    assert status == 0
    assert parse_table(out) == encoding(7, 9, base=500.0)


def test_table_digits(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "3", "4", "--digits", "3")
    assert status == 0
    assert out.splitlines()[2].split() == ["1", "0.841", "0.540", "0.010", "1.000"]


def test_table_larger_than_measured_is_aligned(capsys: pytest.CaptureFixture[str]) -> None:
    seq_len = pe_reference._MEASURED_TABLE_SIZE // 2 + 1
    status, out, _ = run_main(capsys, str(seq_len), "2")
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == seq_len + 1
    assert len(digit_columns(lines, 2)) == 1
    assert parse_table(out) == encoding(seq_len, 2)


def test_csv_is_one_line_per_position_with_round_tripping_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "5", "6", "--format", "csv")
    assert status == 0
    assert [[float(x) for x in line.split(",")] for line in out.splitlines()] == encoding(5, 6)


def test_csv_header_names_each_column(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "2", "5", "--format", "csv", "--header")
    assert status == 0
    assert out.splitlines()[0] == "sin_0,cos_0,sin_1,cos_1,sin_2"
    assert len(out.splitlines()) == 3


def test_json_is_an_array_of_rows_even_when_empty(capsys: pytest.CaptureFixture[str]) -> None:
    for seq_len in (0, 1, 6):
        status, out, _ = run_main(capsys, str(seq_len), "3", "--format", "json")
        assert status == 0
        assert json.loads(out) == encoding(seq_len, 3)


def test_json_digits_rounds_each_value(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "2", "2", "--format", "json", "--digits", "2")
    assert status == 0
    assert json.loads(out) == [[0.0, 1.0], [0.84, 0.54]]


def test_explain(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "3", "2", "--explain")
    assert status == 0
    blocks = out.split("\n\n")
    assert len(blocks) == 3
    assert blocks[1].splitlines() == [derivation(1, 0, 2), derivation(1, 1, 2)]


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "--version")
    assert status == 0 and out.split()[-1] == pe_reference.__version__
    status, out, _ = run_main(capsys, "--help")
    assert status == 0
    for option in ("--base", "--format", "--digits", "--header", "--explain", "SEQ_LEN", "D_MODEL"):
        assert option in out


def test_help_fits_a_screen_names_each_preset_once_and_its_examples_run(tmp_path: Path) -> None:
    environment = dict(subprocess_environment(), COLUMNS="80")
    shown = subprocess.run(
        [sys.executable, "-m", "pe_reference", "--help"], capture_output=True, text=True, env=environment, cwd=ROOT
    ).stdout
    lines = shown.splitlines()
    assert len(lines) <= 60 and max(map(len, lines)) <= 79, shown
    listed = shown.split("\nexamples:")[0].replace(",", " ").split()  # the presets listed once, before the examples
    for name in list(pe_reference.PRESETS) + [row[0] for row in pe_reference._GRID_PRESETS]:
        assert listed.count(name) == 1, name
    # Each example runs as printed, in a folder holding the files it names: a table saved by numpy.save in
    # float32 (built by hand here) and a model's config.json (Llama 3.1 8B's rope parameters).
    (tmp_path / "pe.npy").write_bytes(
        npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (64, 16), }",
            struct.pack("<1024f", *[x for row in encoding(64, 16, exact=True, dtype="float32") for x in row]),
        )
    )
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    scaling["original_max_position_embeddings"] = 8192
    config = {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0, "rope_scaling": scaling}
    (tmp_path / "config.json").write_text(json.dumps(config))
    examples = [line.split()[3:] for line in lines if line.startswith("  python3 -m pe_reference ")]
    kinds = {"--explain", "--format", "--plot", "--check", "--rope", "16x16"}
    assert len(examples) == 6 and kinds <= set(word for example in examples for word in example), examples
    for example in examples:
        process = subprocess.run(
            [sys.executable, "-m", "pe_reference", *example],
            capture_output=True,
            text=True,
            env=environment,
            cwd=tmp_path,
        )
        assert (process.returncode, process.stderr) == (0, ""), example
        assert process.stdout or example[-2] == "--plot", example
    assert (tmp_path / "pe.png").read_bytes().startswith(b"\x89PNG")
    # --help GROUP shows that group's options, which the main help only names; all shows every option.
    for group, option in (("conventions", "--angle-scale"), ("grids", "--position-scale"), ("rope", "--axes-dim")):
        assert option not in shown
        status, out, _ = run("--help", group)
        assert status == 0 and option in out and "--format" not in out
    status, out, _ = run("--help", "all")
    assert status == 0 and all(option in out for option in ("--angle-scale", "--axes-dim", "--format", "--ulps"))
    status, _, err = run("--help", "colours")
    assert status == 2 and err.startswith("python3 -m pe_reference: error: argument -h/--help: invalid choice")


def test_exact_and_dtype(capsys: pytest.CaptureFixture[str]) -> None:
    for dtype in ("float64", "float32", "bfloat16", "float16"):
        status, out, _ = run_main(capsys, "6", "8", "--exact", "--dtype", dtype, "--format", "csv")
        assert status == 0
        # The text is the shortest that reads back as the value in its format.
        got = [[float(x) for x in line.split(",")] for line in out.splitlines()]
        want = encoding(6, 8, exact=True, dtype=dtype)
        for got_row, want_row in zip(got, want):
            assert [pe_reference._round_float(x, dtype) for x in got_row] == want_row


def test_hex_format(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "2", "2", "--exact", "--format", "hex")
    assert status == 0
    assert out.splitlines()[1] == "0x3feaed548f090cee,0x3fe14a280fb5068c"  # sin(1), cos(1) as the issue quotes
    for dtype, digits in (("float32", 8), ("bfloat16", 4), ("float16", 4)):
        status, out, _ = run_main(capsys, "3", "4", "--exact", "--dtype", dtype, "--format", "hex", "--header")
        assert status == 0
        lines = out.splitlines()
        assert lines[0] == "sin_0,cos_0,sin_1,cos_1"
        table = encoding(3, 4, exact=True, dtype=dtype)
        for line, row in zip(lines[1:], table):
            cells = line.split(",")
            assert all(len(cell) == 2 + digits for cell in cells)
            assert [int(cell, 16) for cell in cells] == [reference.bits(x, dtype) for x in row]


def test_exact_table_for_a_person(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "2", "4", "--exact", "--dtype", "float32")
    assert status == 0
    assert out.splitlines()[2].split() == ["1", "0.84147096", "0.5403023", "0.009999833", "0.99995"]


BAD_USAGE = [
    (["-1", "4"], "seq_len must be at least 0, got -1"),
    (["4", "0"], "d_model must be at least 1, got 0"),
    (["4", "x"], "d_model must be an integer, got 'x'"),
    (["4"], "required: D_MODEL"),
    ([], "required: SEQ_LEN, D_MODEL"),
    (["1e3", "4"], "seq_len must be an integer, got '1e3'"),
    (["4.0", "4"], "seq_len must be an integer, got '4.0'"),
    (["4", "4", "--base", "-1"], "base must be finite and greater than 0, got '-1'"),
    (["4", "4", "--base", "0"], "base must be finite and greater than 0, got '0'"),
    (["4", "4", "--base", "nan"], "base must be a decimal or a fraction such as '999.5' or '1/3', got 'nan'"),
    (["4", "4", "--base", "1/0"], "base must have a denominator other than 0, got '1/0'"),
    (["4", "4", "--base", "ten"], "base must be a decimal or a fraction such as '999.5' or '1/3', got 'ten'"),
    (
        ["4", "4", "--positions", "1,x"],
        "positions[1] must be a decimal or a fraction such as '999.5' or '1/3', got 'x'",
    ),
    (["4", "4", "--positions", "1,2"], "seq_len must equal the number of positions (2), got 4"),
    (["4", "4", "--step", "0"], "step must not be 0, got '0'"),
    (
        ["4", "4", "--scale", "sqrt(2/x)"],
        "scale must be a number, 'sqrt(X)' or 'sqrt(X/d)' with X a decimal or a fraction, got 'sqrt(2/x)'",
    ),
    (
        ["4", "4", "--preset", "diffusers", "--shift", "2"],
        "shift must be less than the number of frequencies (2, for d_model 4), got 2",
    ),
    (["4", "4", "--format", "xml"], "invalid choice: 'xml'"),
    (["4", "4", "--digits", "-1"], "digits must be an integer from 0 to 17"),
    (["4", "4", "--digits", "18"], "digits must be an integer from 0 to 17, got '18'"),
    (["4", "4", "--header"], "--header goes with --format csv or hex"),
    (["4", "4", "--dtype", "float8"], "invalid choice: 'float8'"),
    (["4", "4", "--format", "hex", "--digits", "3"], "--digits does not go with --format hex"),
    (["4", "4", "--explain", "--exact"], "takes no --format, --digits, --exact, --dtype or convention"),
    (["4", "4", "--explain", "--format", "csv"], "--explain prints the paper's float64 derivations"),
    (["4", "4", "5"], "unrecognized arguments: 5"),
    (["4", "4", "--bogus"], "unrecognized arguments: --bogus"),
    (["10000000000000", "200", "--base", "1e-300"], "angle pos / base**(2i/d_model) must be finite"),
    # Grids: SEQ_LEN a shape.
    (["2x", "8"], "seq_len must be an integer or a grid's shape such as 16x16, got '2x'"),
    (["2x3x4x5", "8"], "seq_len must be an integer or a grid's shape such as 16x16, got '2x3x4x5'"),
    (
        ["16", "8", "--preset", "mae"],
        "a grid's takes seq_len as its shape, as (16, 16) (16x16 on the command line), got 'mae'",
    ),
    (["16", "8", "--axis-order", "xy"], "--axis-order goes with a grid's shape as SEQ_LEN, such as 16x16"),
    (["16", "8", "--normalize"], "--normalize goes with a grid's shape as SEQ_LEN, such as 16x16"),
    (["2x3", "6", "--preset", "mae"], "d_model must split into even widths in this grid, got 6 (widths 3, 3)"),
    (["2x3", "8", "--preset", "cogvideox"], "seq_len must be a shape of 3 axes in the cogvideox grid, got (2, 3)"),
    (["2x3", "8", "--position-scale", "1,2,3"], "position_scale must be one number or 2, got ['1', '2', '3']"),
    (["2x3", "8", "--prefix", "-1"], "prefix must be at least 0, got -1"),
    (["2x3", "8", "--explain"], "a grid's shape as SEQ_LEN takes no --explain, --waves or --format vectors"),
    (["2x3", "8", "--format", "vectors"], "takes no --explain, --waves or --format vectors, and --plot a 2-D one"),
    (
        ["2x3x2", "8", "--plot", "/nonexistent-directory/x.png"],
        "takes no --explain, --waves or --format vectors, and --plot a 2-D one only",
    ),
    (["2x3", "8", "--header"], "--header goes with --format csv or hex"),
    (["2x3"], "required: D_MODEL"),
]


@pytest.mark.parametrize("args, message", BAD_USAGE, ids=[" ".join(args) for args, _ in BAD_USAGE])
def test_bad_usage(capsys: pytest.CaptureFixture[str], args: List[str], message: str) -> None:
    status, out, err = run_main(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("python3 -m pe_reference: error: ") and message in err, err


@pytest.mark.parametrize("args", [["-1", "4"], ["4", "0"], ["4"], ["4", "4", "--base", "nan"]])
def test_bad_usage_has_no_traceback(args: List[str]) -> None:
    status, out, err = run(*args)
    assert status == 2 and out == ""
    assert "Traceback" not in err and err.count("\n") == 1


def test_huge_table_streams_and_stops_at_once() -> None:
    # ``| head -1``: the reader leaves after one line; the writer must stop
    # quietly instead of computing 10**9 values or printing a traceback.
    environment = subprocess_environment()
    process = subprocess.Popen(
        [sys.executable, "-m", "pe_reference", "1000000", "1024", "--format", "csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    status = process.wait(timeout=60)
    assert [float(x) for x in first.decode().split(",")] == encoding(1, 1024)[0]
    assert status == 1
    assert process.stderr.read() == b""
    process.stderr.close()


@pytest.mark.at_size
def test_output_memory_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    class Sink:
        """A standard output that forgets what it is given."""

        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stdout", Sink())
    for output_format in ("csv", "json", "table"):
        tracemalloc.start()
        assert main(["3000", "256", "--format", output_format]) == 0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # The whole table would take 3000 * 256 floats, over 18 MB.
        assert peak < 1_000_000, (output_format, peak)


def test_full_disk_is_one_line() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    environment = subprocess_environment()
    with open("/dev/full", "w") as full:
        process = subprocess.run(
            [sys.executable, "-m", "pe_reference", "2000", "64"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
    assert process.returncode == 1
    assert process.stderr == "python3 -m pe_reference: error: cannot write the output: No space left on device\n"


def test_console_script() -> None:
    script = shutil.which(
        "pe-reference", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    )
    if script is None:
        pytest.skip("pe-reference is not installed (pip install -e .)")
    process = subprocess.run([script, "4", "4"], capture_output=True, text=True)
    assert process.returncode == 0 and parse_table(process.stdout) == encoding(4, 4)
    process = subprocess.run([script, "4", "0"], capture_output=True, text=True)
    assert process.returncode == 2
    assert process.stderr == "pe-reference: error: argument D_MODEL: d_model must be at least 1, got 0\n"


def test_the_pos_column_shows_positions_not_rows(capsys: pytest.CaptureFixture[str]) -> None:
    for args, first in ((["3", "4", "--start", "5"], 5), (["3", "4", "--preset", "fairseq"], 2), (["3", "4"], 0)):
        status, out, _ = run_main(capsys, *args)
        lines = out.splitlines()
        assert status == 0 and lines[0].split()[0] == "pos"
        assert [int(line.split()[0]) for line in lines[1:]] == [first, first + 1, first + 2]


def test_convention_fields_on_the_command_line() -> None:
    status, out, err = run(
        "3", "4", "--preset", "diffusers", "--positions", "999.5, 0.3,-2", "--exact", "--format", "csv"
    )
    assert (status, err) == (0, "")
    expected = encoding(3, 4, preset="diffusers", positions=["999.5", "0.3", -2], exact=True)
    assert [[float(cell) for cell in line.split(",")] for line in out.splitlines()] == expected
    status, out, err = run("3", "4", "--preset", "diffusers", "--positions", "999.5,0.3,-2")
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["999.5", "0.3", "-2"]
    status, out, err = run(
        "2",
        "6",
        "--layout",
        "sin-cos",
        "--spacing",
        "tensor2tensor",
        "--shift",
        "0.5",
        "--base",
        "1e4",
        "--angle-scale",
        "1/3",
        "--full-turns",
        "--start",
        "-1.5",
        "--step",
        "1/4",
        "--descending",
        "--odd",
        "round-up",
        "--scale",
        "sqrt(2/d)",
        "--format",
        "csv",
        "--exact",
        "--dtype",
        "float32",
    )
    assert (status, err) == (0, "")
    fields: Dict[str, Any] = dict(
        layout="sin-cos",
        spacing="tensor2tensor",
        shift="0.5",
        angle_scale="1/3",
        full_turns=True,
        start="-1.5",
        step="1/4",
        descending=True,
        odd="round-up",
        scale="sqrt(2/d)",
    )
    # float32 values are printed as the shortest decimals that read back as them.
    read = [[reference.round_to(cell, "float32", exact=True) for cell in line.split(",")] for line in out.splitlines()]
    assert read == encoding(2, 6, exact=True, dtype="float32", **fields)


def test_check_a_table_of_timesteps(tmp_path: Path) -> None:
    timesteps = "999.5,0.3,17,500.25"
    path = tmp_path / "mlx.json"
    path.write_text(
        json.dumps(encoding(4, 8, preset="mlx", positions=timesteps.split(","), exact=True, dtype="float32"))
    )
    status, out, err = run("--check", str(path), "--preset", "mlx", "--positions", timesteps, "--dtype", "float32")
    assert (status, err) == (0, "") and "within tolerance" in out
    status, out, err = run("--check", str(path), "--positions", timesteps, "--dtype", "float32")
    assert (status, err) == (1, "") and "(preset mlx)" in out and "reproduces every element" in out
    status, out, err = run("--check", str(path), "--positions", "1,2", "--dtype", "float32")
    assert status == 2 and err.strip().endswith("seq_len must equal the number of positions (2), got 4")


def test_explain_takes_no_convention_field() -> None:
    status, out, err = run("2", "2", "--explain", "--positions", "1,2")
    assert status == 2 and out == "" and "--explain prints the paper's float64 derivations" in err


@pytest.mark.parametrize(
    "option, text", [("--start", "-1e3"), ("--step", "-1/3"), ("--positions", "-1,2"), ("--shift", "-0.5")]
)
def test_negative_numbers_after_an_option(option: str, text: str) -> None:
    extra = ["--spacing", "tensor2tensor"] if option == "--shift" else []
    status, out, err = run("2", "4", option, text, *extra, "--format", "csv")
    assert (status, err) == (0, "")
    field = {"--start": "start", "--step": "step", "--positions": "positions", "--shift": "shift"}[option]
    given: Any = text.split(",") if field == "positions" else text
    expected = encoding(2, 4, spacing="tensor2tensor" if extra else None, **{field: given})
    assert [[float(cell) for cell in line.split(",")] for line in out.splitlines()] == expected


# ---------------------------------------------------------------------------
# The command line's rules: sizes given together, closed outputs, readers that go away
# ---------------------------------------------------------------------------


def write_csv(path: Path, table: List[List[float]]) -> None:
    path.write_text("".join(",".join(repr(x) for x in row) + "\n" for row in table))


@pytest.mark.parametrize("shape", [["4"], []])
def test_a_rotary_check_takes_both_sizes_or_neither(
    capsys: "pytest.CaptureFixture[str]", tmp_path: Path, shape: List[str]
) -> None:
    table = tmp_path / "cos.csv"
    write_csv(table, rope(4, 8)[0])
    status, out, err = run_main(capsys, "--rope", "cos", *shape, "--check", str(table))
    if shape:  # one size alone is a usage error, even though the table has a shape
        assert status == 2 and out == ""
        assert err.endswith("error: give both SEQ_LEN and D_MODEL, or neither (then the table's shape is taken)\n")
    else:  # neither: the table's shape is taken
        assert status == 0 and out.rstrip().endswith("within tolerance")


def test_a_closed_standard_output_is_one_line_and_status_1(
    capsys: "pytest.CaptureFixture[str]", monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    status = main(["2", "2"])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert status == 1
    assert err.endswith(": error: cannot write the output: standard output is closed\n") and err.count("\n") == 1


class GoneReader:
    """A standard output whose reader went away (| head): every write and flush raises BrokenPipeError."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("arguments", [["3", "4"], ["3", "4", "--format", "csv"], ["3", "4", "--format", "json"]])
def test_a_reader_that_goes_away_ends_the_output_quietly_with_status_1(
    capsys: "pytest.CaptureFixture[str]", monkeypatch: pytest.MonkeyPatch, arguments: List[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", GoneReader())
    status = main(arguments)
    monkeypatch.undo()
    assert status == 1
    assert capsys.readouterr().err == ""


def test_without_argparse_the_front_door_works_and_options_are_one_line_and_status_2(
    capsys: "pytest.CaptureFixture[str]", monkeypatch: pytest.MonkeyPatch
) -> None:
    # MicroPython has no argparse: two integers still print the table, anything else is refused.
    real_import = __import__

    def without_argparse(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "argparse":
            raise ImportError("No module named 'argparse'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setitem(sys.modules, "argparse", None)  # a cached copy must not be found either
    monkeypatch.setattr("builtins.__import__", without_argparse)
    status, out, err = run_main(capsys, "2", "2")
    assert status == 0 and len(out.splitlines()) == 3 and err == ""
    status, out, err = run_main(capsys, "2", "2", "--format", "csv")
    monkeypatch.undo()
    assert status == 2 and out == ""
    assert err.endswith(
        ": error: options need the argparse module, which this Python lacks;"
        " give SEQ_LEN D_MODEL alone, or call the functions\n"
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize("option", [["--format", "csv"], ["--digits", "3"], ["--header"], ["--exact"]])
def test_a_rotary_check_refuses_each_output_option_alone(
    capsys: "pytest.CaptureFixture[str]", tmp_path: Path, option: List[str]
) -> None:
    table = tmp_path / "cos.csv"
    write_csv(table, rope(4, 8)[0])
    status, out, err = run_main(capsys, "--rope", "cos", "--check", str(table), *option)
    assert status == 2 and out == ""
    assert err.endswith(
        "error: --check takes no --format, --digits, --header or --exact (it always compares exactly)\n"
    )


def test_rotated_vectors_are_headed_by_one_name_per_element_of_a_vector(
    capsys: "pytest.CaptureFixture[str]", tmp_path: Path
) -> None:
    # Three vectors of width 4: the header names x_0 .. x_3, whatever the number of vectors.
    vectors = tmp_path / "x.csv"
    write_csv(vectors, [[1.0, 0.0, 0.5, -0.5]] * 3)
    status, out, err = run_main(capsys, "--rope", "rotated", "--input", str(vectors), "--format", "csv", "--header")
    assert status == 0 and err == ""
    header = out.splitlines()[0].split(",")
    assert [name for name in header if name.startswith("x_")] == ["x_0", "x_1", "x_2", "x_3"]
    assert len(out.splitlines()) == 4


@pytest.mark.parametrize("positions", [None, ["0.5", "1", "2"]])
def test_a_rotary_table_for_a_person_starts_each_row_with_its_position(
    capsys: "pytest.CaptureFixture[str]", positions: "Optional[List[str]]"
) -> None:
    given = [] if positions is None else ["--positions", ",".join(positions)]
    status, out, err = run_main(capsys, "--rope", "cos", "3", "4", *given)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["pos", "0", "cos_0"]
    assert [line.split()[0] for line in lines[1:]] == (positions or ["0", "1", "2"])
    cache = rope(3, 4, positions=None if positions is None else [float(p) for p in positions])[0]
    assert [[float(cell) for cell in line.split()[1:]] for line in lines[1:]] == cache


def test_an_interrupted_command_says_so_in_one_line_and_returns_130(
    capsys: "pytest.CaptureFixture[str]", monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(argv: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(pe_reference, "_main", interrupted)
    status = main(["3", "4"])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert status == 130
    assert err.endswith(": interrupted\n") and err.count("\n") == 1


# ---------------------------------------------------------------------------
# When the reader, the disk or the user stops the output
# ---------------------------------------------------------------------------


def closed_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("arguments", [["4", "4"], ["4", "4", "--format", "csv"], ["--check", "-"]])
def test_closed_stdout(arguments: List[str]) -> None:
    environment = subprocess_environment()
    process = subprocess.run(
        [sys.executable, "-m", "pe_reference", *arguments],
        input=b"[[0.0, 1.0]]",
        stderr=subprocess.PIPE,
        preexec_fn=closed_stdout,
        env=environment,
    )
    assert process.returncode in (1, 2)
    assert process.stderr.count(b"\n") == 1 and b"standard output is closed" in process.stderr


@pytest.mark.parametrize(
    "arguments", [["100000000", "512", "--exact", "--format", "csv"], ["60000", "2000", "--exact"]]
)
def test_ctrl_c_is_one_line_and_130(arguments: List[str]) -> None:
    import time

    environment = subprocess_environment()
    process = subprocess.Popen(
        [sys.executable, "-m", "pe_reference", *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment,
    )
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130
    assert process.stderr is not None
    assert process.stderr.read() == b"python3 -m pe_reference: interrupted\n"
    process.stderr.close()


def test_large_tables_fail_at_once_and_stream_instead() -> None:
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"^seq_len \* d_model must be at most 67108864 .* stream it with rows\(\)"):
        encoding(10**7, 10**5)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20
    assert len(next(rows(10**7, 10**5))) == 10**5
    assert len(encoding(1, 1 << 16)[0]) == 1 << 16


# ---------------------------------------------------------------------------
# Fuzzing the arguments (hypothesis)
# ---------------------------------------------------------------------------


TOKENS = [
    "0",
    "1",
    "3",
    "4",
    "7",
    "-1",
    "x",
    "1e3",
    "4.0",
    "٤",
    "--base",
    "nan",
    "-2.5",
    "1e-300",
    "64",
    "--format",
    "table",
    "csv",
    "json",
    "hex",
    "vectors",
    "xml",
    "--digits",
    "18",
    "--header",
    "--explain",
    "--exact",
    "--dtype",
    "float16",
    "bfloat16",
    "float8",
    "--preset",
    "fairseq",
    "tf-tutorial",
    "bert",
    "--layout",
    "cos-sin",
    "--spacing",
    "tensor2tensor",
    "--start",
    "--odd",
    "zero",
    "error",
    "--check",
    "CHECK",
    "--atol",
    "--ulps",
    "--plot",
    "--waves",
    "PICTURE",
    "--version",
    "--bogus",
    "-",
    "--",
    "",
]


class LimitedOutput(io.StringIO):
    """A standard output whose reader leaves after 1 MiB, as | head would: then a broken pipe."""

    def write(self, text: str) -> int:
        if self.tell() + len(text) > 1 << 20:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


@given(st.lists(st.sampled_from(TOKENS), max_size=9))
def test_fuzz_arguments(tokens: List[str]) -> None:
    # Every number among the tokens is small (64 at most), and the output stops at 1 MiB.
    out, err = LimitedOutput(), io.StringIO()
    stdin, here = sys.stdin, os.getcwd()
    # --plot and --waves take any token as a file name ("--plot 4" writes ./4): run in a
    # folder of its own, so nothing lands in the directory pytest was started from.
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "t.json").write_text(json.dumps(encoding(3, 4)))
        arguments = [
            str(folder / "t.json") if token == "CHECK" else str(folder / "p.png") if token == "PICTURE" else token
            for token in tokens
        ]
        os.chdir(scratch)
        sys.stdin = io.TextIOWrapper(io.BytesIO(b"[[0.0, 1.0]]"))  # for --check -
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = pe_reference.main(arguments)
                except SystemExit as exit:
                    status = exit.code if isinstance(exit.code, int) else 0
        finally:
            sys.stdin = stdin
            os.chdir(here)
    assert status in (0, 1, 2), (arguments, status)
    if status == 2:
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue(), (arguments, err.getvalue())
        assert out.getvalue() == "" or "--check" in arguments, (arguments, out.getvalue()[:200])


@pytest.mark.parametrize(
    "extra", [[], ["--exact"], ["--format", "vectors"], ["--preset", "fairseq", "--exact", "--dtype", "float16"]]
)
def test_huge_first_position(capsys: pytest.CaptureFixture[str], extra: List[str]) -> None:
    # A first position far beyond float64's integers, on a small table.
    status = pe_reference.main(["3", "4", "--start", "99999999999999999999", *extra])
    out, err = capsys.readouterr()
    if "--exact" in extra or "vectors" in extra:
        assert status == 0 and err == ""
    else:
        assert status == 0 and len(out.splitlines()) == 4


@pytest.mark.parametrize("output", ["table", "csv", "json", "hex"])
def test_a_grid_prints_the_table_encoding_gives(capsys: pytest.CaptureFixture[str], output: str) -> None:
    # 2 x 3 cells after one prefix row, MAE's columns: each row as encoding((2, 3), 8, ...) has it.
    args = ["2x3", "8", "--preset", "mae", "--prefix", "1", "--exact", "--dtype", "float32", "--format", output]
    status, out, err = run_main(capsys, *args, *(["--header"] if output in ("csv", "hex") else []))
    assert status == 0 and err == ""
    expected = encoding((2, 3), 8, preset="mae", prefix=1, exact=True, dtype="float32")
    names = ["sin_x0", "sin_x1", "cos_x0", "cos_x1", "sin_y0", "sin_y1", "cos_y0", "cos_y1"]
    lines = out.splitlines()

    def read(texts: List[str]) -> List[float]:
        # The shortest decimal of each float32, read back exactly and rounded to float32.
        return [reference.round_to(text, "float32", exact=True) for text in texts]

    if output == "json":
        assert [read(row) for row in json.loads(out, parse_float=str, parse_int=str)] == expected
    elif output == "table":
        assert lines[0].split() == ["pos"] + [word for c, name in enumerate(names) for word in (str(c), name)]
        assert [line.split()[0] for line in lines[1:3]] == ["prefix", "(0,"] and lines[-1].startswith("  (1, 2)")
        assert [read(line.split(")")[-1].split()) for line in lines[2:]] == expected[1:]
    else:
        assert lines[0] == ",".join(names)
        cells = [line.split(",") for line in lines[1:]]
        if output == "hex":
            assert [[reference.from_bits(int(x, 16), "float32") for x in row] for row in cells] == expected
        else:
            assert [read(row) for row in cells] == expected


def test_a_video_grid_and_the_grid_options(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["2x3x2", "32", "--preset", "cogvideox", "--format", "json"]
    assert json.loads(run_main(capsys, *args)[1]) == encoding((2, 3, 2), 32, preset="cogvideox")
    options = ["--axis-order", "xy", "--split", "1:3", "--normalize", "--epsilon", "1/2", "--position-scale", "3,1/3"]
    status, out, _ = run_main(capsys, "3x4", "16", "--layout", "sin-cos", *options, "--format", "json")
    keywords: Dict[str, Any] = dict(
        axis_order="xy", split="1:3", normalize=True, epsilon="1/2", position_scale=(3, "1/3")
    )
    assert status == 0 and json.loads(out) == encoding((3, 4), 16, layout="sin-cos", **keywords)


def test_an_empty_grid_prints_its_prefix_alone(capsys: pytest.CaptureFixture[str]) -> None:
    # 0 x 3 cells after one prefix row: the prefix's row is labelled, and no cell is.
    status, out, err = run_main(capsys, "0x3", "8", "--prefix", "1")
    assert (status, err) == (0, "")
    assert [line.split()[0] for line in out.splitlines()] == ["pos", "prefix"]


def test_check_a_grids_table(tmp_path: Path) -> None:
    # A 4 x 6 grid with a class token's row, MAE's columns: checked with its shape and preset, and named
    # without them; a table of other rows is a shape mismatch.
    table = encoding((4, 6), 16, preset="mae", prefix=1, exact=True, dtype="float32")
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(table))
    status, out, err = run("4x6", "16", "--preset", "mae", "--prefix", "1", "--check", str(path), "--dtype", "float32")
    assert (status, err) == (0, "") and "mae (prefix=1) convention on a grid of 4 x 6 cells" in out
    assert "within tolerance" in out
    status, out, err = run("--check", str(path), "--dtype", "float32")
    assert (status, err) == (1, "") and "the table is a grid of 4 x 6 cells" in out
    assert "(on the command line: 4x6 16 --preset mae --prefix 1 --dtype float32)" in out
    status, out, err = run("4x5", "16", "--preset", "mae", "--prefix", "1", "--check", str(path))
    assert (status, err) == (1, "") and out.strip() == "shape mismatch: the table has 25 x 16 values, expected 21 x 16"


def test_a_multi_axis_rotary_cache_from_a_grids_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # SEQ_LEN 2x3: the cells (0, 0), (0, 1), ... are the rows' positions, one per axis; --axes-dim splits the head.
    status, out, err = run_main(capsys, "2x3", "8", "--rope", "sin", "--axes-dim", "4,4", "--exact", "--format", "json")
    cells = [[i, j] for i in range(2) for j in range(3)]
    assert (status, err) == (0, "") and json.loads(out) == rope(6, 8, positions=cells, axes_dim=(4, 4), exact=True)[1]
    status, out, _ = run_main(capsys, "2x3", "8", "--rope", "cos", "--axes-dim", "4,4", "--format", "csv", "--header")
    assert out.splitlines()[0] == "cos_y0,cos_y1,cos_x0,cos_x1,cos_y0,cos_y1,cos_x0,cos_x1"
    mrope = '{"mrope_section": [2, 3, 3]}'
    status, out, _ = run_main(capsys, "1x2x2", "16", "--rope", "cos", "--rope-scaling", mrope, "--format", "json")
    scaling = {"mrope_section": [2, 3, 3]}
    assert (
        status == 0
        and json.loads(out)
        == rope(4, 16, positions=[[0, i, j] for i in range(2) for j in range(2)], scaling=scaling)[0]
    )
    path = tmp_path / "cache.json"
    path.write_text(json.dumps(rope(6, 8, positions=cells, axes_dim=(4, 4), exact=True, dtype="float32")[0]))
    status, out, err = run("2x3", "8", "--rope", "cos", "--axes-dim", "4,4", "--check", str(path), "--dtype", "float32")
    assert (status, err) == (0, "") and "axes_dim 4, 4" in out and "within tolerance" in out
    status, out, err = run("2x3", "8", "--rope", "cos", "--check", str(path))
    assert status == 2 and "takes --axes-dim or --rope-scaling's mrope_section" in err
    for args, message in (
        (["6", "8", "--rope", "cos", "--axes-dim", "4,4"], "go with a grid's shape as SEQ_LEN, such as 16x16"),
        (
            ["2x3", "8", "--rope", "cos", "--axes-dim", "2,2,4"],
            "--axes-dim must give one width for each of the grid's 2 axes, got [2, 2, 4]",
        ),
        (
            ["2x3", "8", "--rope", "cos", "--axes-dim", "4,4", "--format", "vectors"],
            "--format vectors holds one position a row",
        ),
    ):
        status, out, err = run_main(capsys, *args)
        assert (status, out) == (2, "") and message in err, (args, err)
