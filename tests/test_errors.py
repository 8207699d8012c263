"""Bad input to the API: TypeError for a wrong type, ValueError for a wrong value."""

import math
import re
from typing import Any, Callable, Dict, Type, Union

import mpmath
import pytest

import pe_reference
from pe_reference import derivation, encoding, rows, value
from tests import errors_catalogue, reference

# Each public function, called with good arguments; a case overrides one.
CALLS: Dict[str, Callable[..., Any]] = {
    "encoding": lambda seq_len=3, d_model=4, base=10000.0: encoding(seq_len, d_model, base=base),
    "rows": lambda seq_len=3, d_model=4, base=10000.0: rows(seq_len, d_model, base=base),
    "value": lambda pos=1, dim=2, d_model=4, base=10000.0: value(pos, dim, d_model, base=base),
    "derivation": lambda pos=1, dim=2, d_model=4, base=10000.0: derivation(pos, dim, d_model, base=base),
}
PARAMETERS = {
    "encoding": ("seq_len", "d_model", "base"),
    "rows": ("seq_len", "d_model", "base"),
    "value": ("pos", "dim", "d_model", "base"),
    "derivation": ("pos", "dim", "d_model", "base"),
}

WRONG_INTEGER_TYPES = [True, False, 3.0, "3", None, [3], 3 + 0j]
WRONG_BASE_TYPES = [True, [1.0], 1j, b"10000"]


def assert_message(error: BaseException, name: str, shown: str) -> None:
    message = str(error)
    # The parameter, the rule and the value; lower case, no final period.
    assert message.startswith(name + " must be "), message
    assert shown in message, message
    assert message[0].islower() and not message.endswith(".")


def cases(wrong: str) -> Any:
    return [
        (function, name)
        for function, names in PARAMETERS.items()
        for name in names
        if (name == "base") == (wrong == "base")
    ]


@pytest.mark.parametrize("function, name", cases("integer"))
@pytest.mark.parametrize("bad", WRONG_INTEGER_TYPES, ids=repr)
def test_wrong_integer_type(function: str, name: str, bad: object) -> None:
    with pytest.raises(TypeError) as caught:
        CALLS[function](**{name: bad})
    assert_message(caught.value, name, type(bad).__name__)


@pytest.mark.parametrize("function, name", cases("base"))
@pytest.mark.parametrize("bad", WRONG_BASE_TYPES, ids=repr)
def test_wrong_base_type(function: str, name: str, bad: object) -> None:
    with pytest.raises(TypeError) as caught:
        CALLS[function](**{name: bad})
    assert_message(caught.value, name, type(bad).__name__)


@pytest.mark.parametrize(
    "function, name, bad, shown",
    [
        ("encoding", "seq_len", -1, "at least 0, got -1"),
        ("rows", "seq_len", -5, "at least 0, got -5"),
        ("encoding", "d_model", 0, "at least 1, got 0"),
        ("rows", "d_model", -3, "at least 1, got -3"),
        ("value", "d_model", 0, "at least 1, got 0"),
        ("value", "pos", -1, "at least 0, got -1"),
        ("value", "dim", -1, "at least 0, got -1"),
        ("value", "dim", 4, "less than d_model (4), got 4"),
        ("derivation", "dim", 9, "less than d_model (4), got 9"),
        ("derivation", "pos", -2, "at least 0, got -2"),
        ("encoding", "base", 0.0, "finite and greater than 0, got 0.0"),
        ("encoding", "base", -10000.0, "finite and greater than 0, got -10000.0"),
        ("rows", "base", math.nan, "finite and greater than 0, got nan"),
        ("value", "base", math.inf, "finite and greater than 0, got inf"),
        ("derivation", "base", -math.inf, "finite and greater than 0, got -inf"),
        ("encoding", "base", 10**400, "finite and greater than 0 in float64, which the fast path uses, got 1000000"),
        ("value", "pos", 2**1024, "less than 2**1024"),
    ],
)
def test_wrong_value(function: str, name: str, bad: object, shown: str) -> None:
    with pytest.raises(ValueError) as caught:
        CALLS[function](**{name: bad})
    assert_message(caught.value, name, shown)


def test_angle_that_overflows_is_refused() -> None:
    # A tiny base makes the denominators tiny: pos / 1e-300**0.99 overflows.
    with pytest.raises(ValueError, match=r"^angle .* must be finite"):
        rows(10**12, 200, base=1e-300)
    with pytest.raises(ValueError, match=r"^angle .* must be finite"):
        value(10**300, 199, 200, base=1e-300)


def test_long_values_are_cut_short_in_messages() -> None:
    with pytest.raises(TypeError) as caught:
        encoding("x" * 1000, 4)  # type: ignore[arg-type]
    assert len(str(caught.value)) < 100
    assert re.search(r"got str 'x+\.\.\. \(1002 characters\)$", str(caught.value))


@pytest.mark.parametrize("function", ["encoding", "rows", "value"])
def test_exact_must_be_a_bool(function: str) -> None:
    for bad in (1, "yes", None):
        with pytest.raises(TypeError) as caught:
            if function == "value":
                value(1, 1, 4, exact=bad)  # type: ignore[arg-type]
            elif function == "rows":
                rows(2, 4, exact=bad)  # type: ignore[arg-type]
            else:
                encoding(2, 4, exact=bad)  # type: ignore[arg-type]
        assert_message(caught.value, "exact", f"True or False, got {type(bad).__name__}")


@pytest.mark.parametrize(
    "bad, error, shown",
    [
        ("float8", ValueError, "one of float64, float32, bfloat16, float16, got 'float8'"),
        ("Float32", ValueError, "got 'Float32'"),
        ("", ValueError, "got ''"),
        (32, TypeError, "a str, got int 32"),
        (None, TypeError, "a str, got NoneType None"),
    ],
)
def test_dtype_must_be_a_known_name(bad: Any, error: Type[Exception], shown: str) -> None:
    for call in (
        lambda: encoding(2, 4, dtype=bad),
        lambda: rows(2, 4, dtype=bad),
        lambda: value(1, 1, 4, exact=True, dtype=bad),
    ):
        with pytest.raises(error) as caught:
            call()
        assert_message(caught.value, "dtype", shown)


def test_exact_mode_takes_positions_beyond_float64() -> None:
    # The fast path refuses pos >= 2**1024; exact mode has no such limit.
    assert -1.0 <= value(2**1100, 0, 4, exact=True) <= 1.0
    with pytest.raises(ValueError, match="pos must be less than 2\\*\\*1024"):
        value(2**1100, 0, 4)


# ---------------------------------------------------------------------------
# Argument checks: one message rule
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# docs/errors.md holds exactly what running each case gives now
# ---------------------------------------------------------------------------


def test_the_catalogue_is_true() -> None:
    assert errors_catalogue.catalogue_in_page() == errors_catalogue.render(), (
        "docs/errors.md is out of date: run python tests/errors_catalogue.py"
    )


def test_every_function_case_raises() -> None:
    for case, outcome in errors_catalogue.api_results():
        assert outcome.startswith(("TypeError: ", "ValueError: ")), (case, outcome)
        message = outcome.split(": ", 1)[1]
        assert message[0].islower() and not message.endswith("."), (case, message)


def test_every_command_case_is_one_line_and_status_2() -> None:
    for command, status, err in errors_catalogue.cli_results():
        assert status == 2, command
        assert err.startswith("python3 -m pe_reference: error: ") and "\n" not in err, (command, err)
