"""Argument checks the mutation run found untested: each rule, with the message it gives."""

from typing import Union

import mpmath
import pytest

import pe_reference
from pe_reference import encoding
from tests import reference


@pytest.mark.parametrize("positions", ["0123", b"01", 5, 2.5])
def test_positions_must_be_a_sequence_of_numbers_not_a_string_or_a_number(positions: Union[str, bytes, float]) -> None:
    # A string is iterable, and "0" would read as a decimal: it is refused as a whole, as a number is.
    message = f"positions must be a sequence of real numbers, got {type(positions).__name__} {positions!r}"
    with pytest.raises(TypeError) as raised:
        encoding(2, 4, positions=positions)
    assert str(raised.value) == message


class IndexGivesFloat:
    """An integer type whose __index__ is broken: it returns a float."""

    def __index__(self) -> float:
        return 2.5

    def __repr__(self) -> str:
        return "IndexGivesFloat()"


class IndexGivesInt:
    def __index__(self) -> int:
        return 3


def test_an_integer_is_an_int_or_has_an_index_that_returns_one() -> None:
    assert len(encoding(IndexGivesInt(), 4)) == 3  # type: ignore[arg-type]
    with pytest.raises(TypeError) as raised:
        encoding(IndexGivesFloat(), 4)  # type: ignore[arg-type]
    assert str(raised.value) == "seq_len must be an integer, got IndexGivesFloat IndexGivesFloat()"


def test_exact_float64_is_refused_only_where_floats_are_single_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    # On CPython the floats are double: exact float64 is given.  A board with single-precision
    # floats (MicroPython's float32 builds) cannot hold it, and the narrow formats stay open there.
    with mpmath.workprec(reference.PRECISION):
        sine = mpmath.sin(1)
    assert encoding(2, 4, exact=True)[1][0] == reference.round_to(sine, "float64")
    monkeypatch.setattr(pe_reference, "_single_precision", lambda: True)
    with pytest.raises(ValueError) as raised:
        encoding(2, 4, exact=True)
    assert str(raised.value) == (
        "dtype must be float32, bfloat16 or float16 for exact values on this runtime, whose floats are"
        " single precision (24 bits), got 'float64'"
    )
    assert encoding(2, 4, exact=True, dtype="float32")[1][0] == reference.round_to(sine, "float32")
