"""Sinusoidal positional encoding: the reference, computed and explained.

The encoding of "Attention Is All You Need" (Vaswani et al., 2017) gives
position ``pos`` a vector of ``d_model`` numbers, one sine and one cosine per
pair index ``i``:

    PE(pos, 2i)   = sin(pos / base**(2i / d_model))
    PE(pos, 2i+1) = cos(pos / base**(2i / d_model))

with ``base = 10000``.  Column ``2i`` holds the sine and column ``2i + 1`` the
cosine of the same angle (the paper's interleaved layout).  ``i`` counts
pairs, not columns: both columns of a pair share the exponent ``2i / d_model``.

==================  ===================================================
Function            Description
==================  ===================================================
encoding            The whole table: seq_len rows of d_model floats.
rows                The same rows one at a time, for streaming.
value               One element, without building the table.
derivation          The worked derivation of one element, step by step.
main                The command line, ``python -m pe_reference``.
==================  ===================================================

Worked example, the table for four positions and ``d_model = 4``:

>>> for row in encoding(4, 4):
...     print([round(x, 8) for x in row])
[0.0, 1.0, 0.0, 1.0]
[0.84147098, 0.54030231, 0.00999983, 0.99995]
[0.90929743, -0.41614684, 0.01999867, 0.99980001]
[0.14112001, -0.9899925, 0.0299955, 0.99955003]

Columns 2 and 3 divide the position by ``10000**(2/4) = 100``, so their
angles are 0.01, 0.02 and 0.03:

>>> print(derivation(1, 2, 4))
pos₁₂ = sin(1 / 10000^((2*1)/4)) = sin(1 / 10000^0.5) = sin(1 / 100) = sin(0.01) ≈ 0.009999833334166664

Exceptions
----------

A wrong type raises ``TypeError`` and a wrong value ``ValueError``; the
message names the parameter, the rule and the value:

>>> encoding(4, 0)
Traceback (most recent call last):
  ...
ValueError: d_model must be at least 1, got 0

The module is one self-contained file with no dependencies outside the
standard library: copy it anywhere Python runs.

Copyright (c) 2026 the pe_reference authors.  MIT licence: permission is
granted, free of charge, to use, copy, modify, merge, publish, distribute,
sublicense and sell copies of this file, provided this notice is kept in all
copies.  THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
"""

import math

__version__ = "0.1.0"
__all__ = ["derivation", "encoding", "main", "rows", "value"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Callable, Iterator, List, NoReturn, Optional, Sequence, Tuple

# The base of the paper: wavelengths run from 2*pi to 10000*2*pi.
DEFAULT_BASE = 10000.0


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def encoding(seq_len: int, d_model: int, *, base: float = DEFAULT_BASE) -> "List[List[float]]":
    """Return the positional-encoding table: ``seq_len`` rows of ``d_model`` floats.

    >>> table = encoding(3, 4)
    >>> len(table), len(table[0])
    (3, 4)
    >>> [round(x, 6) for x in table[2]]
    [0.909297, -0.416147, 0.019999, 0.9998]

    Row ``pos`` is the encoding of position ``pos``; column ``2i`` is
    ``sin(pos / base**(2i / d_model))`` and column ``2i + 1`` the cosine of the
    same angle.  Position 0 is exactly ``[0.0, 1.0, 0.0, 1.0, ...]``:

    >>> encoding(1, 6)
    [[0.0, 1.0, 0.0, 1.0, 0.0, 1.0]]

    An odd ``d_model`` is allowed: the last column is the sine of one more
    pair, whose cosine would fall outside the table:

    >>> [round(x, 6) for x in encoding(2, 3)[1]]
    [0.841471, 0.540302, 0.002154]

    ``base`` sets the longest wavelength (RoPE-style models use other
    bases):

    >>> [round(x, 6) for x in encoding(2, 4, base=100.0)[1]]
    [0.841471, 0.540302, 0.099833, 0.995004]

    An empty table is an empty list:

    >>> encoding(0, 4)
    []

    Values are computed in float64 with ``math.sin`` and ``math.cos``; each
    equals ``value(pos, dim, d_model, base=base)`` bit for bit.
    """
    return list(rows(seq_len, d_model, base=base))


def rows(seq_len: int, d_model: int, *, base: float = DEFAULT_BASE) -> "Iterator[List[float]]":
    """Return an iterator over the rows of ``encoding(seq_len, d_model)``.

    >>> it = rows(1000000, 512)
    >>> first = next(it)
    >>> first[:4]
    [0.0, 1.0, 0.0, 1.0]

    Only one row is in memory at a time, so a table too large to hold can
    still be streamed to a file.  The arguments are checked at once, not at
    the first ``next()``:

    >>> rows(-1, 4)
    Traceback (most recent call last):
      ...
    ValueError: seq_len must be at least 0, got -1
    """
    seq_len = _check_integer("seq_len", seq_len, 0)
    d_model = _check_integer("d_model", d_model, 1)
    base = _check_base(base)
    denominators = _denominators(d_model, base)
    if seq_len > 0:
        # The largest angle belongs to the last row and the smallest
        # denominator; if it is finite, every angle is.
        _angle(seq_len - 1, min(denominators))
    return _fast_rows(seq_len, d_model, denominators)


def value(pos: int, dim: int, d_model: int, *, base: float = DEFAULT_BASE) -> float:
    """Return the element at row ``pos``, column ``dim`` without building the table.

    >>> value(1, 0, 4) == math.sin(1.0)
    True
    >>> round(value(1, 2, 4), 8)
    0.00999983

    The result equals ``encoding(...)[pos][dim]`` bit for bit, and ``pos``
    may be any non-negative integer that float64 can hold:

    >>> value(3, 1, 4) == encoding(4, 4)[3][1]
    True
    >>> -1.0 <= value(10**9, 0, 512) <= 1.0
    True

    In float64 the angle of a large position carries a large absolute
    rounding error: ``pos / denominator`` is rounded to 53 bits before the
    sine is taken.

    ``dim`` must name a column of the table:

    >>> value(0, 4, 4)
    Traceback (most recent call last):
      ...
    ValueError: dim must be less than d_model (4), got 4
    """
    pos = _check_integer("pos", pos, 0)
    d_model = _check_integer("d_model", d_model, 1)
    dim = _check_integer("dim", dim, 0)
    if dim >= d_model:
        raise ValueError(f"dim must be less than d_model ({d_model}), got {dim}")
    base = _check_base(base)
    angle = _angle(pos, _denominator(dim // 2, d_model, base))
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def derivation(pos: int, dim: int, d_model: int, *, base: float = DEFAULT_BASE) -> str:
    """Return the worked derivation of one element, one step after another.

    >>> print(derivation(1, 3, 4))
    pos₁₃ = cos(1 / 10000^((2*1)/4)) = cos(1 / 10000^0.5) = cos(1 / 100) = cos(0.01) ≈ 0.9999500004166653

    The first form is the formula with ``i = dim // 2``; each later form
    evaluates one more operation.  ``=`` joins two forms that are equal as
    real numbers, and ``≈`` marks the steps where float64 rounds.  The last
    number is what ``value(pos, dim, d_model)`` returns.

    The sixteen elements of the ``d_model = 4`` table follow.  Columns 2
    and 3 belong to pair ``i = 1``, so their exponent is ``2*1/4 = 0.5``
    (not 1/4) and their denominator ``10000**0.5 = 100`` (not 10):

    >>> for pos in range(4):
    ...     for dim in range(4):
    ...         print(derivation(pos, dim, 4))
    pos₀₀ = sin(0 / 10000^((2*0)/4)) = sin(0 / 10000^0) = sin(0 / 1) = sin(0) = 0.0
    pos₀₁ = cos(0 / 10000^((2*0)/4)) = cos(0 / 10000^0) = cos(0 / 1) = cos(0) = 1.0
    pos₀₂ = sin(0 / 10000^((2*1)/4)) = sin(0 / 10000^0.5) = sin(0 / 100) = sin(0) = 0.0
    pos₀₃ = cos(0 / 10000^((2*1)/4)) = cos(0 / 10000^0.5) = cos(0 / 100) = cos(0) = 1.0
    pos₁₀ = sin(1 / 10000^((2*0)/4)) = sin(1 / 10000^0) = sin(1 / 1) = sin(1) ≈ 0.8414709848078965
    pos₁₁ = cos(1 / 10000^((2*0)/4)) = cos(1 / 10000^0) = cos(1 / 1) = cos(1) ≈ 0.5403023058681398
    pos₁₂ = sin(1 / 10000^((2*1)/4)) = sin(1 / 10000^0.5) = sin(1 / 100) = sin(0.01) ≈ 0.009999833334166664
    pos₁₃ = cos(1 / 10000^((2*1)/4)) = cos(1 / 10000^0.5) = cos(1 / 100) = cos(0.01) ≈ 0.9999500004166653
    pos₂₀ = sin(2 / 10000^((2*0)/4)) = sin(2 / 10000^0) = sin(2 / 1) = sin(2) ≈ 0.9092974268256817
    pos₂₁ = cos(2 / 10000^((2*0)/4)) = cos(2 / 10000^0) = cos(2 / 1) = cos(2) ≈ -0.4161468365471424
    pos₂₂ = sin(2 / 10000^((2*1)/4)) = sin(2 / 10000^0.5) = sin(2 / 100) = sin(0.02) ≈ 0.01999866669333308
    pos₂₃ = cos(2 / 10000^((2*1)/4)) = cos(2 / 10000^0.5) = cos(2 / 100) = cos(0.02) ≈ 0.9998000066665778
    pos₃₀ = sin(3 / 10000^((2*0)/4)) = sin(3 / 10000^0) = sin(3 / 1) = sin(3) ≈ 0.1411200080598672
    pos₃₁ = cos(3 / 10000^((2*0)/4)) = cos(3 / 10000^0) = cos(3 / 1) = cos(3) ≈ -0.9899924966004454
    pos₃₂ = sin(3 / 10000^((2*1)/4)) = sin(3 / 10000^0.5) = sin(3 / 100) = sin(0.03) ≈ 0.02999550020249566
    pos₃₃ = cos(3 / 10000^((2*1)/4)) = cos(3 / 10000^0.5) = cos(3 / 100) = cos(0.03) ≈ 0.9995500337489875

    (Each full value above is the correctly rounded sine or cosine of its
    float64 argument, so every correctly rounding ``libm`` prints it; the
    tests check this against mpmath.)

    Position 0 is exact: ``sin(0) = 0`` and ``cos(0) = 1``.  Where float64
    rounds an intermediate step, the derivation says so with ``≈``:

    >>> print(derivation(1, 2, 6))  # doctest: +ELLIPSIS
    pos₁₂ = sin(1 / 10000^((2*1)/6)) ≈ sin(1 / 10000^0.3333333333333333) ≈ sin(1 / 21.5443469...) ≈ sin(0.0464158883...) ≈ 0.0463992234...

    Subscripts of two digits or more are separated by a comma:

    >>> print(derivation(12, 3, 4).split(" = ")[0])
    pos₁₂,₃
    """
    pos = _check_integer("pos", pos, 0)
    d_model = _check_integer("d_model", d_model, 1)
    dim = _check_integer("dim", dim, 0)
    if dim >= d_model:
        raise ValueError(f"dim must be less than d_model ({d_model}), got {dim}")
    base = _check_base(base)
    pair = dim // 2
    function = "sin" if dim % 2 == 0 else "cos"
    exponent = (2 * pair) / d_model
    denominator = _denominator(pair, d_model, base)
    angle = _angle(pos, denominator)
    result = math.sin(angle) if function == "sin" else math.cos(angle)

    base_text = _number_text(base)
    exponent_text = _number_text(exponent)
    denominator_text = _number_text(denominator)
    angle_text = _number_text(angle)
    exponent_ratio = _decimal_ratio(exponent_text)
    denominator_ratio = _decimal_ratio(denominator_text)
    angle_ratio = _decimal_ratio(angle_text)

    parts = [
        _element_name(pos, dim),
        " = ",
        f"{function}({pos} / {base_text}^((2*{pair})/{d_model}))",
        # 2i/d as a decimal: exact only when d divides out to powers of 2 and 5.
        _relation(_ratios_equal(exponent_ratio, (2 * pair, d_model))),
        f"{function}({pos} / {base_text}^{exponent_text})",
        _relation(_power_is_exact(_decimal_ratio(base_text), exponent_ratio, denominator_ratio)),
        f"{function}({pos} / {denominator_text})",
        _relation(_ratios_equal(angle_ratio, (pos * denominator_ratio[1], denominator_ratio[0]))),
        f"{function}({angle_text})",
        # sin and cos of a non-zero rational are transcendental (Lindemann):
        # only the angle 0 gives an exact value.
        _relation(angle_ratio[0] == 0),
        repr(result),
    ]
    return "".join(parts)


# ---------------------------------------------------------------------------
# Float64 kernel (the fast path)
# ---------------------------------------------------------------------------


def _denominator(pair: int, d_model: int, base: float) -> float:
    """Return ``base**(2*pair / d_model)``, the divisor of pair ``pair``'s angle."""
    return math.pow(base, (2 * pair) / d_model)


def _denominators(d_model: int, base: float) -> "List[float]":
    """Return the denominators of every pair, the last one sine-only when d_model is odd."""
    return [_denominator(pair, d_model, base) for pair in range((d_model + 1) // 2)]


def _angle(pos: int, denominator: float) -> float:
    """Return ``pos / denominator`` in float64, refusing an angle that is not finite."""
    try:
        angle = float(pos) / denominator
    except OverflowError:
        raise ValueError(f"pos must be less than 2**1024 to be held in float64, got {_short(pos)}") from None
    if angle - angle != 0.0:
        raise ValueError(
            f"angle pos / base**(2i/d_model) must be finite in float64, got {pos} / {denominator!r}"
        )
    return angle


def _fast_rows(seq_len: int, d_model: int, denominators: "List[float]") -> "Iterator[List[float]]":
    """Yield the rows; ``value()`` computes each element with the same operations."""
    sin = math.sin
    cos = math.cos
    cosine_count = d_model // 2
    for pos in range(seq_len):
        position = float(pos)
        angles = [position / denominator for denominator in denominators]
        row = [0.0] * d_model
        row[0::2] = map(sin, angles)
        # With an odd d_model the last pair has no cosine column.
        row[1::2] = map(cos, angles if cosine_count == len(angles) else angles[:cosine_count])
        yield row


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


def _short(value: object) -> str:
    """Return ``repr(value)``, cut short when it would swamp a message."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


def _check_integer(name: str, value: object, minimum: int) -> int:
    """Return ``value`` as an int, or raise TypeError or ValueError naming ``name``."""
    if not isinstance(value, int) or isinstance(value, bool):
        # Accept integer types of other libraries (numpy.int64) by __index__;
        # refuse bool, whose __index__ would turn True into 1.
        index = getattr(type(value), "__index__", None)
        if index is None or isinstance(value, bool):
            raise TypeError(f"{name} must be an integer, got {type(value).__name__} {_short(value)}")
        value = index(value)
    assert isinstance(value, int)
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def _check_base(base: object) -> float:
    """Return ``base`` as a float, or raise TypeError or ValueError."""
    if isinstance(base, bool) or isinstance(base, str) or getattr(type(base), "__float__", None) is None:
        raise TypeError(f"base must be a real number, got {type(base).__name__} {_short(base)}")
    try:
        number = float(base)  # type: ignore[arg-type]
    except OverflowError:
        raise ValueError(f"base must be finite and greater than 0, got {_short(base)}") from None
    # NaN fails every comparison, so this also refuses it.
    if not 0.0 < number < math.inf:
        raise ValueError(f"base must be finite and greater than 0, got {number!r}")
    return number


# ---------------------------------------------------------------------------
# Derivation text: which steps are exact
# ---------------------------------------------------------------------------

_SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉"


def _subscript(number: int) -> str:
    return "".join(_SUBSCRIPTS[ord(digit) - 48] for digit in str(number))


def _element_name(pos: int, dim: int) -> str:
    """Return ``pos₁₂`` for (1, 2), with a comma once either index has two digits."""
    separator = "" if pos < 10 and dim < 10 else ","
    return "pos" + _subscript(pos) + separator + _subscript(dim)


def _number_text(number: float) -> str:
    """Return the shortest text of a float, without ``.0`` on a whole number."""
    if number == int(number) and abs(number) < 2.0**53:
        return str(int(number))
    return repr(number)


def _relation(exact: bool) -> str:
    return " = " if exact else " ≈ "


def _decimal_ratio(text: str) -> "Tuple[int, int]":
    """Return the exact value of a decimal text such as ``-1.5e-05`` as (numerator, denominator)."""
    mantissa, _, exponent = text.lower().partition("e")
    negative = mantissa.startswith("-")
    whole, _, fraction = mantissa.lstrip("+-").partition(".")
    numerator = int(whole + fraction)
    if negative:
        numerator = -numerator
    scale = (int(exponent) if exponent else 0) - len(fraction)
    if scale >= 0:
        return numerator * 10**scale, 1
    return numerator, 10**-scale


def _ratios_equal(left: "Tuple[int, int]", right: "Tuple[int, int]") -> bool:
    return left[0] * right[1] == right[0] * left[1]


def _power_is_exact(base: "Tuple[int, int]", exponent: "Tuple[int, int]", result: "Tuple[int, int]") -> bool:
    """Tell whether base**exponent equals result exactly, all three positive rationals.

    With exponent = p/q in lowest terms, b**(p/q) = r exactly when r**q = b**p.
    Large q are not tried (the answer is then "not proven", shown as ≈).
    """
    p, q = exponent
    if p == 0:
        return result == (1, 1)
    a, b = p, q
    while b:
        a, b = b, a % b
    p, q = p // a, q // a
    if q > 64 or p > 64:
        return False
    return bool(result[0] ** q * base[1] ** p == base[0] ** p * result[1] ** q)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

_FORMATS = ("table", "csv", "json")


def main(argv: "Optional[Sequence[str]]" = None) -> int:
    """Run the command line; return the exit status.

    ``python -m pe_reference SEQ_LEN D_MODEL`` prints the table.  Usage
    errors print one line on standard error and return 2.
    """
    import sys

    arguments = list(sys.argv[1:] if argv is None else argv)
    prog = _program_name(sys.argv[0] if sys.argv else "")
    # The front door, two plain integers, skips importing argparse, which
    # would double the start-up time; anything else, errors included, goes
    # through argparse below.
    if len(arguments) == 2 and all(map(_is_decimal_integer, arguments)):
        seq_len, d_model = int(arguments[0]), int(arguments[1])
        if d_model >= 1:
            table = rows(seq_len, d_model)
            return _write(prog, table, seq_len, d_model, DEFAULT_BASE, "table", None, False, False)

    import argparse

    class Parser(argparse.ArgumentParser):
        # One line on stderr, not the usage block: the message says what to fix.
        def error(self, message: str) -> "NoReturn":
            self.exit(2, f"{self.prog}: error: {message}\n")

    parser = Parser(
        prog=prog,
        description="Print the sinusoidal positional encoding of 'Attention Is All You Need': "
        "PE(pos, 2i) = sin(pos / base^(2i/d_model)), PE(pos, 2i+1) = cos(pos / base^(2i/d_model)).",
        epilog="example: %(prog)s 4 4 --explain",
    )
    parser.add_argument("seq_len", metavar="SEQ_LEN", type=_cli_integer("seq_len", 0), help="number of positions (rows)")
    parser.add_argument("d_model", metavar="D_MODEL", type=_cli_integer("d_model", 1), help="encoding width (columns)")
    parser.add_argument("--base", type=_cli_base, default=DEFAULT_BASE, help="base of the wavelengths (default 10000)")
    parser.add_argument(
        "--format",
        choices=_FORMATS,
        default=None,
        help="table (default): aligned, for a person; csv: one line per position; json: an array of arrays",
    )
    parser.add_argument(
        "--digits",
        type=_cli_digits,
        default=None,
        metavar="N",
        help="N digits after the point (default: round-trip precision)",
    )
    parser.add_argument("--header", action="store_true", help="with --format csv: a first line naming the columns")
    parser.add_argument("--explain", action="store_true", help="print every element's worked derivation instead")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = parser.parse_args(arguments)

    output_format = args.format or "table"
    if args.header and output_format != "csv":
        parser.error("--header goes with --format csv")
    if args.explain and (args.format is not None or args.digits is not None):
        parser.error("--explain prints derivations; it takes no --format or --digits")
    try:
        table = rows(args.seq_len, args.d_model, base=args.base)
    except ValueError as error:
        parser.error(str(error))
    return _write(
        prog, table, args.seq_len, args.d_model, args.base, output_format, args.digits, args.header, args.explain
    )


def _write(
    prog: str,
    table: "Iterator[List[float]]",
    seq_len: int,
    d_model: int,
    base: float,
    output_format: str,
    digits: "Optional[int]",
    header: bool,
    explain: bool,
) -> int:
    """Write the table to stdout row by row; return the exit status."""
    import sys

    out = sys.stdout
    try:
        if explain:
            _write_explained(out, seq_len, d_model, base)
        elif output_format == "table":
            _write_table(out, table, seq_len, d_model, base, digits)
        elif output_format == "csv":
            _write_csv(out, table, d_model, digits, header)
        else:
            _write_json(out, table, digits)
        out.flush()
    except KeyboardInterrupt:
        _silence_stdout()
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, as the Python docs advise.
        _silence_stdout()
        return 1
    except OSError as error:
        _silence_stdout()
        sys.stderr.write(f"{prog}: error: cannot write the output: {error.strerror or error}\n")
        return 1
    return 0


def _program_name(argv0: str) -> str:
    """Return the name the user typed: ``pe-reference`` or ``python -m pe_reference``."""
    name = argv0.replace("\\", "/").rsplit("/", 1)[-1]
    return name if name.startswith("pe-reference") else "python -m pe_reference"


def _silence_stdout() -> None:
    """Point stdout at devnull so the interpreter's final flush cannot fail again."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass


def _cli_integer(name: str, minimum: int) -> "Callable[[str], int]":
    """Return an argparse type that reads a plain decimal integer."""

    def parse(text: str) -> int:
        import argparse

        if not _is_decimal_integer(text[1:] if text.startswith("-") else text):
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}")
        try:
            return _check_integer(name, int(text), minimum)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _is_decimal_integer(text: str) -> bool:
    # Stricter than int(): no sign, spaces, underscores or non-ASCII digits.
    return bool(text) and all("0" <= c <= "9" for c in text)


def _cli_base(text: str) -> float:
    import argparse

    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"base must be a number, got {text!r}") from None
    try:
        return _check_base(number)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _cli_digits(text: str) -> int:
    import argparse

    if not _is_decimal_integer(text) or int(text) > 17:
        raise argparse.ArgumentTypeError(f"digits must be an integer from 0 to 17, got {text!r}")
    return int(text)


def _formatter(digits: "Optional[int]") -> "Callable[[float], str]":
    """Return the function that turns a value into text: repr, or fixed-point."""
    if digits is None:
        return repr
    return ("{:." + str(digits) + "f}").format


def _write_csv(out: "IO[str]", table: "Iterator[List[float]]", d_model: int, digits: "Optional[int]", header: bool) -> None:
    text = _formatter(digits)
    if header:
        out.write(",".join(_column_name(dim) for dim in range(d_model)) + "\n")
    for row in table:
        out.write(",".join(map(text, row)) + "\n")


def _write_json(out: "IO[str]", table: "Iterator[List[float]]", digits: "Optional[int]") -> None:
    # repr of a finite float is a valid JSON number; streaming needs no json module.
    text = _formatter(digits)
    separator = "[\n"
    for row in table:
        out.write(separator + "[" + ", ".join(map(text, row)) + "]")
        separator = ",\n"
    out.write("[]\n" if separator == "[\n" else "\n]\n")


def _column_name(dim: int) -> str:
    return ("sin_" if dim % 2 == 0 else "cos_") + str(dim // 2)


# Tables up to this many elements are measured before printing, so their
# columns are no wider than needed; larger ones stream at a fixed width.
_MEASURED_TABLE_SIZE = 1 << 16


def _write_table(
    out: "IO[str]",
    table: "Iterator[List[float]]",
    seq_len: int,
    d_model: int,
    base: float,
    digits: "Optional[int]",
) -> None:
    text = _formatter(digits)

    def cell(number: float) -> str:
        # A space where a minus sign would be keeps the points aligned.
        shown = text(number)
        return shown if shown.startswith("-") else " " + shown

    labels = [f"{dim} {_column_name(dim)}" for dim in range(d_model)]
    if digits is not None:
        width = digits + 3
    elif seq_len * d_model <= _MEASURED_TABLE_SIZE:
        width = max((len(cell(x)) for row in rows(seq_len, d_model, base=base) for x in row), default=0)
    else:
        # Values lie in [-1, 1]: sign, 17 significant digits, point, exponent.
        width = len("-1.2345678901234567e-308")
    widths = [max(width, len(label)) for label in labels]
    pos_width = max(len("pos"), len(str(max(seq_len - 1, 0))))
    out.write("pos".rjust(pos_width) + "".join("  " + label.ljust(w) for label, w in zip(labels, widths)).rstrip() + "\n")
    for pos, row in enumerate(table):
        cells = "".join("  " + cell(x).ljust(w) for x, w in zip(row, widths))
        out.write(str(pos).rjust(pos_width) + cells.rstrip() + "\n")


def _write_explained(out: "IO[str]", seq_len: int, d_model: int, base: float) -> None:
    for pos in range(seq_len):
        if pos:
            out.write("\n")
        for dim in range(d_model):
            out.write(derivation(pos, dim, d_model, base=base) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
