"""The command line's rules the mutation run found untested."""

import sys
from pathlib import Path
from typing import List

import pytest

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
