"""The command line's rules the mutation run found untested."""

import sys
from pathlib import Path
from typing import Any, List, Optional

import pytest

import pe_reference
from pe_reference import main, rope
from tests.helpers import run_main


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
