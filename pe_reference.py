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
Convention          Every choice a framework makes; PRESETS by name.
compare             Check another implementation's table; a Report.
assert_close        compare() for a test suite: AssertionError on mismatch.
rope                A rotary embedding's cos and sin caches (RoPE).
apply_rope          Vectors rotated by a rotary embedding.
compare_rope        Check a rotary cache or rotated vectors; a Report.
main                The command line, ``python3 -m pe_reference``.
==================  ===================================================

``encoding``, ``rows`` and ``value`` take ``exact=True`` for correctly
rounded values (the same bits on every platform), ``dtype`` for float32,
bfloat16 or float16, and ``convention`` or ``preset`` (and any field of a
Convention as a keyword: ``layout``, ``start``, ``positions``...) for the
conventions frameworks use.

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

``assert_close`` raises ``AssertionError`` carrying ``compare``'s report.

The module is one self-contained file with no dependencies outside the
standard library: copy it anywhere Python runs.

Copyright (c) 2026 the pe_reference authors.  MIT licence: permission is
granted, free of charge, to use, copy, modify, merge, publish, distribute,
sublicense and sell copies of this file, provided this notice is kept in all
copies.  THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
"""

import math

__version__ = "0.1.0"

__all__ = (  # a tuple of constants: in flash, not on the heap, when the module is frozen
    "Convention",
    "PRESETS",
    "Report",
    "apply_rope",
    "assert_close",
    "compare",
    "compare_rope",
    "derivation",
    "encoding",
    "main",
    "rope",
    "rows",
    "value",
)

TYPE_CHECKING = False

if TYPE_CHECKING:
    from argparse import ArgumentParser, Namespace
    from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, NoReturn, Optional
    from typing import Mapping, Pattern, Sequence, Set, Tuple, Type, TypedDict, Union


# The module reads top-down.  The formula comes first; after it, every section uses only the sections
# below it, within a section every function and class sits below those that call it, and within a
# class every method below the methods that call it: a reader who follows a call never turns back
# (tests/test_project.py checks all three, and walks encoding's d_model to the sine).  Python needs a
# few things the other way round, which the same test allows: what runs at import (a default value, a
# base class, the presets at the very end) comes after what it uses.  Each section starts with a header
# like this map's:
#
#   The formula         the paper's table in plain float64, the fast path of the default convention
#   Command line        main, the parser, the rules between options, the commands
#   Pictures            the heatmap and the waves, as PNG
#   Output              golden test vectors, tables in CSV, JSON and text, and every writer
#   Public API          encoding, rows, value, derivation; compare, assert_close, Report;
#                       rope, apply_rope, compare_rope
#   Derivation text     the worked derivation's wording
#   RoPE                rotary caches: scaling variants, rotated vectors, their check and diagnosis
#   The diagnosis       what may explain a failing table: candidates, then their scores
#   Oracle              the checker's allowances and the comparison, the tally of a table
#   Input               readers (.npy, CSV, JSON) that trust nothing
#   Grids               2-D and 3-D tables: a 1-D table per axis, its columns placed
#   The fast path       float64 rows for every convention
#   Exact tables        whole rows by a recurrence per column, and the float64 finish with its proof
#   Conventions         Convention, the presets' table, the convention a call asks for
#   Validation          argument checks, all with one message rule
#   Exact kernel        one exact element; fixed-point sin, cos, pi, ln and exp, each with its error
#                       bound; the frequency laws and output scales the kernel evaluates
#   Exact numbers       fractions: arithmetic, reading, printing
#   Binary formats      IEEE 754 bits, correct rounding to float64, float32, bfloat16, float16, and
#                       what this runtime's floats do
#   Portability         what CPython, PyPy, Pyodide and MicroPython differ in, decided once at import
#
# The checker is one pipeline, whatever the table (a sequence's, a grid's, a rotary cache, rotated vectors):
#
#   read        _Source                        streamed, each value rounded to the table's format
#   check       _Comparison.tally              every element against its exact value: _tally, _grid_tally and
#                                              _rope_comparison give the references and the allowances
#   diagnose    _diagnose, _diagnose_rope      not finite, zeros, a narrower format, the asked with damage
#   fit         _Fit; _fit, _rope_fit          what the values show: layout, frequencies, positions
#   candidates  _candidates, _rope_candidates  the fits, presets, known mistakes (_mistakes): one list; when
#                                              none explains, the grid presets on the shapes the rows show
#                                              (_grid_candidates), a cache's several positions a row
#                                              (_rope_axes_candidates, read by _AxesGrid, fitted by _AxesStory)
#   score       _scored                        each on a sample of rows, the simplest story first
#   verify      _explanation                   the first that holds on every element but for local damage
#                                              (_candidate_damage, _damage)
#   tell        _told, _report                 the story, its damage, the call that reproduces the table
#
# A candidate told by element (a grid's, several positions a row: _Candidate.loosely) names each element
# outside the default tolerance; the others name the local faults of a sequence's rows (_damage).
#
# The board budget.  A board with the module frozen into its firmware imports it into a 16 KB heap (CI
# imports it in one), and at rest the import holds about 13 KB of it, so about 3 KB is left.  A function
# defined at module level spends a little of that, a class far more (its type, its dict, a function a
# method); and the module's dict of names grows by 3 KB at once past 293 names (it holds 273).
# So a helper used in one place is written inside its caller, built only when called; a class is made only
# where several steps share its state; a preset's fields are made when first read (Convention._fields).
# benchmarks/board_heap.py prints these figures, and CI checks the ones written here.  A board that imports
# the .mpy holds all the bytecode in its heap: docs/vendoring.md's table says what each use needs there.


# ---------------------------------------------------------------------------
# The formula
# ---------------------------------------------------------------------------


# The base of the paper.  Pair i's wavelength is 2*pi*base**(2i/d_model): from 2*pi for
# pair 0 up to 2*pi*base**((d_model-2)/d_model) for the last pair, just under 10000*2*pi
# when d_model is large (60611 positions at d_model = 512), 628 at d_model = 4.
DEFAULT_BASE = 10000.0


def _denominator(exponent: "_Fraction", base: float) -> float:
    """Return ``base**(a/b)``, the divisor of a pair's angle, for its exponent (a, b); inf past float64.

    The paper's pair i has the exponent (2i, d_model): its angle is pos / base**(2i/d_model).
    """
    try:
        return math.pow(base, exponent[0] / exponent[1])
    except OverflowError:
        return _INF


def _paper_row(position: float, denominators: "List[float]", d_model: int) -> "List[float]":
    """One row of the paper's table in float64, as the formula reads.

    PE(pos, 2i) = sin(pos / base**(2i/d_model)) and PE(pos, 2i + 1) =
    cos(pos / base**(2i/d_model)), with ``denominators[i] == base**(2i/d_model)``;
    an odd ``d_model`` ends with a sine.  This is the fast path of the default
    convention (_fast_rows arranges the others):

    >>> [round(x, 6) for x in _paper_row(1.0, [1.0, 100.0], 4)]
    [0.841471, 0.540302, 0.01, 0.99995]
    """
    angles = [position / denominator for denominator in denominators]
    row = [0.0] * d_model
    row[0::2] = map(math.sin, angles)  # the sines, in columns 2i
    row[1::2] = map(math.cos, angles[: d_model // 2])  # the cosines, in columns 2i + 1
    return row


if TYPE_CHECKING:
    # The types the annotations name, for mypy (nothing here runs).
    # An exact rational number (numerator, denominator > 0), in lowest terms once checked (_rational, _reduced).
    _Fraction = Tuple[int, int]
    # An element's place in a table: (row, column).
    _Element = Tuple[int, int]
    # A column's place among several axes' (a multi-axis rotary cache's, a grid's): (axis, its column there).
    _AxisColumn = Tuple[int, int]
    # A per-pair frequency law past the rational multipliers: llama3's blend, YaRN's real ramp.
    _Blend = Union["_Llama3", "_YarnRamp"]
    # Where a table to check comes from, and the table as the checker reads it (rounded to its format).
    _Table = Union[List[List[float]], "_Source"]
    # What a family of the diagnosis's candidates yields: a candidate, or a convention with its words ('' for
    # its own description).
    _Made = Union["_Candidate", Tuple["Convention", str]]
    # And a rotary cache's: (words, causes, the rope computed, the steps rounded, the attention factor).
    _RopeMade = Tuple[str, Tuple[str, ...], "_Rope", Dict[str, str], float]
    # A rotary embedding of several positions a row (_rope_axes): each axis's (setup, positions, the columns
    # of x it rotates), each column of a cache and of rotated vectors as (axis, its column there), in words.
    _RopeAxes = Tuple[
        List[Tuple["_Rope", Optional[List[_Fraction]], List[int]]], List[_AxisColumn], List[_AxisColumn], str
    ]
    # A check's rule as its arguments give it (_check_format): the format, where it came from, atol, ulps.
    _Rule = Tuple[str, Optional[str], Optional[float], Optional[float]]
    # A table by its law (_references, _law_element): law, exponents, plan, scale, float positions, exact position.
    _LawTable = Tuple[
        "_Frequencies", List[_Fraction], List["_Column"], "_OutputScale", List[float], Callable[[int], _Fraction]
    ]

    class _Grid(TypedDict):
        """A grid's table, its fields checked (_grid_rows); a dict when the module runs, no class to import.  Its
        rows (one per cell, the last axis fastest, after the prefix's) and their count, each column's name (sin_x0
        the sine of the x axis's pair 0) and (axis, column of the axis's table); each axis's (1-D convention at
        its positions, length, width) in the shape's order; the axes' tables (exact, dtype); row r of the grid
        from such tables; and row r's index on each axis (its length for a prefix row)."""

        count: int
        names: List[str]
        columns: List[_AxisColumn]
        axes: List[Tuple["Convention", int, int]]
        prefix: int
        rows: Callable[[bool, str], Iterator[List[float]]]
        tables: Callable[[bool, str], List[List[List[float]]]]
        row_at: Callable[[List[List[List[float]]], int], List[float]]
        cell: Callable[[int], List[int]]


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def main(argv: "Optional[Sequence[str]]" = None) -> int:
    """Run the command line; return the exit status.

    ``python3 -m pe_reference SEQ_LEN D_MODEL`` prints the table.  Usage
    errors print one line on standard error and return 2; Ctrl-C, at any
    stage, one line and 130.
    """
    import sys

    try:
        return _main(argv)
    except KeyboardInterrupt:
        _silence_stdout()
        if sys.stderr is not None:
            sys.stderr.write(f"{_program_name(sys.argv[0] if getattr(sys, 'argv', None) else '')}: interrupted\n")
        return 130


def _main(argv: "Optional[Sequence[str]]") -> int:
    """The command line: the front door, then the parser, the rules between options, and the command asked.

    Long because a sequence's table and a grid's (SEQ_LEN its shape) are one flow: the same rules, check,
    pictures and printing, with the grid's fields and its count of rows taken on the way.
    """
    import sys

    system_arguments = getattr(sys, "argv", None) or [""]
    arguments = list(system_arguments[1:] if argv is None else argv)
    prog = _program_name(system_arguments[0])
    # The front door, two plain integers, skips importing argparse, which
    # would double the start-up time; anything else, errors included, goes
    # through argparse below.
    if len(arguments) == 2 and all(map(_is_decimal_integer, arguments)):
        seq_len, d_model = int(arguments[0]), int(arguments[1])
        if d_model >= 1:
            return _write(prog, _Request(seq_len, d_model))

    try:
        parser = _parser(prog)
    except ImportError:
        # MicroPython has no argparse: the front door above still works.
        sys.stderr.write(
            f"{prog}: error: options need the argparse module, which this Python lacks;"
            " give SEQ_LEN D_MODEL alone, or call the functions\n"
        )
        return 2
    args = parser.parse_args(_joined_negative_numbers(arguments))
    fields = {name: getattr(args, name) for name in ["preset"] + [row[0] for row in _FIELDS]}
    if args.positions is not None:
        fields["positions"] = [text.strip() for text in args.positions.split(",")] if args.positions.strip() else []
    # SEQ_LEN a grid's shape (16x16): its table, a row per cell, takes the grid's options, which need one.
    grid = args.seq_len if isinstance(args.seq_len, tuple) else None
    keywords = {row[0]: getattr(args, row[0]) for row in _GRID_FIELDS}
    given = next((name for name, setting in keywords.items() if setting is not None), None)
    if grid is None and given is not None:
        parser.error(f"--{given.replace('_', '-')} goes with a grid's shape as SEQ_LEN, such as 16x16")
    if args.rope is not None:
        # A rotary embedding of several positions a row: the grid's cells are the positions.
        if given is not None:
            parser.error(f"--rope takes a grid's shape as its rows' positions, not --{given.replace('_', '-')}")
        return _rope_command(prog, parser, args, fields)
    if grid is not None and (args.explain or args.waves or args.format == "vectors" or (args.plot and len(grid) != 2)):
        parser.error(
            "a grid's shape as SEQ_LEN takes no --explain, --waves or --format vectors, and --plot a 2-D one only"
        )
    broken = _broken_option_rule(args, fields)
    if broken is not None:
        parser.error(broken)
    count, dtype = args.seq_len, args.dtype or "float64"
    if grid is not None:
        scales = keywords["position_scale"]
        if isinstance(scales, str) and "," in scales:
            keywords["position_scale"] = [text.strip() for text in scales.split(",")]
        keywords.update(fields)
        fields = keywords
        try:
            dtype = _check_dtype(dtype, args.exact)
            count = _grid_rows("main", grid, args.d_model, args.exact, dtype, None, fields)["count"]
        except (TypeError, ValueError) as error:
            parser.error(str(error))
    if args.check is not None:
        try:
            table = _read_table(args.check)
        except _Unreadable as error:
            sys.stderr.write(f"{prog}: error: {error}\n")
            return 2
        mismatch = _table_shape(parser, (count, args.d_model), None, None, table)[1]
        options = {"dtype": args.dtype, "atol": args.atol, "ulps": args.ulps, "convention": None, "grid": grid}
        return _check_command(prog, table, mismatch, compare, **options, **fields)
    try:
        convention = _convention("main", args.d_model, None, fields) if grid is None else None
        request = _Request(
            count,
            args.d_model,
            convention,
            args.exact,
            dtype,
            args.format or "table",
            args.digits,
            args.header,
            args.explain,
        )
        if grid is None:
            request.rows()
        request.grid = None if grid is None else (grid, fields)
    except ValueError as error:
        parser.error(str(error))
    if (args.plot or args.waves) and (args.explain or args.seq_len == 0):
        parser.error("--plot and --waves need a table of at least one position, and no --explain")
    for path, draw in ((args.plot, _heatmap), (args.waves, _waves)):
        # Each picture drawn and written whole; a failure is one line on stderr and status 2, with no file left.
        try:
            if path:
                _write_file_atomically(path, draw(request))
        except OSError as error:
            sys.stderr.write(f"{prog}: error: cannot write {path}: {error.strerror or error}\n")
            return 2
    if (args.plot or args.waves) and args.format is None:
        return 0
    return _write(prog, request)


def _program_name(argv0: str) -> str:
    """Return the name the user typed: ``pe-reference`` or ``python3 -m pe_reference``."""
    name = argv0.replace("\\", "/").rsplit("/", 1)[-1]
    return name if name.startswith("pe-reference") else "python3 -m pe_reference"


def _parser(prog: str, shown: str = "") -> "ArgumentParser":
    """The command line's options (argparse is imported here: the front door does without it).

    Every option is parsed; --help shows those of ``shown``: the main ones (""), one group's or all.  Its epilog
    names each group's options, the presets and the examples.

    Long because it is a table: one option per call, in the order --help shows them, each with its help text
    beside it.
    """
    import argparse

    class Parser(argparse.ArgumentParser):
        # One line on stderr, not the usage block: the message says what to fix.
        def error(self, message: str) -> "NoReturn":
            self.exit(2, f"{self.prog}: error: {message}\n")

    class Help(argparse.Action):
        # --help GROUP: the parser again, that group's options shown.
        def __call__(self, parser: "Any", namespace: "Any", values: "Any", option: "Optional[str]" = None) -> None:
            _parser(prog, values or "").print_help()
            parser.exit()

    def digits(text: str) -> int:
        if not _is_decimal_integer(text) or int(text) > 17:
            raise argparse.ArgumentTypeError(f"digits must be an integer from 0 to 17, got {text!r}")
        return int(text)

    def shape(text: str) -> "Union[int, Tuple[int, ...]]":
        # SEQ_LEN: a plain decimal integer, or a grid's shape of 2 or 3 of them joined by x (16x16).
        if "x" not in text.lower():
            return int(_cli_number("seq_len", 0)(text))
        sizes = text.lower().split("x")
        if not 2 <= len(sizes) <= 3 or not all(map(_is_decimal_integer, sizes)):
            raise argparse.ArgumentTypeError(
                f"seq_len must be an integer or a grid's shape such as 16x16, got {text!r}"
            )
        return tuple(int(size) for size in sizes)

    groups: "Dict[str, List[str]]" = {}  # each group's options, for the epilog

    def group(key: str, title: str, description: "Optional[str]") -> "Callable[..., object]":
        # A group's add_argument: its help (and the group's description) shown only when --help asks for it.
        container = parser.add_argument_group(title, description if shown in (key, "all") else None)

        def add(*flags: str, **options: "Any") -> object:
            groups.setdefault(key, []).append(flags[0])
            if shown not in (key, "all"):
                options["help"] = argparse.SUPPRESS
            return container.add_argument(*flags, **options)

        return add

    usage = "%(prog)s SEQ_LEN D_MODEL [options]\n       %(prog)s --check FILE [options]"
    examples = (
        ("4 4 --explain", "every element's worked derivation"),
        ("64 128 --preset fairseq --format csv", "fairseq's table, as CSV"),
        ("64 128 --plot pe.png", "a heatmap of the table"),
        ("--check pe.npy --dtype float32", "check a table saved with numpy.save"),
        ("4096 128 --rope cos --config config.json", "a model's rotary cos cache"),
        ("16x16 64 --preset mae", "a 2-D table, a row per cell"),
    )
    parser = Parser(
        prog=prog,
        usage=usage,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
        description="Print the sinusoidal positional encoding of 'Attention Is All You Need':\n"
        "  PE(pos, 2i) = sin(pos / base^(2i/d_model))\n  PE(pos, 2i+1) = cos(pos / base^(2i/d_model))",
    )
    main = group("", "options", None)
    parser.add_argument(
        "seq_len",
        metavar="SEQ_LEN",
        nargs="?",
        type=shape,
        help="number of positions (rows), or a grid's shape, 16x16 or 8x16x16 (a row per cell)",
    )
    parser.add_argument(
        "d_model", metavar="D_MODEL", nargs="?", type=_cli_number("d_model", 1), help="encoding width (columns)"
    )
    main(
        "-h",
        "--help",
        action=Help,
        nargs="?",
        metavar="GROUP",
        choices=("conventions", "grids", "pictures", "rope", "check", "all"),
        help="this help; with GROUP, that group's options (all: every option)",
    )
    main(
        "--format",
        choices=("table", "csv", "json", "hex", "vectors"),
        default=None,
        help="table (default), csv, json; hex: each value's IEEE bits in --dtype; vectors: golden test vectors",
    )
    main("--digits", type=digits, default=None, metavar="N", help="N digits after the point (default: the shortest)")
    main("--exact", action="store_true", help="correctly rounded values, the same on every platform")
    main("--dtype", choices=list(_DTYPES), help="round each value to this format (default float64)")
    main("--header", action="store_true", help="with --format csv or hex: a first line naming the columns")
    main("--explain", action="store_true", help="print every element's worked derivation instead")
    main("--version", action="version", version=f"%(prog)s {__version__}")
    conventions = group(
        "conventions",
        "conventions",
        "how a framework computes the table (default: the paper's); numbers are exact: 999.5, 1e-4 or 1/3",
    )
    conventions(
        "--preset",
        metavar="NAME",
        choices=list(PRESETS) + [row[0] for row in _GRID_PRESETS],
        help="a framework's convention; for a grid's shape, a grid's (docs/conventions.md)",
    )
    for name, check, _, words in _FIELDS:  # one option a field
        option = "--" + name.replace("_", "-")
        if isinstance(check, tuple):
            conventions(option, choices=check, help=words)
        elif check == "flag":
            conventions(option, action="store_const", const=True, help=words)
        else:
            conventions(option, metavar="X,X,..." if check == "positions" else "X", help=words)
    grids = group("grids", "grids", "with SEQ_LEN a grid's shape: each axis a 1-D table (docs/conventions.md)")
    for name, _, words in _GRID_FIELDS:  # one option a field
        option = "--" + name.replace("_", "-")
        if name == "normalize":
            grids(option, action="store_const", const=True, help=words)
        elif name == "arrangement":
            grids(option, choices=("axes", "functions"), help=words)
        elif name == "prefix":
            grids(option, type=_cli_number("prefix", 0), metavar="N", help=words)
        else:
            grids(option, metavar="X,X,..." if name == "position_scale" else "X", help=words)
    pictures = group(
        "pictures",
        "pictures",
        "PNG images, drawn with the standard library; the table is printed too only with --format",
    )
    pictures("--plot", metavar="FILE.png", help="write a heatmap of the table: positions down, dimensions across")
    pictures(
        "--waves",
        metavar="FILE.png",
        help=f"write the first {_WAVE_DIMENSIONS} dimensions as curves over the positions",
    )
    rotary = group(
        "rope", "rotary embeddings (RoPE)", "D_MODEL is the head's width; --base and --positions apply (docs/rope.md)"
    )
    rotary(
        "--rope",
        choices=("cos", "sin", "rotated"),
        help="print (or --check) a rotary cos or sin cache, or the rotated vectors of --input, instead of the encoding",
    )
    rotary(
        "--rope-layout",
        choices=_ROPE_LAYOUTS,
        help="half (rotate_half, the default), interleaved, or pairs (a cache of D_MODEL/2 columns, one per pair)",
    )
    rotary(
        "--rope-scaling",
        metavar="JSON",
        help='a model\'s rope parameters as HF writes them, e.g. \'{"rope_type": "linear", "factor": 4}\'',
    )
    rotary(
        "--config",
        metavar="FILE.json",
        help="a model's config.json: the head's rotated width, base and rope parameters as transformers reads them,"
        " in place of D_MODEL, --base and --rope-scaling",
    )
    rotary("--input", metavar="FILE", help="with --rope rotated: the vectors before rotation (CSV, JSON or .npy)")
    rotary(
        "--axes-dim",
        metavar="W,W,...",
        help="with a grid's shape as SEQ_LEN (its cells the positions): each axis's width of the head, its own"
        " frequencies (Flux's axes_dim); or --rope-scaling's mrope_section (Qwen2-VL)",
    )
    checking = group("check", "checking a table", "exit status 0 within tolerance, 1 outside, 2 unreadable")
    checking(
        "--check",
        metavar="FILE",
        help="compare a CSV, JSON or .npy table (- for standard input) with the exact values; --dtype: the .npy"
        " file's dtype, float64 for text, unless given",
    )
    checking("--atol", type=_cli_number("atol"), help="absolute tolerance (default: the angle's rounding in --dtype)")
    checking("--ulps", type=_cli_number("ulps"), help="tolerance in units in the last place of --dtype")
    if not shown:
        # The groups by name, the presets once, and the examples: what the main options' help leaves out.
        lines = ["groups of options (--help GROUP shows one, --help all every option):"]
        lines += [
            f"  {key:<12}{', '.join(flags[:5])}{', ...' if flags[5:] else ''}" for key, flags in groups.items() if key
        ]
        for title, names in (("presets", list(PRESETS)), ("grid presets", [row[0] for row in _GRID_PRESETS])):
            lines += ["", f"{title} (--preset NAME):", " "]
            for name in names:
                if len(lines[-1]) + len(name) > 76:
                    lines.append(" ")
                lines[-1] += f" {name}" + ("," if name != names[-1] else "")
        lines += ["", "examples:"]
        lines += [f"  {prog} {example}\n      {words}" for example, words in examples]
        parser.epilog = "\n".join(lines)
    return parser


def _cli_number(name: str, minimum: "Optional[int]" = None) -> "Callable[[str], Any]":
    """Return an argparse type that reads a plain decimal integer of at least minimum, or without it a tolerance."""

    def parse(text: str) -> "Any":
        import argparse

        whole = minimum is not None
        if not (_is_decimal_integer(text[1:] if text.startswith("-") else text) if whole else _is_number_text(text)):
            raise argparse.ArgumentTypeError(f"{name} must be {'an integer' if whole else 'a number'}, got {text!r}")
        try:
            return _check_tolerance(name, float(text)) if minimum is None else _check_integer(name, int(text), minimum)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _joined_negative_numbers(arguments: "List[str]") -> "List[str]":
    """'--start -1e3' as '--start=-1e3': argparse reads only -N and -N.N as negative numbers.  The options
    joined are those whose value may be a negative number, which argparse would take for an option."""
    joined: "List[str]" = []
    for argument in arguments:
        if (
            joined
            and joined[-1] in ("--shift", "--base", "--angle-scale", "--start", "--step", "--positions", "--scale")
            and argument[:1] == "-"
            and (argument[1:2] == "." or _is_decimal_integer(argument[1:2]))
        ):
            joined[-1] += "=" + argument
        else:
            joined.append(argument)
    return joined


def _rope_command(prog: str, parser: "ArgumentParser", args: "Namespace", fields: "Dict[str, object]") -> int:
    """--rope: print a rotary cache or rotated vectors, or --check one; the exit status.

    Long because it is one flow: the options' rules, then the files read,
    the shape taken from them, and only then the check or the printing,
    each step depending on what the one before found.
    """
    import sys

    others = [name for name, setting in fields.items() if setting is not None and name not in ("base", "positions")]
    if others:
        parser.error(f"--rope takes --base and --positions, not --{others[0].replace('_', '-')}")
    if args.explain or args.plot or args.waves:
        parser.error("--rope takes no --explain, --plot or --waves")
    scaling = _rope_scaling_option(parser, args.rope_scaling)
    if args.config is not None:
        # A model's config: the rotated width (D_MODEL, when SEQ_LEN is given), the base and the rope parameters.
        if scaling is not None or fields["base"] is not None:
            parser.error("--config gives the base and the rope parameters: give --base and --rope-scaling, or --config")
        try:
            width, _, made = _configured(args.config, args.d_model, None, None, "D_MODEL")
            scaling = made if isinstance(made, dict) else None
        except (TypeError, ValueError) as error:
            sys.stderr.write(f"{prog}: error: {error}\n")
            return 2
        if args.seq_len is not None:
            args.d_model = width
    # A grid's shape as SEQ_LEN: its cells, the last axis fastest, are the rows' positions, one per axis.
    grid: "Optional[List[List[int]]]" = None
    cells: "Optional[Tuple[int, ...]]" = None
    if isinstance(args.seq_len, tuple):
        cells = args.seq_len
        if fields["positions"] is not None:
            parser.error("--positions does not go with a grid's shape as SEQ_LEN, whose cells are the positions")
        grid = [[]]
        for n in args.seq_len:
            grid = [cell + [k] for cell in grid for k in range(n)]
        args.seq_len = len(grid)
    axes_dim: "Optional[List[object]]" = None
    if args.axes_dim is not None:
        axes_dim = [int(text) if _is_decimal_integer(text.strip()) else text for text in args.axes_dim.split(",")]
    section = (scaling or {}).get("mrope_section")
    if grid is not None and axes_dim is None and section is None:
        parser.error(
            "a grid's shape as SEQ_LEN with --rope takes --axes-dim or --rope-scaling's mrope_section:"
            " the axes' share of the head"
        )
    if grid is None and (axes_dim is not None or section is not None):
        parser.error("--axes-dim and --rope-scaling's mrope_section go with a grid's shape as SEQ_LEN, such as 16x16")
    split = axes_dim if axes_dim is not None else section
    if cells is not None and isinstance(split, list) and len(split) != len(cells):
        option = "--axes-dim" if axes_dim is not None else "--rope-scaling's mrope_section"
        parser.error(f"{option} must give one width for each of the grid's {len(cells)} axes, got {_short(split)}")
    if (axes_dim is not None or section is not None) and args.format == "vectors":
        parser.error("--format vectors holds one position a row, not a grid's cells")
    if (args.input is None) != (args.rope != "rotated"):
        parser.error(
            "--rope rotated needs --input FILE, the vectors before rotation"
            if args.input is None
            else "--input goes with --rope rotated"
        )
    files: "List[Optional[_Source]]" = []
    try:
        for path in (args.input, args.check):
            files.append(None if path is None else _read_table(path))
    except _Unreadable as error:
        sys.stderr.write(f"{prog}: error: {error}\n")
        return 2
    # The vectors and the table streamed from their files (rounding is float64), standard input's spool held
    # (the vectors) or closed once checked (the table).
    vectors: "Optional[_Table]" = files[0]
    if files[0] is not None and files[0].handle is not None:
        vectors = list(files[0])
        files[0].handle.close()
    table = files[1]
    shape, mismatch = _table_shape(parser, (args.seq_len, args.d_model), args.rope_layout, vectors, table)
    if mismatch and table is None:
        parser.error(mismatch)
    layout = args.rope_layout or "half"
    base, positions = fields["base"], fields["positions"] if grid is None else grid
    if table is not None:
        if not mismatch and (args.format or args.digits is not None or args.header or args.exact):
            parser.error("--check takes no --format, --digits, --header or --exact (it always compares exactly)")
        return _check_command(
            prog,
            table,
            mismatch,
            compare_rope,
            kind=args.rope,
            x=vectors,
            base=base,
            layout=layout,
            scaling=None if args.config is not None else scaling,
            positions=positions,
            dtype=args.dtype,
            atol=args.atol,
            ulps=args.ulps,
            axes_dim=axes_dim,
            config=args.config,  # the table's width checked against the config's rotated width
        )
    broken = _broken_output_rule(args)
    if broken is not None:
        parser.error(broken)
    output_format = args.format or "table"
    try:
        axes = _rope_axes(shape[1], base, layout, scaling, axes_dim, positions, shape[0], "seq_len")
        setup = _Rope(shape[1], base, layout, scaling) if axes is None else axes[0][0][0]
        given = _rope_positions(positions, shape[0]) if axes is None else None
        dtype = args.dtype or "float64"
        request = _Request(shape[0], shape[1], None, args.exact, dtype, output_format, args.digits, args.header)
        request.rope, request.rope_scaling = _RopeRequest(setup, args.rope, vectors, given), args.rope_scaling
        request.rope.axes = axes
        if cells is not None:
            request.grid = (cells, {})  # the rows' labels: their cells
        next(request.rows(), None)
    except (TypeError, ValueError) as error:
        parser.error(str(error))
    return _write(prog, request)


def _rope_scaling_option(parser: "ArgumentParser", text: "Optional[str]") -> "Optional[Dict[str, object]]":
    """--rope-scaling's JSON object, or None; anything else is a usage error."""
    if text is None:
        return None
    import json

    try:
        scaling = json.loads(text)
    except ValueError:
        scaling = None
    if not isinstance(scaling, dict):
        parser.error(f"--rope-scaling must be a JSON object, got {_short(text)}")
    return scaling


def _table_shape(
    parser: "ArgumentParser",
    shape: "Tuple[Any, Any]",
    layout: "Optional[str]",
    vectors: "Optional[_Table]",
    table: "Optional[_Source]",
) -> "Tuple[Tuple[int, int], str]":
    """The shape (SEQ_LEN, D_MODEL) given, taken from the files if not given, and a mismatch's text ('' if none).

    A rotary cache in the pairs layout has D_MODEL / 2 columns, one per pair.
    """
    per_column = 2 if layout == "pairs" and vectors is None else 1
    found = (
        (len(vectors), len(vectors[0]))
        if vectors is not None
        else (table.count, per_column * table.width)
        if table is not None
        else shape
    )
    if shape[0] is None and shape[1] is None:
        shape = found
    if shape[0] is None or shape[1] is None:
        parser.error("give both SEQ_LEN and D_MODEL, or neither (then the table's shape is taken)")
    if table is not None and vectors is not None:
        found = (table.count, table.width)  # the table must have the vectors' shape
    if found != shape:
        columns = shape[1] // per_column
        return shape, (
            f"shape mismatch: the table has {found[0]} x {found[1] // per_column} values, expected {shape[0]} x {columns}"
        )
    return shape, ""


def _broken_option_rule(args: "Namespace", fields: "Dict[str, object]") -> "Optional[str]":
    """The message of the first rule between options that the command line breaks; None if it keeps them all.

    The rotary options have their own rules (_rope_command); these are the
    table's and --check's, in the order they are checked.
    """
    missing = [name for name, given in (("SEQ_LEN", args.seq_len), ("D_MODEL", args.d_model)) if given is None]
    options = ("rope_layout", "axes_dim", "rope_scaling", "config", "input")  # the rotary options, first
    rules = tuple((getattr(args, name) is not None, f"--{name.replace('_', '-')} goes with --rope") for name in options)
    if args.check is not None:
        printing = args.format or args.digits is not None or args.header or args.explain or args.exact
        rules += (
            (len(missing) == 1, "with --check give both SEQ_LEN and D_MODEL, or neither"),
            (
                printing or args.plot or args.waves,
                "--check takes no --format, --digits, --header, --explain, --exact, --plot or --waves"
                " (it always compares exactly)",
            ),
        )
    else:
        convention_given = any(given is not None for name, given in fields.items() if name != "base")
        explained = (
            args.format is not None or args.digits is not None or args.exact or args.dtype not in (None, "float64")
        )
        output = _broken_output_rule(args)
        rules += (
            (bool(missing), f"the following arguments are required: {', '.join(missing)}"),
            (output is not None, output or ""),
            (
                args.explain and (explained or convention_given),
                "--explain prints the paper's float64 derivations; it takes no --format, --digits, --exact, --dtype"
                " or convention",
            ),
        )
    for broken, message in rules:
        if broken:
            return message
    return None


def _broken_output_rule(args: "Namespace") -> "Optional[str]":
    """The message of the first rule for printing a table (encoding or rotary) that the options break, or None."""
    output_format = args.format or "table"
    if args.atol is not None or args.ulps is not None:
        return "--atol and --ulps go with --check"
    if args.header and output_format not in ("csv", "hex"):
        return "--header goes with --format csv or hex"
    if args.digits is not None and output_format in ("hex", "vectors"):
        return f"--digits does not go with --format {output_format}, which shows every bit"
    if output_format == "vectors" and (args.exact or args.dtype not in (None, "float64")):
        return "--format vectors is always exact and holds all four formats; it takes no --exact or --dtype"
    return None


def _check_command(prog: str, table: "_Source", mismatch: str, check: "Callable[..., Report]", **options: "Any") -> int:
    """--check: print the shape's mismatch, or the report of check (compare or compare_rope) on the table read, and
    close its file; 0 within tolerance, 1 outside or a mismatch, 2 where the check refuses its arguments."""
    import sys

    try:
        report = None if mismatch else check(table, **options)
    except (TypeError, ValueError) as error:
        sys.stderr.write(f"{prog}: error: {error}\n")
        return 2
    finally:
        if table.handle is not None:
            table.handle.close()
    return _write(prog, None, mismatch or str(report), 0 if report is not None and report.ok else 1)


# ---------------------------------------------------------------------------
# Pictures: PNG with the standard library
# ---------------------------------------------------------------------------


# The heatmap's plot area at most, in pixels; cells are whole pixels.
_PLOT_WIDTH = 768


_PLOT_HEIGHT = 512


def _heatmap(request: "_Request") -> bytes:
    """Positions down, dimensions across, coloured blue (-1) to white (0) to red (1).

    A 2-D grid's table is drawn as tiles instead, one for each of up to four sine columns of each axis (its
    pairs 0, 1, 2 and 3): the column's value at each cell, y down and x across.

    Long because the grid's tiles are drawn here too, not in a function of their own (the map's budget).
    """
    seq_len, d_model = request.seq_len, request.d_model
    if request.grid is not None:
        (ny, nx), names = request.grid[0], _column_names(request)
        chosen = [[names.index(f"sin_{letter}{k}") for k in range(4) if f"sin_{letter}{k}" in names] for letter in "yx"]
        size = max(1, 128 // max(ny, nx, 1))
        tile_width, tile_height, gap, left, top = nx * size, ny * size, 40, 60, 60
        across = max(len(row) for row in chosen)
        title = f"A {ny} x {nx} GRID, D_MODEL {d_model}: EACH TILE ONE COLUMN OVER THE CELLS (Y DOWN, X ACROSS)"
        width = max(across * (tile_width + gap), _text_width(title)) + 2 * left
        canvas = _Canvas(width, top + 2 * (tile_height + gap + 20), (255, 255, 255))
        canvas.text(left, 18, title)
        values: "List[List[float]]" = [[] for _ in chosen[0] + chosen[1]]
        for r, row in enumerate(request.rows()):
            if r >= seq_len - ny * nx:  # past the prefix's rows
                for i, c in enumerate(chosen[0] + chosen[1]):
                    values[i].append(row[c])
        i = 0
        for band, picked in enumerate(chosen):
            for place, c in enumerate(picked):
                x0, y0 = left + place * (tile_width + gap), top + band * (tile_height + gap + 20)
                for cell, v in enumerate(values[i]):
                    canvas.rectangle(x0 + (cell % nx) * size, y0 + (cell // nx) * size, size, size, _colour(v))
                canvas.text(x0, y0 + tile_height + 8, names[c].upper())
                i += 1
        return canvas.png()
    cell_width = max(1, _PLOT_WIDTH // d_model)
    cell_height = max(1, _PLOT_HEIGHT // seq_len)
    columns = min(d_model, _PLOT_WIDTH)
    lines = min(seq_len, _PLOT_HEIGHT)
    width, height = columns * cell_width, lines * cell_height
    left, top, right, bottom = 90, 60, 130, 70
    canvas = _Canvas(left + width + right, top + height + bottom)
    title = f"SINUSOIDAL POSITIONAL ENCODING, {seq_len} x {d_model}"
    canvas.text(left, 18, title)
    # Nearest sampling when the table has more rows or columns than pixels.
    dims = [column * d_model // columns for column in range(columns)]
    positions = [line * seq_len // lines for line in range(lines)]
    for line, row in enumerate(request.sampled_rows(positions)):
        y = top + line * cell_height
        for column, dim in enumerate(dims):
            canvas.rectangle(left + column * cell_width, y, cell_width, cell_height, _colour(row[dim]))
    axis = (40, 40, 40)
    canvas.rectangle(left - 1, top - 1, width + 2, 1, axis)
    canvas.rectangle(left - 1, top + height, width + 2, 1, axis)
    canvas.rectangle(left - 1, top - 1, 1, height + 2, axis)
    canvas.rectangle(left + width, top - 1, 1, height + 2, axis)
    for dim in _ticks(d_model):
        x = left + (dim * columns // d_model) * cell_width + cell_width // 2
        canvas.rectangle(x, top + height, 1, 6, axis)
        label = str(dim)
        canvas.text(x - _text_width(label) // 2, top + height + 10, label)
    canvas.text(left + width // 2 - _text_width("DIMENSION") // 2, top + height + 38, "DIMENSION")
    for pos in _ticks(seq_len):
        y = top + (pos * lines // seq_len) * cell_height + cell_height // 2
        canvas.rectangle(left - 6, y, 6, 1, axis)
        label = request.position_text(pos)  # the position, not the row
        canvas.text(left - 10 - _text_width(label), y - 7, label)
    canvas.text(left - _text_width("POSITION") // 2 - 30, top - 22, "POSITION")
    # The colour bar, 1 at the top and -1 at the bottom.
    bar_x = left + width + 30
    for y in range(height):
        canvas.rectangle(bar_x, top + y, 24, 1, _colour(1.0 - 2.0 * y / max(height - 1, 1)))
    for label, y in (("1", top), ("0", top + height // 2), ("-1", top + height - 14)):
        canvas.text(bar_x + 32, y, label)
    return canvas.png()


# A diverging colour map for [-1, 1]: blue, white, red (stops of ColorBrewer's RdBu).
_COLOUR_STOPS = (
    (-1.0, (33, 102, 172)),
    (-0.5, (146, 197, 222)),
    (0.0, (247, 247, 247)),
    (0.5, (244, 165, 130)),
    (1.0, (178, 24, 43)),
)


def _colour(x: float) -> "Tuple[int, int, int]":
    """The colour map's colour for x in [-1, 1] (clipped outside)."""
    x = -1.0 if x < -1.0 else 1.0 if x > 1.0 else x
    for (x0, c0), (x1, c1) in zip(_COLOUR_STOPS, _COLOUR_STOPS[1:]):
        if x <= x1:
            t = (x - x0) / (x1 - x0)
            return (
                int(c0[0] + (c1[0] - c0[0]) * t + 0.5),
                int(c0[1] + (c1[1] - c0[1]) * t + 0.5),
                int(c0[2] + (c1[2] - c0[2]) * t + 0.5),
            )
    return _COLOUR_STOPS[-1][1]


# The waves picture: this many dimensions at most, each in a strip this high.
_WAVE_DIMENSIONS = 8


_WAVE_HEIGHT = 70


def _waves(request: "_Request") -> bytes:
    """The first few dimensions as curves over the positions, one strip each."""
    seq_len, d_model = request.seq_len, request.d_model
    shown = min(d_model, _WAVE_DIMENSIONS)
    width = 800
    left, top, right, bottom = 190, 60, 30, 70
    canvas = _Canvas(left + width + right, top + shown * _WAVE_HEIGHT + bottom)
    canvas.text(left, 18, f"D_MODEL = {d_model}: THE FIRST {shown} DIMENSIONS OVER {seq_len} POSITIONS")
    # Sample the positions so that every pixel column has one.
    samples = sorted({x * max(seq_len - 1, 0) // (width - 1) for x in range(width)}) if seq_len > 1 else [0]
    values = [row[:shown] for row in request.sampled_rows(samples)]
    names = _column_names(request)
    axis, zero_line = (40, 40, 40), (200, 200, 200)
    colours = ((178, 24, 43), (33, 102, 172))
    for dim in range(shown):
        middle = top + dim * _WAVE_HEIGHT + _WAVE_HEIGHT // 2
        amplitude = _WAVE_HEIGHT // 2 - 9  # room between strips for their -1 and 1 marks
        canvas.rectangle(left, middle, width, 1, zero_line)
        canvas.text(10, middle - 7, f"DIM {dim} {names[dim].upper().replace('_', ' ')}")
        for mark, y in (("1", middle - amplitude), ("-1", middle + amplitude)):  # the strip's scale, with ticks
            canvas.rectangle(left - 6, y, 6, 1, axis)
            canvas.text(left - 10 - _text_width(mark, 1), y - 3, mark, axis, 1)
        colour = colours[0] if names[dim].startswith("sin") else colours[1]
        previous = None
        for pos, row in zip(samples, values):
            x = left + (pos * (width - 1) // max(seq_len - 1, 1))
            y = middle - int(round(row[dim] * amplitude))
            if previous is not None:
                canvas.line(previous[0], previous[1], x, y, colour, 2)
            else:
                canvas.rectangle(x - 1, y - 1, 2, 2, colour)
            previous = (x, y)
    bottom_y = top + shown * _WAVE_HEIGHT
    canvas.rectangle(left, bottom_y, width, 1, axis)
    for pos in _ticks(seq_len, 8):
        x = left + pos * (width - 1) // max(seq_len - 1, 1)
        canvas.rectangle(x, bottom_y, 1, 6, axis)
        label = request.position_text(pos)  # the position, not the row
        canvas.text(x - _text_width(label) // 2, bottom_y + 10, label)
    canvas.text(left + width // 2 - _text_width("POSITION") // 2, bottom_y + 38, "POSITION")
    return canvas.png()


class _Canvas:
    """An RGB image in memory, with rectangles, lines and text, written as PNG."""

    def __init__(self, width: int, height: int, background: "Tuple[int, int, int]" = (255, 255, 255)) -> None:
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(background) * (width * height))

    def line(self, x0: int, y0: int, x1: int, y1: int, colour: "Tuple[int, int, int]", thickness: int = 1) -> None:
        """Bresenham's line, ``thickness`` pixels wide."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        error = dx + dy
        while True:
            self.rectangle(x0 - thickness // 2, y0 - thickness // 2, thickness, thickness, colour)
            if x0 == x1 and y0 == y1:
                return
            doubled = 2 * error
            if doubled >= dy:
                error += dy
                x0 += sx
            if doubled <= dx:
                error += dx
                y0 += sy

    def text(self, x: int, y: int, text: str, colour: "Tuple[int, int, int]" = (40, 40, 40), scale: int = 2) -> int:
        """Draw text with its top left corner at (x, y); return its width in pixels.

        Each character's glyph, else its upper case's, else a blank.
        """
        font = dict(_FONT)
        for index, character in enumerate(text):
            glyph = font.get(character, font.get(character.upper(), font[" "]))
            for row in range(7):
                bits = int(glyph[2 * row : 2 * row + 2], 16)
                for column in range(5):
                    if bits & (16 >> column):
                        self.rectangle(x + (index * 6 + column) * scale, y + row * scale, scale, scale, colour)
        return _text_width(text, scale)

    def rectangle(self, x: int, y: int, width: int, height: int, colour: "Tuple[int, int, int]") -> None:
        x0, y0 = max(x, 0), max(y, 0)
        x1, y1 = min(x + width, self.width), min(y + height, self.height)
        if x1 <= x0 or y1 <= y0:
            return
        span = bytes(colour) * (x1 - x0)
        for row in range(y0, y1):
            start = (row * self.width + x0) * 3
            self.pixels[start : start + len(span)] = span

    def png(self) -> bytes:
        import struct
        import zlib

        stride = self.width * 3
        raw = b"".join(b"\x00" + bytes(self.pixels[y * stride : (y + 1) * stride]) for y in range(self.height))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)  # 8-bit RGB
        return (
            b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
        )


# A 5 x 7 bitmap font: each glyph is seven rows of five bits, as hex pairs.  A
# tuple of constants, not a dict: frozen into a board's firmware, it stays in flash.
_FONT = (
    ("0", "0E11131519110E"),
    ("1", "040C040404040E"),
    ("2", "0E11010204081F"),
    ("3", "1F02040201110E"),
    ("4", "02060A121F0202"),
    ("5", "1F101E0101110E"),
    ("6", "0608101E11110E"),
    ("7", "1F010204080808"),
    ("8", "0E11110E11110E"),
    ("9", "0E11110F01020C"),
    ("A", "0E1111111F1111"),
    ("B", "1E11111E11111E"),
    ("C", "0E11101010110E"),
    ("D", "1C12111111121C"),
    ("E", "1F10101E10101F"),
    ("F", "1F10101E101010"),
    ("G", "0E11101711110F"),
    ("H", "1111111F111111"),
    ("I", "0E04040404040E"),
    ("J", "0702020202120C"),
    ("K", "11121418141211"),
    ("L", "1010101010101F"),
    ("M", "111B1515111111"),
    ("N", "11111915131111"),
    ("O", "0E11111111110E"),
    ("P", "1E11111E101010"),
    ("Q", "0E11111115120D"),
    ("R", "1E11111E141211"),
    ("S", "0F10100E01011E"),
    ("T", "1F040404040404"),
    ("U", "1111111111110E"),
    ("V", "11111111110A04"),
    ("W", "1111111515150A"),
    ("X", "11110A040A1111"),
    ("Y", "1111110A040404"),
    ("Z", "1F01020408101F"),
    ("-", "0000001F000000"),
    (".", "00000000000C0C"),
    ("=", "00001F001F0000"),
    (":", "000C0C000C0C00"),
    ("(", "02040808080402"),
    (")", "08040202020408"),
    ("/", "00010204081000"),
    (",", "000000000C0408"),
    ("+", "0004041F040400"),
    ("x", "0000110A040A11"),
    ("_", "0000000000001F"),
    (" ", "00000000000000"),
)


def _text_width(text: str, scale: int = 2) -> int:
    return (len(text) * 6 - 1) * scale if text else 0


def _ticks(count: int, most: int = 6) -> "List[int]":
    """Round tick values 0, step, 2 step, ... below count, step 1, 2 or 5 times a power of ten."""
    magnitude = 1
    while True:
        for multiple in (1, 2, 5):
            step = multiple * magnitude
            if (count - 1) // step < most:
                return list(range(0, max(count, 1), step))
        magnitude *= 10


# ---------------------------------------------------------------------------
# Output: golden test vectors, tables, and every writer
# ---------------------------------------------------------------------------


def _write_file_atomically(path: str, data: bytes) -> None:
    """Write beside the target, then rename: a failure leaves no partial file."""
    import os
    import tempfile

    folder = os.path.dirname(path) or "."
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".pe_reference-", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        # mkstemp makes the file private; give it the mode a plain open() would.
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _write(prog: str, request: "Optional[_Request]", report: str = "", status: int = 0) -> int:
    """Write the table to stdout row by row, or (without a request) a check's report; return the exit status.

    A table that cannot be written is status 1; a report keeps its status where its reader went away, else 2.
    """
    import sys

    what, failed = ("the output", 1) if request is not None else ("the report", 2)
    out = sys.stdout
    if out is None:
        sys.stderr.write(f"{prog}: error: cannot write {what}: standard output is closed\n")
        return failed
    try:
        if request is None:
            out.write(report + "\n")
        elif request.explain:
            base = _to_float(request.convention._fields["base"])
            for pos in range(request.seq_len):
                out.write("\n" if pos else "")
                for dim in range(request.d_model):
                    out.write(derivation(pos, dim, request.d_model, base=base) + "\n")
        elif request.output_format == "table":
            _write_table(out, request)
        elif request.output_format == "vectors":
            _write_vectors(out, request)
        else:
            # csv and hex: a line a row, the columns' names first with --header.  json: an array of the rows'
            # arrays; the text of a finite float is a valid JSON number, so streaming needs no json module.
            text, array = request.formatter(), request.output_format == "json"
            if request.header:
                out.write(",".join(_column_names(request)) + "\n")
            separator = "[\n" if array else ""
            for row in request.rows():
                out.write(separator + f"[{', '.join(map(text, row))}]" if array else ",".join(map(text, row)) + "\n")
                separator = ",\n" if array else ""
            if array:
                out.write("[]\n" if separator == "[\n" else "\n]\n")
        out.flush()
    except _BROKEN_PIPE:
        # The reader went away (| head): stop quietly, as the Python docs advise.
        _silence_stdout()
        return 1 if request is not None else status
    except OSError as error:
        _silence_stdout()
        sys.stderr.write(f"{prog}: error: cannot write {what}: {error.strerror or error}\n")
        return failed
    return status


# Tables up to this many elements are measured before printing, so their
# columns are no wider than needed; larger ones stream at a fixed width.
_MEASURED_TABLE_SIZE = 1 << 16


def _write_table(out: "IO[str]", request: "_Request") -> None:
    text = request.formatter()

    def cell(number: float) -> str:
        # A space where a minus sign would be keeps the points aligned.
        shown = text(number)
        return shown if shown.startswith("-") else " " + shown

    seq_len, d_model = request.seq_len, request.d_model
    labels = [f"{dim} {name}" for dim, name in enumerate(_column_names(request))]
    if request.digits is not None:
        width = request.digits + 3
    elif seq_len * d_model <= _MEASURED_TABLE_SIZE:
        width = max((len(cell(x)) for row in request.rows() for x in row), default=0)
    else:
        # Values lie in [-1, 1]: sign, 17 significant digits, point, exponent.
        width = len("-1.2345678901234567e-308")
    widths = [max(width, len(label)) for label in labels]
    # The first column is the position of the row.
    ends = [request.position_text(r) for r in (0, seq_len - 1)] if seq_len else []
    pos_width = max([len("pos")] + [len(text) + 2 for text in ends])
    out.write(
        _pad("pos", pos_width, True)
        + "".join("  " + _pad(label, w, False) for label, w in zip(labels, widths)).rstrip()
        + "\n"
    )
    for r, row in enumerate(request.rows()):
        cells = "".join("  " + _pad(cell(x), w, False) for x, w in zip(row, widths))
        out.write(_pad(request.position_text(r), pos_width, True) + cells.rstrip() + "\n")


def _pad(text: str, width: int, left: bool) -> str:
    """text padded with spaces to width, on its right (on its left if left): not str.ljust, which MicroPython lacks."""
    padding = " " * (width - len(text))
    return padding + text if left else text + padding


_ROPE_VECTOR_SCHEMA = "pe_reference.rope-vectors/1"


_VECTOR_SCHEMA = "pe_reference.vectors/2"


def _write_vectors(out: "IO[str]", request: "_Request") -> None:
    """Write golden test vectors of a table or a rotary table: the parameters, and every element's bits in the four formats.

    The schema is documented in docs/vectors.md.  JSON is written by hand,
    row by row, so memory stays proportional to d_model.  Numbers of the
    convention are written as exact decimal or fraction strings.
    """
    seq_len, d_model, rope = request.seq_len, request.d_model, request.rope
    if rope is not None:
        setup, positions, vectors = rope.setup, rope.positions, rope.vectors
        shown = [str(r) for r in range(seq_len)] if positions is None else [_fraction_text(p) for p in positions]
        schema = _ROPE_VECTOR_SCHEMA
        formula = (
            "cos or sin of positions[row] * w_k, times the attention factor, w_k the scaling variant's"
            " frequency of the column's pair k (docs/rope.md); rotated: out[a] = x[a] cos - x[b] sin, out[b] = x[b] cos +"
            " x[a] sin per pair (a, b)"
        )
        parameters = (
            f'"seq_len": {seq_len}, "head_dim": {setup.head_dim}, "kind": "{rope.kind}", '
            f'"layout": "{setup.layout}", "base": "{_fraction_text(setup.base)}", "scaling": {request.rope_scaling or "null"}, '
            f'"positions": [{", ".join(chr(34) + p + chr(34) for p in shown)}]'
        )
        held = '"pairs": [' + ", ".join(map(str, setup.columns())) + "],\n"
        if vectors is not None:
            held = '"x": [\n' + ",\n".join("[" + ", ".join(map(repr, row)) + "]" for row in vectors) + "\n],\n" + held
    else:
        convention = request.convention
        exponents = convention._exponents(d_model)
        columns = []
        for kind, pair in convention._plan(d_model):
            function = ("sin", "cos", "zero")[kind]
            exponent = exponents[pair] if kind != _ZERO else (0, 1)
            columns.append(f'{{"function": "{function}", "pair": {pair}, "exponent": [{exponent[0]}, {exponent[1]}]}}')
        fields = convention._fields
        positions_text = ", ".join(f'"{_fraction_text(convention._position(r, seq_len))}"' for r in range(seq_len))
        schema = _VECTOR_SCHEMA
        formula = (
            "scale * sin or cos of positions[row] * angle_scale * base**(-a/b), times 2 pi in full turns,"
            " a/b the column's exponent"
        )
        parameters = (
            f'"seq_len": {seq_len}, "d_model": {d_model}, "convention": "{convention._name(d_model)}", '
            f'"layout": "{fields["layout"]}", "spacing": "{fields["spacing"]}", "shift": "{_fraction_text(fields["shift"])}", '
            f'"base": "{_fraction_text(fields["base"])}", "angle_scale": "{_fraction_text(fields["angle_scale"])}", '
            f'"full_turns": {"true" if fields["full_turns"] else "false"}, "odd": "{fields["odd"]}", '
            f'"scale": "{_scale_text(fields["scale"], False)}", "positions": [{positions_text}]'
        )
        held = '"columns": [\n' + ",\n".join(columns) + "\n],\n"
    out.write(f'{{\n"schema": "{schema}",\n"generator": "pe_reference {__version__}",\n"formula": "{formula}",\n')
    out.write('"rounding": "the exact real value rounded once to each format, to nearest, ties to even",\n')
    out.write('"parameters": {' + parameters + "},\n" + held + '"bits": {')  # no {{{ in an f-string: MicroPython
    for index, dtype in enumerate(_DTYPES):
        precision, _, exponent_bits = _DTYPES[dtype]
        digits = (exponent_bits + precision) // 4
        out.write(("," if index else "") + f'\n"{dtype}": [')
        made = rope.rows(seq_len, True, dtype) if rope else _rows(request.convention, seq_len, d_model, True, dtype)
        for r, row in enumerate(made):
            cells = ", ".join(f'"{_bit_pattern(x, dtype):0{digits}x}"' for x in row)
            out.write(("," if r else "") + f"\n[{cells}]")
        out.write("\n]")
    out.write("\n}\n}\n")


def _column_names(request: "_Request") -> "List[str]":
    """sin_0, cos_0, ... in the convention's order; zero for a padding column.  A rotary table: cos_k, sin_k or x_k by pair."""
    rope = request.rope
    if rope is not None:
        if rope.kind == "rotated":
            return ["x_" + str(c) for c in range(request.d_model)]
        if rope.axes is not None:
            # Each axis's pairs by its letter (t, y, x as a grid's shape names them): cos_x0.
            per_axis, columns = rope.axes[0], rope.axes[1]
            letters = "tyx"[-len(per_axis) :] if len(per_axis) <= 3 else "abcdefghijklmnopqrstuvwxyz"
            return [rope.kind + "_" + letters[a] + str(per_axis[a][0].columns()[c]) for a, c in columns]
        return [rope.kind + "_" + str(k) for k in rope.setup.columns()]
    if request.grid is not None:
        shape, fields = request.grid
        return _grid_rows("main", shape, request.d_model, request.exact, request.dtype, None, fields)["names"]
    names = []
    for kind, pair in request.convention._plan(request.d_model):
        names.append(("sin_", "cos_", "zero")[kind] + ("" if kind == _ZERO else str(pair)))
    return names


def _silence_stdout() -> None:
    """Point stdout at devnull so the interpreter's final flush cannot fail again."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError):
        return  # no file descriptors (MicroPython): nothing to silence
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass  # no stdout, or one without a descriptor
    finally:
        os.close(devnull)


class _Request:
    """What the command line asked for."""

    def __init__(
        self,
        seq_len: int,
        d_model: int,
        convention: "Optional[Convention]" = None,
        exact: bool = False,
        dtype: str = "float64",
        output_format: str = "table",
        digits: "Optional[int]" = None,
        header: bool = False,
        explain: bool = False,
    ) -> None:
        # Annotated, not inferred: mypy 1.14 (the last for Python 3.8) cannot infer them where they are used above.
        self.seq_len: "int" = seq_len
        self.d_model: "int" = d_model
        self.convention: "Convention" = PRESETS["paper"] if convention is None else convention
        self.exact: "bool" = exact
        self.dtype: "str" = dtype
        self.output_format: "str" = output_format
        self.digits: "Optional[int]" = digits
        self.header: "bool" = header
        self.explain: "bool" = explain
        #: With --rope: the rotary table asked for, and the scaling's JSON as given.
        self.rope: "Optional[_RopeRequest]" = None
        self.rope_scaling: "Optional[str]" = None
        #: With SEQ_LEN a grid's shape: the shape, and the grid's and the convention's fields as given.
        self.grid: "Optional[Tuple[Tuple[int, ...], Dict[str, object]]]" = None

    def position_text(self, r: int) -> str:
        """Row r's position as the first column and the plots show it; a grid's cell, as (1, 2)."""
        if self.grid is not None:
            shape = self.grid[0]
            index: "List[str]" = []
            cells = 1
            for n in shape:
                cells *= n
            r -= self.seq_len - cells  # the prefix's rows before the cells
            if r < 0:
                return "prefix"
            for n in reversed(shape):
                index.insert(0, str(r % n))
                r //= n
            return "(" + ", ".join(index) + ")"
        if self.rope is not None:
            positions = self.rope.positions
            return str(r) if positions is None else _fraction_text(positions[r])
        return _fraction_text(self.convention._position(r, self.seq_len))

    def sampled_rows(self, indices: "List[int]") -> "Iterator[List[float]]":
        """The rows at these increasing indices: streamed when many are wanted, else one by one.

        One row alone costs exact mode its set-up for the whole width, so a
        large share of the rows is cheaper streamed.
        """
        if len(indices) * 8 >= self.seq_len:
            wanted = set(indices)
            for index, row in enumerate(self.rows()):
                if index in wanted:
                    yield row
            return
        for index in indices:
            yield next(_rows(self.convention, self.seq_len, self.d_model, self.exact, self.dtype, index))

    def rows(self) -> "Iterator[List[float]]":
        if self.rope is not None:
            return self.rope.rows(self.seq_len, self.exact, self.dtype)
        if self.grid is not None:
            grid = _grid_rows("main", self.grid[0], self.d_model, self.exact, self.dtype, None, self.grid[1])
            return grid["rows"](self.exact, self.dtype)
        return _rows(self.convention, self.seq_len, self.d_model, self.exact, self.dtype)

    def formatter(self) -> "Callable[[float], str]":
        """The function that writes one value: fixed-point, hex bits, or the shortest round trip."""
        if self.output_format == "hex":
            precision, _, exponent_bits = _DTYPES[self.dtype]
            digits = (exponent_bits + precision) // 4
            dtype = self.dtype
            return lambda x: f"0x{_bit_pattern(x, dtype):0{digits}x}"
        if self.digits is not None:
            return ("{:." + str(self.digits) + "f}").format
        if self.dtype == "float64":
            return repr
        dtype = self.dtype

        def shortest(x: float) -> str:
            # The shortest decimal that reads back, rounded to dtype, as x (as numpy prints float32).
            for digits in range(1, 18):
                text = f"{x:.{digits}g}"
                if _round_float(float(text), dtype) == x:
                    return text
            return repr(x)

        return shortest


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


# encoding() holds at most this many values (Python floats in lists take
# about 32 bytes each: 2 GiB); rows() and the command line stream any size.
_MAX_TABLE = 1 << 26


def encoding(
    seq_len: "Union[int, Sequence[int]]",
    d_model: int,
    *,
    exact: bool = False,
    dtype: str = "float64",
    convention: "Optional[Convention]" = None,
    **fields: object,
) -> "List[List[float]]":
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

    By default the values are the usual float64 formula, computed with
    ``math.sin`` and ``math.cos``.  With ``exact=True`` each is the true
    value rounded to nearest, identical on every platform:

    >>> encoding(2, 4, exact=True)[1]
    [0.8414709848078965, 0.5403023058681398, 0.009999833334166664, 0.9999500004166653]

    ``dtype`` rounds to a narrower format; exact values are rounded once,
    directly from the true value.  The results are Python floats that the
    format holds exactly:

    >>> encoding(2, 4, exact=True, dtype="float32")[1]
    [0.8414709568023682, 0.5403022766113281, 0.009999833069741726, 0.9999499917030334]
    >>> encoding(2, 4, exact=True, dtype="bfloat16")[1]
    [0.83984375, 0.5390625, 0.010009765625, 1.0]

    An odd ``d_model`` is allowed: the last column is the sine of one more
    pair, whose cosine would fall outside the table:

    >>> [round(x, 6) for x in encoding(2, 3)[1]]
    [0.841471, 0.540302, 0.002154]

    ``base`` sets the wavelengths: pair ``i`` comes round every
    ``2*pi*base**(2i/d_model)`` positions, the last pair every
    ``2*pi*base**((d_model-2)/d_model)`` (RoPE-style models use other
    bases).  Here pair 1 turns by ``100**(-2/4) = 0.1`` per position:

    >>> [round(x, 6) for x in encoding(2, 4, base=100.0)[1]]
    [0.841471, 0.540302, 0.099833, 0.995004]

    An empty table is an empty list:

    >>> encoding(0, 4)
    []

    A table is built in memory, so its size is limited; ``rows()`` streams
    a table of any size one row at a time:

    >>> encoding(10**7, 10**5)
    Traceback (most recent call last):
      ...
    ValueError: seq_len * d_model must be at most 67108864 for encoding(), which holds the whole table in memory, got 10000000 * 100000 = 1000000000000; stream it with rows() or the command line

    Frameworks lay the table out in other ways.  ``preset`` names one of
    ``PRESETS``, and every field of a ``Convention`` is also a keyword that
    changes its choice (docs/conventions.md gives each preset's formula and
    source, and docs/checking.md how to find the one a table follows).
    tensor2tensor puts all sines before all cosines and spaces the
    frequencies by ``i / (h - 1)``:

    >>> [round(x, 8) for x in encoding(2, 4, preset="tensor2tensor")[1]]
    [0.84147098, 0.0001, 0.54030231, 1.0]

    Positions may be any real numbers, given exactly (a float is the binary
    number it holds, a string the decimal it says), as diffusion timesteps
    are:

    >>> encoding(2, 4, preset="diffusers", positions=["999.5", "0.3"], exact=True, dtype="float16")
    [[0.4560546875, 0.09979248046875, 0.89013671875, 0.9951171875], [0.29541015625, 2.9981136322021484e-05, 0.95556640625, 1.0]]

    Each value equals ``value(pos, dim, d_model, ...)`` with the same
    keywords, bit for bit.

    A grid's table (a vision transformer's patches, a video's frames) takes
    the grid's shape as ``seq_len``: a row per cell, the last axis fastest,
    each axis a 1-D table in its share of the columns.  ``preset`` names a
    grid's convention too (docs/conventions.md lists them, and the grid's
    own keywords); MAE's puts x's sines and cosines first, then y's:

    >>> table = encoding((2, 3), 8, preset="mae")
    >>> len(table), [round(x, 6) for x in table[5]]
    (6, [0.909297, 0.019999, -0.416147, 0.9998, 0.841471, 0.01, 0.540302, 0.99995])
    """
    if not isinstance(seq_len, (tuple, list)):
        seq_len = _check_integer("seq_len", seq_len, 0)
    d_model = _check_integer("d_model", d_model, 1)
    exact = _check_flag("exact")(exact)
    dtype = _check_dtype(dtype, exact)
    table: "Optional[Iterator[List[float]]]" = None
    count = seq_len if isinstance(seq_len, int) else 0
    if isinstance(seq_len, (tuple, list)):
        grid = _grid_rows("encoding", seq_len, d_model, exact, dtype, convention, fields)
        count, table = grid["count"], grid["rows"](exact, dtype)
    if count * d_model > _MAX_TABLE:
        raise ValueError(
            f"seq_len * d_model must be at most {_MAX_TABLE} for encoding(), which holds the whole table in memory,"
            f" got {count} * {d_model} = {count * d_model}; stream it with rows() or the command line"
        )
    if table is None:
        table = _rows(_convention("encoding", d_model, convention, fields), count, d_model, exact, dtype)
    return list(table)


def rows(
    seq_len: "Union[int, Sequence[int]]",
    d_model: int,
    *,
    exact: bool = False,
    dtype: str = "float64",
    convention: "Optional[Convention]" = None,
    **fields: object,
) -> "Iterator[List[float]]":
    """Return an iterator over the rows of ``encoding(seq_len, d_model)``.

    >>> it = rows(1000000, 512)
    >>> first = next(it)
    >>> first[:4]
    [0.0, 1.0, 0.0, 1.0]

    Only one row is in memory at a time, so a table too large to hold can
    still be streamed to a file.  The keywords are those of ``encoding``.
    The arguments are checked at once, not at the first ``next()``:

    >>> rows(-1, 4)
    Traceback (most recent call last):
      ...
    ValueError: seq_len must be at least 0, got -1
    """
    if not isinstance(seq_len, (tuple, list)):
        seq_len = _check_integer("seq_len", seq_len, 0)
    d_model = _check_integer("d_model", d_model, 1)
    exact = _check_flag("exact")(exact)
    dtype = _check_dtype(dtype, exact)
    if isinstance(seq_len, (tuple, list)):
        return _grid_rows("rows", seq_len, d_model, exact, dtype, convention, fields)["rows"](exact, dtype)
    return _rows(_convention("rows", d_model, convention, fields), seq_len, d_model, exact, dtype)


def value(
    pos: int,
    dim: int,
    d_model: int,
    *,
    exact: bool = False,
    dtype: str = "float64",
    convention: "Optional[Convention]" = None,
    **fields: object,
) -> float:
    """Return the element at row ``pos``, column ``dim`` without building the table.

    >>> value(1, 0, 4) == math.sin(1.0)
    True
    >>> round(value(1, 2, 4), 8)
    0.00999983

    The result equals ``encoding(...)[pos][dim]`` bit for bit, with the same
    keywords:

    >>> value(3, 1, 4) == encoding(4, 4)[3][1]
    True
    >>> value(3, 1, 4, exact=True, dtype="float16") == encoding(4, 4, exact=True, dtype="float16")[3][1]
    True

    Any non-negative ``pos`` works.  In float64 the angle of a large position
    carries a large rounding error (the denominator is rounded, and
    ``pos / denominator`` is rounded to 53 bits before the sine is taken);
    the exact value has none.  Column 100 at position ``10**9``: the fast
    path is off by about ``1e-8`` (column 0 would not show it, since it
    divides by 1 and its angle is exact):

    >>> value(10**9, 100, 512, exact=True)
    0.7579326622324222
    >>> 1e-9 < abs(value(10**9, 100, 512) - 0.7579326622324222) < 1e-6
    True
    >>> value(10**30, 0, 4, exact=True)
    -0.09011690191213806

    With a convention's keywords, ``pos`` is still the row: the position
    is ``start + pos``.

    >>> value(0, 0, 4, preset="fairseq") == value(2, 0, 4, preset="tensor2tensor")
    True

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
    exact = _check_flag("exact")(exact)
    dtype = _check_dtype(dtype, exact)
    convention = _convention("value", d_model, convention, fields)
    kind, pair = convention._column(dim, d_model)
    if kind == _ZERO:
        return 0.0
    position = convention._position(pos, None)
    exponent = convention._exponent(d_model, pair)
    if exact:
        scale = convention._output_scale(d_model)
        return _exact_value(position, kind, exponent, convention._frequencies(), scale, dtype)
    angle = _angle(position, convention._denominators(d_model)[pair])
    result = (math.sin(angle) if kind == _SINE else math.cos(angle)) * convention._output_scale(d_model).value
    return result if dtype == "float64" else _round_float(result, dtype)


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
    base = _to_float(_positive("base")(base))
    pair = dim // 2
    function = "sin" if dim % 2 == 0 else "cos"
    exponent = (2 * pair) / d_model
    denominator = _denominator((2 * pair, d_model), base)
    angle = _angle(pos, denominator)
    result = math.sin(angle) if function == "sin" else math.cos(angle)

    base_text = _number_text(base)
    exponent_text = _number_text(exponent)
    denominator_text = _number_text(denominator)
    angle_text = _number_text(angle)
    exponent_ratio = _parse_number("", exponent_text)
    denominator_ratio = _parse_number("", denominator_text)
    angle_ratio = _parse_number("", angle_text)

    parts = [
        # pos₁₂ for (1, 2), with a comma once either index has two digits.
        "pos" + _subscript(pos) + ("" if pos < 10 and dim < 10 else ",") + _subscript(dim),
        " = ",
        f"{function}({pos} / {base_text}^((2*{pair})/{d_model}))",
        # 2i/d as a decimal: exact only when d divides out to powers of 2 and 5.
        _relation(_ratios_equal(exponent_ratio, (2 * pair, d_model))),
        f"{function}({pos} / {base_text}^{exponent_text})",
        _relation(_power_is_exact(_parse_number("", base_text), exponent_ratio, denominator_ratio)),
        f"{function}({pos} / {denominator_text})",
        _relation(_ratios_equal(angle_ratio, (pos * denominator_ratio[1], denominator_ratio[0]))),
        f"{function}({angle_text})",
        # sin and cos of a non-zero rational are transcendental (Lindemann):
        # only the angle 0 gives an exact value.
        _relation(angle_ratio[0] == 0),
        repr(result),
    ]
    return "".join(parts)


def assert_close(actual: object, *, kind: "Optional[str]" = None, **options: "Any") -> None:
    """Raise AssertionError, carrying the check's report, unless the table passes.

    For a test suite, as ``numpy.testing.assert_allclose``: a table is checked by ``compare``, and with
    ``kind`` ("cos", "sin" or "rotated") a rotary cache or rotated vectors by ``compare_rope``; the other
    keywords are theirs.  The error's first line is the verdict, what explains it and the count
    (Report.headline: the line a test runner's summary shows); the whole report follows:

    >>> assert_close(encoding(8, 16))
    >>> assert_close(rope(64, 8)[1], kind="sin")
    >>> try:
    ...     assert_close(encoding(8, 16, preset="guided-diffusion"))
    ... except AssertionError as error:
    ...     print(str(error).splitlines()[0])
    MISMATCH: guided-diffusion's convention (preset guided-diffusion): all cosines then all sines; it reproduces every element. (120 of 128 elements outside the tolerance)
    """
    __tracebackhide__ = True  # pytest shows the test's line, not this one's source
    if kind is None:
        report = compare(actual, **options)
    else:
        report = compare_rope(actual, kind=kind, **options)
    if not report.ok:
        raise AssertionError(f"{report.headline()}\n{report}")


def compare(
    actual: object,
    *,
    dtype: "Optional[str]" = None,
    atol: "Optional[float]" = None,
    ulps: "Optional[float]" = None,
    convention: "Optional[Convention]" = None,
    grid: "Optional[Sequence[int]]" = None,
    **fields: object,
) -> "Report":
    """Compare a table with the exact encoding of its shape; return a Report.

    >>> report = compare(encoding(4, 4))
    >>> report.ok, report.shape
    (True, (4, 4))
    >>> print(report)
    4 x 4 table against the exact float64 values of the paper convention (default tolerance 2**-48 * (1 + |angle|) + 2**-53 * |value|)
    max abs error 0
    0 of 16 elements outside the tolerance: within tolerance

    ``actual`` is any 2-D sequence of numbers: nested lists, a numpy array
    or a torch tensor (an array read a block of rows at a time, by slicing
    and ``tolist()``, so that memory does not grow with the table; neither
    library is imported).  Its shape sets seq_len and d_model.  Each value is first
    rounded to ``dtype``, as storing it in such an array would; the
    reference is the exact value rounded to ``dtype``.  Without ``dtype``,
    an array or tensor is checked in its own dtype (float16, float32,
    float64 or bfloat16) and the report's first line says so; lists are
    checked as float64, and a report that fails says when every value is a
    number of a narrower format, the one to give as ``dtype``.

    By default an element passes when its error from the exact value is at
    most ``2**(5-q) * (1 + |angle|) + 2**-p * |value|`` for a format of ``p``
    bits computed in one of ``q`` (the format itself, or float32 for
    bfloat16 and float16), times a factor on the values: a faithful
    computation in the format passes, and where that allowance is below
    ``1e-3`` an error of ``1e-3`` fails.  Past angle 511 (float32) the
    elements are counted as coarse, past 32767 they are not judged, and a
    table mostly not judged cannot be checked (docs/checking.md).  With ``atol`` or ``ulps`` an element
    passes when its error is at most ``atol`` or it is at most ``ulps``
    numbers of ``dtype`` away; ``atol=0`` demands the exact values:

    >>> table = encoding(6, 4, exact=True)
    >>> table[2][1] = 0.5
    >>> report = compare(table, atol=0)
    >>> report.ok, report.failures, report.worst
    (False, 1, (2, 1, 0.5, -0.4161468365471424))

    A table that does not match gets a diagnosis, which names a convention,
    a known mistake or local damage only if it explains the table:

    >>> print(report.diagnosis)
    Diagnosis: the table follows the paper convention except for 1 element: [2][1] is 0.5, expected -0.416147.
    >>> print(compare(encoding(4, 6, preset="tensor2tensor")).diagnosis)
    Diagnosis: the table follows tensor2tensor's convention (preset tensor2tensor, the same as whisper, diffusers and pyg): all sines then all cosines, frequencies spaced by i/(h-1); it reproduces every element. The call that reproduces it: encoding(4, 6, preset='tensor2tensor') (on the command line: --preset tensor2tensor).

    ``report.causes`` says the same for a program, as keys: the fields that
    differ from the convention asked for, a mistake's, ``damage``
    (docs/checking.md lists them):

    >>> compare(encoding(4, 6, preset="tensor2tensor")).causes
    ('layout', 'spacing')

    Long because a check is one sequence, in the order docs/checking.md describes: the table read,
    the arguments checked, the shape, the comparison, the diagnosis.
    """
    table = _source(actual)  # the table as the checker reads it, streamed, rounded to dtype
    seq_len, d_model = table.count, table.width
    rule = _check_format(actual, table, dtype, atol, ulps)
    dtype = rule[0]
    preset = fields.get("preset")
    if (
        grid is not None
        or any(preset == row[0] for row in _GRID_PRESETS)
        or any(fields.get(row[0]) is not None for row in _GRID_FIELDS)
    ):
        return _grid_compare(table, grid, rule, convention, fields)
    asked = _convention("compare", d_model, convention, fields, refuse_odd=False)
    asked._check_rows(seq_len)
    asked._exponents(d_model)  # refuses a shift too large for this width
    if asked._fields["odd"] == "error" and d_model % 2:
        # The convention has no table of this width: nothing to compare with.
        for _ in table.read():
            pass  # counts what is not finite
        report = _report(table, rule, None, asked._name(), (None, ()))  # the elements not finite, as read
        report.diagnosis, report.causes = _diagnose(
            table, None, dtype, {}, table.not_finite, asked, not_finite_count=table.not_finite_count
        )
        report.uncheckable = (
            f"the {asked._name()} convention has no table of odd width, and this one has {d_model} columns"
        )
        return report
    comparison = _tally(table, asked, dtype, rule[2], rule[3])
    diagnosis: "Optional[str]" = None
    causes: "Tuple[str, ...]" = ()
    unjudged = 2 * comparison.unjudged > seq_len * d_model
    if comparison.failures or (unjudged and comparison.default):
        # Most elements not judged: the asked convention vouches for nothing, as for a width it has no table of.
        diagnosis, causes = _diagnose(
            table,
            None if unjudged else asked,
            dtype,
            comparison.damaged,
            table.not_finite,
            asked,
            comparison.unjudged,
            table.not_finite_count,
            None
            if len(comparison.damaged) == comparison.damaged_rows
            else (comparison.damaged_rows, comparison.damaged_cells),
        )
        rotary = None if causes else _as_rotary(table, dtype)
        if rotary is not None:
            diagnosis, causes = rotary  # nothing a table does explains it, and it is a rotary cache
    return _report(table, rule, comparison, asked._name(d_model), (diagnosis, causes))


def _grid_compare(
    table: "_Source",
    shape: "Optional[Sequence[object]]",
    rule: "_Rule",
    convention: object,
    fields: "Dict[str, object]",
) -> "Report":
    """compare() for a grid's table: the grid asked (its shape, or the square its rows make), checked cell by cell.

    >>> table = encoding((4, 4), 8, preset="mae", exact=True, dtype="float32")
    >>> print(compare(table, preset="mae", dtype="float32"))
    16 x 8 table against the exact float32 values of the mae convention on a grid of 4 x 4 cells (default tolerance 2**-19 * (1 + |angle|) + 2**-24 * |value|)
    max abs error 0
    0 of 128 elements outside the tolerance: within tolerance

    Long because a grid's check is one sequence, as compare()'s: the shape, the tally, the diagnosis (another
    grid preset, or where the damage is), the report.
    """
    seq_len, d_model = table.count, table.width
    dtype = rule[0]
    preset = fields.get("preset")
    prefix = fields.get("prefix")
    if shape is None:
        # A 2-D grid's square, after the prefix's rows.
        axes = next((row[2] for row in _GRID_PRESETS if row[0] == preset), 2)
        cells = seq_len - (prefix if isinstance(prefix, int) and not isinstance(prefix, bool) else 0)
        side = _isqrt(cells) if cells > 0 else 0
        if axes != 2 or side * side != cells:
            raise ValueError(
                f"grid must be given unless the table's rows after the prefix make a square 2-D grid,"
                f" got {seq_len} rows and a grid of {axes} axes"
            )
        shape = (side, side)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"grid must be a tuple of 2 or 3 integers, got {type(shape).__name__} {_short(shape)}")
    plan = _grid_rows("compare", shape, d_model, True, dtype, convention, fields)
    count, names, before = plan["count"], plan["names"], plan["prefix"]
    shown = " x ".join(str(n) for n in shape)
    if count != seq_len:
        raise ValueError(
            f"actual must have {count} rows for the {shown} grid (a row per cell, after {before} prefix rows),"
            f" got {seq_len}"
        )
    comparison = _grid_tally(table, plan, dtype, rule[2], rule[3], True)
    changed = [f"{name}={_short(given)}" for name, given in fields.items() if name != "preset" and given is not None]
    if isinstance(convention, Convention):
        name = convention._name()
    else:
        name = "paper" if preset is None else str(preset)
    name += f" ({', '.join(changed)})" if changed else ""
    diagnosis: "Optional[str]" = None
    causes: "Tuple[str, ...]" = ()
    damaged = comparison.damaged
    local = 0 < comparison.damaged_cells <= _DAMAGE_ITEMS and len(damaged) == comparison.damaged_rows
    if comparison.failures and damaged and not local:
        asked = (tuple(shape), before, sorted((key, given) for key, given in fields.items() if given is not None))
        shapes = [(tuple(shape), before)]
        if len(shape) == 2 and shape[0] != shape[1]:
            shapes.append(((shape[1], shape[0]), before))  # the grid's axes swapped
        candidates = list(_grid_candidates(table, dtype, shapes, asked))
        words, causes = _explanation(table, candidates + list(_grid_candidates(table, dtype, None, asked)), None, dtype)
        diagnosis = "Diagnosis: " + words if causes else None
    if comparison.failures and diagnosis is None and not damaged:
        diagnosis = (
            f"Diagnosis: every element is within the default tolerance of the {name} convention on the grid,"
            f" so the differences are no larger than a faithful {dtype} computation makes."
        )
    elif comparison.failures and diagnosis is None:
        # The elements outside the default tolerance: each of local damage, else the first, and their axes.
        made = plan["tables"](True, dtype)
        items = []
        for r in sorted(damaged)[: 1 if not local else None]:
            cell = "a prefix row" if r < before else f"cell {tuple(plan['cell'](r))}"
            for c in damaged[r][: 1 if not local else None]:
                items.append(
                    f"[{r}][{c}] ({names[c]} of {cell}) is {table[r][c]!r}, expected {plan['row_at'](made, r)[c]!r}"
                )
        if local:
            diagnosis = (
                f"Diagnosis: the table follows the {name} convention on the grid except for {_join(items, '; ')}."
            )
            causes = ("damage",)
        else:
            letters = sorted(set(names[c][4] for columns in damaged.values() for c in columns if names[c] != "zero"))
            columns_of = f"axis {letters[0]}" if len(letters) == 1 else "axes " + " and ".join(letters)
            diagnosis = (
                f"Diagnosis: {comparison.damaged_cells} elements in {comparison.damaged_rows} rows are outside the"
                f" default tolerance, in the columns of {columns_of}, the first {items[0]}; none of the grid presets"
                " tried explains the table (on this shape, its axes swapped or a shape its rows show, each with a"
                " position scale read from the table)."
            )
    return _report(
        table, rule, comparison, name, (diagnosis, causes), f"the {name} convention on a grid of {shown} cells"
    )


def _as_rotary(table: "_Source", dtype: str) -> "Optional[Tuple[str, Tuple[str, ...]]]":
    """A table that is a rotary cos or sin cache, not a sinusoidal table: the diagnosis in words, with the check
    that fits it (compare_rope's, and what it says), and its causes ("rope:KIND" and compare_rope's); or None.

    Its columns repeat as a cache's do, on every sampled row (half: c and c + h; interleaved: 2k and 2k + 1),
    and compare_rope passes it, or names what explains it, as a cos or a sin cache in that layout.
    """
    width = len(table[0])
    if width % 2 or len(table) < 2:
        return None
    h = width // 2
    sample = [table[r] for r in _sample_rows(len(table))]
    for layout, again in (("half", h), ("interleaved", 1)):
        columns = range(h) if layout == "half" else range(0, width, 2)
        if all(row[c] == row[c + again] for row in sample for c in columns):
            break
    else:
        return None
    # Row 0 of a cos cache holds its attention factor, of a sin cache zeros.
    kind = "sin" if all(x == 0.0 for x in sample[0]) else "cos"
    report = compare_rope(table, kind=kind, layout=layout, dtype=dtype)
    if not report.ok and not report.causes:
        return None
    options = f", layout={layout!r}" if layout != "half" else ""
    flags = f" --rope-layout {layout}" if layout != "half" else ""
    words = (
        f"Diagnosis: the table is a rotary {kind} cache in the {layout} layout (its columns repeat), not a"
        f" sinusoidal table: compare_rope(table, kind={kind!r}{options}) checks it (on the command line: --rope"
        f" {kind}{flags})"
    )
    if report.ok:
        return f"{words}, and it passes.", (f"rope:{kind}",)
    told = str(report.diagnosis)
    return f"{words}, and says: {told[told.index(' ') + 1 :]}", (f"rope:{kind}",) + report.causes


def rope(
    seq_len: int,
    head_dim: "Optional[int]" = None,
    *,
    base: "Optional[object]" = None,
    layout: str = "half",
    scaling: "Optional[object]" = None,
    positions: "Optional[object]" = None,
    exact: bool = False,
    dtype: str = "float64",
    axes_dim: "Optional[Sequence[int]]" = None,
    config: "Optional[object]" = None,
) -> "Tuple[List[List[float]], List[List[float]]]":
    """Return a rotary embedding's cos and sin caches: each seq_len rows of head_dim floats.

    >>> cos, sin = rope(3, 4)
    >>> [round(x, 6) for x in cos[2]]
    [-0.416147, 0.9998, -0.416147, 0.9998]
    >>> [round(x, 6) for x in sin[2]]
    [0.909297, 0.019999, 0.909297, 0.019999]

    Pair k of the head turns position p by the angle p * w_k, w_k =
    base**(-2k/head_dim), the encoding's frequencies.  ``layout="half"``
    (HF transformers' rotate_half, GPT-NeoX) repeats the pairs' values,
    ``"interleaved"`` (GPT-J, Meta's Llama) doubles each:

    >>> [round(x, 6) for x in rope(3, 4, layout="interleaved")[0][2]]
    [-0.416147, -0.416147, 0.9998, 0.9998]

    ``"pairs"`` holds each pair's value once (head_dim / 2 columns: torchtune's cache, Meta's freqs_cis).
    ``scaling`` takes a model's rope parameters as HF transformers writes
    them (``config.rope_parameters``): ``rope_type`` linear, dynamic, yarn,
    llama3 or longrope, with that variant's keys; docs/rope.md gives each
    formula.  ``positions`` gives the rows' positions, any real numbers.
    With ``exact=True`` every value is correctly rounded to ``dtype``, the
    same bits on every platform:

    >>> scaling = {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096}
    >>> cos, sin = rope(2, 128, base=500000, scaling=scaling, exact=True, dtype="bfloat16")
    >>> cos[0][0], cos[1][:3]
    (1.140625, [0.61328125, 0.78125, 0.8984375])

    Position 0 gives cos 1 times YaRN's attention factor, 0.1 ln 4 + 1.

    Several positions a row (a patch's row and column, a video's frame,
    Qwen2-VL's temporal, height and width ids): ``positions`` holds a row
    of them for each row, and either ``axes_dim`` gives each axis its
    columns and its own frequencies (Flux's ``axes_dim``, CogVideoX,
    timm's and rotary-embedding-torch's axial RoPE), or ``scaling``'s
    ``mrope_section`` gives each axis a section of one embedding's pairs
    (Qwen2-VL; ``mrope_interleaved`` for Qwen3-VL's every third pair);
    docs/rope.md says which model takes which.  Flux's image token at row
    1, column 2 of the latent grid:

    >>> cos = rope(1, 16, positions=[(0, 1, 2)], axes_dim=(4, 6, 6), layout="interleaved")[0]
    >>> [round(x, 6) for x in cos[0][:4] + cos[0][4:6] + cos[0][10:12]]
    [1.0, 1.0, 1.0, 1.0, 0.540302, 0.540302, -0.416147, -0.416147]

    ``config`` takes a model's config.json (its path, or the dict) in place of head_dim, base and
    scaling, read as transformers reads it: head_dim (or hidden_size / num_attention_heads) times
    partial_rotary_factor, rope_theta, rope_scaling or rope_parameters, max_position_embeddings.
    GPT-NeoX rotates a quarter of each head:

    >>> neox = {"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 8, "rotary_pct": 0.25}
    >>> cos, sin = rope(3, config=neox)
    >>> len(cos[0]), cos == rope(3, 16)[0]
    (16, True)
    """
    seq_len = _check_integer("seq_len", seq_len, 0)
    head_dim, base, scaling = _configured(config, head_dim, base, scaling, "head_dim")
    axes = _rope_axes(head_dim, base, layout, scaling, axes_dim, positions, seq_len, "seq_len")
    if axes is None:
        # One position a row: one axis, whose cache is the table.
        setup = _Rope(head_dim, base, layout, scaling)
        per_axis: "List[Tuple[_Rope, Optional[List[_Fraction]], List[int]]]" = [
            (setup, _rope_positions(positions, seq_len), [])
        ]
    else:
        per_axis = axes[0]
    exact = _check_flag("exact")(exact)
    dtype = _check_dtype(dtype, exact)
    width = per_axis[0][0].head_dim if axes is None else len(axes[2])
    if 2 * seq_len * width > _MAX_TABLE:
        raise ValueError(f"seq_len * head_dim must be at most {_MAX_TABLE // 2} for rope(), got {seq_len * width}")
    # Each axis's cos and sin at once (one pass of the kernel for both), then each column taken from its axis's.
    cos_rows, sin_rows = [], []
    for made in zip(*[_rope_pairs(axis, seq_len, given, exact, dtype) for axis, given, _ in per_axis]):
        cos = [axis.arrange(row[: axis.pairs]) for (axis, _, _), row in zip(per_axis, made)]
        sin = [axis.arrange(row[axis.pairs :]) for (axis, _, _), row in zip(per_axis, made)]
        if axes is None:
            cos_rows.append(cos[0])
            sin_rows.append(sin[0])
        else:
            cos_rows.append([cos[a][c] for a, c in axes[1]])
            sin_rows.append([sin[a][c] for a, c in axes[1]])
    return cos_rows, sin_rows


def apply_rope(
    x: object,
    *,
    base: "Optional[object]" = None,
    layout: str = "half",
    scaling: "Optional[object]" = None,
    positions: "Optional[object]" = None,
    exact: bool = False,
    dtype: str = "float64",
    axes_dim: "Optional[Sequence[int]]" = None,
) -> "List[List[float]]":
    """Return the rows of x rotated by a rotary embedding: what a fused rotary kernel computes.

    >>> [round(v, 6) for v in apply_rope([[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])[1]]
    [0.540302, 0.0, 0.841471, 0.0]

    Row r of ``x`` (a query or key vector, head_dim numbers) sits at
    position r, or ``positions[r]``.  Each pair of columns (a, b) turns by
    its angle: ``out[a] = x[a] cos - x[b] sin`` and ``out[b] = x[b] cos +
    x[a] sin``, times the attention factor; the pairs are (k, k + h) in the
    half layout and (2k, 2k + 1) interleaved.  The keywords are those of
    ``rope``.  With ``exact=True`` each element is the real value rounded
    once to ``dtype``, ``x`` taken as the floats it holds:

    >>> apply_rope([[0.0, 0.0], [3.0, 4.0]], exact=True, dtype="float16")[1]
    [-1.7451171875, 4.6875]
    """
    table = _as_table(x, "x")
    if len(table[0]) % 2:
        raise ValueError(f"x must have an even number of columns (head_dim), got {len(table[0])}")
    head_dim = _rope_head_dim("rotated", layout, len(table[0]))
    axes = _rope_axes(head_dim, base, layout, scaling, axes_dim, positions, len(table), "x")
    # With several axes, a plain setup of head_dim: its pairs are the axes' together (for _check_vectors).
    setup = _Rope(head_dim, base, layout, scaling if axes is None else None)
    given = _check_positions(positions) if axes is None else None
    if given is not None and len(given) != len(table):
        raise ValueError(f"positions must have one position per row of x ({len(table)}), got {len(given)}")
    exact = _check_flag("exact")(exact)
    dtype = _check_dtype(dtype, exact)
    _check_vectors(table, setup)
    request = _RopeRequest(setup, "rotated", table, None if given is None else list(given))
    request.axes = axes
    return list(request.rows(len(table), exact, dtype))


def compare_rope(
    actual: object,
    *,
    kind: str = "cos",
    x: "Optional[object]" = None,
    base: "Optional[object]" = None,
    layout: str = "half",
    scaling: "Optional[object]" = None,
    positions: "Optional[object]" = None,
    dtype: "Optional[str]" = None,
    atol: "Optional[float]" = None,
    ulps: "Optional[float]" = None,
    axes_dim: "Optional[Sequence[int]]" = None,
    config: "Optional[object]" = None,
) -> "Report":
    """Compare a rotary cache (``kind`` "cos" or "sin") or rotated vectors ("rotated", of ``x``) with the exact values.

    >>> cos, sin = rope(64, 8)
    >>> compare_rope(cos).ok, compare_rope(sin, kind="sin").ok
    (True, True)

    Each value is first rounded to ``dtype``; without it, to the dtype of
    an array or tensor, or float64 for lists, as in ``compare``.  The default rule is compare's: an element
    passes when its error is at most ``2**(5-q) * (1 + |angle|)`` times the
    attention factor (times ``|x[a]| + |x[b]|`` for rotated vectors), plus
    ``2**-p * |value|`` for storing it in a format of p bits, where q is the
    precision of the format it is computed in (float32 for the narrow
    ones), with elements counted as coarse or not judged by their angle.
    ``atol`` and ``ulps`` replace that rule, as in ``compare``.  A table that fails gets a diagnosis, and
    ``report.causes`` names what explains it: ``layout``, ``base``,
    ``scaling`` (``scaling:length`` for dynamic NTK's base at another length, ``scaling:short_factor``
    and ``scaling:long_factor`` for LongRoPE's other list on every row), ``positions`` (rows at
    other positions, read back), ``attention_factor`` (``:missing``, ``:twice``), or a step
    rounded to a narrow format (``positions``, ``inv_freq``, ``angles``,
    ``output``, as ``inv_freq:bfloat16``), ``output:float32``
    (or another format) for values all held by a narrower format than
    ``dtype``, ``axes`` for a cos or sin cache of several positions a row checked without them (its split,
    base, layout and each row's positions read from its values; ``damage`` beside it where elements are
    named).  ``config`` takes a model's config.json in place of base and scaling, as rope() does.

    >>> print(compare_rope(rope(64, 8, layout="interleaved")[0]).diagnosis)
    Diagnosis: the table follows the RoPE cos cache (half layout, base 10000) in the interleaved layout; it reproduces every element. The call that reproduces it: rope(64, 8, layout='interleaved')[0] (on the command line: --rope cos --rope-layout interleaved).

    Long because a check is one sequence, as compare()'s: the arguments, the tally, the diagnosis (one
    position a row, or several), the report.
    """
    kind = _check_choice("kind", kind, ("cos", "sin", "rotated"))
    table = _source(actual)  # streamed, as compare's
    seq_len, width = table.count, table.width
    head_dim = _rope_head_dim(kind, layout, width)
    _, base, scaling = _configured(config, head_dim, base, scaling, "the table's head_dim")
    axes = _rope_axes(head_dim, base, layout, scaling, axes_dim, positions, seq_len, "the table's rows")
    setup = _Rope(head_dim, base, layout, scaling) if axes is None else _Rope(head_dim, base, layout, None)
    given = _rope_positions(positions, seq_len, "the table's rows") if axes is None else None
    rule = _check_format(actual, table, dtype, atol, ulps)
    dtype = rule[0]
    vectors = _rope_vectors(kind, x, seq_len, width, setup)
    request = _RopeRequest(setup, kind, vectors, given)
    request.axes = axes
    comparison = _rope_comparison(table, request, dtype, rule[2], rule[3])
    allowance = comparison.allowance
    what = "rotated vectors" if kind == "rotated" else f"{kind} cache"
    name = setup.name(what) if axes is None else f"{axes[0][0][0].name(what)[:-1]}, {axes[3]})"
    diagnosis: "Optional[str]" = None
    causes: "Tuple[str, ...]" = ()
    if comparison.failures and axes is None:
        diagnosis, causes = _diagnose_rope(table, request, dtype, allowance)
    elif axes is not None and comparison.failures and comparison.damaged:
        # Several axes: where the elements outside the default tolerance are, by axis (no other setup is tried).
        r = min(comparison.damaged)
        c = comparison.damaged[r][0]
        expected = next(row for i, row in enumerate(request.rows(seq_len, True, dtype)) if i == r)[c]
        chosen = axes[2] if kind == "rotated" else axes[1]
        which = sorted(set(chosen[c][0] for columns in comparison.damaged.values() for c in columns))
        diagnosis = (
            f"Diagnosis: {comparison.damaged_cells} elements in {comparison.damaged_rows} rows are outside the"
            f" default tolerance, in the columns of axes {', '.join(map(str, which))} (counted from 0); the first"
            f" is [{r}][{c}], axis {chosen[c][0]}'s, {table[r][c]!r}, expected {expected!r}."
        )
    return _report(table, rule, comparison, name, (diagnosis, causes), f"the {name}")


def _report(
    table: "_Source",
    rule: "_Rule",
    comparison: "Optional[_Comparison]",
    name: str,
    found: "Tuple[Optional[str], Tuple[str, ...]]",
    subject: "Optional[str]" = None,
) -> "Report":
    """The Report of every check (a table, a grid's, a rotary cache, rotated vectors): the comparison's counts,
    the diagnosis and its causes (found), what the table was compared with (the setup's name, and the subject
    where it is not "the NAME convention"), where its format came from; a failing float64 check of a list or text
    gets the narrower format that holds it.  Without a comparison (no table of the table's width), nothing was
    compared.

    With the comparison of the default rule, it takes the counts of elements judged coarsely or not at all;
    most not judged, the table cannot be checked.
    """
    dtype, origin, atol, ulps = rule
    shape = (table.count, table.width)
    if comparison is None:
        report = Report(shape, name, dtype, atol, ulps, 0, _NAN, _NAN, None, found[0])
    else:
        made = comparison.failures, comparison.max_abs, comparison.max_ulps, comparison.worst
        report = Report(shape, name, dtype, atol, ulps, *made, diagnosis=found[0])
        report.rule = comparison.allowance.rule
    report.not_finite, report.not_finite_count = table.not_finite[:5], table.not_finite_count
    report.causes, report.dtype_origin = found[1], origin
    report.subject = report.subject if subject is None else subject
    if comparison is not None and comparison.default:
        report.share = comparison.share
        report.coarse, report.unjudged = comparison.coarse, comparison.unjudged
        report.coarse_from, report.unjudged_from = comparison.coarse_from, comparison.unjudged_from
        if 2 * report.unjudged > report.count:
            report.uncheckable = (
                f"most elements are not judged: the table cannot be checked in {report.dtype};"
                " give atol or ulps to compare it with the exact values"
            )
    if report.failures and origin is None and report.dtype == "float64":
        report.narrower = _narrowest_format(table, "float64")
    return report


class Report:
    """What ``compare`` found: the errors of a table against the exact reference.

    ``ok`` tells whether the table passes; ``str(report)`` says why in
    words, with the diagnosis of a mismatch.  ``atol`` and ``ulps`` are
    None for the default tolerance.
    """

    def __init__(
        self,
        shape: "Tuple[int, int]",
        convention: str,
        dtype: str,
        atol: "Optional[float]",
        ulps: "Optional[float]",
        failures: int,
        max_abs_error: float,
        max_ulp_error: float,
        worst: "Optional[Tuple[int, int, float, float]]",
        diagnosis: "Optional[str]",
        not_finite: "Sequence[Tuple[int, int, float]]" = (),
        not_finite_count: int = 0,
    ) -> None:
        self.shape = shape
        self.convention = convention
        self.dtype = dtype
        self.atol = atol
        self.ulps = ulps
        self.failures = failures
        self.max_abs_error = max_abs_error
        self.max_ulp_error = max_ulp_error
        #: (row, column, actual, expected) of the largest absolute error among finite elements.
        self.worst = worst
        self.diagnosis = diagnosis
        #: (row, column, value) of the first NaN or infinite elements, and how many there are.
        self.not_finite = list(not_finite)
        self.not_finite_count = not_finite_count
        #: Why the table cannot be checked (most elements not judged, or no table of its width), or None.
        self.uncheckable: "Optional[str]" = None
        #: Elements the default rule judges coarser than 2**-10, and elements it does not judge (see docs/checking.md).
        self.coarse = 0
        self.unjudged = 0
        #: (row, column) of the first of each, in row order, or None.
        self.coarse_from: "Optional[_Element]" = None
        self.unjudged_from: "Optional[_Element]" = None
        #: What the table was compared with, in words, and the default rule (compare_rope sets its own).
        self.subject = f"the {convention} convention"
        self.rule: "Optional[str]" = None
        #: What explains a mismatch, as keys (docs/checking.md and docs/rope.md list them; empty when nothing is named).
        self.causes: "Tuple[str, ...]" = ()
        #: Where dtype came from when the data says ("the array's dtype"), or None.
        self.dtype_origin: "Optional[str]" = None
        #: A narrower format that holds every value of a failing list or text table checked as float64, or None.
        self.narrower: "Optional[str]" = None
        #: Under the default rule, the largest error over its own element's tolerance (above 1 fails), else NaN.
        self.share: float = _NAN

    def __repr__(self) -> str:
        return f"<Report {'ok' if self.ok else 'mismatch'}: {self.failures} of {self.count} outside tolerance>"

    def __str__(self) -> str:
        row_list, columns = self.shape
        origin = "" if self.dtype_origin is None else f" ({self.dtype_origin})"
        lines = [
            f"{row_list} x {columns} table against the exact {self.dtype} values{origin} of {self.subject}"
            f" ({self.tolerance()})"
        ]
        if self.narrower is not None:
            lines.append(
                f"every value is a {self.narrower} number: to check the table as {self.narrower},"
                f" give dtype={self.narrower!r} (--dtype {self.narrower})"
            )
        if self.not_finite_count < self.count and self.max_abs_error == self.max_abs_error:
            # The distance the rule measures: an element's error over its own tolerance under the default rule,
            # numbers of dtype apart under ulps (a count that crosses zero through all the tiny numbers).
            if self.ulps is not None:
                measured = f", max {self.max_ulp_error:.3g} ulps of {self.dtype}"
            elif self.share > 0.0:  # not NaN: the default rule's, and some error
                measured = (
                    f", each error at most {self.share:.2g} of its element's tolerance"
                    if self.share <= 1.0
                    else f", errors up to {self.share:.2g} times their element's tolerance"
                )
            else:
                measured = ""
            lines.append(f"max abs error {self.max_abs_error:.3g}{measured}")
        if self.worst is not None and self.max_abs_error > 0:
            row, column, actual, expected = self.worst
            lines.append(f"worst element [{row}][{column}]: {actual!r}, exact {expected!r}")
        if self.not_finite_count:
            lines.append(_not_finite_text(self.not_finite, self.not_finite_count, self.dtype))
        computing = _Allowance([], [], self.dtype).computing
        bits = _DTYPES[computing][0]
        for count, first, bound, what in (
            (
                self.coarse,
                self.coarse_from,
                bits - 15,
                "too coarsely to judge them to 2**-10: judged to their own allowance",
            ),
            (self.unjudged, self.unjudged_from, bits - 9, "so coarsely that the allowance passes 2**-4: not judged"),
        ):
            # Elements judged coarsely or not at all: how many, why, where they start.
            if count and first is not None:
                share = _percent(count / self.count) if 1000 * count >= self.count else "under 0.1%"
                lines.append(
                    f"{count} of {self.count} elements ({share}) have angles past {(1 << bound) - 1},"
                    f" which {computing} holds {what}; the first is [{first[0]}][{first[1]}]"
                )
        if self.uncheckable is not None:
            lines.append(self.uncheckable)
        verdict = "within tolerance" if self.ok else "MISMATCH"
        if self.failures == 0 and not self.ok:
            verdict = "CANNOT BE CHECKED"
        if self.max_abs_error != self.max_abs_error:
            lines.append(f"no element compared: {verdict}")  # NaN: there was nothing to compare with
        else:
            unjudged = f", {self.unjudged} not judged" if self.unjudged else ""
            lines.append(f"{self.failures} of {self.count} elements outside the tolerance{unjudged}: {verdict}")
        if self.diagnosis:
            lines.append(self.diagnosis)
        return "\n".join(lines)

    def headline(self) -> str:
        """The verdict, the diagnosis's first sentence and the count, on one line: what a failing test says first.

        The sentence leaves out "the table follows" the setup asked for, which the report's first line names:
        a test runner's summary cut to a terminal's width still shows what differs.
        """
        verdict = "within tolerance" if self.ok else "MISMATCH" if self.failures else "CANNOT BE CHECKED"
        counted = f"{self.failures} of {self.count} elements outside the tolerance"
        text = self.diagnosis or self.uncheckable or ""
        if text.startswith("Diagnosis: "):
            text = text[len("Diagnosis: ") :]
        # Its first sentence: to a full stop before a capital letter (a decimal point is followed by a digit).
        for i in range(len(text) - 2):
            if text[i : i + 2] == ". " and "A" <= text[i + 2] <= "Z":
                text = text[: i + 1]
                break
        follows = f"the table follows {self.subject} "
        if text.startswith(follows) and text[len(follows) :].startswith(("with", "in the ", "not the ")):
            text = text[len(follows) :]  # a change to the setup asked: the change alone
        elif text.startswith("the table follows "):
            text = text[len("the table follows ") :]
        return f"{verdict}: {text} ({counted})" if text else f"{verdict} ({counted})"

    def tolerance(self) -> str:
        """The rule an element must meet, in words."""
        if self.atol is None and self.ulps is None:
            if self.rule is not None:
                return self.rule
            return _Allowance([], [], self.dtype).rule
        parts = []
        if self.atol is not None:
            parts.append("atol=0, exact" if self.atol == 0 else f"atol={self.atol:.3g}")
        if self.ulps is not None:
            parts.append(f"ulps={self.ulps:g}")
        return " or ".join(parts)

    @property
    def count(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def ok(self) -> bool:
        return self.failures == 0 and self.uncheckable is None


# ---------------------------------------------------------------------------
# Derivation text: which steps are exact
# ---------------------------------------------------------------------------


def _subscript(number: int) -> str:
    return "".join("₀₁₂₃₄₅₆₇₈₉"[ord(digit) - 48] for digit in str(number))


def _number_text(number: float) -> str:
    """Return the shortest text of a float, without ``.0`` on a whole number."""
    if number == int(number) and abs(number) < 2.0**53:
        return str(int(number))
    return repr(number)


def _relation(exact: bool) -> str:
    return " = " if exact else " ≈ "


def _ratios_equal(left: "_Fraction", right: "_Fraction") -> bool:
    return left[0] * right[1] == right[0] * left[1]


def _power_is_exact(base: "_Fraction", exponent: "_Fraction", result: "_Fraction") -> bool:
    """Tell whether base**exponent equals result exactly, all three positive rationals.

    With exponent = p/q in lowest terms, b**(p/q) = r exactly when r**q = b**p.
    Large q are not tried (the answer is then "not proven", shown as ≈).
    """
    p, q = exponent  # in lowest terms (_parse_number)
    if p == 0:
        return result == (1, 1)
    if q > 64 or p > 64:
        return False
    return bool(result[0] ** q * base[1] ** p == base[0] ** p * result[1] ** q)


# ---------------------------------------------------------------------------
# Rotary position embeddings (RoPE)
# ---------------------------------------------------------------------------
#
# A rotary embedding turns each pair of a query or key vector by the angle
# p * w_k, w_k = base**(-2k/d) over a head of d columns: the encoding's
# sines and cosines, used as rotations.  Its cache holds cos(p w_k) and
# sin(p w_k) in one of two layouts; its scaling variants (HF transformers'
# modeling_rope_utils.py) change the frequencies, and some multiply every
# value by an attention factor.  docs/rope.md gives each variant's formula
# and source.  The exact kernel, further down, computes them: a _RopeFrequencies is
# a frequency law like _Frequencies, one per pair, and the attention factor
# is an _OutputScale, like a convention's output scale: the root of a
# fraction, or a transcendental number computed to the bits asked.


def _configured(
    config: object, head_dim: "Optional[int]", base: object, scaling: object, name: str
) -> "Tuple[int, object, object]":
    """(head_dim, base, scaling) as a call gives them, or as its model's config says them.

    A config (a path to config.json, or the dict) is read as transformers 5 reads one: the rotated width
    is head_dim (or hidden_size // num_attention_heads) times partial_rotary_factor (GPT-NeoX's rotary_pct;
    0.25 for model_type gpt_neox and 0.5 for phi where it is left out), truncated; the rope parameters are
    rope_scaling, else rope_parameters, in rope()'s scaling form: rope_theta (from there, the config or
    GPT-NeoX's rotary_emb_base; 10000 without), the variant under either spelling of its key, the config's
    own original_max_position_embeddings first (Phi-3's: LongRoPE's factor is then max_position_embeddings
    over it), else the parameters', else max_position_embeddings, which dynamic NTK, YaRN and LongRoPE take
    too.  A config whose rope parameters sit in its text_config (Llama 4, Qwen2-VL) is read there.

    Long because the reading is one piece, in transformers' order of precedence (the map's budget).
    """
    if config is None:
        if head_dim is None:
            raise TypeError(f"{name} must be given, or a model's config, got neither")
        return head_dim, base, scaling
    given = [key for key, entry in (("base", base), ("scaling", scaling)) if entry is not None]
    if given:
        raise ValueError(f"config gives the base and the scaling: give {' and '.join(given)} or config, got both")
    items = getattr(config, "items", None)
    if callable(items):
        read: "Dict[str, object]" = dict(items())
    else:
        import os

        if not isinstance(config, (str, os.PathLike)):
            raise TypeError(
                f"config must be a path to a config.json or a dict, got {type(config).__name__} {_short(config)}"
            )
        import json

        try:
            with open(config, encoding="utf-8") as handle:
                read = json.load(handle)
        except OSError as error:
            raise ValueError(f"config must be a readable file, got {_short(str(config))}: {error.strerror}") from None
        except ValueError as error:
            raise ValueError(f"config must be a JSON file, got {_short(str(config))}: {error}") from None
        if not isinstance(read, dict):
            raise ValueError(f"config must hold a JSON object, got {type(read).__name__} in {_short(str(config))}")
    if not any(key in read for key in ("rope_scaling", "rope_parameters", "rope_theta", "head_dim")):
        inner = read.get("text_config")
        read = dict(inner) if isinstance(inner, dict) else read
    parameters = read.get("rope_scaling") or read.get("rope_parameters") or {}
    where = "config['rope_scaling']" if read.get("rope_scaling") else "config['rope_parameters']"
    if not isinstance(parameters, dict):
        raise ValueError(f"{where} must be a JSON object, got {_short(parameters)}")
    nested = [key for key, entry in parameters.items() if isinstance(entry, dict)]
    if nested:
        raise ValueError(
            f"{where} must hold one set of rope parameters, got one per layer type ({', '.join(nested)}):"
            f" give the one to check as {where}"
        )
    made = dict(parameters)
    # The first of each that the config gives, in transformers' order.
    theta = [
        x for x in (made.get("rope_theta"), read.get("rope_theta"), read.get("rotary_emb_base"), 10000) if x is not None
    ]
    made["rope_theta"] = theta[0]
    default = {"gpt_neox": 0.25, "phi": 0.5}.get(str(read.get("model_type")))
    shares = [
        made.pop("partial_rotary_factor", None),
        read.get("partial_rotary_factor"),
        read.get("rotary_pct"),
        default,
    ]
    partial = next((x for x in shares if x is not None), None)
    width = read.get("head_dim")
    if width is None:
        if read.get("hidden_size") is None or read.get("num_attention_heads") is None:
            raise ValueError("config must give head_dim, or hidden_size and num_attention_heads, got neither")
        hidden = _check_integer("config['hidden_size']", read["hidden_size"], 1)
        heads = _check_integer("config['num_attention_heads']", read["num_attention_heads"], 1)
        width, words = hidden // heads, f"hidden_size {hidden} // num_attention_heads {heads}"
    else:
        width = _check_integer("config['head_dim']", width, 2)
        words = f"head_dim {width}"
    if partial is not None and partial != 1:
        share = _real_number(partial)
        if share is None or not 0 < share <= 1:
            raise ValueError(f"config's partial_rotary_factor must be in (0, 1], got {_short(partial)}")
        width = int(width * share)  # as transformers truncates it
        words += f" times partial_rotary_factor {_short(partial)}"
    if width < 2 or width % 2:
        raise ValueError(f"config's rotated width ({words}) must be even and at least 2, got {width}")
    kind = made.get("rope_type", made.get("type", "default"))
    longest = read.get("max_position_embeddings")
    if kind in ("llama3", "yarn", "longrope"):
        if read.get("original_max_position_embeddings") is not None:
            made["original_max_position_embeddings"] = read["original_max_position_embeddings"]
            if kind == "longrope" and longest is not None:
                made.pop("factor", None)
        elif longest is not None:
            made.setdefault("original_max_position_embeddings", longest)
    if kind in ("dynamic", "yarn", "longrope") and longest is not None:
        made.setdefault("max_position_embeddings", longest)
    if "mrope_section" not in made:
        try:
            _Rope(width, None, "half", made)
        except (TypeError, ValueError) as error:
            raise type(error)(f"config's rope parameters as rope()'s scaling: {error}") from None
    if head_dim is not None and head_dim != width:
        raise ValueError(f"{name} must be the config's rotated width {width} ({words}), got {head_dim}")
    return width, None, made


def _rope_vectors(kind: str, x: object, seq_len: int, width: int, setup: "_Rope") -> "Optional[_Source]":
    """compare_rope's vectors before rotation: given for kind "rotated" only, of the table's shape, checked; read
    as the table is (_source: an array's or a file's a block of rows at a time)."""
    if kind != "rotated":
        if x is not None:
            raise ValueError(f"x is only for kind 'rotated', got kind {kind!r}")
        return None
    if x is None:
        raise ValueError("x must be given for kind 'rotated': the vectors before rotation, got None")
    vectors = _source(x, "x")
    if vectors.count != seq_len or vectors.width != width:
        raise ValueError(f"x must have the table's shape {seq_len} x {width}, got {vectors.count} x {vectors.width}")
    _check_vectors(vectors, setup)
    return vectors


def _check_vectors(vectors: "_Table", setup: "_Rope") -> None:
    """Refuse a vector element that is not finite, or a pair whose |x[a]| + |x[b]| is not (its rotation could overflow)."""
    for r, row in enumerate(vectors):
        for c, v in enumerate(row):
            if not -_INF < v < _INF:
                raise ValueError(f"x[{r}][{c}] must be finite, got {v!r}")
        for a, b in setup.partners():
            if not abs(row[a]) + abs(row[b]) < _INF:
                raise ValueError(
                    f"x[{r}] must have |x[a]| + |x[b]| finite for each pair, got {row[a]!r} and {row[b]!r} in columns {a}, {b}"
                )


# A cache's layouts: each pair's value in columns k and k + h (half), 2k and 2k + 1 (interleaved), or once in
# column k (pairs: a half-width cache, head_dim / 2 columns, as torchtune keeps it and Meta's freqs_cis holds it).
_ROPE_LAYOUTS = ("half", "interleaved", "pairs")


def _rope_head_dim(kind: str, layout: object, width: int) -> int:
    """The head_dim of a cache (kind "cos" or "sin") or vectors ("rotated") width columns wide in a layout.

    A cache in the pairs layout has one column per pair; vectors have two per pair in any layout, so the
    pairs layout is refused for them, and an odd width for a half or interleaved cache, saying which fits.
    """
    layout = _check_choice("layout", layout, _ROPE_LAYOUTS)
    if kind == "rotated" and layout == "pairs":
        raise ValueError(
            "layout 'pairs' is a cache's (one column per pair), not a vector's, got 'pairs':"
            " rotate vectors with layout 'interleaved' (Meta's view_as_complex pairs) or 'half'"
        )
    if kind != "rotated" and layout != "pairs" and width % 2:
        raise ValueError(
            f"a {layout}-layout cache must have an even number of columns (head_dim), got {width}:"
            " a cache with one column per pair (torchtune's, Meta's freqs_cis) takes layout='pairs'"
        )
    return 2 * width if layout == "pairs" else width


def _diagnose_rope(
    table: "_Source", request: "_RopeRequest", dtype: str, allowance: "_Allowance"
) -> "Tuple[str, Tuple[str, ...]]":
    """What explains a rotary table that fails: (the diagnosis in words, the cause keys).

    1. Values all held by a narrower format than dtype: ``output:FORMAT``.
    2. The cache computed in floating point explains the sample (as in 3): no cause.
    3. The candidates, in one list through the engine (_explanation): for a cos or sin cache checked without
       positions, the setups its values say (_rope_fit), each checked on every element by the default rule
       with its rope() call; then the known mistakes (_rope_candidates), each within _rope_candidate's
       allowance on every row.
    4. Where none explains a cos or sin cache checked without positions: several positions a row
       (_rope_axes_candidates), through the engine too.

    Long because its numbered steps run in order on one sample of rows.
    """
    setup, kind, vectors, positions = request.setup, request.kind, request.vectors, request.positions
    what = "rotated vectors" if kind == "rotated" else f"{kind} cache"
    name = setup.name(what)
    held = _narrowest_format(table, dtype)
    stored: "Tuple[str, ...]" = ()
    if held is not None:
        # Checked in the narrower format (no diagnosis): nothing fails the default rule.  The table read as it
        # is: its values are held's numbers, which reading them rounded to held would not change.
        if not _rope_comparison(table, request, held, None, None, False).failures:
            return "Diagnosis: " + _narrower_words(held, dtype), (f"output:{held}",)
        # Stored in the narrower format and wrong besides: the candidates are rounded to it too.
        dtype, stored = held, (f"output:{held}",)
    sample = _sample_rows(len(table))
    floats = allowance.positions

    def share(candidate: "_Candidate") -> float:
        reproduced, compared = _reproduced(table, candidate, sample, dtype)
        return reproduced / compared if compared else 0.0

    nothing = share(_rope_candidate("", (), len(table[0]), request, floats, {}, setup.attention.value, dtype))
    if nothing >= _EXPLAINED_SHARE:
        # The table agrees with the cache computed in floating point, sampled: no change would explain more.
        return (
            f"Diagnosis: {_percent(nothing)} of the sampled elements are within 2**-18 * (1 + |angle|) of the {name}"
            f" computed in floating point, plus an ulp of {dtype}: no mistake explains the failing elements better.",
            (),
        )
    stored_words = f", its values rounded to {dtype}" if stored else ""
    # The setups read from the table (one change or several), each checked on every element as a table's
    # conventions are, then the known mistakes: one list of candidates, scored, ranked and verified as a
    # table's (_scored, _explanation).
    candidates = []
    # The setups read as the kind asked for, then as the other kind: a sin cache checked as cos, or the reverse.
    other = "sin" if kind == "cos" else "cos"
    fits = (
        []
        if positions is not None or vectors is not None
        else [(told, _rope_fit(table, setup, told, dtype)) for told in (kind, other)]
    )
    for told, variant, read in [(told, variant, read) for told, found in fits for variant, read in found]:
        words, causes = _rope_story(setup, variant, len(table))
        if read is not None:
            # Positions read row by row: said as runs, when they are few.
            where = _runs_text([position for position, _ in read])
            words, causes = (words + [f"with {where}"], causes + ("positions",)) if where else ([], ())
        lead = f"the {setup.name(told + ' cache')}"
        if told != kind:
            lead, causes = f"{lead}, not the {kind} cache asked for" + ("," if words else ""), ("kind",) + causes
        elif not words:
            continue
        at = floats if read is None else [float(position) for position, _ in read]
        description = (f"{lead} {_join(words, ', ')}" if words else lead) + stored_words
        story = _RopeRequest(variant, told, None, read)
        candidate = _rope_candidate(
            description, causes + stored, len(table[0]), story, at, {}, variant.attention.value, dtype
        )

        def check(story: "_RopeRequest" = story) -> "_Comparison":
            return _rope_comparison(table, story, dtype, None, None, measure=False)

        candidate.local, candidate.check = True, check
        given = ("", ("", "")) if read is None else (", positions=positions", ("", " --positions X,X,..."))
        candidate.call = _rope_call(variant, len(table), told, dtype, *given)
        candidates.append(candidate)
    for text, causes, variant, steps, factor in _rope_candidates(setup):
        try:
            candidates.append(
                _rope_candidate(
                    f"the {name} {text}{stored_words}",
                    causes + stored,
                    len(table[0]),
                    _RopeRequest(variant, kind, vectors, positions),
                    floats,
                    steps,
                    factor,
                    dtype,
                )
            )
        except (ValueError, OverflowError, ZeroDivisionError):
            continue
    # The simplest story first: the fewest causes, then the order tried (a setup read before a mistake).
    candidates = [c for _, c in sorted(enumerate(candidates), key=lambda item: (len(item[1].causes), item[0]))]
    told, found = _explanation(table, candidates, None, dtype)
    if not found and positions is None and vectors is None:
        # No setup of one position a row explains the cache: several positions a row, by the same engine.
        several = _explanation(table, list(_rope_axes_candidates(table, kind, dtype, stored_words)), None, dtype)
        if several[1]:
            told, found = several[0], several[1] + stored
    return "Diagnosis: " + told, found


def _rope_axes_candidates(table: "_Source", kind: str, dtype: str, stored: str) -> "Iterator[_Candidate]":
    """The rotary embeddings of several positions a row a cos or sin cache's values say it follows, as the
    diagnosis's candidates (at most two), each told by element.  stored: the words for values rounded to
    dtype, a narrower format than the one asked for ('' if not).

    Read in turn from the values, none given (where each step lives):

    1. (_AxesGrid) The layout: which columns repeat (interleaved: 2k and 2k + 1; half: k and k + h) on most rows.
    2. (_AxesGrid.walk) The grid, walked back from the last row (its last cell): a step along the fastest axis
       changes only that axis's pairs, so its length is the first step back whose changed pairs are apart from
       those of the steps before; the next axis's length is read the same way with steps of that many
       rows.  The walk stops at row 0 or at a step that also changes an axis read before (rows before
       the grid: text tokens).  Each pair is labelled with the grid axis it turns with, or none (an
       axis that keeps its position, or a pair too slow to change in dtype).
    3. (_AxesGrid.speeds_read) Each labelled pair's frequency w along its axis's line of cells, whose positions are
       unknown: the values x(p) of cos or sin obey x(p - m) + x(p + m) = 2 cos(m w) x(p), so cos(m w) is their
       ratio (the median over the line), m doubled while m w is below 1.5, for precision.
    4. (_AxesGrid.splits, _AxesStory.bases) The splits the labels allow: runs of one label (the slow pairs after a
       run its own, a leading run of none an axis that keeps its position) as axes_dim's widths, each axis's
       frequencies base**(-j/n) from its first pair, or as M-RoPE's sections on one ladder base**(-k/h); labels
       that repeat every 3 (or 2) pairs as interleaved M-RoPE.  The sections models use come first where the
       labels allow them.  The base is fitted over every pair read, weighted by each reading's precision,
       every pair agreeing with it; the simplest number near it is tried, then the bases models use.
    5. (_AxesStory.fit) Each row's position on each axis, read as _rope_fit reads one (the slowest pair first;
       of its branches, the one whose values come nearest), then fitted: the grid's cells as an origin plus the
       cell's coordinate along the grid axis the axis's pairs turn with, times the axis's spacing (1; for
       axes_dim, what its first pair reads where that is p/q, q a power of two up to 16: HunyuanDiT's
       crop, half a position a cell), the rows before the grid as one
       row of positions repeated (Flux's text tokens) or p on every axis (text tokens before an image,
       Qwen2-VL's).  Each origin is the one most rows' readings say (an axis kept at one position, whose
       fast pairs alias, tries the other axes' origins and the rows before the grid's count too); a fit
       holds where all but _DAMAGE_ITEMS rows have the values its positions give.
    6. (_AxesStory.candidate) The setup with its words and call, checked on every element by the default rule
       (_rope_comparison) as the engine's candidates are: named when the table passes or fails in at most
       _DAMAGE_ITEMS elements, which are named.
    """
    grid = _AxesGrid(table, kind, dtype)
    if len(grid.axes) < 2:
        return
    splits, allowed = grid.splits()
    fitted = 0
    for split, sizes, pairs in splits:
        story = _AxesStory(grid, split, sizes, pairs)
        for base in story.bases():
            if fitted < 2 and story.fit(base):
                fitted += 1
                yield story.candidate(dtype, stored, allowed.get(split, []))


class _AxesGrid:
    """A cos or sin cache read as a grid of cells (steps 1 to 3 of _rope_axes_candidates): its layout, each row's
    value of each pair (values), the grid's axes fastest first as (rows a step, length, the pairs that turn
    with it), the rows before the grid (prefix), each pair's grid axis (label, -1 for none), and each
    labelled pair's frequency along its axis with its relative precision (speeds, spreads; read: the pairs
    read well enough to fit a law).  axes holds fewer than 2 where the table shows no grid of cells."""

    # The M-RoPE sections models use, with their words: the diagnosis tries them first.  Constant tuples, in flash.
    SECTIONS = (
        ((16, 24, 24), "Qwen2-VL's and Qwen2.5-VL's"),
        ((24, 20, 20), "Qwen3-VL's"),
        ((8, 12, 12), "GLM-4V's"),
    )

    def __init__(self, table: "_Source", kind: str, dtype: str) -> None:
        self.table, self.count, width = table, len(table), len(table[0])
        self.width, self.kind, self.h = width, kind, width // 2
        self.ulp = _power_of_two(1 - _DTYPES[dtype][0])
        self.axes: "List[Tuple[int, int, Set[int]]]" = []
        self.layout, self.prefix, self.label, self.values = "half", 0, [-1] * self.h, [[0.0]]
        self.speeds, self.spreads, self.read = [0.0] * self.h, [_INF] * self.h, []
        if self.count < 8 or width % 2 or kind not in ("cos", "sin"):
            return
        h, near, sample = self.h, _Fit.near(dtype), _sample_rows(self.count)
        # 1. The layout: all but an eighth of the sampled rows repeat its columns (a damaged element spoils its row's).
        for layout in ("interleaved", "half"):
            again = 1 if layout == "interleaved" else h
            columns = [2 * k if layout == "interleaved" else k for k in range(h)]
            if (
                sum(1 for r in sample if any(abs(table[r][c] - table[r][c + again]) > near for c in columns))
                <= len(sample) // 8
            ):
                break
        else:
            return
        if not all(-1.5 < table[r][c] < 1.5 for r in sample for c in columns):
            return  # not finite, or not a cos or sin
        self.layout = layout
        if self.walk(table, columns):
            self.values = [[row[c] for c in columns] for row in table]
            self.speeds, self.spreads = self.speeds_read()
            # The pairs read to 0.1%, or to 32 ulps of a narrow format (bfloat16's: 25%, its fit made of many pairs).
            self.read = [k for k in range(h) if self.spreads[k] < max(1e-3, 32 * self.ulp) and self.speeds[k] > 0.0]

    def walk(self, table: "_Source", columns: "List[int]") -> bool:
        """2. The grid's axes, fastest first, and each pair's label; whether they make a grid of 2 or 3 axes.
        Where every pair turns along the first, the rows are one position each: a long cache is left after a
        few steps."""
        last, h = self.count - 1, self.h

        def changed(r: int) -> "Set[int]":
            return set(k for k, c in enumerate(columns) if table[r][c] != table[last][c])

        axes = self.axes
        stride, turning, steps = 1, changed(last - 1), 2
        before: "Set[int]" = set()
        while 0 < len(turning) < h:
            r = last - steps * stride
            moved = changed(r) if r >= 0 else set()
            if moved and not moved & before and moved & turning:
                turning |= moved  # further along the same axis: its slower pairs join
                steps += 1
                continue
            axes.append((stride, steps, turning))
            if not moved or moved & before or len(axes) == 3:
                break  # the grid's first cell: row 0, or rows before the grid
            before |= turning
            stride, turning, steps = stride * steps, moved, 2
        cells = 1
        for _, n, _ in axes:
            cells *= n
        self.prefix = self.count - cells
        for g, (_, _, turned) in enumerate(axes):
            for k in turned:
                if self.label[k] >= 0:
                    del axes[:]  # a pair turning with two axes: no split explains it
                    return False
                self.label[k] = g
        if len(axes) < 2 or self.prefix < 0:
            del axes[:]
            return False
        return True

    def speeds_read(self) -> "Tuple[List[float], List[float]]":
        """3. Each labelled pair's frequency, and its relative precision: each value is within half an ulp of
        itself, so the ratio is within (|x(p - m)| + |x(p + m)|) ulp / (4 |x(p)|) + ulp / 2 <= 2.5 ulps
        (|x(p)| >= 1/4 taken), m w within 4 ulps / sin(m w), and w within 4 ulps / (m w sin(m w)) of itself."""
        h, last, ulp = self.h, self.count - 1, self.ulp
        speeds, spreads = [0.0] * h, [_INF] * h
        for k in range(h):
            if self.label[k] < 0:
                continue
            step, n, _ = self.axes[self.label[k]]
            line = [self.values[last - i * step][k] for i in range(n)]
            m = 1
            while 2 * m < n:
                ratios = sorted(
                    (line[i - m] + line[i + m]) / (2 * line[i]) for i in range(m, n - m) if abs(line[i]) >= 0.25
                )
                if not ratios:
                    break
                angle = math.acos(min(1.0, max(-1.0, ratios[len(ratios) // 2])))
                if angle > 2.5 or (speeds[k] and abs(angle - m * speeds[k]) > 0.5):
                    break  # near a half turn, or past it: the reading before stands
                if angle > 0.0:  # a ratio of 1 reads nothing: a longer step may
                    speeds[k], spreads[k] = angle / m, 4 * ulp / (math.sin(angle) * angle)
                if angle > 1.5:
                    break
                m *= 2
        return speeds, spreads

    def splits(self) -> "Tuple[List[Tuple[str, List[int], List[Tuple[int, float]]]], Dict[str, List[List[int]]]]":
        """4. The splits the grid's labels allow, each as (kind, pairs per axis, each pair's (axis, exponent e: its
        frequency base**-e)), and each kind's sections the labels allow, as each pair's axis."""
        label, h = self.label, self.h
        splits: "List[Tuple[str, List[int], List[Tuple[int, float]]]]" = []
        allowed: "Dict[str, List[List[int]]]" = {}
        runs: "List[List[int]]" = []  # [label (-1: none), first pair, pairs]
        for k in range(h):
            if runs and label[k] in (-1, runs[-1][0]):
                runs[-1][2] += 1
            else:
                runs.append([label[k], k, 1])
        sections: "List[Tuple[str, List[int]]]" = []
        if len(set(run[0] for run in runs)) == len(runs):
            sizes = [run[2] for run in runs]
            splits.append(("axes_dim", sizes, [(a, j / n) for a, (_, _, n) in enumerate(runs) for j in range(n)]))
            sections += [("", list(s)) for s, _ in self.SECTIONS if list(s) != sizes] + [("", sizes)]
        for n in (3, 2):
            # The least sections the labels allow: axis a (a > 0) takes pair k = a, and each later pair of its residue
            # that turns as pair a does (past its section, a pair is the first axis's: it turns as that does).
            least = [max([k // n + 1 for k in range(a, h, n) if label[k] == label[a] >= 0] or [1]) for a in range(n)]
            minimal = [h - sum(least[1:])] + least[1:]
            # Known sections nearest the least first (fewest pairs given to an axis where none turned), then the least.
            tried = sorted((list(s) for s, _ in self.SECTIONS), key=lambda s: sum(s[1:]))
            sections += [("interleaved", s) for s in tried + ([] if minimal in tried else [minimal])]
        for interleaved, section in sections:
            n = len(section)
            if interleaved:
                owner = [k % n if k % n and k < n * section[k % n] else 0 for k in range(h)]
            else:
                owner = [a for a, pairs in enumerate(section) for _ in range(pairs)]
            # Allowed where each axis turns with one grid axis at most, and no two with the same.
            axis_of: "Dict[int, int]" = {}
            if (
                sum(section) == h
                and min(section) > 0
                and all(axis_of.setdefault(label[k], owner[k]) == owner[k] for k in range(h) if label[k] >= 0)
                and len(set(axis_of.values())) == len(axis_of)
            ):
                splits.append(("mrope" + interleaved, section, [(owner[k], k / h) for k in range(h)]))
                allowed.setdefault("mrope" + interleaved, []).append(owner)
        return splits, allowed


class _AxesStory:
    """One split of a grid read (_AxesGrid), fitted (steps 4 to 6 of _rope_axes_candidates): its bases, each row's
    positions on each axis with that base, and the words and call of the setup, checked on every element.

    Positions are counted in each axis's units, 1 / q of its spacing p/q: whole numbers."""

    def __init__(self, grid: "_AxesGrid", split: str, sizes: "List[int]", pairs: "List[Tuple[int, float]]") -> None:
        self.grid, self.split, self.sizes, self.pairs = grid, split, sizes, pairs
        n = self.n = len(sizes)
        # Each axis's spacing between neighbouring cells, p/q positions (q a power of two, so that the positions
        # are floats exactly): 1, or, for axes_dim, whose first frequency is 1, what its first pair reads
        # (HunyuanDiT's crop: half a position a cell).
        self.spacing: "List[_Fraction]" = [(1, 1)] * n
        speeds, spreads = grid.speeds, grid.spreads
        for axis in range(n if split == "axes_dim" else 0):
            first = [k for k, (a, _) in enumerate(pairs) if a == axis][0]
            if first in grid.read and abs(speeds[first] - 1) > 8 * spreads[first]:
                within = 8 * spreads[first] * speeds[first]
                self.spacing[axis] = _Fit.fraction_near(speeds[first], within, (2, 4, 8, 16)) or (1, 1)
        # The grid's cells: each axis at its origin plus the cell's coordinate along the grid axis its pairs
        # turn with (none: the origin on every cell).
        self.dims: "List[Optional[int]]" = []
        for axis in range(n):
            turned = set(grid.label[k] for k, (a, _) in enumerate(pairs) if a == axis and grid.label[k] >= 0)
            self.dims.append(turned.pop() if len(turned) == 1 else None)
        self.base: object = None
        self.ladders: "List[List[Tuple[float, int]]]" = []
        self.readings: "List[List[Tuple[float, float]]]" = []
        self.origin: "List[int]" = []
        self.start: "List[int]" = []
        self.text = False

    def bases(self) -> "List[object]":
        """The bases to try: ln w_k = -e_k ln(base) on every pair read, each reading within spreads[k] of ln w_k;
        ln(base) fitted by least squares weighted 1 / spreads[k]**2, within 1 / sqrt(sum (e_k / spreads[k])**2).
        Every pair read agrees with it; then the simplest number near it and the bases models use (and 256,
        HunyuanVideo's), nearest first.  [] where no pair is read or one disagrees."""
        speeds, spreads, pairs = self.grid.speeds, self.grid.spreads, self.pairs
        unit = [self.spacing[a][0] / self.spacing[a][1] for a, _ in pairs]  # each pair's, to divide its reading by
        usable = [k for k in self.grid.read if pairs[k][1] > 0.0]
        if not usable:
            return []
        weight = sum((pairs[k][1] / spreads[k]) ** 2 for k in usable)
        log_base = sum(-math.log(speeds[k] / unit[k]) * pairs[k][1] / spreads[k] ** 2 for k in usable) / weight
        within = 4 / math.sqrt(weight)
        if not all(
            abs(math.log(speeds[k] / unit[k]) + pairs[k][1] * log_base) <= 8 * spreads[k] + 1e-6 for k in self.grid.read
        ):
            return []
        bases: "List[object]" = [_number(_rational("base", _Fit.simplest(math.exp(log_base), within)))]
        for model in sorted(_BASES + (256,), key=lambda x: abs(math.log(x) - log_base)):
            if abs(math.log(model) - log_base) <= within and model not in bases:
                bases.append(model)
        return bases

    def fit(self, base: object) -> bool:
        """5. Each row's position on each axis with this base; whether all but _DAMAGE_ITEMS rows have the
        values the positions fitted give."""
        grid, n, spacing, prefix, count = self.grid, self.n, self.spacing, self.grid.prefix, self.grid.count
        b = _to_float(_rational("base", base))
        self.base = base
        # Each axis's pairs, slowest first.
        self.ladders = [
            sorted((math.pow(b, -e), k) for k, (a, e) in enumerate(self.pairs) if a == axis) for axis in range(n)
        ]
        self.readings = [[self.reading(row, ladder) for ladder in self.ladders] for row in grid.values]
        self.origin = [
            self.nearest(range(prefix, count), a, lambda r: spacing[a][0] * self.coordinate(r, self.dims[a]))
            for a in range(n)
        ]
        # An axis kept at one position over the grid whose pairs are all fast reads it modulo their turns:
        # the other axes' origins and the count of rows before the grid (Qwen2-VL's image after its text
        # tokens) are tried too, the one whose values fit the most rows kept (the one read, of as many).
        for a in range(n):
            if self.dims[a] is None and spacing[a] == (1, 1):
                options = [self.origin[a]] + [self.origin[o] for o in range(n) if o != a and spacing[o] == (1, 1)]
                options.append(prefix)
                fits: "List[Tuple[int, int]]" = []
                for option in options:
                    self.origin[a] = option
                    fits.append((self.misfits(range(prefix, count), self.at), len(fits)))
                self.origin[a] = options[min(fits)[1]]
        # The rows before the grid: one row of positions repeated, or p + o on every axis; the one fewer rows misfit.
        fitted: "List[Tuple[int, bool, List[int]]]" = []
        for text in (False, True) if prefix else ():
            if text and any(q > 1 for _, q in spacing):
                continue  # text tokens' positions are whole
            start = [self.nearest(range(prefix), a, (lambda r: r) if text else (lambda r: 0)) for a in range(n)]
            if not text or len(set(start)) == 1:
                fitted.append((self.misfits(range(prefix), lambda r, a: start[a] + (r if text else 0)), text, start))
        wrong, self.text, self.start = min(fitted, key=lambda fit: fit[0]) if fitted else (0, False, [])
        return wrong + self.misfits(range(prefix, count), self.at) <= _DAMAGE_ITEMS

    def candidate(self, dtype: str, stored: str, allowed: "List[List[int]]") -> "_Candidate":
        """6. The setup fitted, with its words and call, as a candidate told by element: its rows streamed in
        float64, its allowance loose (_Candidate.loosely), its check every element's by the default rule.

        Long because the words are one sentence, built in the order it is read: the split, the positions (the
        rows before the grid, then the grid's cells), the damage, the call and its command line.
        """
        grid, n, prefix, count = self.grid, self.n, self.grid.prefix, self.grid.count
        start, text, sizes = self.start, self.text, self.sizes
        positions = [[self.position(start[a] + (r if text else 0), a) for a in range(n)] for r in range(prefix)]
        positions += [[self.position(self.at(r, a), a) for a in range(n)] for r in range(prefix, count)]
        if self.split == "axes_dim":
            scaling: "Optional[Dict[str, object]]" = None
            axes_dim: "Optional[List[int]]" = [2 * s for s in sizes]
        else:
            scaling, axes_dim = {"mrope_section": sizes}, None
            if self.split == "mropeinterleaved":
                scaling["mrope_interleaved"] = True
        base, layout, kind = self.base, grid.layout, grid.kind
        request = _RopeRequest(_Rope(grid.width, base, layout, None), kind, None, None)
        request.axes = _rope_axes(grid.width, base, layout, scaling, axes_dim, positions, count, "the table's rows")
        # The words: the split, the positions (rows before the grid, the grid), the call.
        axes = grid.axes
        letters = ("j", "i", "t")[: len(axes)]
        shape = " x ".join(str(axes[g][1]) for g in reversed(range(len(axes))))
        cell = "[" + ", ".join(self.term(a, letters) for a in range(n)) + "]"
        loops = " ".join(f"for {letters[g]} in range({axes[g][1]})" for g in reversed(range(len(axes))))
        expression = f"[{cell} {loops}]"
        words = f"the cells of a {shape} grid at {cell.replace('[', '(').replace(']', ')')}, {letters[0]} fastest"
        if prefix and text:
            rows = f"range({start[0]}, {start[0] + prefix})" if start[0] else f"range({prefix})"
            expression = f"[[{', '.join(['p'] * n)}] for p in {rows}] + " + expression
            words = (
                f"{prefix} rows at ({', '.join(['p'] * n)}) for p = {start[0]} to {start[0] + prefix - 1}, then "
                + words
            )
        elif prefix:
            shown = ", ".join(str(self.position(x, a)) for a, x in enumerate(start))
            expression = f"[[{shown}]] * {prefix} + " + expression
            words = f"{prefix} rows at ({shown}), then " + words
        # Named as compare_rope names it with these keywords: the setup's name and _rope_axes' words for the split.
        what = request.setup.name(f"{kind} cache")[:-1] + f", {request.axes[3] if request.axes else ''})"
        made: "List[Any]" = [-1, None, None]  # the last row made, and the stream it came from

        def make_row(r: int) -> "List[float]":
            if made[2] is None or r < made[0]:  # rows are asked for in order: a new stream where they go back
                made[:] = [-1, None, request.rows(count, False, "float64")]
            while made[0] < r:
                made[0], made[1] = made[0] + 1, next(made[2])
            row: "List[float]" = made[1]
            return row

        candidate = _Candidate(
            f"the {what} with a position per axis on each row{stored}: {words}", make_row, None, count, local=True
        )
        candidate.note, candidate.causes = self.sections_words(allowed), ("axes",)
        plain = not prefix and not any(self.origin) and self.spacing == [(1, 1)] * n
        command: "Optional[Tuple[str, str]]" = None
        if plain and n == len(axes) and self.dims == list(reversed(range(n))):
            # The command line's grid: its cells, from 0, the last axis fastest, one position per axis.
            import json

            flag = f" --rope-scaling '{json.dumps(scaling)}'" if axes_dim is None else " --axes-dim "
            command = (f"{shape.replace(' x ', 'x')} {grid.width}", flag + ",".join(str(w) for w in axes_dim or ()))
        given = f", axes_dim={tuple(axes_dim)}" if axes_dim else f", scaling={scaling!r}"
        candidate.call = _rope_call(request.setup, count, kind, dtype, f", positions={expression}{given}", command)
        candidate.check = lambda: _rope_comparison(grid.table, request, dtype, None, None, measure=False)
        return candidate.loosely(dtype)

    def term(self, a: int, letters: "Tuple[str, ...]") -> str:
        """Axis a's position on a cell, as an expression in the grid's letters."""
        g, (p, q) = self.dims[a], self.spacing[a]
        if g is None:
            return str(self.position(self.origin[a], a))
        moved = letters[g] if p == 1 else f"{p} * {letters[g]}"
        moved += "" if q == 1 else f" / {q}"
        return moved if not self.origin[a] else f"{self.position(self.origin[a], a)} + {moved}"

    def sections_words(self, allowed: "List[List[int]]") -> str:
        """Pairs of one value on every row (too slow to turn in dtype, or at one position) show no axis: where
        sections that differ only there fit the other pairs as well, the words that say which were chosen."""
        h, values = self.grid.h, self.grid.values
        still = [k for k in range(h) if all(row[k] == values[0][k] for row in values)]
        chosen = [a for a, _ in self.pairs]
        if not any(o != chosen and all(o[k] == chosen[k] or k in still for k in range(h)) for o in allowed):
            return ""
        groups: "List[List[int]]" = []
        for k in still:
            if groups and k == groups[-1][1] + 1:
                groups[-1][1] = k
            else:
                groups.append([k, k])
        whose = [name for s, name in self.grid.SECTIONS if list(s) == self.sizes]
        shown = _join([str(a) if a == b else str(a) + " to " + str(b) for a, b in groups], ", ")
        held = set(values[0][k] for k in still)
        return (
            f"pairs {shown} are "
            + (f"{values[0][still[0]]!r} on every row" if len(held) == 1 else "each one value on every row")
            + ", which shows no axis, so the sections are not read from the table: these are "
            + (f"{whose[0]}, which the other pairs allow" if whose else "the fewest the other pairs allow")
        )

    def reading(self, row: "List[float]", ladder: "List[Tuple[float, int]]") -> "Tuple[float, float]":
        """A row's position on one axis, and its error: of the slowest pair's branches, the one whose values come
        nearest, unwrapped through the faster pairs."""
        kind, wave = self.grid.kind, math.cos if self.grid.kind == "cos" else math.sin
        best = (_INF, 0.0, _INF)  # (how far its values are, the position, its error)
        w0, k0 = ladder[0]
        x0 = min(1.0, max(-1.0, row[k0]))
        first = math.acos(x0) if kind == "cos" else math.asin(x0)
        for start in (first,) if kind == "cos" else (first, math.pi - first):
            # A reading's angle is within an ulp / sqrt(1 - x**2): the position within ulp / quality.
            estimate, quality = _Fit.unwrapped(kind, [(w, row[k]) for w, k in ladder], start / w0)
            far = max(abs(wave(estimate * w) - row[k]) for w, k in ladder)
            if far < best[0]:
                best = (far, estimate, self.grid.ulp / quality if quality else _INF)
        return best[1], best[2]

    def misfits(self, rows: "Sequence[int]", at: "Callable[[int, int], int]") -> int:
        """The rows where some axis's values are not those of the position given: each pair's value within
        2**-18 (1 + |angle|) of the wave (a framework's float32 arithmetic, as the diagnosis's sample allows)
        plus 2 ulps of itself.  Values, not readings: a fast axis's reading aliases past half a turn of its
        slowest pair (text tokens' long runs), its values do not."""
        wave, ulp, wrong = math.cos if self.grid.kind == "cos" else math.sin, self.grid.ulp, 0
        for r in rows:
            row = self.grid.values[r]
            for a, ladder in enumerate(self.ladders):
                at_r = at(r, a) / self.spacing[a][1]
                if any(
                    abs(wave(at_r * w) - row[k]) > _power_of_two(-18) * (1 + abs(at_r * w)) + 2 * ulp * abs(row[k])
                    for w, k in ladder
                ):
                    wrong += 1
                    break
        return wrong

    def nearest(self, rows: "Sequence[int]", a: int, offset: "Callable[[int], int]") -> int:
        """The units most of axis a's readings precise to a quarter unit say, less each row's offset (a damaged
        row, an aliased reading are outvoted); the most precise reading's where none is."""
        q = self.spacing[a][1]
        votes: "Dict[int, int]" = {}
        for r in rows:
            x, error = self.readings[r][a]
            if error * q < 0.25:
                units = int(round(x * q)) - offset(r)
                votes[units] = votes.get(units, 0) + 1
        if votes:
            return max(votes, key=lambda units: votes[units])
        r = min(rows, key=lambda r: self.readings[r][a][1])
        return int(round(self.readings[r][a][0] * q)) - offset(r)

    def at(self, r: int, a: int) -> int:
        """Row r's position on axis a, in the axis's units, as the grid's cells fit it."""
        return self.origin[a] + self.spacing[a][0] * self.coordinate(r, self.dims[a])

    def coordinate(self, r: int, g: "Optional[int]") -> int:
        """Row r's cell's coordinate along grid axis g (None: 0)."""
        axes = self.grid.axes
        return 0 if g is None else (r - self.grid.prefix) // axes[g][0] % axes[g][1]

    def position(self, units: int, a: int) -> "Union[int, float]":
        """A position counted in axis a's units, as a position."""
        return units if self.spacing[a][1] == 1 else units / self.spacing[a][1]


def _rope_axes(
    head_dim: int,
    base: object,
    layout: object,
    scaling: object,
    axes_dim: object,
    positions: object,
    count: int,
    rows_name: str,
) -> "Optional[_RopeAxes]":
    """A rotary embedding of several positions a row, checked; None for one position a row.

    Two kinds.  ``axes_dim`` (Flux's, HunyuanVideo's, CogVideoX's, timm's and rotary-embedding-torch's
    axial RoPE): axis a takes axes_dim[a] columns, a rotary embedding of that width, its own frequencies
    base**(-2j/axes_dim[a]), its pairs after the previous axis's.  ``scaling['mrope_section']`` (Qwen2-VL's
    M-RoPE): one embedding of head_dim, each pair k at the position of the axis whose section holds it; with
    ``scaling['mrope_interleaved']`` (Qwen3-VL's), pair k is axis a's when k % n == a and k < n * section[a],
    else the first axis's.  ``positions`` holds a row of n positions (one per axis) for each of the count
    rows of rows_name ("seq_len": at least count of them).

    Returns each axis's (setup, positions, the columns of x its vectors take), each column of a cache and of
    rotated vectors as (axis, its column there), and the split in words.

    Long because the two kinds share their checks, their rows of positions and their columns' map, in order.
    """
    plain: "Dict[str, object]" = {}
    items = getattr(scaling, "items", None)
    if callable(items):
        plain = dict(items())
    section, interleaved = plain.pop("mrope_section", None), plain.pop("mrope_interleaved", None)
    if plain.get("rope_type", plain.get("type")) == "mrope":  # HF's name for M-RoPE's default frequencies
        plain.pop("type", None)
        plain["rope_type"] = "default"
    if axes_dim is None and section is None:
        if interleaved is not None:
            raise ValueError(
                f"scaling['mrope_interleaved'] goes with scaling['mrope_section'], got {_short(interleaved)}"
            )
        return None
    whole = _Rope(head_dim, base, layout, plain if callable(items) else scaling)
    name, given = ("axes_dim", axes_dim) if section is None else ("scaling['mrope_section']", section)
    if axes_dim is not None and section is not None:
        raise ValueError(f"give axes_dim or scaling['mrope_section'], not both, got axes_dim={_short(axes_dim)}")
    widths = [_check_integer(name, w, 1) for w in _items(given, f"{name} must be a sequence of integers")]
    total, h = (whole.head_dim, whole.pairs) if section is None else (whole.pairs, whole.pairs)
    if len(widths) < 2 or sum(widths) != total or (section is None and any(w % 2 for w in widths)):
        kind = "even widths" if section is None else "pair counts"
        raise ValueError(f"{name} must be 2 or more {kind} summing to {total}, got {_short(given)}")
    n = len(widths)
    mixed = _check_flag("scaling['mrope_interleaved']")(interleaved or False)
    # Each pair's (axis, its pair in the axis's embedding).
    pairs: "List[_AxisColumn]" = []
    for a, w in enumerate(widths):
        if section is None:
            pairs += [(a, j) for j in range(w // 2)]
        elif not mixed:
            pairs += [(a, len(pairs) + j) for j in range(w)]
    if mixed:
        pairs = [(k % n if k % n and k < n * widths[k % n] else 0, k) for k in range(h)]
    setups = [_Rope(w, base, layout, plain) if section is None else whole for w in widths]
    # Each row's positions: count rows of n numbers (an array's tolist(), HF's position_ids[:, 0].T).
    iterator = _items(positions, f"positions must be rows of {n} positions (one per axis) for {name}")
    table = []
    for r, row in enumerate(iterator):
        if not isinstance(row, (tuple, list)):
            raise TypeError(
                f"positions[{r}] must be a row of {n} positions, one per axis of {name}, got {type(row).__name__} {_short(row)}"
            )
        if len(row) != n:
            raise ValueError(f"positions[{r}] must be {n} positions, one per axis of {name}, got {_short(row)}")
        table.append(row)
    if rows_name != "seq_len" and len(table) != count:
        raise ValueError(f"positions must have one row per row of {rows_name} ({count}), got {len(table)}")

    # Each column of a cache (or vectors, "rotated") as (axis, its column in the axis's cache or vectors), and
    # each axis's vectors' columns, as the table's columns.
    def columns(kind: str) -> "List[_AxisColumn]":
        if whole.layout == "pairs" and kind != "rotated":
            return pairs[:]
        if whole.layout == "interleaved":
            return [(pairs[c // 2][0], 2 * pairs[c // 2][1] + c % 2) for c in range(2 * h)]
        return [(pairs[c % h][0], pairs[c % h][1] + c // h * setups[pairs[c % h][0]].pairs) for c in range(2 * h)]

    rotated = columns("rotated")
    # Axis a's vectors: x's columns of its pairs, in its order; all of x for one embedding shared (its other
    # pairs' rotations are not taken).
    inputs = [
        list(range(2 * h))
        if section is not None
        else [c for c, _ in sorted(enumerate(rotated), key=lambda item: item[1]) if rotated[c][0] == axis]
        for axis in range(n)
    ]
    per_axis = [
        (setup, _rope_positions([row[a] for row in table], count, rows_name), inputs[a])
        for a, setup in enumerate(setups)
    ]
    shown = ", ".join(str(w) for w in widths)
    words = f"axes_dim {shown}" if section is None else f"M-RoPE sections {shown}" + (", interleaved" if mixed else "")
    return per_axis, columns("cos"), rotated, words


def _rope_comparison(
    table: "_Source",
    request: "_RopeRequest",
    dtype: str,
    atol: "Optional[float]",
    ulps: "Optional[float]",
    measure: bool = True,
) -> "_Comparison":
    """_tally's tally for a rotary table (read rounded to table.rounding) against the exact rotary values.

    A cos or sin cache of one position a row in a narrow format takes the fast references with their proven
    bound (_LawTable); rotated vectors and several positions a row, the exact rows.
    """
    count = table.count
    if request.axes is None:
        allowance = request.setup.default_allowance(count, request.positions, dtype, request.vectors)
    else:
        # Each axis's allowance at its own positions (and its vectors' weights), each column its axis's.
        parts, chosen = request.split()
        allowances = [part.setup.default_allowance(count, part.positions, dtype, part.vectors) for part in parts]
        allowance = _axes_allowance(allowances, chosen, lambda r: [r] * len(parts), dtype)
    comparison = _Comparison(allowance, dtype, atol, ulps, measure)

    def exact_rows(rounding: str, first: int) -> "Iterator[List[float]]":
        # The whole cache's, from row first: a dynamic scaling's frequencies depend on the last position.
        rows = request.rows(count, True, rounding)
        for _ in range(first):
            next(rows)
        return rows

    fast: "Optional[_LawTable]" = None  # a cos or sin cache of one position a row: by its law
    if request.axes is None and request.kind != "rotated":
        setup, given, h = request.setup, request.positions, request.setup.pairs
        code = _COSINE if request.kind == "cos" else _SINE
        fast = (
            setup.law(_last_position(given, count)),
            [(k, h) for k in range(h)],
            [(code, k) for k in setup.columns()],
            setup.attention,
            allowance.positions,
            (lambda r: (r, 1)) if given is None else given.__getitem__,
        )
    return comparison.tally(table, exact_rows, fast)


class _RopeRequest:
    """A rotary table as a call asks for it, passed whole: the embedding, the kind ("cos", "sin" or
    "rotated"), the vectors before rotation (for "rotated" only) and the positions (None: 0, 1, 2, ...).
    """

    def __init__(
        self,
        setup: "_Rope",
        kind: str,
        vectors: "Optional[_Table]",
        positions: "Optional[List[_Fraction]]",
    ) -> None:
        self.setup, self.kind, self.vectors, self.positions = setup, kind, vectors, positions
        #: Several positions a row (_rope_axes), or None: then setup and positions are the first axis's.
        self.axes: "Optional[_RopeAxes]" = None

    def rows(self, count: int, exact: bool, dtype: str) -> "Iterator[List[float]]":
        """The rows of the cos or sin cache, or of the rotated vectors: what the command line prints."""
        setup, positions = self.setup, self.positions
        if self.axes is not None:
            # Each axis's rows, each column taken from its axis's.
            parts, chosen = self.split()
            made = [part.rows(count, exact, dtype) for part in parts]
            return ([row[a][c] for a, c in chosen] for row in zip(*made))
        if self.kind == "rotated":
            assert self.vectors is not None
            return _rope_pairs(setup, len(self.vectors), positions, exact, dtype, self.vectors)
        h = setup.pairs
        if self.kind == "cos":  # not slice(): MicroPython cannot make slice objects
            return (setup.arrange(row[:h]) for row in _rope_pairs(setup, count, positions, exact, dtype))
        return (setup.arrange(row[h:]) for row in _rope_pairs(setup, count, positions, exact, dtype))

    def split(self) -> "Tuple[List[_RopeRequest], List[_AxisColumn]]":
        """Several positions a row: each axis's table asked for alone (its vectors: x's columns its pairs take),
        and each column of the table as (axis, its column there)."""
        assert self.axes is not None
        per_axis, cache_columns, vector_columns, _ = self.axes
        x = self.vectors
        parts = [
            _RopeRequest(axis, self.kind, None if x is None else [[row[c] for c in inputs] for row in x], given)
            for axis, given, inputs in per_axis
        ]
        return parts, vector_columns if self.kind == "rotated" else cache_columns


def _rope_pairs(
    setup: "_Rope",
    count: int,
    positions: "Optional[List[_Fraction]]",
    exact: bool,
    dtype: str,
    x: "Optional[_Table]" = None,
) -> "Iterator[List[float]]":
    """Rows of [cos of each pair..., sin of each pair...], times the attention factor A, rounded to dtype; given
    x (count rows), x's rows rotated: out[a] = A (x[a] cos - x[b] sin), out[b] = A (x[b] cos + x[a] sin) for each
    pair (a, b), exactly: each element from the row's fixed-point cos and sin (_rotated_element)."""
    h, partners = setup.pairs, setup.partners()
    last = _last_position(positions, count)

    def turned(row: "List[float]", values: "List[float]") -> "List[float]":
        out = [0.0] * (2 * h)
        for k, (a, b) in enumerate(partners):
            c, s = values[k], values[h + k]
            out[a] = row[a] * c - row[b] * s
            out[b] = row[b] * c + row[a] * s
        return out if dtype == "float64" else [_round_float(v, dtype) for v in out]

    if not exact:
        fast = _rope_fast_pairs(setup, count, positions, last, dtype if x is None else "float64")
        return fast if x is None else (turned(row, values) for row, values in zip(x, fast))
    law = setup.law(last)
    exponents = [(k, h) for k in range(h)]
    plan = [(_COSINE, k) for k in range(h)] + [(_SINE, k) for k in range(h)]
    fixed = _fixed_rows_of(positions, count, plan, exponents, law)
    if x is None:
        return _finish_rows(fixed, plan, exponents, law, setup.attention, dtype)

    def turned_exactly(row: "List[float]", position: "_Fraction", pairs: "List[int]", error: int) -> "List[float]":
        out = [0.0] * (2 * h)
        for k, (a, b) in enumerate(partners):
            c, s = pairs[k], pairs[h + k]
            out[a] = _rotated_element(row[a], row[b], -1, c, s, error, position, k, law, setup.attention, dtype)
            out[b] = _rotated_element(row[b], row[a], 1, c, s, error, position, k, law, setup.attention, dtype)
        return out

    return (turned_exactly(row, *made) for row, made in zip(x, fixed))


def _rope_fast_pairs(
    setup: "_Rope", count: int, positions: "Optional[List[_Fraction]]", last: "_Fraction", dtype: str
) -> "Iterator[List[float]]":
    frequencies = setup.float_frequencies(last)
    factor = setup.attention.value
    floats = [float(p) for p in range(count)] if positions is None else [_to_float(p) for p in positions]
    largest = max(map(abs, floats)) * max(frequencies) if floats else 0.0
    if not largest < _INF:
        raise ValueError(
            f"angles p * w_k must be finite in float64, got positions up to {max(map(abs, floats))!r}; exact=True has no such limit"
        )
    cos, sin = math.cos, math.sin
    for p in floats:
        angles = [p * w for w in frequencies]
        row = list(map(cos, angles))
        row += map(sin, angles)
        if factor != 1.0:
            row = [x * factor for x in row]
        yield row if dtype == "float64" else [_round_float(x, dtype) for x in row]


def _rotated_element(
    first: float,
    second: float,
    sign: int,
    c: int,
    s: int,
    error: int,
    position: "_Fraction",
    k: int,
    law: "_RopeFrequencies",
    scale: "_OutputScale",
    dtype: str,
) -> float:
    """A (first cos + sign second sin), correctly rounded: from the row's cos and sin, else by the Ziv loop.

    first and second are floats, m 2**q exactly; on their common grid 2**q
    they are integers X1, X2, and with cos and sin each within ``error``
    units of P bits the sum is within (|X1| + |X2|) error units of P - q
    fraction bits.  At position 0 the value is A first, rational or not as
    A is.  Otherwise it is Re((X1 + i sign X2) e^(i theta)) for theta != 0
    algebraic; were that rational, e^(i theta) would be a root of a
    quadratic with algebraic coefficients, which Lindemann-Weierstrass
    forbids: the value is irrational (times A, transcendental as far as the
    loop is concerned), so the loop ends.
    """
    if first == 0.0 and second == 0.0:
        return 0.0
    # first = X1 2**q and second = X2 2**q, integers, exactly.
    parts = []
    for x in (first, second):
        if x == 0.0:
            parts.append((0, 0))
        else:
            m, e = _float_parts(-x if x < 0.0 else x)
            parts.append((-m if x < 0.0 else m, e))
    q = min(e for m, e in parts if m)
    (m1, e1), (m2, e2) = parts
    X1, X2 = (m1 << (e1 - q) if m1 else 0), (m2 << (e2 - q) if m2 else 0)
    if position[0] == 0:
        root = scale.root()
        if root is not None:
            root_p, root_q = root
            if q >= 0:
                return _round_fraction((X1 * root_p << q, root_q), dtype)
            return _round_fraction((X1 * root_p, root_q << -q), dtype)
        if X1 == 0:
            return 0.0
    P = _TABLE_BITS
    bits = _DTYPES[dtype][0] + 32
    v, v_error, F = X1 * c + sign * X2 * s, (abs(X1) + abs(X2)) * error, P
    while True:
        if not scale.one:
            v, v_error = _scale_fixed(v, v_error, scale, _bit_length(abs(v) + v_error) + 2)
        F -= q
        if F < 0:
            v, v_error, F = v << -F, v_error << -F, 0
        result = _round_fixed(v, F, v_error, dtype)
        if result is not None:
            return result
        bits *= 2
        sine, cosine, F, E = _sin_cos(position, (k, law.pairs), law, bits + _bit_length(abs(X1) + abs(X2)))
        v, v_error = X1 * cosine + sign * X2 * sine, (abs(X1) + abs(X2)) * E


def _rope_candidate(
    description: str,
    causes: "Tuple[str, ...]",
    width: int,
    request: "_RopeRequest",
    floats: "List[float]",
    steps: "Dict[str, str]",
    factor: float,
    dtype: str,
) -> "_Candidate":
    """A way of computing a rotary table as a diagnosis candidate: its rows as a pipeline computes them in
    float64 (_pipeline: the setup, the steps rounded, the attention factor), then rounded to dtype; each
    element's allowance 2**-18 (1 + |angle|) A (float32 arithmetic in the rest of a pipeline; for rotated
    vectors, times the pair's size |x_a| + |x_b|) plus an ulp of dtype at the value."""
    setup, kind, vectors, positions = request.setup, request.kind, request.vectors, request.positions
    frequencies = setup.float_frequencies(_last_position(positions, len(floats)))
    h = setup.pairs
    law = (_to_float(setup.base), [k / h for k in range(h)])
    columns = setup.columns()
    slack = _power_of_two(1 - _DTYPES[dtype][0])
    scale = _power_of_two(-18) * abs(factor)
    made: "Dict[int, List[float]]" = {}  # the last row made: its allowance is computed from it

    def computed(r: int, other: bool = False) -> "List[float]":
        if not 0 <= r < len(floats):
            raise ValueError(f"row must be in the table, got {r}")  # a row looked for past the table's ends
        cosines, sines = _pipeline(floats[r], frequencies, steps, factor, law, kind != "sin", kind != "cos", other)
        if vectors is None:
            return setup.arrange(cosines if kind == "cos" else sines)
        x = vectors[r]
        row = [0.0] * setup.head_dim
        for k, (a, b) in enumerate(setup.partners()):
            row[a] = x[a] * cosines[k] - x[b] * sines[k]
            row[b] = x[b] * cosines[k] + x[a] * sines[k]
        return row  # rounded to dtype by _Candidate.row, as the other rounding is by _candidate_damage

    def make_row(r: int) -> "List[float]":
        if r not in made:
            made.clear()
            made[r] = computed(r)
        return made[r]

    def tolerances(r: int) -> "List[float]":
        try:
            result = make_row(r)
        except (ValueError, OverflowError, ZeroDivisionError):
            return [0.0] * width  # no row: nothing reproduced
        p = floats[r]
        weight = [1.0 if vectors is None else 0.0] * width
        if vectors is not None:
            x = vectors[r]
            for a, b in setup.partners():
                weight[a] = weight[b] = abs(x[a]) + abs(x[b])
        return [
            scale * (1 + abs(p * frequencies[columns[c]])) * weight[c] + slack * max(1.0, abs(value))
            for c, value in enumerate(result)
        ]

    candidate = _Candidate(description, make_row, None, len(floats), causes=causes)
    candidate.tolerances = tolerances
    if "angles" in steps:
        candidate.other_rounding = lambda r: computed(r, True)
    return candidate


def _rope_fit(
    table: "_Table", setup: "_Rope", kind: str, dtype: str
) -> "List[Tuple[_Rope, Optional[List[_Fraction]]]]":
    """The rotary setups a cos or sin cache's values say it follows, simplest first, each with the rows'
    positions where they are read one by one (None: 0, 1, 2, ...); [] if none.

    The rows are positions 0, 1, 2, ...  Read in turn, each number taken as the simplest near it:

    1. The layout: which columns repeat (half: c and c + h; interleaved: 2k and 2k + 1).
    2. The attention factor A: row 0 of a cos cache; in a sin cache, from the double angle,
       A = |s(p)| / sqrt(1 - (s(2p) / 2 s(p))**2).
    3. Each pair's frequency w_k: its angle read on rows 1, 2, 4, 8, ... and the last, each reading
       unwrapped by the estimate before (the turn and branch nearest it), the estimate kept from the
       reading least sensitive to rounding (r sqrt(1 - x**2) largest).
    4. The law: ln w_k falls by ln(base) / h a pair (the median step), pair 0 is 1 / (a linear factor),
       and slow pairs that lie one factor f below that line are llama3's bands or YaRN's ramp, with
       the length that puts the bend where it is (powers of two, and the one asked), whose frequencies
       agree with the pairs read.  Where dynamic NTK was asked and the table's base is another, the
       length whose base it is (``last``, the law's largest position, set to it).
    5. Where the sampled rows' positions, read with the law asked for, are whole numbers but not the
       rows' own (one position given to every row, positions restarting with each packed sequence,
       an offset): every row's position, the slowest pair's angle refined through the faster ones.

    Long because the fit is one piece with its readings inside it, each step using the numbers read before
    it (the map's budget).

    >>> cos, _ = rope(512, 16, base=500000, layout="interleaved", scaling={"rope_type": "linear", "factor": 4})
    >>> _rope_fit(cos, _Rope(16, None, "half", None), "cos", "float64")[0][0].inputs
    (500000, 'interleaved', {'rope_type': 'linear', 'factor': 4})
    """
    seq_len, width = len(table), len(table[0])
    if seq_len < 3 or kind not in ("cos", "sin"):
        return []
    p, near = _DTYPES[dtype][0], _Fit.near(dtype)
    rows = _Fit.rows(seq_len)
    rows += [seq_len - 1] if rows[-1] != seq_len - 1 else []
    values = {r: table[r] for r in rows}
    if not all(-2.0 < x < 2.0 for row in values.values() for x in row):
        return []  # not finite, or no cosine times an attention factor near 1

    layouts = [setup.layout] + [layout for layout in _ROPE_LAYOUTS if layout != setup.layout]
    found: "List[_Rope]" = []
    for layout in layouts:
        # Each pair's column, and where its value is repeated: k + h (half), 2k + 1 (interleaved), nowhere (pairs).
        h = width if layout == "pairs" else width // 2
        columns = list(range(0, width, 2)) if layout == "interleaved" else list(range(h))
        again = 1 if layout == "interleaved" else h
        if layout != "pairs" and (
            width % 2 or any(abs(row[c] - row[c + again]) > near for row in values.values() for c in columns)
        ):
            continue
        if kind == "cos":
            amplitude = sorted(values[0][c] for c in columns)[h // 2]
        else:
            estimates = []
            for r in rows[1:]:
                if 2 * r in values:
                    for c in columns[: max(1, h // 4)]:
                        s, double = values[r][c], values[2 * r][c]
                        ratio = double / (2 * s) if s else 2.0
                        if abs(ratio) < 0.9 and abs(s) > 0.1:
                            estimates.append(abs(s) / math.sqrt(1 - ratio * ratio))
            amplitude = sorted(estimates)[len(estimates) // 2] if estimates else 0.0
        if not 0.0 < amplitude < 2.0:
            continue
        # Each pair's frequency, and its precision (relative): a reading's angle is within 2**(1-p) / sqrt(1 - x**2).
        speeds, spreads = [], []
        for c in columns:
            estimate, quality = _Fit.unwrapped(kind, [(r, values[r][c] / amplitude) for r in rows[1:]])
            speeds.append(estimate)
            spreads.append(_power_of_two(1 - p) / (quality * estimate) if quality > 0.0 < estimate else _INF)
        _rope_laws(found, setup, layout, speeds, spreads, amplitude, seq_len, dtype)
    # A base kept as read (no simple number near it) makes the least simple story.
    found.sort(key=lambda variant: isinstance(variant.inputs[0], float))
    stories: "List[Tuple[_Rope, Optional[List[_Fraction]]]]" = [(variant, None) for variant in found]
    # Each row's position with the law asked for: the slowest pair's angle (positions are not negative), then
    # each faster pair's, the estimate kept from the reading least sensitive to rounding (w sqrt(1 - x**2)).
    law = setup.float_frequencies((seq_len - 1, 1))
    columns = setup.columns()
    if len(columns) != width:
        return stories
    by_speed = sorted((law[k], columns.index(k)) for k in range(setup.pairs))
    amplitude = setup.attention.value

    def position_of(row: "List[float]") -> float:
        readings = [(w, row[c] / amplitude) for w, c in by_speed]
        if not all(-1.5 < x < 1.5 for _, x in readings):
            return _NAN  # not finite, or no value of this law
        return _Fit.unwrapped(kind, readings)[0]

    def whole(x: float) -> bool:
        return x == x and abs(x - round(x)) <= 1e-3 + _power_of_two(3 - p) * abs(x)

    sample = _sample_rows(seq_len)
    sampled = [position_of(table[r]) for r in sample]
    if all(whole(x) for x in sampled) and [round(x) for x in sampled] != sample:
        every = [position_of(row) for row in table]
        if all(whole(x) for x in every):
            stories.append((setup, [(round(x), 1) for x in every]))
    return stories


def _rope_laws(
    found: "List[_Rope]",
    setup: "_Rope",
    layout: str,
    speeds: "List[float]",
    spreads: "List[float]",
    amplitude: float,
    seq_len: int,
    dtype: str,
) -> None:
    """Step 4 of _rope_fit: the laws a cache's pairs' frequencies (speeds, each within a relative spread) and
    attention factor say, in one layout, appended to found (a dynamic NTK length read goes before the laws
    found so far, as the simpler story).

    Long because each law is a short step using the numbers read before it, in the order _rope_fit's
    docstring gives them.
    """
    h, p, near = len(speeds), _DTYPES[dtype][0], _Fit.near(dtype)
    # The pairs read to 0.2%, for the line; those read to 10% (slow pairs in a narrow format), for the fall.
    known = [k for k in range(h) if spreads[k] < 2e-3]
    seen = [k for k in range(h) if spreads[k] < 0.1]

    def agrees(variant: "_Rope") -> bool:
        # The variant's frequencies for these rows are the ones read, within 8 spreads, on every pair read.
        law = variant.float_frequencies((seq_len - 1, 1))
        return all(abs(law[k] / speeds[k] - 1) <= 8 * spreads[k] + 1e-6 for k in seen)

    if len(known) < 2 or known[0] != 0:
        return
    steps = sorted(math.log(speeds[k] / speeds[j]) / (j - k) for k, j in zip(known, known[1:]) if speeds[j] > 0.0)
    if not steps:
        return
    # The line's step: the one most steps agree with within 1% (the median can fall among a YaRN ramp's
    # steps, which all differ, where the pairs read precisely are mostly fast ones, as in float16).
    step = max(steps, key=lambda x: (sum(1 for y in steps if abs(y - x) <= 1e-2 * x), -abs(x - steps[len(steps) // 2])))
    # Refined over the first run of pairs on that line (before llama3's bands or YaRN's ramp bend it): the
    # step from pair 0 to the run's pair read most precisely for its distance (spread over index least).
    run = [0]
    for k, j in zip(known, known[1:]):
        if j != k + 1 or abs(math.log(speeds[k] / speeds[j]) - step) > 1e-2 * step:
            break
        run.append(j)
    # A frequency computed in the table's format is within a relative 2**(1-p) besides the reading's spread.
    spread = near / 10  # the base's relative precision
    if len(run) > 1:
        off = [spreads[j] + _power_of_two(1 - p) for j in run]
        anchor = min(run[1:], key=lambda j: (off[0] + off[j]) / j)
        step = math.log(speeds[0] / speeds[anchor]) / anchor
        spread = max(1e-12, 8 * h * (off[0] + off[anchor]) / anchor)
    bases = []
    for b in [_Fit.simplest(math.exp(step * h), spread)] + [_number(setup.base)] + list(_BASES):
        if b not in bases and abs(math.log(_to_float(_rational("base", b))) - step * h) <= spread:
            bases.append(b)
    linear = _number(_rational("factor", _Fit.simplest(1 / speeds[0], near)))
    # How far each pair lies below the unscaled line (w_0 = 1): ln f on every pair for a linear factor f;
    # 0 for fast pairs and ln f past llama3's bands or YaRN's ramp.  It grows with the pair: its largest.
    falls = [(-step * k - math.log(speeds[k]), k) for k in seen]
    top, slowest = max(falls)
    fall = math.exp(top)
    within = max(near, 2 * spreads[slowest])
    uniform = top - min(falls)[0] <= 2 * within
    for base in bases:
        tried: "List[Dict[str, object]]" = []
        if uniform:
            tried.append({} if abs(1 / speeds[0] - 1) <= near else {"rope_type": "linear", "factor": linear})
        else:
            factor = _number(_rational("factor", _Fit.simplest(fall, within)))
            lengths: "List[object]" = [1 << e for e in range(8, 21)]
            if setup.length[0] and _number(setup.length) not in lengths:
                lengths.insert(0, _number(setup.length))
            for length in lengths:  # llama3's high_freq_factor: Llama 3.1's band, and Llama 4's step (equal factors)
                tried += _other_scalings(("yarn", "llama3"), factor, length, (4, 1))
        for scaling in tried:
            try:
                variant = _Rope(2 * h, base, layout, scaling)
                if not agrees(variant):
                    continue
            except (ValueError, OverflowError, ZeroDivisionError):
                continue
            # The attention factor read: the variant's own, or one given (1 where YaRN's was dropped).
            if abs(amplitude - variant.attention.value) > near * amplitude:
                if variant.kind != "yarn":
                    continue
                given = _number(_rational("attention_factor", _Fit.simplest(amplitude, near)))
                variant = _Rope(2 * h, base, layout, dict(scaling, attention_factor=given))
            found.append(variant)
    if setup.kind == "longrope" or not found:
        # LongRoPE's per-pair factors: the config's other list (short_factor past its
        # original_max_position_embeddings, long_factor up to it); then, where nothing above fits, the factors
        # read, each pair's frequency against the asked base's, where they scale (one at least 1.01, none below
        # 0.99: a rounded inv_freq's are within 1e-3 of 1), each the simplest number near it.
        lists: "List[Tuple[Dict[str, object], bool]]" = []  # (scaling, whether its factors are read)
        config = setup.inputs[2]
        if setup.kind == "longrope" and isinstance(config, dict):
            if seq_len * setup.length[1] > setup.length[0]:
                lists.append((dict(config, long_factor=config["short_factor"]), False))
            else:
                lists.append((dict(config, short_factor=config["long_factor"]), False))
        scales: "List[float]" = []  # each pair's factor against the base, where no law fits and every pair is read
        if not found and len(seen) == h:
            scales = [_to_float(setup.base) ** (-k / h) / speeds[k] if speeds[k] > 0.0 else _INF for k in range(h)]
        if scales and all(0.99 <= f < _INF for f in scales) and max(scales) >= 1.01:
            # Each within its reading's spread and the table format's rounding of inv_freq, 2**(1-p), twice.
            rounding = _power_of_two(2 - p)
            factors = [
                _number(_rational("scaling", _Fit.simplest(f, spreads[k] + rounding, 8))) for k, f in enumerate(scales)
            ]
            attention = _number(_rational("attention_factor", _Fit.simplest(amplitude, near)))
            scaling = {
                "rope_type": "longrope",
                "short_factor": factors,
                "long_factor": factors,
                "original_max_position_embeddings": seq_len,
                "attention_factor": attention,
            }
            lists.append((scaling, True))
        for scaling, from_table in lists:
            try:
                variant = _Rope(2 * h, setup.inputs[0], layout, scaling)
                variant.factors_read = from_table
                if agrees(variant) and abs(amplitude - variant.attention.value) <= near * amplitude:
                    found.append(variant)
            except (ValueError, OverflowError, ZeroDivisionError):
                continue
    plain = uniform and abs(1 / speeds[0] - 1) <= near
    if plain and setup.kind not in ("default", "dynamic") and setup.length[0]:
        # Dynamic NTK in place of the variant asked, with its factor and length: a base grown past the asked one.
        scaling = _other_scalings(("dynamic",), _number(setup.factor), _number(setup.length))[0]
        variant = _Rope(2 * h, setup.inputs[0], layout, scaling)
        if agrees(variant):
            found.append(variant)
    if setup.kind == "dynamic" and plain:
        # Dynamic NTK's base b g**(d/(d-2)), g = f L / L0 - (f - 1): the length L whose base the table has.
        f, original = _to_float(setup.factor), _to_float(setup.length)
        growth = math.exp(step * (h - 1) - math.log(_to_float(setup.base)) * (h - 1) / h)
        at = original * (growth + f - 1) / f
        # The length read, after a round one near it (within 1%: a power of two, a multiple of the original
        # length), as a base read in a narrow format puts it a few positions off (bfloat16: 8193 for 8192).
        fraction, exponent = math.frexp(at)
        read: "List[int]" = []
        for length in (
            (1 << max(0, exponent - (fraction < 0.7071)), round(at / original) * int(original), round(at))
            if original < at < 1 << 40
            else ()
        ):
            if abs(length - at) <= at / 100 and original < length != seq_len and length not in read:
                variant = _Rope(2 * h, setup.inputs[0], layout, setup.inputs[2])
                variant.last = (length - 1, 1)
                if agrees(variant):
                    found.insert(len(read), variant)
                    read.append(length)


def _rope_story(asked: "_Rope", found: "_Rope", seq_len: int) -> "Tuple[List[str], Tuple[str, ...]]":
    """How a rotary setup found in a table of seq_len rows differs from the one asked for: (phrases, cause keys).

    >>> _rope_story(_Rope(8, None, "half", None), _Rope(8, 500000, "interleaved", {"rope_type": "linear", "factor": 4}), 64)
    (['in the interleaved layout', 'with base 500000 instead of 10000', 'with linear scaling (factor 4)'], ('layout', 'base', 'scaling'))

    Long because each difference is a short step, in the order the story tells them: the layout, the base,
    LongRoPE's factors (read, or its other list), the variant, its parameters, the length, the attention factor.
    """
    words: "List[str]" = []
    causes: "Tuple[str, ...]" = ()
    if found.layout != asked.layout:
        shape = ""
        if found.head_dim != asked.head_dim:
            # A half-width cache for a full one, or the reverse: the head's width changes with the layout.
            per_pair = "one column per pair: " if found.layout == "pairs" else ""
            shape = f" ({per_pair}head_dim {found.head_dim})"
        words.append(f"in the {found.layout} layout{shape}")
        causes += ("layout",)
    if found.base != asked.base:
        a, b, d = _to_float(asked.base), _to_float(found.base), found.head_dim
        was, read = _base_text(asked, True), _base_text(found, True)
        words.append(f"with base {read} instead of {was}")
        causes += ("base",)
        # base**(p/q) over d columns is base over d q / p: the exponents 2k/d of a head of d q / p columns of which
        # d rotate, the partial rotary's classic mistake (partial_rotary_factor p/q applied to the exponent).
        t = math.log(b) / math.log(a) if 1.0 < b < a else 0.0
        for q in range(2, 17) if t else ():
            p = round(t * q)
            if 0 < p < q and abs(p / q - t) <= 1e-6 and (d * q) % p == 0 and _gcd(p, q) == 1:
                words[-1] = (
                    f"with base {read} = {was}**({p}/{q}) instead of {was}: frequencies spread over {d * q // p}"
                    f" columns where {d} rotate (partial_rotary_factor {p}/{q} applied to the exponent, not to the"
                    " width)"
                )
                break
    mine = dict((key, _short(entry)) for key, entry in found.given.items())
    theirs = dict((key, _short(entry)) for key, entry in asked.given.items())
    attention = f"{found.attention.value:.6g}"
    if found.factors_read:
        # LongRoPE's per-pair factors read from the table: their count and range, not each number.
        factors = [_to_float((n, m)) for m, n in found.multipliers]
        words.append(
            f"with longrope's per-pair factors read from the table ({len(factors)} numbers from {min(factors):.6g} to"
            f" {max(factors):.6g}; attention factor {attention})"
            + (f" instead of its {asked.kind} scaling" if asked.kind != "default" else "")
        )
        return words, causes + ("scaling",)
    if found.kind == asked.kind == "longrope" and found.multipliers == found.long_multipliers:
        # The config's other list on every row: short_factor past original_max_position_embeddings, or long_factor
        # up to it.
        which, other = ("short", "long") if found.long_multipliers != asked.long_multipliers else ("long", "short")
        where = "past" if which == "short" else "up to"
        words.append(
            f"with its {which}_factor on all {seq_len} rows, where {other}_factor applies ({where}"
            f" original_max_position_embeddings {_fraction_text(found.length)})"
        )
        causes += (f"scaling:{which}_factor",)
        mine.pop("short_factor", None)
        mine.pop("long_factor", None)
    if found.kind != asked.kind:
        if found.kind == "default":
            words.append(f"without its {asked.kind} scaling")
        else:
            listed = ", ".join(f"{key} {entry}" for key, entry in mine.items())
            if "attention_factor" not in mine and found.attention.value != 1.0:
                listed += f"; its attention factor {attention}"
            other = f" instead of {asked.kind}" if asked.kind != "default" else ""
            words.append(f"with {found.kind} scaling ({listed}){other}")
        causes += ("scaling",)
        return words, causes
    mine.pop("attention_factor", None)
    theirs.pop("attention_factor", None)

    def number(entry: object) -> object:
        # A parameter compared as the number it says: 4 and 4.0 are one factor.
        try:
            return _rational("scaling", entry)
        except (TypeError, ValueError):
            return _short(entry)

    changed = [key for key in mine if key not in asked.given or number(found.given[key]) != number(asked.given[key])]
    for key in changed:
        words.append(f"with {key} {mine[key]}" + (f" instead of {theirs[key]}" if key in theirs else ""))
        before, after = number(asked.given.get(key)), number(found.given[key])
        if key == "factor" and isinstance(before, tuple) and isinstance(after, tuple) and before[0] > before[1]:
            # A factor read that is the one asked times a simple number: said as that, and squared as applied twice.
            times: "_Fraction" = _reduced(after[0] * before[1], after[1] * before[0])
            if times == before:
                words[-1] += ", the factor asked squared (the scaling applied twice)"
            elif times[1] <= 16 and times[0] <= 16 * times[1]:
                words[-1] += f", {_fraction_text(times)} times the factor asked"
    if changed:
        causes += ("scaling",)
    if found.last is not None:
        # Dynamic NTK's base, computed for another length than the table's: b g**(d/(d-2)), g = f L / L0 - (f - 1).
        f, original, d = _to_float(found.factor), _to_float(found.length), found.head_dim
        at = _to_float(_add(found.last, (1, 1)))

        def grown(length: float) -> str:
            growth = f * length / original - (f - 1) if length > original else 1.0
            return f"{_to_float(found.base) * growth ** (d / (d - 2)):.6g}"

        words.append(
            f"with dynamic NTK's base computed for {at:.0f} positions (base {grown(at)}),"
            f" not for the table's {seq_len} (base {grown(seq_len)})"
        )
        causes += ("scaling:length",)
    expected = asked.attention.value
    if expected != 1.0 and abs(found.attention.value - expected * expected) <= 1e-6 * expected * expected:
        words.append(f"with its attention factor applied twice ({attention} instead of {expected:.6g})")
        causes += ("attention_factor:twice",)
    elif abs(found.attention.value - expected) > 1e-9:
        source = "" if "attention_factor" in found.given else f" (the {found.kind} default)"
        words.append(f"with attention factor {attention}{source} instead of {expected:.6g}")
        causes += ("attention_factor:missing" if found.attention.value == 1.0 else "attention_factor",)
    return words, causes


def _rope_call(
    found: "_Rope", seq_len: int, kind: str, dtype: str, given: str, command: "Optional[Tuple[str, str]]"
) -> str:
    """The rope() call whose cache is the table, and the command line for it.  given: the keywords before the
    setup's (positions read one by one, named ``positions``, not written out; several positions a row's and
    axes_dim or scaling); command: the words before --rope (a grid's shape) and after it, None for no command line.

    >>> print(_rope_call(_Rope(8, 500000, "interleaved", {"rope_type": "linear", "factor": 4}), 64, "cos", "float32", "", ("", "")))
    rope(64, 8, base=500000, layout='interleaved', scaling={'rope_type': 'linear', 'factor': 4}, dtype='float32')[0] (on the command line: --rope cos --base 500000 --rope-layout interleaved --rope-scaling '{"rope_type": "linear", "factor": 4}' --dtype float32)
    """
    import json

    base, layout, scaling = found.inputs
    keywords, options = given, "" if command is None else f"{command[0]} --rope {kind}{command[1]}".lstrip()
    if found.base != (10000, 1):
        keywords += f", base={_number(found.base)!r}"
        options += f" --base {_base_text(found, False)}"
    if layout != "half":
        keywords += f", layout={layout!r}"
        options += f" --rope-layout {layout}"
    if found.kind != "default":
        keywords += f", scaling={scaling!r}"
        options += f" --rope-scaling '{json.dumps(scaling)}'"
    if dtype != "float64":
        keywords += f", dtype={dtype!r}"
        options += f" --dtype {dtype}"
    index = 0 if kind == "cos" else 1
    if found.last is not None:
        # The cache of the longer length, its first seq_len rows.
        at = _number(_add(found.last, (1, 1)))
        return f"rope({at}, {found.head_dim}{keywords})[{index}][:{seq_len}] (on the command line: {at} {found.head_dim} {options}, its first {seq_len} rows)"
    return f"rope({seq_len}, {found.head_dim}{keywords})[{index}]" + (
        "" if command is None else f" (on the command line: {options})"
    )


def _base_text(setup: "_Rope", short: bool) -> str:
    """A setup's base as text: a base read and kept as the float it is (no simple number near it) in 6 digits
    (short) or the shortest decimal that reads back as that float; any other exactly."""
    given = setup.inputs[0]
    if isinstance(given, float) and _rational("base", given) == setup.base:
        return f"{given:.6g}" if short else repr(given)
    return _fraction_text(setup.base)


def _rope_candidates(setup: "_Rope") -> "Iterator[_RopeMade]":
    """(words, causes, the rope computed, the steps rounded, the attention factor) for each way the table may
    have been made: one family each, in the order of one tuple (the other layout, other bases, the scaling
    left out or another variant, the attention factor missing or twice, steps rounded), simplest first."""
    base, layout, scaling = setup.inputs

    def layouts() -> "Iterator[_RopeMade]":
        if layout != "pairs":
            other = "interleaved" if layout == "half" else "half"
            variant = _Rope(setup.head_dim, base, other, scaling)
            yield f"in the {other} layout", ("layout",), variant, {}, setup.attention.value

    def bases() -> "Iterator[_RopeMade]":
        for b in _BASES:
            if (b, 1) != setup.base:
                try:
                    # The scaling dict (which _Rope has checked, or None) without its "rope_theta".
                    items = getattr(scaling, "items", None)
                    plain = None if items is None else {key: x for key, x in items() if key != "rope_theta"}
                    variant = _Rope(setup.head_dim, b, setup.layout, plain)
                except ValueError:
                    continue
                yield f"with base {b}", ("base",), variant, {}, variant.attention.value

    def scalings() -> "Iterator[_RopeMade]":
        if setup.kind == "default":
            return
        plain = _Rope(setup.head_dim, base, setup.layout, None)
        yield f"without its {setup.kind} scaling", ("scaling",), plain, {}, 1.0
        # The other variants with the asked one's factor and length, where it has them.
        kinds = ("linear", "dynamic", "yarn", "llama3") if setup.length[0] else ("linear",)
        others = tuple(kind for kind in kinds if kind != setup.kind)
        for scaled in _other_scalings(others, _number(setup.factor), _number(setup.length)):
            try:
                variant = _Rope(setup.head_dim, base, setup.layout, scaled)
            except ValueError:
                continue
            yield f"with {scaled['rope_type']} scaling instead", ("scaling",), variant, {}, variant.attention.value

    def attention_factor() -> "Iterator[_RopeMade]":
        value = setup.attention.value
        if value != 1.0:
            yield f"without its attention factor {value:.6g}", ("attention_factor:missing",), setup, {}, 1.0
            yield "with its attention factor applied twice", ("attention_factor:twice",), setup, {}, value * value

    def rounded_steps() -> "Iterator[_RopeMade]":
        narrow: "Tuple[str, ...]" = ("float16", "bfloat16")
        formats = dict((step, narrow) for step, _, _ in _STEPS)
        formats["frequencies"] = narrow + tuple(f"{fmt} arithmetic" for fmt in narrow)
        for steps in _step_choices(formats):
            causes: "Tuple[str, ...]" = ()
            words = []
            for step, said, key in _STEPS:  # in _STEPS order: a MicroPython dict keeps no order of insertion
                fmt = steps.get(step, "")
                if fmt:
                    causes += (f"{key}:{fmt.split()[0]}",)
                    how = "computed in" if fmt.endswith("arithmetic") else "rounded to"
                    words.append(f"{said} {how} {fmt}")
            yield "with " + _join(words, ", "), causes, setup, steps, setup.attention.value

    for family in (layouts, bases, scalings, attention_factor, rounded_steps):  # a new mistake: one line
        yield from family()


class _Rope:
    """A rotary embedding's choices, checked: head_dim, base, layout, and the scaling variant's numbers as fractions.

    ``function`` names the caller in messages.  The numbers of ``scaling``
    are exact fractions, as a Convention's: a float is the binary number it
    holds, a string the decimal it says.
    """

    def __init__(self, head_dim: object, base: object, layout: object, scaling: object) -> None:
        self.head_dim = _check_integer("head_dim", head_dim, 2)
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even, got {self.head_dim}")
        self.pairs = self.head_dim // 2
        self.layout = _check_choice("layout", layout, _ROPE_LAYOUTS)
        given, setup = self._scaling(scaling)
        theta = given.pop("rope_theta", None)
        if base is None:
            base = 10000 if theta is None else theta
        elif theta is not None and _rational("base", base) != _rational("scaling['rope_theta']", theta):
            raise ValueError(f"base and scaling['rope_theta'] must agree, got {_short(base)} and {_short(theta)}")
        self.base = _positive("base")(base)
        self.inputs = (base, self.layout, scaling)
        self.kind = str(given.pop("kind"))
        self.given = given
        self.factor = (1, 1)
        self.length: "_Fraction" = (0, 1)
        self.multipliers = [(1, 1)] * self.pairs
        self.long_multipliers = self.multipliers
        self.llama3: "Optional[_Llama3]" = None
        self.ramp: "Optional[_YarnRamp]" = None
        self.attention = _OutputScale("square", ((1, 1),), 1.0)
        setup()  # the variant's numbers, read from given
        self.laws: "Dict[_Fraction, _RopeFrequencies]" = {}
        # The largest position the law is computed for, when not the rows' own (dynamic NTK at another length).
        self.last: "Optional[_Fraction]" = None
        #: Whether its LongRoPE factors were read from a table, each pair's (the diagnosis's), not configured.
        self.factors_read = False

    def _scaling(self, scaling: object) -> "Tuple[Dict[str, object], Callable[[], None]]":
        """The scaling dict's entries, checked against its variant's keys, with the variant as "kind"; its setup.

        Long because the table of the variants, a row each, is made in it, when it is called.
        """
        # Each variant, one row: its name, the keys it needs, those it may take, the method that reads them.
        # Made when called, not at import.
        variants: "Tuple[Tuple[str, Tuple[str, ...], Tuple[str, ...], Callable[[], None]], ...]" = (
            ("default", (), (), lambda: None),  # nothing to read
            ("linear", ("factor",), (), self._linear),
            ("dynamic", ("factor",), ("max_position_embeddings", "original_max_position_embeddings"), self._dynamic),
            (
                "yarn",
                ("original_max_position_embeddings",),
                (
                    "factor",
                    "max_position_embeddings",
                    "beta_fast",
                    "beta_slow",
                    "mscale",
                    "mscale_all_dim",
                    "attention_factor",
                    "truncate",
                ),
                self._yarn,
            ),
            (
                "llama3",
                ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
                (),
                self._llama3,
            ),
            (
                "longrope",
                ("short_factor", "long_factor", "original_max_position_embeddings"),
                ("factor", "max_position_embeddings", "attention_factor"),
                self._longrope,
            ),
        )
        if scaling is None:
            scaling = {}
        items = getattr(scaling, "items", None)
        if not callable(items):
            raise TypeError(
                f"scaling must be a dict of rope parameters, got {type(scaling).__name__} {_short(scaling)}"
            )
        given: "Dict[str, object]" = {}
        for key, entry in items():
            if not isinstance(key, str):
                raise TypeError(f"scaling's keys must be str, got {type(key).__name__} {_short(key)}")
            if entry is not None:  # HF configs write an unset parameter as None
                given[key] = entry
        kind = given.pop("rope_type", None)
        old = given.pop("type", None)
        if kind is not None and old is not None and kind != old:
            raise ValueError(
                f"scaling['rope_type'] and scaling['type'] must agree, got {_short(kind)} and {_short(old)}"
            )
        kind = _check_choice(
            "scaling['rope_type']",
            "default" if kind is None and old is None else kind or old,
            tuple(row[0] for row in variants),
        )
        partial = given.pop("partial_rotary_factor", None)
        if partial is not None and _rational("scaling['partial_rotary_factor']", partial) != (1, 1):
            raise ValueError(
                f"scaling['partial_rotary_factor'] must be 1 (give the rotated width as head_dim), got {_short(partial)}"
            )
        _, required, optional, setup = [row for row in variants if row[0] == kind][0]
        for key in given:
            if key not in required and key not in optional and key != "rope_theta":
                takes = ", ".join(required + optional) or "no parameters"
                raise ValueError(f"scaling for rope_type {kind} takes {takes}, got {_short(key)}")
        for key in required:
            if key not in given:
                raise ValueError(f"scaling for rope_type {kind} needs {key!r}, got none")
        given["kind"] = kind
        return given, setup

    def _linear(self) -> None:
        self.factor = self._parameter("factor")
        self.multipliers = [(self.factor[1], self.factor[0])] * self.pairs

    def _dynamic(self) -> None:
        self.factor = self._parameter("factor")
        key = (
            "max_position_embeddings" if "max_position_embeddings" in self.given else "original_max_position_embeddings"
        )
        if key not in self.given:
            raise ValueError("scaling for rope_type dynamic needs 'max_position_embeddings', got none")
        self.length = self._whole(key)

    def _yarn(self) -> None:
        self.length = self._whole("original_max_position_embeddings")
        self.factor = self._factor_or_ratio()
        if "factor" not in self.given and "max_position_embeddings" not in self.given:
            raise ValueError("scaling for rope_type yarn needs 'factor' or 'max_position_embeddings', got neither")
        if self.base[0] <= self.base[1]:
            raise ValueError(f"base must be greater than 1 for rope_type yarn, got {_short(_number(self.base))}")
        # HF takes beta_fast and beta_slow with `or`: 0 means the default too.
        fast = self._parameter("beta_fast", (32, 1)) if self.given.get("beta_fast") else (32, 1)
        slow = self._parameter("beta_slow", (1, 1)) if self.given.get("beta_slow") else (1, 1)
        truncate = _check_flag("scaling['truncate']")(self.given.get("truncate", True))
        fn, fd = self.factor
        ramp = _YarnRamp(self.base, self.pairs, self.head_dim, self.length, fast, slow, self.factor)
        if not truncate:
            self.ramp = ramp
            self.multipliers = [(fd, fn) if ramp.region(k) == "interpolate" else (1, 1) for k in range(self.pairs)]
            self._yarn_attention()
            return
        low, high = ramp.whole_bounds()
        top = (high, 1) if low != high else (1000 * high + 1, 1000)  # HF adds 0.001 to an empty ramp
        multipliers = []
        for k in range(self.pairs):
            # ramp = clamp((k - low) / (high - low), 0, 1); w_k is w (1 - ramp) + (w / f) ramp.
            numerator, denominator = (k - low) * top[1], top[0] - low * top[1]
            if denominator < 0:
                numerator, denominator = -numerator, -denominator
            share = (
                (0, 1) if numerator <= 0 else (1, 1) if numerator >= denominator else _reduced(numerator, denominator)
            )
            # 1 - ramp (1 - 1/f) = (f - ramp (f - 1)) / f
            multipliers.append(_reduced(fn * share[1] - share[0] * (fn - fd), fn * share[1]))
        self.multipliers = multipliers
        self._yarn_attention()

    def _yarn_attention(self) -> None:
        if "attention_factor" in self.given:
            self._given_attention()
        elif self.factor[0] > self.factor[1]:
            # HF: the ratio of two mscales when both are given and non-zero, else 0.1 ln f + 1.
            m1, m2 = (1, 1), (0, 1)
            if self.given.get("mscale") and self.given.get("mscale_all_dim"):
                m1, m2 = self._parameter("mscale"), self._parameter("mscale_all_dim")
            if m1 != m2:
                ln_factor = math.log(_to_float(self.factor))
                result = (0.1 * _to_float(m1) * ln_factor + 1) / (0.1 * _to_float(m2) * ln_factor + 1)
                self.attention = _OutputScale("yarn", (self.factor, m1, m2), result)

    def _llama3(self) -> None:
        self.factor = self._parameter("factor")
        low, high = self._parameter("low_freq_factor"), self._parameter("high_freq_factor")
        if low[0] * high[1] > high[0] * low[1]:
            # Equal factors are a step, no blend (Llama 4's 1 and 1); below, frameworks disagree on the band.
            raise ValueError(
                f"scaling['high_freq_factor'] must be at least scaling['low_freq_factor'],"
                f" got {_short(self.given['high_freq_factor'])} and {_short(self.given['low_freq_factor'])}"
            )
        length = self._whole("original_max_position_embeddings")
        self.llama3 = _Llama3(self.base, self.pairs, self.factor, low, high, length)
        self.multipliers = [
            (self.factor[1], self.factor[0]) if self.llama3.bands(k) == "long" else (1, 1) for k in range(self.pairs)
        ]

    def _longrope(self) -> None:
        self.length = self._whole("original_max_position_embeddings")
        self.factor = self._factor_or_ratio()
        self.multipliers = [(m, n) for n, m in self._list("short_factor")]
        self.long_multipliers = [(m, n) for n, m in self._list("long_factor")]
        if "attention_factor" in self.given:
            self._given_attention()
        elif self.factor[0] > self.factor[1]:
            if self.length[0] < 2:
                raise ValueError(
                    "scaling['original_max_position_embeddings'] must be at least 2 for rope_type longrope, got 1"
                )
            result = math.sqrt(1 + math.log(_to_float(self.factor)) / math.log(self.length[0]))
            ratio = _log_ratio(self.factor, self.length[0])
            if ratio is None:
                self.attention = _OutputScale("longrope", (self.factor, self.length), result)
            else:
                self.attention = _OutputScale("square", (_reduced(ratio[1] + ratio[0], ratio[1]),), result)  # 1 + R

    def _factor_or_ratio(self) -> "_Fraction":
        """factor, or max_position_embeddings / original_max_position_embeddings as HF takes it."""
        if "factor" in self.given:
            return self._parameter("factor")
        if "max_position_embeddings" in self.given:
            n, m = self._whole("max_position_embeddings")
            return _reduced(n * self.length[1], m * self.length[0])
        return (1, 1)

    def _whole(self, key: str) -> "_Fraction":
        number = self._parameter(key)
        if number[1] != 1:
            raise ValueError(f"scaling[{key!r}] must be a whole number, got {_short(self.given[key])}")
        return number

    def _list(self, key: str) -> "List[_Fraction]":
        items = _items(self.given[key], f"scaling[{key!r}] must be a list of numbers")
        numbers = [_positive(f"scaling[{key!r}][{i}]")(x) for i, x in enumerate(items)]
        if len(numbers) != self.pairs:
            raise ValueError(f"scaling[{key!r}] must have head_dim / 2 = {self.pairs} numbers, got {len(numbers)}")
        return numbers

    def _given_attention(self) -> None:
        n, m = self._parameter("attention_factor")
        self.attention = _OutputScale("square", ((n * n, m * m),), _to_float((n, m)))

    def _parameter(self, key: str, default: "Optional[_Fraction]" = None) -> "_Fraction":
        if key not in self.given:
            if default is None:
                raise ValueError(f"scaling for rope_type {self.kind} needs {key!r}, got none")
            return default
        return _positive(f"scaling[{key!r}]")(self.given[key])

    def name(self, what: str) -> str:
        scaling = "" if self.kind == "default" else f", {self.kind} scaling"
        return f"RoPE {what} ({self.layout} layout, base {_fraction_text(self.base)}{scaling})"

    def default_allowance(
        self,
        seq_len: int,
        positions: "Optional[List[_Fraction]]",
        dtype: str,
        vectors: "Optional[_Table]",
    ) -> "_Allowance":
        """The default rule's allowance for this cache or its rotated vectors: A the attention factor, W |x[a]| + |x[b]|."""
        by_pair = self.float_frequencies(_last_position(positions, seq_len))
        frequencies = [by_pair[k] for k in self.columns()]
        floats = [float(r) for r in range(seq_len)] if positions is None else [_to_float(p) for p in positions]
        weights: "Optional[Tuple[_Table, List[int]]]" = None
        if vectors is not None:
            partner = [0] * self.head_dim
            for a, b in self.partners():
                partner[a], partner[b] = b, a
            weights = (vectors, partner)  # each row's weights made from its vectors when it is judged
        return _Allowance(frequencies, floats, dtype, self.attention.value, weights)

    def float_frequencies(self, last: "_Fraction") -> "List[float]":
        """Each pair's frequency in float64, from the same exact choices (bands, ramps, growth)."""
        law = self.law(last)
        h = self.pairs
        base = _to_float(self.base)
        growth = _to_float(law.growth) if law.growth is not None else 1.0
        frequencies = []
        for k in range(h):
            w = math.pow(base, -k / h) * _to_float(law.multipliers[k])
            if law.growth is not None and k:
                w *= math.pow(growth, -k / (h - 1))
            if self.llama3 is not None and self.llama3.bands(k) == "blend":
                low, high, f = _to_float(self.llama3.low), _to_float(self.llama3.high), _to_float(self.factor)
                s = (_to_float(self.llama3.length) * w / (2 * math.pi) - low) / (high - low)
                w = (1 - s) * w / f + s * w
            if self.ramp is not None and self.ramp.region(k) == "ramp":
                w *= self._float_ramp_multiplier(k)
            frequencies.append(w)
        return frequencies

    def law(self, last: "_Fraction") -> "_RopeFrequencies":
        """The frequency law for rows whose largest position is ``last`` (dynamic and longrope look at last + 1)."""
        length = _add(last if self.last is None else self.last, (1, 1))
        long = self.length[0] and length[0] * self.length[1] > self.length[0] * length[1]
        growth = None
        multipliers = self.multipliers
        if self.kind == "dynamic" and long and self.pairs > 1:
            # base' = base g**(d/(d-2)), g = f L / L0 - (f - 1): w_k = base**(-k/h) g**(-k/(h-1)).
            (fn, fd), (n, m), (ln_, ld) = self.factor, length, self.length
            growth = _reduced(fn * n * ld - (fn - fd) * m * ln_, fd * m * ln_)
            if growth[0] <= 0:
                raise ValueError(
                    f"scaling['factor'] gives dynamic NTK a base growth of {_fraction_text(growth)}, not above 0"
                )
        if self.kind == "longrope" and long:
            multipliers = self.long_multipliers
        key = (0, 0) if growth is None and multipliers is self.multipliers else length
        found = self.laws.get(key)
        if found is None:
            blend: "Optional[_Blend]" = self.llama3 if self.llama3 is not None else self.ramp
            found = self.laws[key] = _RopeFrequencies(self.base, self.pairs, multipliers, growth, blend)
        return found

    def _float_ramp_multiplier(self, k: int) -> float:
        """1 - ramp_k (1 - 1/f) for YaRN's real bounds, in float64, from the exact bounds' intervals."""
        assert self.ramp is not None
        G = 64
        ramp = self.ramp.ramp(k, G)
        while ramp is None:
            G *= 2
            ramp = self.ramp.ramp(k, G)
        share = _to_float((ramp[0] + ramp[1], 2 << G))  # the bounds (from exact logarithms) within 2**-50
        return 1 - share * (1 - 1 / _to_float(self.factor))

    def columns(self) -> "List[int]":
        """The pair of each column: half repeats 0..h-1, interleaved doubles each, pairs has each once."""
        return self.arrange(list(range(self.pairs)))

    def arrange(self, values: "List[Any]") -> "List[Any]":
        """A cache row from one value per pair, in the rope's layout."""
        if self.layout == "pairs":
            return values
        if self.layout == "half":
            return values + values
        return [x for x in values for _ in (0, 1)]

    def partners(self) -> "List[Tuple[int, int]]":
        """Each pair's two columns (a, b): out[a] = x[a] cos - x[b] sin, out[b] = x[b] cos + x[a] sin."""
        h = self.pairs
        return [(k, k + h) for k in range(h)] if self.layout == "half" else [(2 * k, 2 * k + 1) for k in range(h)]


class _YarnRamp:
    """YaRN's ramp between real bounds (truncate False): w_k (1 - ramp_k (1 - 1/f)) for the pairs inside it.

    low = max(cd(beta_fast), 0), high = min(cd(beta_slow), d - 1), the
    correction dimensions real; ramp_k = clamp((k - low) / (high - low), 0, 1).
    A bound is never whole where it is not clamped (pi**h would be
    rational), so whether k lies below, inside or above the ramp is decided
    with more bits.  Inside it, the multiplier is computed by interval
    arithmetic on the bounds and checked against the precision asked.
    """

    def __init__(
        self,
        base: "_Fraction",
        pairs: int,
        head_dim: int,
        length: "_Fraction",
        fast: "_Fraction",
        slow: "_Fraction",
        factor: "_Fraction",
    ) -> None:
        self.plain = _Frequencies(base, (1, 1), False)
        self.base, self.pairs, self.head_dim = base, pairs, head_dim
        self.length, self.fast, self.slow, self.factor = length, fast, slow, factor
        self.decided: "Dict[int, str]" = {}

    def blends(self, k: int) -> bool:
        return self.region(k) == "ramp"

    def region(self, k: int) -> str:
        """ "extrapolate" (ramp 0: w), "interpolate" (ramp 1: w / f) or "ramp", decided exactly."""
        found = self.decided.get(k)
        if found is not None:
            return found
        G = 64
        while True:
            ramp = self.ramp(k, G)
            if ramp is not None and ramp[1] <= 0:
                found = "extrapolate"
            elif ramp is not None and ramp[0] >= 1 << G:
                found = "interpolate"
            elif ramp is not None and 0 < ramp[0] and ramp[1] < 1 << G:
                found = "ramp"
            else:
                G *= 2
                continue
            self.decided[k] = found
            return found

    def frequency(self, k: int, F: int) -> "_Scaled":
        """w_k M, M = 1 - ramp (1 - 1/f) >= min(1, 1/f), relative error below 2 * 2**-F.

        With low and high in intervals, ramp lies between the quotients of
        the extreme numerators and denominators, and M between the two
        values it gives; its midpoint is within half the width plus 1 unit.
        More bits are taken until that, over M, is below 2**-(F + 4).
        """
        fn, fd = self.factor
        G = F + 24
        while True:
            ramp = self.ramp(k, G)
            if ramp is None:
                G *= 2
                continue
            # M = 1 - ramp (f - 1)/f, monotonic in ramp.
            ends = [(1 << G) - (r * (fn - fd)) // fn for r in ramp]
            M = (ends[0] + ends[1]) // 2
            error = (max(ends) - min(ends)) // 2 + 2
            if M > 0 and error << (F + 4) < M:
                break
            G *= 2
        W, e = self.plain.frequency((k, self.pairs), G)
        return _times_multiplier(W, e, M, G, F)

    def ramp(self, k: int, G: int) -> "Optional[_Interval]":
        """(k - low) / (high - low) lies in [a, b] * 2**-G; None while high - low is not known to be non-zero.

        Either order of the bounds is allowed, as HF's formula allows it
        (clamping can put high below low): the quotient lies between the
        corner quotients of the numerator's and the denominator's intervals.
        """
        (low_a, low_b), (high_a, high_b) = self.bounds(G)
        point = k << G
        denominators = (high_a - low_b, high_b - low_a)
        if denominators[0] <= 0 <= denominators[1]:
            return None
        corners = [((point - low) << G, d) for low in (low_a, low_b) for d in denominators]
        return min(n // d for n, d in corners), max(-((-n) // d) for n, d in corners)

    def whole_bounds(self) -> "Tuple[int, int]":
        """low floored and high ceiled (truncate True), decided exactly: a bound is never whole where it is not
        clamped (that would make pi**h rational), so more bits always decide."""
        G = 64
        while True:
            (low_a, low_b), (high_a, high_b) = self.bounds(G)
            if low_a >> G == low_b >> G and -((-high_a) >> G) == -((-high_b) >> G):
                return low_a >> G, -((-high_a) >> G)
            G *= 2

    def bounds(self, G: int) -> "Tuple[_Interval, _Interval]":
        """The intervals of low and high, clamped, in units of 2**-G."""
        low = _yarn_interval(self.pairs, self.length, self.fast, self.base, G)
        high = _yarn_interval(self.pairs, self.length, self.slow, self.base, G)
        top = (self.head_dim - 1) << G
        return (max(low[0], 0), max(low[1], 0)), (min(high[0], top), min(high[1], top))


def _yarn_interval(pairs: int, length: "_Fraction", beta: "_Fraction", base: "_Fraction", G: int) -> "_Interval":
    """(a, b): YaRN's correction dimension lies in [a, b] * 2**-G (base > 1).

    The numerator h (ln(L0 / (2 beta)) - ln pi) is within 4h units (each
    logarithm within 2), the denominator ln(base) within 2; the quotient
    lies between the four corner quotients, floored and ceiled.
    """
    while True:
        numerator = pairs * (_ln_ratio(_reduced(length[0] * beta[1], 2 * length[1] * beta[0]), G) - _ln(_pi(G), -G, G))
        denominator = _ln_ratio(base, G)
        error = 4 * pairs
        if denominator > 2:
            corners = [
                (n << G, m) for n in (numerator - error, numerator + error) for m in (denominator - 2, denominator + 2)
            ]
            return min(n // m for n, m in corners), max(-((-n) // m) for n, m in corners)
        G *= 2


class _Llama3:
    """llama3's frequency law: w / f past the long wavelength, w below the short one, a blend between.

    With X = L0 w / (2 pi) = L0 / wavelength: X < low_freq_factor gives
    w / f, X > high_freq_factor gives w, and between (ends included)
    w' = (1 - s) w / f + s w, s = (X - low) / (high - low); equal factors
    leave no band between (transformers' and Meta's law for Llama 4).  X is
    transcendental (pi is, and w is algebraic), so it never equals either
    end, and the band is decided by computing X to more bits until its
    interval lies on one side.
    """

    def __init__(
        self,
        base: "_Fraction",
        pairs: int,
        factor: "_Fraction",
        low: "_Fraction",
        high: "_Fraction",
        length: "_Fraction",
    ) -> None:
        self.plain = _Frequencies(base, (1, 1), False)
        self.pairs = pairs
        self.factor = factor
        self.low = low
        self.high = high
        self.length = length
        # q = (1 - 1/f) / (high - low), the blend's slope in X.
        fn, fd = factor
        width = _add(high, (-low[0], low[1]))
        self.slope = _reduced((fn - fd) * width[1], fn * width[0]) if width[0] else (0, 1)  # no band: no blend
        # Bits the blend loses: f (q (5 high + 3) + 4) relative units, see frequency().
        self.blend_bits = _bit_length(_ceiling(factor) * (_ceiling(self.slope) * (5 * _ceiling(high) + 3) + 4)) + 2
        self.decided: "Dict[int, str]" = {}

    def blends(self, k: int) -> bool:
        return self.bands(k) == "blend"

    def bands(self, k: int) -> str:
        """ "long" (w / f), "short" (w) or "blend": where pair k's wavelength lies, decided exactly."""
        found = self.decided.get(k)
        if found is not None:
            return found
        G = 64
        while True:
            X, error, _, _ = self.ratio(k, G)
            low = self._compare(X, error, G, self.low)
            high = self._compare(X, error, G, self.high)
            if low == -1:
                found = "long"
            elif high == 1:
                found = "short"
            elif low == 1 and high == -1:
                found = "blend"
            else:
                G *= 2
                continue
            self.decided[k] = found
            return found

    @staticmethod
    def _compare(X: int, error: int, G: int, bound: "_Fraction") -> int:
        """-1 if X (within error) is surely below the bound, 1 if surely above, 0 if undecided."""
        n, m = bound
        if (X + error) * m < n << G:
            return -1
        if (X - error) * m > n << G:
            return 1
        return 0

    def frequency(self, k: int, F: int) -> "_Scaled":
        """The blend w' = w (1/f + q (X - low)) as (W, k) with relative error below 2 * 2**-F.

        At G = F + 12 + blend_bits: X within 3 X / 2**G + 2 units (X <= high
        in the band), M = 1/f + q (X - low) within q (3 high + 2) + 2 units,
        and M >= 1/f; so w M is within a relative 1.7 * 2**-G +
        f (q (3 high + 2) + 2) * 2**-G < 2**(blend_bits - G).  Cutting W M
        to F + 1 bits adds at most 2**-F.
        """
        G = F + 12 + self.blend_bits
        X, _, W, e = self.ratio(k, G)
        (fn, fd), (ln_, ld), (qn, qd) = self.factor, self.low, self.slope
        above_low = X * ld - (ln_ << G)  # (X - low) 2**G, times ld
        M = (fd << G) // fn + (qn * above_low) // (qd * ld)
        return _times_multiplier(W, e, M, G, F)

    def ratio(self, k: int, G: int) -> "Tuple[int, int, int, int]":
        """(X, error, W, e): X = L0 w_k / (2 pi) with G fraction bits, within error units, and w_k = W 2**(e - G).

        w within a relative 1.7 * 2**-G and pi within 1 unit (a relative
        2**-G / 3): X within a relative 2.1 * 2**-G, plus 1 for the floor.
        """
        W, e = self.plain.frequency((k, self.pairs), G)
        numerator = self.length[0] * W
        denominator = 2 * self.length[1] * _pi(G)
        shift = e + G
        X = (numerator << shift) // denominator if shift >= 0 else numerator // (denominator << -shift)
        return X, ((3 * X) >> G) + 2, W, e


def _ceiling(x: "_Fraction") -> int:
    return -((-x[0]) // x[1])


def _times_multiplier(W: int, e: int, M: int, G: int, F: int) -> "_Scaled":
    """w M as _Frequencies.frequency's (W', k) with F bits, from w = W 2**(e - G) and M with G fraction bits.

    The product is w M * 2**(2G - e); cut to F + 1 significant bits (W' >= 2**F),
    floored: a relative error below 2**-F more.
    """
    product = W * M
    n = _bit_length(product)
    return product >> (n - F - 1), n - 1 + e - 2 * G


def _log_ratio(factor: "_Fraction", length: int) -> "Optional[_Fraction]":
    """ln(factor) / ln(length) as a fraction (n, m) when it is rational, else None (then it is transcendental).

    With length = c**j, c not a perfect power, the ratio is rational exactly
    when factor is a whole power c**e: then it is e / j.
    """
    j = _bit_length(length)
    while j > 1 and _root(length, j) is None:
        j -= 1
    c = _root(length, j)
    n, m = factor
    if m != 1 or c is None or c < 2:
        return None
    e = 0
    while n % c == 0:
        n //= c
        e += 1
    return _reduced(e, j) if n == 1 else None


def _last_position(positions: "Optional[List[_Fraction]]", count: int) -> "_Fraction":
    """The largest position of the rows (0 for none), compared exactly."""
    if positions is None:
        return (count - 1, 1) if count else (0, 1)
    last = positions[0] if positions else (0, 1)
    for p in positions:
        if p[0] * last[1] > last[0] * p[1]:
            last = p
    return last


def _other_scalings(
    kinds: "Tuple[str, ...]", factor: object, length: object, highs: "Tuple[int, ...]" = (4,)
) -> "List[Dict[str, object]]":
    """Each variant of kinds as rope()'s scaling, with this factor and (but linear) length; llama3's once for each
    high_freq_factor of highs, its low_freq_factor 1."""
    made: "List[Dict[str, object]]" = []
    for kind in kinds:
        for high in highs if kind == "llama3" else (0,):
            scaling: "Dict[str, object]" = {"rope_type": kind, "factor": factor}
            if kind == "llama3":
                scaling["low_freq_factor"], scaling["high_freq_factor"] = 1, high
            if kind != "linear":
                scaling["max_position_embeddings" if kind == "dynamic" else "original_max_position_embeddings"] = length
            made.append(scaling)
    return made


def _rope_positions(positions: object, count: int, name: str = "seq_len") -> "Optional[List[_Fraction]]":
    """The positions given, as fractions, at least ``count`` of them; None for 0, 1, 2..."""
    given = _check_positions(positions)
    if given is None:
        return None
    if len(given) < count:
        raise ValueError(f"{name} must be at most len(positions) = {len(given)}, got {count}")
    return list(given[:count])


# ---------------------------------------------------------------------------
# The diagnosis: which convention, mistake or damage explains a table
# ---------------------------------------------------------------------------
#
# A candidate is a way of computing the table: a convention, a base, a known
# mistake.  A rotary cache's candidates (a setup, a mistake) go through the
# same engine: one sample, one simulator of a narrow-format pipeline
# (_pipeline), one scoring and ranking (_scored), one check on every row
# (_explanation); only their allowance is their own (_rope_candidate).
#
# A table's candidate reproduces an element when it gives it within the element's
# allowance: twice the default tolerance (the candidates compute in float64
# with math.sin, not exactly), in the narrow format of a precision mistake,
# capped at 2**-10.  It explains the table when it reproduces at least 99% of
# the sampled elements, or when the elements it misses are local damage
# (isolated elements, moved or zeroed rows, wrong columns) of at most eight
# items.  Nothing else is ever named.  Two guards keep a wide allowance from
# explaining what it should not: a candidate that gives the asked
# convention's rows is skipped (the asked convention did not explain the
# table), and a precision mistake must reproduce more than the asked
# convention does within the mistake's own allowance.


def _diagnose(
    table: "_Source",
    asked: "Optional[Convention]",
    dtype: str,
    damaged: "Dict[int, List[int]]",
    not_finite: "List[Tuple[int, int, float]]",
    context: "Convention",
    unjudged: int = 0,
    not_finite_count: int = -1,
    counted: "Optional[Tuple[int, int]]" = None,
) -> "Tuple[str, Tuple[str, ...]]":
    """Say what explains the table, and its causes: the convention asked for with local damage, another candidate, or nothing.

    ``asked`` is None when the convention asked for has no table of this
    width, or cannot judge most of it; ``context`` is the convention asked for, whose base and given
    positions the candidates share; ``unjudged`` counts the elements the default rule does not judge;
    ``not_finite`` holds the first elements that are not finite, of ``not_finite_count`` (its length if
    -1); ``counted`` is (rows, elements) outside the tolerance when ``damaged`` holds only the first of them.
    The causes (Report.causes) begin with ``not_finite`` where such elements are named and ``output:FORMAT``
    where every value is a number of a narrower format.

    Long because each verdict before the candidates is a short step, in the order tried: elements not
    finite, zeros, a narrower format, the convention asked for with local damage.
    """
    d_model = len(table[0])
    prefix = "Diagnosis: "
    causes: "Tuple[str, ...]" = ()
    if not_finite_count < 0:
        not_finite_count = len(not_finite)
    if not_finite:
        prefix += _not_finite_text(not_finite[:5], not_finite_count, dtype) + "; "
        causes += ("not_finite",)
        if not_finite_count == len(table) * d_model:
            return prefix + "no element is a finite number.", causes
        # Those are named already; the rest of the table is what needs explaining.
        bad = set((r, c) for r, c, _ in not_finite)
        damaged = {r: [c for c in columns if (r, c) not in bad] for r, columns in damaged.items()}
        damaged = {r: columns for r, columns in damaged.items() if columns}
    if all(x == 0.0 for row in table for x in row):
        return prefix + "every element of the table is 0.", causes + ("zeros",)
    held = _narrowest_format(table, dtype) if asked is not None and not not_finite else None
    if asked is not None and held is not None:
        tally = _tally(table, asked, held, None, None, measure=False)
        causes += (f"output:{held}",)
        if not tally.failures and 2 * tally.unjudged <= len(table) * d_model:
            return prefix + _narrower_words(held, dtype), causes
        # Stored in the narrower format and wrong besides: explained as a table of that format.
        prefix += f"every value of the table is a {held} number ({dtype} was asked); checked as {held}, "
        dtype, damaged, unjudged = held, tally.damaged, tally.unjudged
        counted = None if len(damaged) == tally.damaged_rows else (tally.damaged_rows, tally.damaged_cells)
    shift, local = 0, ""
    if asked is not None:
        others = "the other elements are" if not_finite else "every element is"
        if unjudged:
            others = "every other element is" if not_finite else "every element it judges is"
        if not damaged:
            return prefix + (
                f"{others} within the default tolerance of the {asked._name(d_model)} convention, so the"
                f" differences are no larger than a faithful {dtype} computation makes."
            ), causes
        if counted is None:  # damage held in part is more than local
            reference = _convention_candidate(_describe(asked, d_model), asked, len(table), d_model)
            items, shift = _damage(table, damaged, reference, dtype)
            if items is not None:
                local = f"the table follows the {asked._name(d_model)} convention except for {_join(items, '; ')}."
            if local and len(damaged) < len(table):
                return prefix + local, causes + ("damage",)
    # Damage on every row (rows 0 and 7 swapped, 1 and 6, ...) is told only where no convention explains the table.
    if counted is None:
        counted = (len(damaged), sum(len(columns) for columns in damaged.values()))
    candidates = _candidates(table, asked, context, dtype, shift)
    words, found = _explanation(table, candidates, asked, dtype, counted, bool(not_finite))
    if not found and not local:
        # No sequence's story: a flattened grid's, the grid presets on the shapes its rows show, by the same engine
        # (tried last: on a table whose rows repeat, positions rounded to float16, a shape is found at a cost).
        grids = _explanation(
            table, list(_grid_candidates(table, dtype, None, None)), None, dtype, named=bool(not_finite)
        )
        words, found = grids if grids[1] else (words, found)
    if local and not found:
        return prefix + local, causes + ("damage",)
    return prefix + words, causes + found


def _narrower_words(held: str, dtype: str) -> str:
    """The verdict on a table (or a rotary cache) whose values are all numbers of a narrower format that passes."""
    return (
        f"every value of the table is a {held} number, and {dtype} was asked: checked as {held}"
        f" (dtype={held!r}), it passes; its values were rounded to {held}."
    )


# The bases the diagnosis tries besides the one asked for, for tables and rotary caches alike: the paper's and
# those models use (Llama 3's 500000, Qwen's 1000000, ...), then small ones.  A constant tuple, in flash when frozen.
_BASES = (10000, 500000, 1000000, 100000, 50000, 1000000000, 1000, 100)


def _candidates(
    table: "_Table", asked: "Optional[Convention]", context: "Convention", dtype: str, shift: int
) -> "List[_Candidate]":
    """Every convention and known mistake the diagnosis tries, simplest first, the one asked for before all.

    Each family of candidates is a small generator, and the families are tried in the order of one tuple:
    the convention asked for; the conventions read from the table (_fit); each preset; those read with a
    number kept as read; the layouts, spacings and odd rules from nearby first positions, and the asked
    convention counted the other way; other bases; the known mistakes (_mistakes); and last, the positions
    read row by row.  A convention family yields (convention, words; '' for its own description), kept
    once per table it makes; all share the asked convention's given positions.

    Long because each family is a short generator, with the tuple that orders them.
    """
    seq_len, d_model = len(table), len(table[0])
    found: "List[_Candidate]" = []
    seen: "Set[Tuple[object, ...]]" = set()
    given = context._fields["positions"]
    reference = asked if asked is not None else context.replace(odd="sine")
    fitted_conventions = _fit(table, context, dtype)

    def add_convention(convention: "Convention", description: str = "") -> None:
        if given is not None and convention._fields["positions"] is None:
            convention = convention._with(positions=given)
        try:
            key = convention._table_key(d_model)
            convention._exponents(d_model)
        except ValueError:
            return  # a shift too large for this width
        if key in seen or (convention._fields["odd"] == "error" and d_model % 2):
            return
        seen.add(key)
        causes = tuple(field for field, _ in _changed_fields(context, convention, d_model))
        found.append(
            _convention_candidate(description or _describe(convention, d_model), convention, seq_len, d_model, causes)
        )

    def asked_first() -> "Iterator[_Made]":
        if asked is not None:
            yield asked, ""

    def fitted(as_read: bool) -> "Iterator[_Made]":
        # The conventions read from the table, those with a number kept as read only after every preset.
        for kept, convention in fitted_conventions:
            if (convention._fields["positions"] is None or given is not None) and kept == as_read:
                yield convention, ""

    def presets() -> "Iterator[_Made]":
        for preset in PRESETS.values():
            yield preset, ""
            if context._fields["base"] != preset._fields["base"]:
                yield preset.replace(base=context._shown("base")), ""

    def nearby() -> "Iterator[_Made]":
        if given is not None:
            return
        start, step = context._fields["start"], context._fields["step"]
        starts = [(0, 1), (1, 1), (2, 1)] + [_add(start, step, k) for k in (1, 2, -1, -2)]
        if shift:
            starts.insert(0, _add(start, step, shift))
        odd_rules = ("sine", "zero", "round-up") if d_model % 2 else ("sine",)
        for first in starts:
            for layout in _check_of("layout") or ():
                for spacing in _check_of("spacing") or ():
                    for odd in odd_rules:
                        yield (
                            context.replace(layout=layout, spacing=spacing, shift=1, start=_number(first), odd=odd),
                            "",
                        )
        yield context.replace(descending=not context._fields["descending"]), ""

    def bases() -> "Iterator[_Made]":
        for other in _BASES:
            if (other, 1) != reference._fields["base"]:
                words = f"the {reference._name(d_model)} convention with base {other:g} instead of {reference._shown('base')}"
                yield reference.replace(base=other), words

    def mistakes() -> "Iterator[_Made]":
        return _mistakes(table, reference, dtype)

    def positions_read() -> "Iterator[_Made]":
        # The least simple story, said as runs of consecutive positions, and only when they are few.
        for _, convention in fitted_conventions:
            read = convention._fields["positions"] if given is None else None
            where = "" if read is None else _runs_text([position for position, _ in read])
            if where:
                yield convention, f"{_describe(convention, d_model)}, with {where}"

    families = (
        asked_first,
        lambda: fitted(False),
        presets,
        lambda: fitted(True),
        nearby,
        bases,
        mistakes,
        positions_read,
    )
    for family in families:  # a new family of candidates: one generator, and its place here
        for made in family():
            if isinstance(made, _Candidate):
                found.append(made)
            else:
                add_convention(*made)
    memo: "Dict[Tuple[object, ...], List[float]]" = {}
    for candidate in found:
        candidate.memo = memo  # candidates of one convention and precision share their allowances
    return found


def _grid_candidates(
    table: "_Source",
    dtype: str,
    shapes: "Optional[List[Tuple[Tuple[int, ...], int]]]",
    skip: object,
) -> "Iterator[_Candidate]":
    """The grid presets a table may be, as the diagnosis's candidates (the grids family): each told by element.

    shapes: the (shape, prefix rows) to try; None tries the squares the rows make with no prefix or one row
    of zeros (a class token's).  Each grid preset of as many axes is tried on each, with its positions' scale
    read from the table (diffusers' base_size): the angle of x's slowest pair that turns at least 0.01 at the
    cell x = 1, over the preset's.  A candidate's rows are the preset's in float64, its allowance loose
    (2**-9 + 2**(1-p) |value|, for p bits of dtype); it is checked on every element by the default rule
    (_grid_tally), and explains the table only if it passes, or fails in at most _DAMAGE_ITEMS elements.
    skip is the (shape, prefix, sorted keywords) of a grid asked for already.

    Long because the search is one loop: shapes, presets, the scale read, the candidate.
    """
    count, d_model = len(table), len(table[0])
    if shapes is None:
        shapes = []
        for prefix in (0, 1):
            cells = count - prefix
            if cells < 4 or (prefix and any(table[0])):
                continue

            def differ(step: int, stride: int) -> "Set[int]":
                # The columns where the row step rows on differs from its base, for most of up to three
                # bases two strides apart, no row in two of the comparisons (a damaged element is outvoted).
                bases = [prefix + 2 * j * stride for j in range(3) if 2 * j * stride + step < cells]
                votes: "Dict[int, int]" = {}
                for b in bases:
                    for c, (x, y) in enumerate(zip(table[b], table[b + step])):
                        if x != y:
                            votes[c] = votes.get(c, 0) + 1
                return set(c for c, n in votes.items() if 2 * n > len(bases))

            # A grid's row k cells on, for k below the last axis's length n, moves along that axis alone:
            # its columns differ where the next row's do; k = n moves along the next axis alone: columns
            # apart from those.  So n is the least divisor of the cells whose columns are apart from the
            # next row's, and the middle axis's length times n the least multiple of n apart from both;
            # each read from cells at the start of their axis (bases a length apart).
            lengths: "List[int]" = []
            for k in range(2, cells // 2 + 1):
                if not cells % k and (not lengths or not k % lengths[-1]):
                    seen = differ(1, k) if not lengths else differ(1, k) | differ(lengths[0], k)
                    apart = differ(k, k)
                    if apart and not apart & seen:
                        lengths.append(k)
                        if len(lengths) == 2:
                            break
            if len(lengths) == 2 and cells // lengths[1] > 1:
                n, m = lengths
                shapes.append(((cells // m, m // n, n), prefix))
            if lengths:
                shapes.append(((cells // lengths[0], lengths[0]), prefix))
    precision = _DTYPES[dtype][0]
    # Each shape's presets as they are, then with a scale read: a table that is a preset's is named by it.
    for shape, prefix, fitting in [(shape, prefix, fitting) for shape, prefix in shapes for fitting in (False, True)]:
        if any(x != 0.0 for r in range(prefix) for x in table[r]):
            continue
        for name, description, axes, _, grid_changes in _GRID_PRESETS:
            keywords: "Dict[str, object]" = {"preset": name}
            if prefix:
                keywords["prefix"] = prefix
            if axes != len(shape) or shape[-1] < 2 or (shape, prefix, sorted(keywords.items())) == skip:
                continue
            try:
                plan = _grid_rows("compare", shape, d_model, False, "float64", None, keywords)
                names, (moved, n, width) = plan["names"], plan["axes"][-1]
                positions = list(moved._float_positions(3))
                frequencies = moved._float_frequencies(width)
                # Read to about the format's precision: a bfloat16 value's angle is off by 2**-8 of itself.
                slack = max(1e-3, 2.0 ** (2 - precision))
                # x's two slowest pairs that turn at least 0.01 at the cells x = 1 and x = 2: each angle as read
                # over the preset's.  The ratio two readings agree on (a damaged element spoils one).
                readings: "List[float]" = []
                for x in (1, 2)[: shape[-1] - 1]:
                    row, taken = table[prefix + x], 0
                    for pair in sorted(range(len(frequencies)), key=lambda k: frequencies[k]):
                        if f"sin_x{pair}" in names and f"cos_x{pair}" in names and taken < 2:
                            read = math.atan2(row[names.index(f"sin_x{pair}")], row[names.index(f"cos_x{pair}")])
                            if abs(read) >= 0.01 and positions[x] * frequencies[pair] > 0.0:
                                readings.append(read / (positions[x] * frequencies[pair]))
                                taken += 1
                agreed = [a for a in readings if sum(1 for b in readings if abs(a - b) <= slack * abs(b)) > 1]
                ratio = agreed[0] if agreed else 1.0
                if (abs(ratio - 1.0) > slack) != fitting:
                    continue
                if fitting:
                    default = dict(grid_changes).get("position_scale", 1)
                    if not isinstance(default, int):
                        continue  # a scale per axis (CogVideoX's): not read from one axis
                    wanted = ratio * default
                    # The simplest fraction p/q (q up to 16) within the slack, as a framework's base sizes make.
                    fraction = _Fit.fraction_near(wanted, slack * wanted, range(1, 17))
                    if fraction is None:
                        continue
                    keywords["position_scale"] = fraction[0] if fraction[1] == 1 else f"{fraction[0]}/{fraction[1]}"
                    plan = _grid_rows("compare", shape, d_model, False, "float64", None, keywords)
            except (ValueError, TypeError, OverflowError):
                continue  # no such grid of this width, or a scale read from no angle
            yield _grid_candidate(table, dtype, shape, plan, keywords, description)


def _grid_candidate(
    table: "_Source", dtype: str, shape: "Tuple[int, ...]", plan: "_Grid", keywords: "Dict[str, object]", text: str
) -> "_Candidate":
    """A grid preset (its plan and keywords; text, its description) as a candidate of the grids family."""
    d_model, prefix = len(table[0]), plan["prefix"]
    made: "List[List[List[float]]]" = []  # the axes' tables in float64, made when a row is first asked for

    def make_row(r: int) -> "List[float]":
        if not made:
            made.extend(plan["tables"](False, "float64"))
        return plan["row_at"](made, r)

    def check() -> "_Comparison":
        exact = _grid_rows("compare", shape, d_model, True, dtype, None, keywords)
        return _grid_tally(table, exact, dtype, None, None, False)

    shown = " x ".join(str(n) for n in shape)
    options = [(key, given) for key, given in keywords.items()] + ([("dtype", dtype)] if dtype != "float64" else [])
    line = " ".join(f"--{key.replace('_', '-')} {given}" for key, given in options)
    candidate = _Candidate(
        f"a grid of {shown} cells, a row per cell with x fastest"
        + (f", after {prefix} row of zeros" if prefix else "")
        + f", in the {keywords['preset']} convention ({text}"
        + "".join(f"; with {key}={given}" for key, given in keywords.items() if key not in ("preset", "prefix"))
        + ")",
        make_row,
        None,
        len(table),
        local=True,
        causes=("grid",),
    )
    candidate.check, candidate.lead = check, "the table is"
    candidate.call = (
        f"encoding({tuple(shape)}, {d_model}"
        + "".join(f", {key}={given!r}" for key, given in options)
        + f") (on the command line: {shown.replace(' x ', 'x')} {d_model} {line})"
    )
    return candidate.loosely(dtype)


def _fit(table: "_Table", context: "Convention", dtype: str) -> "List[Tuple[bool, Convention]]":
    """The conventions the table's values say it follows, simplest first; [] when its columns do not pair up.

    Each with whether it keeps a number as read (nothing simple was near it, within the reading's
    precision in dtype):

    >>> [(read, c._name(16)) for read, c in _fit(encoding(64, 16, preset="tf-tutorial", base=20000, scale=0.5), Convention(), "float64")][:1]
    [(False, 'tf-tutorial (base=20000, scale=0.5)')]

    Long because the fit is one piece with its helpers inside it (the map's budget): the angles read for
    each way the columns may pair up, then each field read from them in turn, each the simplest number near it.
    """
    seq_len, d_model = len(table), len(table[0])
    if seq_len < 3 or d_model < 2:
        return []
    turn = 2 * math.pi
    near = _Fit.near(dtype)

    def paired(convention: "Convention") -> "List[Tuple[int, int, int]]":
        # (pair, sine column, cosine column) of each pair with both, in the convention's layout.
        plan = convention._plan(d_model)
        sines = {pair: c for c, (kind, pair) in enumerate(plan) if kind == _SINE}
        return [(pair, sines[pair], c) for c, (kind, pair) in enumerate(plan) if kind == _COSINE and pair in sines]

    def within(fastest: float) -> float:
        # How near a whole number a position read through pairs up to this frequency is: 2**(2-p) radian over
        # it (in bfloat16 2**-6 over w, not 1e-3), at most 1/64.
        return min(1 / 64, max(1e-3, _power_of_two(2 - _DTYPES[dtype][0]) / fastest))

    def read_start(law: "List[float]", angles: "List[float]") -> "Optional[object]":
        # The first (or, counting down, the last) position, with the law's own frequencies (its base and angle
        # scale taken as simple numbers: read with the growths, a frequency's error would move it), through
        # the pairs below 1e6: an integer, or a fraction of denominator up to 16, within the reading's
        # precision; else the number read.
        order = sorted(range(len(angles)), key=lambda i: law[i])
        if not 0.0 < law[order[0]] < _INF:
            return None
        readings = [(law[order[0]], angles[order[0]])]
        for i in order[1:]:
            if not 0.0 < law[i] < 1e6:
                break
            readings.append((law[i], angles[i]))
        position = _Fit.unwrapped("angle", readings)[0]
        fraction = _Fit.fraction_near(position, within(readings[-1][0]), range(1, 17))
        if fraction is None:
            return position
        return fraction[0] if fraction[1] == 1 else f"{fraction[0]}/{fraction[1]}"

    rows = _Fit.rows(seq_len)
    values = {r: table[r] for r in rows + [seq_len - 1]}
    if not all(-_INF < x * x < _INF for row in values.values() for x in row):
        return []  # a value not finite, or past what a square holds: no law to read
    step = _to_float(context._fields["step"])
    found: "List[Tuple[int, Convention]]" = []
    for layout in ("interleaved", "sin-cos"):
        for odd in ("sine", "zero", "round-up") if d_model % 2 else ("sine",):
            # The columns pair up when s**2 + c**2 is within A**2 / 64 of one A**2 on 9 of 10 rows and pairs
            # (a zeroed or damaged row is not the law's).
            pairs = [(s, c) for _, s, c in paired(Convention(layout=layout, odd=odd))]
            sums = sorted(values[r][s] * values[r][s] + values[r][c] * values[r][c] for r in values for s, c in pairs)
            square = sums[len(sums) // 2] if sums else 0.0
            if not 0.0 < square < _INF or 10 * sum(1 for x in sums if abs(x - square) > square / 64) > len(sums):
                continue
            growths, first, final = [], [], []
            for s, c in pairs:
                angles = {r: math.atan2(values[r][s], values[r][c]) for r in values}
                growths.append(_Fit.unwrapped("angle", [(r, angles[r] - angles[0]) for r in rows[1:]])[0])
                first.append(angles[0])
                final.append(angles[seq_len - 1])
            # Falling angles: positions counting down, or (sin-cos) the cosines first.
            h = Convention(odd=odd)._pairs(d_model)  # one more than the pairs read, for some odd rules
            direction = -1.0 if 2 * sum(1 for g in growths if g < 0) > len(growths) else 1.0
            speeds = [direction * g for g in growths]
            # ln w_i is a line in i: its slope and its value at 0, the medians over pairs whose growth is
            # below 1 radian a row (no turn hidden in it), else (d_model 4 with an angle scale past 1) over all.
            for limit in (1.0, _INF):
                slopes = sorted(
                    math.log(speeds[i] / speeds[i + 1])
                    for i in range(len(speeds) - 1)
                    if 0.0 < speeds[i + 1] and 0.0 < speeds[i] < limit
                )
                if slopes:
                    break
            if h > 1 and not slopes:
                continue
            slope = slopes[len(slopes) // 2] if slopes else 0.0
            heights = sorted(math.log(w) + slope * i for i, w in enumerate(speeds) if 0.0 < w < 1.0)
            if not heights:
                if not speeds[0] > 0.0:
                    continue
                heights = [math.log(speeds[0])]
            height = math.exp(heights[len(heights) // 2])
            # The base's logarithm is the slope times the spacing's divisor: d/2 (the paper's), or h - 1.
            spacings: "List[Tuple[str, float]]" = [("paper", math.log(_to_float(context._fields["base"])))]
            if h > 1:
                spacings = [
                    ("paper", slope * (d_model if odd == "sine" else 2 * h) / 2),
                    ("tensor2tensor", slope * (h - 1)),
                ]
            # Pair 0's growth is the step (the context's) times the angle scale: a simple number, or a simple
            # number of whole turns.
            factor = height / step
            angle_scale, full_turns = _Fit.simplest(factor, near), False
            if angle_scale == factor and _Fit.simplest(factor / turn, near) != factor / turn:
                angle_scale, full_turns = _Fit.simplest(factor / turn, near), True
            # The output scale: 1, x-transformers' d**-0.5 or MLX's sqrt(2/d), a simple number or root, or as read.
            scale: "object" = math.sqrt(square)
            per_width = square * d_model
            if abs(math.sqrt(square) - 1.0) < near:
                scale = 1
            elif abs(per_width - round(per_width)) < near * per_width and 1 <= round(per_width) <= 2:
                scale = f"sqrt({round(per_width)}/d)"
            else:
                # A simple number, or the root of one: whichever is nearer the scale read.
                root, squared = _Fit.simplest(math.sqrt(square), near / 10), _Fit.simplest(square, near / 10)
                miss_root = abs(_to_float(_rational("scale", root)) / math.sqrt(square) - 1)
                miss_square = abs(_to_float(_rational("scale", squared)) / square - 1) / 2  # a root halves it
                if squared != square and (root == math.sqrt(square) or miss_square < miss_root):
                    scale = f"sqrt({squared})"
                elif root != math.sqrt(square):
                    scale = root
            readings = [(layout, False, first)] if direction > 0 else [(layout, True, final)]
            if direction < 0 and layout == "sin-cos":
                readings.append(("cos-sin", False, [turn / 4 - a for a in first]))
            for layout_read, descending, angles_read in readings:
                for spacing, log_base in spacings:
                    if not 0.0 < log_base < 690.0:
                        continue
                    base = _Fit.simplest(math.exp(log_base), near)
                    try:
                        fitted = context.replace(
                            layout=layout_read,
                            spacing=spacing,
                            shift=1,
                            base=base,
                            angle_scale=angle_scale,
                            full_turns=full_turns,
                            start=0,
                            step=context._shown("step"),
                            descending=descending,
                            positions=None,
                            odd=odd,
                            scale=scale,
                        )
                        start = read_start(fitted._float_frequencies(d_model), angles_read)
                        if start is None:
                            continue
                        if start != 0:
                            fitted = fitted.replace(start=start)
                    except (ValueError, OverflowError):
                        continue
                    # Numbers kept as read (floats) make a story less simple than round ones.
                    plain = sum(1 for x in (base, angle_scale, start, scale) if isinstance(x, float))
                    found.append((plain, fitted))
    # The simplest readings first: fewest numbers kept as read, then fewest fields changed from a preset.
    found.sort(key=lambda item: (item[0], len(_closest_preset(item[1], d_model)[1])))
    conventions = [(plain > 0, convention) for plain, convention in found]
    # Rows whose positions are no progression (one position broadcast to every row, positions that restart
    # with each packed sequence): each row's position read with the context's law.
    frequencies = context._float_frequencies(d_model)
    by_speed = sorted((frequencies[pair], s, c) for pair, s, c in paired(context))
    if context._fields["positions"] is None and by_speed and 0.0 < by_speed[0][0] < _INF:
        every = _Fit.positions_read(table, by_speed, within)
        if every is not None:
            try:
                conventions.append((False, context.replace(positions=every)))
            except ValueError:
                pass
    return conventions


class _Fit:
    """The readings every fit shares (a table's convention, a rotary cache's law, a grid's cells): the rows a
    law is read on, an angle unwrapped over multipliers, a number taken as the simplest near it.  One
    namespace, not six module-level names: see the map's budget (the module's dict of names)."""

    @staticmethod
    def positions_read(
        table: "_Table", by_speed: "List[Tuple[float, int, int]]", within: "Callable[[float], float]"
    ) -> "Optional[List[int]]":
        """Each row's position, where the sampled rows' are whole numbers and no progression: the slowest pair's
        angle unwrapped through the faster ones (by_speed: each pair's (frequency, sine column, cosine column),
        slowest first), whole within within(the fastest frequency read); None where they are not.
        """
        # The pairs a reading is unwrapped through: from the slowest to the fastest below 1e6, each at most 100
        # times as fast as the one before (or the next pair), so that an angle read to 1e-3 (float16's values)
        # leaves the next pair's prediction within 0.1 radian: a few pairs a row, not every pair.
        ladder = [by_speed[0]]
        for k in range(1, len(by_speed)):
            if not by_speed[k][0] < 1e6:
                break
            following = by_speed[k + 1][0] if k + 1 < len(by_speed) else _INF
            if not following <= 100 * ladder[-1][0] or not following < 1e6:
                ladder.append(by_speed[k])

        def position_of(row: "List[float]") -> float:
            # NaN where the row is no law's: a value not finite, or its pairs' s**2 + c**2 differing by more than
            # a 64th (a zeroed row).
            squares = [row[s] * row[s] + row[c] * row[c] for _, s, c in by_speed]
            if not -_INF < sum(squares) < _INF or not max(squares) - min(squares) <= max(squares) / 64:
                return _NAN
            if not max(squares) > 0.0:
                return _NAN
            return _Fit.unwrapped("angle", [(w, math.atan2(row[s], row[c])) for w, s, c in ladder])[0]

        near_whole = within(ladder[-1][0])
        sample = _sample_rows(len(table))
        read = [position_of(table[r]) for r in sample]
        if not all(x == x and abs(x - round(x)) <= near_whole for x in read):
            return None  # not whole numbers, or a row no law's
        steps = set(round(b) - round(a) for a, b in zip(read, read[1:]))
        gaps = set(q - r for r, q in zip(sample, sample[1:]))
        if len(steps) == 1 and steps == gaps:
            return None  # a progression: the readings of the fields have it
        every = [position_of(row) for row in table]
        if all(x == x and abs(x - round(x)) <= near_whole for x in every):
            return [round(x) for x in every]
        return None

    @staticmethod
    def near(dtype: str) -> float:
        """How near a number read must be to a simple one to be taken for it: the values' own precision in
        dtype (16 ulps, 2**(5-p) for p bits), or 1e-4."""
        return max(1e-4, _power_of_two(5 - _DTYPES[dtype][0]))

    @staticmethod
    def rows(count: int) -> "List[int]":
        """The rows a fit reads a law on, of count rows: 0, 1, 2, 4, 8, ... below count.  From row 0 to row r a
        pair's angle grows r times its growth a row, known to within pi / r from the rows before, so each reading
        takes the turn it is nearest to."""
        rows = [0, 1, 2]
        while rows[-1] * 2 < count:
            rows.append(rows[-1] * 2)
        return rows

    @staticmethod
    def unwrapped(kind: str, readings: "List[Tuple[float, float]]", estimate: float = 0.0) -> "Tuple[float, float]":
        """The number t that readings (m, x) of x = cos(m t) (kind "cos"), sin(m t) or the angle m t itself (kind
        "angle", as atan2 reads a sine and a cosine) say, and the quality of the reading kept: each reading's angle
        taken in the turn and branch nearest m times the estimate so far (which starts at estimate), and kept where
        it is less sensitive to rounding than the one before: m sqrt(1 - x**2) larger (an angle read by atan2 is as
        precise at every m: each is kept, the readings slowest first).  A reading's angle is within an ulp of x over
        sqrt(1 - x**2), so t is within ulp / quality.  The one way the fits read a pair's frequency over rows, a
        row's position over pairs, and a cell's over an axis's pairs.

        >>> [round(x, 9) for x in _Fit.unwrapped("cos", [(1, math.cos(0.3)), (4, math.cos(1.2)), (16, math.cos(4.8))])]
        [0.3, 15.938633741]
        """
        quality = 0.0
        for m, x in readings:
            q = m if kind == "angle" else m * math.sqrt(max(0.0, 1 - x * x))
            if q > quality or kind == "angle":
                estimate, quality = _Fit.angle_near(kind, x, m * estimate) / m, q
        return estimate, quality

    @staticmethod
    def angle_near(kind: str, x: float, predicted: float) -> float:
        """The angle whose cos (kind "cos") or sin is x, or (kind "angle") x itself, in the turn and branch nearest
        the prediction (of two as near, the larger: angles grow from 0).

        >>> round(_Fit.angle_near("sin", math.sin(2.0), 1.9), 12), round(_Fit.angle_near("cos", math.cos(7.0), 6.5), 12)
        (2.0, 7.0)
        """
        if kind == "angle":
            return x + 2 * math.pi * round((predicted - x) / (2 * math.pi))
        x = min(1.0, max(-1.0, x))
        angle = math.acos(x) if kind == "cos" else math.asin(x)
        branches = (angle, -angle) if kind == "cos" else (angle, math.pi - angle)
        turns = [b + 2 * math.pi * round((predicted - b) / (2 * math.pi)) for b in branches]
        return min(turns, key=lambda t: (abs(t - predicted), -t))

    @staticmethod
    def fraction_near(x: float, within: float, denominators: "Iterable[int]") -> "Optional[_Fraction]":
        """The first p/q, q taken from denominators in turn, within ``within`` of x; None if none is.

        >>> _Fit.fraction_near(0.6667, 1e-3, range(1, 17)), _Fit.fraction_near(0.6667, 1e-3, (2, 4, 8, 16))
        ((2, 3), None)
        """
        for q in denominators:
            p = int(round(x * q))
            if abs(p / q - x) <= within:
                return p, q
        return None

    @staticmethod
    def simplest(x: float, tolerance: float, most: int = 3) -> "object":
        """The simplest number within a relative tolerance of x: an int, '0.125' (up to three digits), '1/3'
        (a denominator up to 16), then up to ``most`` digits, each count tried as a binary fraction as fine
        first (a float's own number: 1.0078125, 2**-7 from 1); else x.

        >>> _Fit.simplest(499999.97, 1e-6), _Fit.simplest(0.33334, 1e-4), _Fit.simplest(0.123456789, 1e-6)
        (500000, '1/3', 0.123456789)
        >>> _Fit.simplest(1.00781249, 1e-7, 8), _Fit.simplest(1.01230001, 1e-7, 8)
        (1.0078125, '1.0123')
        """
        if x == 0.0 or not -_INF < x < _INF:
            return x
        magnitude = 10.0 ** math.floor(math.log10(abs(x)))
        for digits in range(1, max(4, most) + 1):
            if digits == 4:  # after three digits, a fraction
                for denominator in range(2, 17):
                    numerator = round(x * denominator)
                    if 0 < abs(numerator) <= 100 and abs(numerator / denominator - x) <= tolerance * abs(x):
                        return f"{numerator}/{denominator}"
                if most < 4:
                    break
            unit = magnitude / 10 ** (digits - 1)
            if digits > 3:
                binary = math.ldexp(1.0, math.frexp(unit)[1] - 1)  # the power of two at or below the unit
                rounded = round(x / binary) * binary
                if abs(rounded - x) <= tolerance * abs(x):
                    return rounded
            rounded = round(x / unit) * unit
            if abs(rounded - x) <= tolerance * abs(x):
                return int(round(rounded)) if unit >= 1 else f"{rounded:.{digits}g}"
        return x


def _describe(convention: "Convention", d_model: int) -> str:
    """A convention in plain words: its preset's (with every preset that makes the same table), or the closest one's and what differs."""
    presets = convention._presets(d_model)
    name, changed = (presets[0], []) if presets else _closest_preset(convention, d_model)
    if changed:
        presets = PRESETS[name]._presets(d_model)  # the presets that make the table changed
        presets.insert(0, presets.pop(presets.index(name)))
    # No ':' inside an f-string's braces: MicroPython takes it for a format spec.
    whose, what = [words for preset, words, _ in _PRESETS if preset == name][0].split(":", 1)
    same = f", the same as {_join(presets[1:], ', ')}" if presets[1:] else ""
    text = f"{whose} convention (preset {name}{same}):{what}"
    if not changed:
        return text
    # How each field that differs from the preset's is named (a flag's words when set and when not).
    named: "Dict[str, Any]" = {
        "layout": "layout",
        "spacing": "spacing",
        "shift": "shift",
        "base": "base",
        "angle_scale": "angles times",
        "full_turns": ("angles in whole turns (each frequency times 2 pi)", "angles in radians, not whole turns"),
        "start": "positions from",
        "step": "a step between positions of",
        "descending": ("positions counting down", "positions counting up"),
        "positions": "positions given",
        "odd": "an odd d_model's rule",
        "scale": "values times",
    }
    words = []
    for field, value in changed:
        theirs = getattr(PRESETS[name], field)
        if field in ("full_turns", "descending"):
            words.append(named[field][0 if value else 1])
        else:
            shown, was = _short(value), _short(theirs)
            if field not in ("layout", "spacing", "odd"):  # a number as it reads, without a string's quotes
                shown, was = shown.replace("'", ""), was.replace("'", "")
            if field == "positions":
                shown = "one by one"
            words.append(f"{named[field]} {shown} instead of {was}")
    return f"{text}, with {_join(words, ', ')}"


# The steps of a computation a precision mistake can round, in order, for tables and rotary caches alike:
# (step, its words and its Report.causes key in a rotary cache, whose code names the frequencies inv_freq).  A
# step is rounded to a narrow format; the frequencies may also be computed in one ("float16 arithmetic",
# the base and exponents rounded first).  A constant tuple, in flash when frozen.
_STEPS = (
    ("positions", "the positions", "positions"),
    ("frequencies", "inv_freq", "inv_freq"),
    ("angles", "the angles", "angles"),
    ("output", "the values", "output"),
)


def _mistakes(table: "_Table", convention: "Convention", dtype: str) -> "Iterator[_Candidate]":
    """The known mistakes, one family each, in the order of one tuple: a wrong exponent, a cosine-first
    interleave, float32's errors, steps rounded to a narrow format, a transpose.

    Long because each family is a short generator, with the tuple that orders them.
    """
    seq_len, d_model = len(table), len(table[0])
    plan = convention._plan(d_model)
    name = convention._name(d_model)
    scale = convention._output_scale(d_model).value
    precision = _DTYPES[dtype][0]
    sample = _sample_rows(seq_len)

    def exponents() -> "Iterator[_Candidate]":
        """Mistakes in the exponent, each as every column's frequency: the words, then the frequencies.

        Long because each mistake is a row of its table, the rows built together from
        the convention's fields; nested, as the other families are, so that it is built only when tried.
        """
        exponents = convention._exponents(d_model)
        base = _to_float(convention._fields["base"])
        factor = _to_float(convention._fields["angle_scale"]) * (
            2 * math.pi if convention._fields["full_turns"] else 1.0
        )
        exponent = [a / b for a, b in exponents]
        odd_cosines = [
            (dim if convention._fields["layout"] == "interleaved" else exponents[pair][0] + 1) / exponents[pair][1]
            if kind == _COSINE
            else exponent[pair]
            if kind == _SINE
            else 0.0
            for dim, (kind, pair) in enumerate(plan)
        ]
        wrong = (
            (
                "exponent:odd-column",
                "cosine columns that use the odd column index in the exponent, base**(j/d) for column j, instead"
                " of the pair's 2i",
                odd_cosines,
            ),
            (
                "exponent:column",
                "every column's own index j in the exponent, base**(-2j/d), instead of the pair's 2i (so a pair's"
                " sine and cosine have different frequencies)",
                [2 * dim / d_model for dim in range(d_model)],
            ),
            (
                "frequencies:inverted",
                "the frequencies inverted, the angle pos * base**(2i/d) instead of pos / base**(2i/d) (pos /"
                " div_term where div_term already holds base**(-2i/d))",
                [-exponent[pair] if kind != _ZERO else 0.0 for kind, pair in plan],
            ),
        )
        # Each column its own frequency: its sine or cosine is the next of its kind, made alone.
        sine_columns = [column for column, (kind, _) in enumerate(plan) if kind == _SINE]
        cosine_columns = [column for column, (kind, _) in enumerate(plan) if kind == _COSINE]
        within = dict((column, i) for i, column in enumerate(sine_columns))
        within.update(dict((column, i) for i, column in enumerate(cosine_columns)))
        arranged = _arranged([(kind, within.get(column, 0)) for column, (kind, _) in enumerate(plan)])
        for cause, words, exponent_of in wrong:
            try:
                frequency_of = [factor / math.pow(base, x) for x in exponent_of]
            except (OverflowError, ZeroDivisionError):
                continue

            def wrong_row(
                r: int,
                sines: "List[float]" = [frequency_of[column] for column in sine_columns],
                cosines: "List[float]" = [frequency_of[column] for column in cosine_columns],
            ) -> "List[float]":
                p = _to_float(convention._position(r, seq_len))
                made_cosines = _pipeline(p, cosines, {}, scale, sines=False)[0]
                return arranged(made_cosines, _pipeline(p, sines, {}, scale, cosines=False)[1])

            candidate = _Candidate(
                f"the {name} convention with a known mistake: {words}", wrong_row, convention, seq_len, causes=(cause,)
            )
            candidate.frequencies, candidate.scale = frequency_of, scale  # its allowance follows its own angles
            yield candidate

    def cosine_first() -> "Iterator[_Candidate]":
        if convention._fields["layout"] != "interleaved":
            return
        swapped = [
            (_COSINE if kind == _SINE else _SINE, pair) if kind != _ZERO else (kind, pair) for kind, pair in plan
        ]
        sines = [dim for dim, (kind, _) in enumerate(plan) if kind == _SINE]
        if len(sines) > sum(1 for kind, _ in plan if kind == _COSINE):
            swapped[sines[-1]] = plan[sines[-1]]  # the last sine has no cosine to swap with
        words = "an interleave with the cosine first, [cos, sin] per pair"
        yield _convention_candidate(words, convention, seq_len, d_model, ("layout:cosine-first",), plan=swapped)

    def float32_errors() -> "Iterator[_Candidate]":
        found = _float32_errors(table, convention, d_model) if precision > 24 else None
        if found is not None:
            yield found

    def rounded_steps() -> "Iterator[_Candidate]":
        for narrow in ("bfloat16", "float16"):
            if _DTYPES[narrow][0] > precision or (narrow != dtype and _DTYPES[narrow][0] == precision):
                continue
            # In the table's own format its values are stored: the steps before the output may be computed in
            # it.  A step is a candidate only where its rounding can show: an output rounded to the format
            # leaves values of the format (its fingerprint), positions rounded differ only past what the
            # format holds.
            steps = [
                step
                for step, _, _ in _STEPS
                if step != "output"
                or (narrow != dtype and all(_round_row(table[r], narrow) == table[r] for r in sample))
            ]
            positions = [_to_float(convention._position(r, seq_len)) for r in sample]
            if _round_row(positions, narrow) == positions:
                steps.remove("positions")
            limit = {"float32": "2**24", "bfloat16": "256", "float16": "2048"}[narrow]
            for rounded in _step_choices(dict((step, (narrow,)) for step in steps)):
                taken = [step for step, _, _ in _STEPS if step in rounded]
                if len(taken) == len(_STEPS):
                    what = f"positions, frequencies, angles and output all computed in {narrow}"
                else:
                    what = f"{_join(taken, ', ')} rounded to {narrow}"
                    if "positions" in rounded:
                        what += f" (it holds whole numbers exactly only up to {limit})"
                causes = tuple(f"{step}:{narrow}" for step in taken)
                candidate = _convention_candidate(
                    f"the {name} convention with its {what}", convention, seq_len, d_model, causes, rounded
                )
                candidate.precision = _DTYPES[narrow][0]
                yield candidate

    def transposed() -> "Iterator[_Candidate]":
        transposable = convention._fields["positions"] is None and not (
            convention._fields["odd"] == "error" and seq_len % 2
        )
        if seq_len * d_model > 1 << 20 or seq_len == d_model or not transposable:
            return
        try:
            columns = list(_rows(convention, d_model, seq_len, False, "float64"))
        except (ValueError, OverflowError):
            return  # angles beyond float64: no such candidate
        yield _Candidate(
            "the transposed table: rows are dimensions, columns positions",
            lambda r: [row[r] for row in columns],
            convention,
            seq_len,
            causes=("transposed",),
        )

    for family in (exponents, cosine_first, float32_errors, rounded_steps, transposed):  # a new mistake: one line
        yield from family()


def _float32_errors(table: "_Table", convention: "Convention", d_model: int) -> "Optional[_Candidate]":
    """The errors of a float32 computation: within 2**-21 * (1 + |angle|) of the convention's values.

    Two float32 pipelines that order their operations differently agree no
    better with each other than with the exact values, so no one pipeline is
    simulated: the candidate is the convention itself with float32's
    allowance (eight roundings of the angle), and says whether the values are
    float32 numbers, the mark a float32 output leaves.  Errors that never
    reach 2**-27 * (1 + |angle|), an eighth of float32's spacing below 1, are
    too small to call float32's, and give no candidate.
    """
    sample = _sample_rows(len(table))
    seq_len = len(table)
    candidate = _convention_candidate("", convention, seq_len, d_model, ("errors:float32",))
    frequencies = _column_frequencies(convention, d_model)
    scale = convention._output_scale(d_model).value
    large = False
    for r in sample:
        made = candidate.row(r, "float64")
        if made is None:
            return None
        allowance = _row_allowance(frequencies, _to_float(convention._position(r, seq_len)), 33, scale, 2.0**-48)
        large = large or any(abs(a - b) > t for a, b, t in zip(table[r], made, allowance))
    if not large:
        return None
    stored = all(_round_row(table[r], "float32") == table[r] for r in sample)
    candidate.description = (
        f"the {convention._name(d_model)} convention with errors of float32 size, within float32's allowance"
        " 2**-21 * (1 + |angle|)"
    )
    candidate.note = (
        "its values are float32 numbers, as a float32 output's are"
        if stored
        else "its values are not float32 numbers: frequencies or angles rounded to float32 leave this mark"
    )
    candidate.local = False
    # _row_allowance's 2**(6 - precision): 27 bits give 2**-21, eight roundings of float32.
    candidate.precision = 27
    candidate.distinct = True
    return candidate


def _step_choices(formats: "Dict[str, Tuple[str, ...]]") -> "List[Dict[str, str]]":
    """Every non-empty choice of steps to round, each to one of its formats, fewest steps first (in _STEPS order
    among equals): the precision mistakes a diagnosis tries.

    >>> _step_choices({"positions": ("float16",), "angles": ("float16", "bfloat16")})
    [{'positions': 'float16'}, {'angles': 'float16'}, {'angles': 'bfloat16'}, {'positions': 'float16', 'angles': 'float16'}, {'positions': 'float16', 'angles': 'bfloat16'}]
    """
    choices: "List[Dict[str, str]]" = [{}]
    for step, _, _ in _STEPS:
        choices += [dict(list(c.items()) + [(step, fmt)]) for c in choices for fmt in formats.get(step, ())]
    # By the index among equals: MicroPython's sort is not stable.
    return [c for _, c in sorted(enumerate(choices[1:]), key=lambda item: (len(item[1]), item[0]))]


def _runs_text(positions: "List[int]") -> str:
    """Whole positions read row by row, in words: one position on every row, or runs of consecutive
    positions (packed sequences, an offset); '' for more runs than 64 rows each on average (noise).

    >>> _runs_text([5, 5, 5]), _runs_text([3, 4, 5])
    ('every row at position 5 (one position given to every row)', 'rows 0 to 2 at positions 3 to 5 (an offset of 3)')
    >>> _runs_text([0, 1, 0, 1, 2])
    '2 runs of consecutive positions: rows 0 to 1 at positions 0 to 1, rows 2 to 4 at positions 0 to 2'
    """
    runs: "List[List[int]]" = []  # [first row, last row, first position]
    for r, position in enumerate(positions):
        if runs and position == runs[-1][2] + r - runs[-1][0]:
            runs[-1][1] = r
        else:
            runs.append([r, r, position])
    if len(positions) > 1 and all(position == positions[0] for position in positions):
        return f"every row at position {positions[0]} (one position given to every row)"
    if len(runs) == 1 and runs[0][2]:
        return (
            f"rows 0 to {runs[0][1]} at positions {runs[0][2]} to {runs[0][2] + runs[0][1]} (an offset of {runs[0][2]})"
        )
    if len(runs) > max(16, len(positions) // 64):
        return ""
    shown = [
        f"rows {a} to {b} at positions {p} to {p + b - a}" if b > a else f"row {a} at position {p}"
        for a, b, p in runs[:3]
    ]
    more = "" if len(runs) <= 3 else f", and {len(runs) - 3} more run" + ("s" if len(runs) > 4 else "")
    return f"{len(runs)} run{'s' if len(runs) > 1 else ''} of consecutive positions: " + ", ".join(shown) + more


def _explanation(
    table: "_Table",
    candidates: "List[_Candidate]",
    asked: "Optional[Convention]",
    dtype: str,
    outside: "Tuple[int, int]" = (0, 0),
    named: bool = False,
) -> "Tuple[str, Tuple[str, ...]]":
    """The diagnosis from the candidates' best three scores on a sample of rows (_scored), and its causes: the
    first candidate that explains the table, else the closest; ("", ()) where there is no candidate.

    outside is (rows, elements) outside the default tolerance of the convention asked for; named, whether
    the elements not finite are named already (not damage of a candidate's then).  The causes are the
    candidate's, and ``damage`` where local damage is named beside it; none when nothing explains the table.

    Long because each kind of candidate is told in its own words, in the order scored: the convention
    asked for, a convention checked on every element with its call, a mistake checked on every row.
    """
    d_model, sample = len(table[0]), _sample_rows(len(table))
    scored = _scored(table, candidates, asked, dtype, sample) if candidates else []
    if not scored:
        return "", ()
    rows_text = f" (on {len(sample)} of {len(table)} rows)" if len(sample) < len(table) else ""
    fallback: "Optional[str]" = None
    damage = ("damage",)
    for negative, index, compared, candidate in scored[:3]:
        reproduced = -negative
        if compared == 0 or 2 * reproduced < compared:
            break
        if index == 0 and asked is not None:
            # The convention asked for: its damage, on every row, was more than local.
            if reproduced >= _EXPLAINED_SHARE * compared:
                rows, cells = outside
                return (
                    f"the {asked._name(d_model)} convention gives {reproduced} of the {compared} elements compared"
                    f"{rows_text}, but {cells} elements in {rows} rows are outside the default tolerance:"
                    " more than local damage."
                ), ()
            continue
        explains = reproduced >= _EXPLAINED_SHARE * compared
        if not (candidate.local or explains):
            continue
        # Damage looked for on every row, not on the sample only: a convention's by the default rule, a mistake's
        # within its allowance.
        checked = _candidate_damage(table, candidate, dtype, named)
        if checked is None:
            if explains and fallback is None:
                # The story does not hold beyond the sample: said only if no later candidate explains the table.
                fallback = (
                    f"{candidate.description} gives {reproduced} of the {compared} elements compared{rows_text},"
                    " but elsewhere the table differs from it by more than local damage."
                )
            continue
        items, unjudged, others = checked
        more = f"; {candidate.note}" if candidate.note else ""
        if unjudged:
            elements = len(table) * d_model
            more = (
                f" (it judges {elements - unjudged} of their {elements} elements: the others'"
                f" angles are too large for {_Allowance([], [], dtype).computing} to hold to 2**-4)"
            ) + more
        call = candidate.call
        if candidate.local and not call:
            assert candidate.convention is not None  # a table's convention
            call = _call(candidate.convention, len(table), d_model, dtype)
        told = _told(f"{candidate.lead} {candidate.description}", items, call, more, others)
        return told, candidate.causes + (damage if items else ())
    if fallback is not None:
        return fallback, ()
    negative, _, compared, closest = scored[0]
    share = -negative / compared if compared else 0.0
    if negative == 0:
        # None is closer than another: naming one would say it is.
        return (
            f"nothing known explains the table: no candidate reproduces any of the elements compared{rows_text};"
            f" a candidate must reproduce {_percent(_EXPLAINED_SHARE)}, or all but local damage."
        ), ()
    return (
        f"nothing known explains the table. The closest candidate, {closest.description}, reproduces"
        f" {_percent(share) if share >= 0.001 else 'under 0.1%'} of the elements compared{rows_text}; a candidate must reproduce"
        f" {_percent(_EXPLAINED_SHARE)}, or all but local damage."
    ), ()


# The cap on a candidate's allowance: a candidate never reproduces an element it misses by 2**-10.
_CAP = 1.0 / 1024


def _told(story: str, damage: "List[str]", call: str, more: str = "", others: bool = False) -> str:
    """A story verified on every element, in words: the story, the damage that is not its, what more it says,
    then the call that reproduces the table (or computes it without the damage).  The one ending of every
    diagnosis that names a story.  others: elements not finite were named before it (and are not the story's).

    >>> print(_told("the table follows X", _elements_text({3: [1, 2]}), "f()"))
    the table follows X, except for 2 elements outside the default tolerance: [3][1], [3][2]. The call that computes it without the damage: f().
    """
    if not damage:
        said = f"{story}; it reproduces every {'other ' if others else ''}element{more}."
        calls = "computes it without the damage" if others else "reproduces it"
    else:
        said, calls = f"{story}, except for {_join(damage, '; ')}{more}.", "computes it without the damage"
    return f"{said} The call that {calls}: {call}." if call else said


def _candidate_damage(
    table: "_Table", candidate: "_Candidate", dtype: str, named: bool
) -> "Optional[Tuple[List[str], int, bool]]":
    """The local damage that separates the table from a candidate, the elements not judged, and whether
    elements not finite were left out of it (named: they are named already).

    A convention (candidate.local) is checked on every element by the
    default rule, as compare() checks the one asked for.  A mistake's rows
    are compared within its allowance on every row, where an element the
    default rule does not judge (its angle too large for the format) is
    counted apart.  The items are [] when nothing is damaged; None when the
    damage is more than local.

    Long because a mistake's rows are checked in one streamed loop, with the floor of its allowance
    (which spares most rows their own) beside it.
    """

    def allowance_floor() -> "Tuple[Callable[[int], List[float]], Callable[[int], int]]":
        """Calls giving a floor under row r's allowance of a table's candidate (a row of it), and how many of
        row r's elements its allowance does not judge.

        The floor is _row_allowance itself at a position at most |p| (5 bits of it, rounded down), kept for
        every row of that band of positions: where no frequency is negative or infinite, each element's
        min(t, max(least, own)) for growth g = 1 + |p| w, t = unit * g, own = judged * g * scale (the default
        rule's allowance) and least = max(2**(1 - precision) * scale, _CAP) rises with |p| (and so does its
        rounding), and an element not judged at the band's start is not judged further on.
        A row whose every error is within its floor needs no allowance of its own, but for the count of
        elements not judged, found by bisection: growth 1 + |p| w rises with w.  An empty row where there is
        no such floor (a rotary candidate's own allowance, a negative or infinite frequency, a position past float64).

        Long because the floor and its proof are one piece, kept beside the one loop
        that uses them.
        """
        if candidate.tolerances is not None or candidate.convention is None:
            return lambda r: [], lambda r: 0
        candidate.allowance(0, dtype, d_model)  # its frequencies and scale, as its allowance takes them
        assert candidate.frequencies is not None
        frequencies = candidate.frequencies
        ascending = sorted(frequencies)
        precision = min(candidate.precision, _DTYPES[dtype][0])
        unit = _power_of_two(6 - precision) * candidate.scale
        if not ascending or not 0.0 <= ascending[0] <= ascending[-1] < _INF or not 0.0 < unit < _INF:
            return lambda r: [], lambda r: 0
        least = _power_of_two(1 - precision) * candidate.scale
        least = least if least > _CAP else _CAP
        judged, convention = _Allowance([], [], dtype).unit, candidate.convention
        band: "List[Any]" = [-1.0, []]  # the last band's position, and its floor

        def reach_of(r: int) -> float:
            try:
                return abs(float(_to_float(convention._position(r, candidate.seq_len))))
            except OverflowError:
                return _INF

        def floor_of(r: int) -> "List[float]":
            reach = reach_of(r)
            if not reach < _INF:
                return []
            below = _five_bits(reach, False)
            if below != band[0]:
                band[0] = below
                band[1] = _row_allowance(frequencies, below, precision, candidate.scale, judged)
            floor: "List[float]" = band[1]
            return floor

        def not_judged(r: int) -> int:
            # As _row_allowance: none in the common row; else each nonzero w with 1 + |p| w infinite or past UNJUDGED.
            reach = reach_of(r)
            fastest = 1.0 + reach * ascending[-1]
            if reach < _INF and fastest < _INF and unit * fastest < least:
                return 0
            low, high = 0, len(ascending)
            while low < high:  # the first w not judged
                middle = (low + high) // 2
                w = ascending[middle]
                growth = 1.0 + reach * w if w else 1.0
                if growth == growth and (not growth < _INF or judged * growth > _Allowance.UNJUDGED):
                    high = middle
                else:
                    low = middle + 1
            return len(ascending) - low

        return floor_of, not_judged

    d_model = len(table[0])
    damaged: "Dict[int, List[int]]" = {}
    unjudged = 0
    if candidate.local:
        try:
            if candidate.check is not None:
                comparison = candidate.check()
            else:
                # A table's convention.
                assert candidate.convention is not None and isinstance(table, _Source)
                comparison = _tally(table, candidate.convention, dtype, None, None, measure=False)
        except (ValueError, OverflowError):
            return None  # beyond float64
        if candidate.by_element:
            elements = len(table) * d_model
            if comparison.failures > _DAMAGE_ITEMS or 2 * comparison.unjudged > elements:
                return None
        elif comparison.damaged_rows > _DAMAGE_ROWS:
            return None
        damaged = comparison.damaged
    else:
        other = candidate.other_rounding
        rows = _Allowance([], [], dtype)  # the arithmetic of whole rows
        floor_of, not_judged = allowance_floor()
        for r, row in enumerate(table):  # streamed
            made = candidate.row(r, dtype)
            if made is None:
                return None
            errors = list(map(abs, map(rows.sub, row, made)))
            floors = floor_of(r)
            if floors and all(map(rows.le, errors, floors)):
                unjudged += not_judged(r)
                continue  # the common row: within the floor of its band of positions, decided in C loops
            allowance = candidate.allowance(r, dtype, d_model)
            unjudged += allowance.count(_INF)
            if all(map(rows.le, errors, allowance)):
                continue  # decided in C loops
            columns = rows.outside(errors, allowance)
            if columns and other is not None:
                try:
                    alternative = _round_row(other(r), dtype)
                except (ValueError, OverflowError, ZeroDivisionError):
                    alternative = made  # the other neighbour is past the format (an infinite angle): none
                columns = [c for c in columns if not abs(row[c] - alternative[c]) <= allowance[c]]
            if columns:
                damaged[r] = columns
                if len(damaged) > _DAMAGE_ROWS:
                    return None
    left_out = False  # elements not finite left out of the damage
    if named:
        # The elements not finite, named already, are no candidate's damage.
        finite = {r: [c for c in columns if -_INF < table[r][c] < _INF] for r, columns in damaged.items()}
        left_out = finite != damaged
        damaged = {r: columns for r, columns in finite.items() if columns}
    if candidate.by_element or not damaged:
        return _elements_text(damaged), unjudged, left_out
    items, _ = _damage(table, damaged, candidate, dtype)
    return None if items is None else (items, unjudged, left_out)


def _elements_text(damaged: "Dict[int, List[int]]") -> "List[str]":
    """The elements outside the default tolerance, by row, as one item of damage; [] for none."""
    cells = [f"[{r}][{c}]" for r in sorted(damaged) for c in damaged[r]]
    what = f"{len(cells)} element{'s' if len(cells) > 1 else ''} outside the default tolerance"
    return [f"{what}: {', '.join(cells)}"] if cells else []


def _damage(
    table: "_Table", damaged: "Dict[int, List[int]]", reference: "_Candidate", dtype: str
) -> "Tuple[Optional[List[str]], int]":
    """Describe the damaged cells as at most _DAMAGE_ITEMS local faults against the reference.

    Return (items, 0), or (None, shift) when they are not local: shift is
    the offset every row's position shares when all rows are moved alike
    (a different first position), else 0.

    Long because each kind of local fault (moved or zeroed rows, wrong columns, isolated elements)
    is a short step, in the order they are tried.
    """
    seq_len, d_model = len(table), len(table[0])
    items: "List[str]" = []
    cells = dict(damaged)
    # Columns wrong in at least three quarters of the rows.
    counts: "Dict[int, int]" = {}
    for columns in cells.values():
        for c in columns:
            counts[c] = counts.get(c, 0) + 1
    bad_columns = [c for c, n in sorted(counts.items()) if seq_len >= 4 and 4 * n >= 3 * seq_len]
    plan = [] if reference.convention is None else reference.convention._plan(d_model)
    width = sum(1 for kind, _ in plan if kind != _ZERO) if plan else d_model
    if bad_columns and len(bad_columns) <= max(2, d_model // 8) and 2 * len(bad_columns) < width:
        items.extend(_column_damage(table, bad_columns, reference, dtype))
        for r in list(cells):
            cells[r] = [c for c in cells[r] if c not in bad_columns]
            if not cells[r]:
                del cells[r]
    moved: "Dict[int, int]" = {}
    zero_rows = 0
    offset = 0
    # Damage nothing explains (isolated elements, rows matching no position)
    # is local only while it is small: a quarter of the rows and of the cells.
    unexplained_rows = unexplained_cells = 0
    for r in sorted(cells):
        columns = cells[r]
        row = table[r]
        if len(columns) >= 2 and all(abs(x) <= _CAP for x in row):
            items.append(f"row {r}, all zeros (as the row of a padding index is)")
            zero_rows += 1
            unexplained_rows += 1
        else:
            found = _locate(row, r, reference, dtype, offset) if len(columns) >= 2 else None
            if found is not None:
                moved[r] = found
                offset = found - r
            elif len(columns) <= 3:
                reference_row = reference.row(r, dtype)
                for c in columns:
                    expected = f", expected {reference_row[c]:.6g}" if reference_row is not None else ""
                    items.append(f"[{r}][{c}] is {row[c]!r}{expected}")
            else:
                items.append(f"row {r}, which matches no nearby position")
            if found is None:
                unexplained_rows += 1
                unexplained_cells += len(columns)
        if (
            len(items) > _DAMAGE_ITEMS
            or unexplained_rows > max(1, seq_len // 4)
            or unexplained_rows == seq_len
            or 4 * unexplained_cells > seq_len * d_model
        ):
            return None, 0
    if moved:
        shifts = set(q - r for r, q in moved.items())
        if len(moved) + zero_rows == seq_len and len(shifts) == 1:
            return None, shifts.pop()
        items.extend(_moved_rows(moved))
    if not items or len(items) > _DAMAGE_ITEMS:
        return None, 0
    elements = [item for item in items if item.startswith("[")]
    if elements:
        noun = "1 element" if len(elements) == 1 else f"{len(elements)} elements"
        items = [f"{noun}: " + ", ".join(elements)] + [item for item in items if not item.startswith("[")]
    return items, 0


def _column_damage(table: "_Table", columns: "List[int]", reference: "_Candidate", dtype: str) -> "List[str]":
    """What wrong columns hold: zeros, another column's values (a swap), or nothing known."""
    seq_len, d_model = len(table), len(table[0])
    sample = _sample_rows(seq_len)
    made = [reference.row(r, dtype) for r in sample]
    allowances = [reference.allowance(r, dtype, d_model) for r in sample]
    items = []
    done: "Set[int]" = set()
    for c in columns:
        if c in done:
            continue
        done.add(c)
        if all(row[c] == 0.0 for row in table):
            items.append(f"column {c}, all zeros")
            continue
        # The column whose values it holds, the nearest within their allowance; a damaged one first.
        best: "Optional[Tuple[bool, float, int]]" = None
        for other in range(d_model):
            if other == c or other in done:
                continue
            largest = 0.0
            for r, expected, allowance in zip(sample, made, allowances):
                difference = _INF if expected is None else abs(table[r][c] - expected[other])
                if not difference <= allowance[other]:
                    largest = _INF
                    break
                largest = max(largest, difference)
            if largest < _INF and (best is None or (other not in columns, largest, other) < best):
                best = (other not in columns, largest, other)
        if best is None:
            items.append(f"column {c}, which matches no column")
            continue
        match = best[2]
        # A swap: the column it holds holds it in turn, on the sample.
        if match in columns and all(
            expected is not None and abs(table[r][match] - expected[c]) <= allowance[c]
            for r, expected, allowance in zip(sample, made, allowances)
        ):
            items.append(f"columns {c} and {match}, swapped")
            done.add(match)
        else:
            items.append(f"column {c}, which holds column {match}'s values")
    return items


def _sample_rows(count: int) -> "List[int]":
    """The rows a diagnosis samples, for tables and rotary caches alike.

    The first and last 8 rows, _SAMPLE_ROWS spread by the golden ratio (a
    regular spread could hit only round positions, which every format
    holds), and rows 2**k + 1 and 2**k + 3 from 257 on: positions that
    bfloat16 (past 256) and float16 (past 2048) cannot hold, where positions
    rounded to them show.
    """
    spread = set(int(((i * 0.6180339887498949) % 1.0) * count) for i in range(1, _SAMPLE_ROWS + 1))
    power = 256
    while power < count:
        spread.update(r for r in (power + 1, power + 3) if r < count)
        power *= 2
    return sorted(set(range(min(count, 8))) | set(range(max(0, count - 8), count)) | spread)


def _locate(row: "List[float]", r: int, reference: "_Candidate", dtype: str, offset: int = 0) -> "Optional[int]":
    """The row index q, near r, whose reference row this row is within its allowance; None if none."""
    d_model = len(row)
    offsets = [offset] if offset else []
    offsets += [k for k in (1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8) if k != offset]
    for k in offsets:
        q = r + k
        made = reference.row(q, dtype)
        if made is None:
            continue
        allowance = reference.allowance(q, dtype, d_model)
        if all(abs(a - b) <= t for a, b, t in zip(row, made, allowance)):
            return q
    return None


def _moved_rows(moved: "Dict[int, int]") -> "List[str]":
    """Rows holding other rows' positions, in words: swaps, runs shifted by one, single moves."""
    items = []
    done: "Set[int]" = set()
    for r in sorted(moved):
        if r in done:
            continue
        q = moved[r]
        if moved.get(q) == r:
            items.append(f"rows {r} and {q}, swapped")
            done.update((r, q))
            continue
        end = r
        while moved.get(end + 1) == end + 1 + (q - r):
            end += 1
        done.update(range(r, end + 1))
        shift = q - r
        if end > r:
            what = (
                "each one position later (as if a row were missing before them)"
                if shift == 1
                else (
                    "each one position earlier (as if a row were repeated before them)"
                    if shift == -1
                    else f"each {abs(shift)} positions {'later' if shift > 0 else 'earlier'}"
                )
            )
            items.append(f"rows {r} to {end}, {what}")
        else:
            items.append(f"row {r}, which holds row {q}'s values")
    return items


def _call(convention: "Convention", seq_len: int, d_model: int, dtype: str) -> str:
    """The encoding() call that computes the convention's table, and the command line's options for it.

    >>> print(_call(PRESETS["tf-tutorial"].replace(scale="sqrt(1/d)"), 2048, 64, "float32"))
    encoding(2048, 64, preset='tf-tutorial', scale='sqrt(1/d)', dtype='float32') (on the command line: --preset tf-tutorial --scale 'sqrt(1/d)' --dtype float32)
    """
    presets = convention._presets(d_model)
    name, changed = (presets[0], []) if presets else _closest_preset(convention, d_model)
    options: "List[Tuple[str, object]]" = [] if name == "paper" else [("preset", name)]
    options.extend(changed)
    if convention._fields["positions"] is not None and all(field != "positions" for field, _ in changed):
        options.append(("positions", convention._shown("positions")))
    if dtype != "float64":
        options.append(("dtype", dtype))
    # Positions given one by one are the caller's data: named, not written out.
    keywords = "".join(f", {field}={'positions' if field == 'positions' else repr(value)}" for field, value in options)
    words = []
    for field, value in options:
        flag = "--" + field.replace("_", "-")
        if value is True:
            words.append(flag)
        elif field == "positions":
            words.append(f"{flag} X,X,...")
        else:
            text = str(value)
            words.append(f"{flag} {text!r}" if "(" in text else f"{flag} {text}")
    line = f" (on the command line: {' '.join(words)})" if words else ""
    return f"encoding({seq_len}, {d_model}{keywords}){line}"


def _closest_preset(convention: "Convention", d_model: int) -> "Tuple[str, List[Tuple[str, object]]]":
    """The preset with the fewest fields to change into the convention, and those fields with their values.

    A preset whose flag (full_turns, descending) the convention has not is
    no origin: the command line can only set a flag.
    """

    best: "Optional[Tuple[int, str, List[Tuple[str, object]]]]" = None
    for name, preset in PRESETS.items():
        changed = _changed_fields(preset, convention, d_model)
        if any(value is False for _, value in changed):
            continue
        if best is None or len(changed) < best[0]:
            best = (len(changed), name, changed)
    assert best is not None  # the paper's has no flag set
    return best[1], best[2]


def _changed_fields(origin: "Convention", convention: "Convention", d_model: int) -> "List[Tuple[str, object]]":
    """The fields a call sets otherwise to make convention's table from origin's, with convention's values.

    As a call gives them: the scale as its square for this width, no odd rule for an even width.
    """

    def key(convention: "Convention") -> "Dict[str, object]":
        fields: "Dict[str, object]" = dict(convention._fields)
        fields["scale"] = convention._scale_square(d_model)
        if d_model % 2 == 0:
            fields["odd"] = None
        return fields

    ours, theirs = key(convention), key(origin)
    return [(row[0], convention._shown(row[0])) for row in _FIELDS if ours[row[0]] != theirs[row[0]]]


def _join(items: "List[str]", separator: str) -> str:
    """Items joined as words join a list: 'a, b and c' with ", ", 'a; b; and c' with "; "."""
    if len(items) == 1:
        return items[0]
    return separator.join(items[:-1]) + separator.rstrip(" ,") + " and " + items[-1]


def _percent(share: float) -> str:
    # Rounded down: 98.96% is not "99%", the share a candidate must reach.
    text = f"{math.floor(1000 * share) / 10:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"


def _scored(
    table: "_Table",
    candidates: "List[_Candidate]",
    asked: "Optional[Convention]",
    dtype: str,
    sample: "List[int]",
) -> "List[Tuple[int, int, int, _Candidate]]":
    """Score the candidates on the sampled rows, best first: (-elements reproduced, index, elements compared, candidate).

    candidates[0] is the convention asked for, if any.  The two guards of
    this section's essay drop a candidate here: one that gives the asked
    convention's rows, and a precision mistake that reproduces no more than
    the asked convention does within the mistake's own allowance.  Those
    that explain the sample come first, in the order tried (the simplest
    story among equals), then the others by how much they reproduce.

    Each candidate is screened on a sixteenth of the sample first: one that
    reproduces less than 90% there cannot explain the table, and only the
    three best screened are scored in full, as the closest, when nothing
    explains it.  Scoring stops at the third candidate that explains the
    sample: the diagnosis names one of the first three.
    """
    d_model = len(table[0])
    asked_rows = [candidates[0].row(r, dtype) for r in sample] if asked is not None else []
    quick = sample[:: max(1, len(sample) // 16)]
    # How much the asked convention reproduces within a narrow format's allowance, by precision.
    loosely: "Dict[int, int]" = {}
    scored: "List[Tuple[int, int, int, _Candidate]]" = []
    screened: "List[Tuple[float, int, _Candidate]]" = []  # (-share on the screen, index, candidate)
    explaining = 0

    def score(index: int, candidate: "_Candidate") -> None:
        if index and asked is not None and not candidate.distinct:
            # The candidate gives the asked convention's rows, within the asked allowance, on the sample: it
            # cannot be told from the convention asked for, which did not explain the table.
            same = True
            for r, expected in zip(sample, asked_rows):
                made = candidate.row(r, dtype)
                allowance = candidates[0].allowance(r, dtype, d_model)
                if (
                    made is None
                    or expected is None
                    or any(abs(a - b) > t for a, b, t in zip(made, expected, allowance))
                ):
                    same = False
                    break
            if same:
                return
        reproduced, compared = _reproduced(table, candidate, sample, dtype)
        if index and asked is not None and not candidate.distinct and candidate.precision < _DTYPES[dtype][0]:
            # A narrow format's allowance is wide: the mistake explains the
            # table only if the convention asked for does worse within it.
            if candidate.precision not in loosely:
                loose = _convention_candidate("", asked, len(table), d_model)
                loose.precision = candidate.precision
                loosely[candidate.precision] = _reproduced(table, loose, sample, dtype)[0]
            if loosely[candidate.precision] >= reproduced:
                return
        scored.append((-reproduced, index, compared, candidate))

    for index, candidate in enumerate(candidates):
        if explaining == 3:
            break
        if index:
            reproduced, compared = _reproduced(table, candidate, quick, dtype)
            if compared and reproduced < 0.9 * compared:
                screened.append((-reproduced / compared, index, candidate))
                continue
        score(index, candidate)
        explaining = sum(1 for negative, _, compared, _ in scored if -negative >= _EXPLAINED_SHARE * compared)
    if not explaining:
        for _, index, candidate in sorted(screened, key=lambda item: (item[0], item[1]))[:3]:
            score(index, candidate)
    scored.sort(
        key=lambda item: (
            -item[0] < _EXPLAINED_SHARE * item[2],
            item[0] if -item[0] < _EXPLAINED_SHARE * item[2] else 0,
            item[1],
        )
    )
    return scored


def _reproduced(table: "_Table", candidate: "_Candidate", sample: "List[int]", dtype: str) -> "Tuple[int, int]":
    """How many elements of the sampled rows the candidate gives within their allowance, of how many."""
    d_model = len(table[0])
    reproduced = compared = 0
    for r in sample:
        made = candidate.row(r, dtype)
        allowance = candidate.allowance(r, dtype, d_model)
        judged = [c for c, t in enumerate(allowance) if t < _INF]  # the elements the default rule judges
        compared += len(judged)
        if made is None:
            continue
        row = table[r]
        reproduced += sum(1 for c in judged if abs(row[c] - made[c]) <= allowance[c])
    return reproduced, compared


def _convention_candidate(
    description: str,
    convention: "Convention",
    seq_len: int,
    d_model: int,
    causes: "Tuple[str, ...]" = (),
    steps: "Optional[Dict[str, str]]" = None,
    plan: "Optional[List[_Column]]" = None,
) -> "_Candidate":
    """The convention's rows as a float64 pipeline computes them: local (checked for damage), or a mistake with
    steps rounded (_pipeline's) or its values in the columns of another plan."""
    frequencies = convention._float_frequencies(d_model)
    scale = convention._output_scale(d_model).value
    arranged = _arranged(convention._plan(d_model) if plan is None else plan)
    rounded = {} if steps is None else steps

    def make_row(r: int, other: bool = False) -> "List[float]":
        position = _to_float(convention._position(r, seq_len))
        return arranged(*_pipeline(position, frequencies, rounded, scale, other=other))

    local = steps is None and plan is None
    candidate = _Candidate(description, make_row, convention, seq_len, local=local, causes=causes)
    if "angles" in rounded:
        candidate.other_rounding = lambda r: make_row(r, True)
    return candidate


def _arranged(plan: "List[_Column]") -> "Callable[[List[float], List[float]], List[float]]":
    """The call that puts each pair's cosine and sine (_pipeline's) in the columns a plan of (kind, pair) gives them.

    Its index is made once for each pair of lengths of the cosines and sines given (by a comprehension
    where there is no operator module, or fewer than two columns).

    >>> _arranged([(_SINE, 0), (_COSINE, 0), (_SINE, 1), (_ZERO, 0)])([1.0, 0.5], [0.0, 0.25])
    [0.0, 1.0, 0.25, 0.0]
    >>> arrange = _arranged([(_ZERO, 0), (_COSINE, 0), (_SINE, 1)])
    >>> arrange([1.0], [0.0, 0.5]), arrange([1.0], [0.0, 0.5, 0.75])  # the padding is 0.0 whatever the lengths
    ([0.0, 1.0, 0.5], [0.0, 1.0, 0.5])
    """
    # By the numbers of cosines and sines given: where each column's value sits in cosines + sines + [0.0].
    getters: "Dict[Tuple[int, int], Callable[[List[float]], Sequence[float]]]" = {}

    def arranged(cosines: "List[float]", sines: "List[float]") -> "List[float]":
        key = (len(cosines), len(sines))
        getter = getters.get(key)
        if getter is None and len(plan) > 1:
            try:
                from operator import itemgetter

                # One C loop over the cosines, the sines and a zero, in one list.
                k, zero = key[0], key[0] + key[1]
                index = [k + pair if kind == _SINE else pair if kind == _COSINE else zero for kind, pair in plan]
                getter = getters[key] = itemgetter(*index)
            except ImportError:
                pass
        if getter is None:
            return [0.0 if kind == _ZERO else (sines if kind == _SINE else cosines)[pair] for kind, pair in plan]
        return list(getter(cosines + sines + [0.0]))

    return arranged


def _pipeline(
    p: float,
    frequencies: "List[float]",
    steps: "Dict[str, str]",
    factor: float = 1.0,
    law: "Optional[Tuple[float, List[float]]]" = None,
    cosines: bool = True,
    sines: bool = True,
    other: bool = False,
) -> "Tuple[List[float], List[float]]":
    """Each pair's cosine and sine times factor, as a float64 pipeline computes them with ``steps`` rounded.

    The one simulator of a narrow-format pipeline, for tables and rotary caches: ``steps`` maps a step of
    _STEPS to the format it is rounded to; "frequencies" may be "FORMAT arithmetic", each frequency then
    computed in that format as 1 / base**e from law = (base, each pair's exponent e), times the ratio its
    law has to that (a scaling or angle scale kept).  An empty list for cosines or sines not asked for.
    With ``other``, each rounded angle a is taken to its other neighbour, round(2a - round(a)): a pipeline
    that computes the angle in another format may land on the other side of a rounding midpoint.

    >>> _pipeline(3.0, [1.0, 0.01], {"angles": "bfloat16"}, cosines=False)[1] == [math.sin(3.0), math.sin(0.030029296875)]
    True
    """

    def narrow(values: "List[float]", step: str) -> "List[float]":
        return _round_row(values, steps[step]) if step in steps else values

    if "positions" in steps:
        p = _round_float(p, steps["positions"])
    fmt = steps.get("frequencies", "")
    if fmt.endswith("arithmetic") and law is not None:
        within = fmt.split()[0]
        base, exponents = law
        rounded_base = _round_float(base, within)
        powers = _round_row([rounded_base**e for e in _round_row(exponents, within)], within)
        computed = _round_row([1.0 / x if x else _INF for x in powers], within)
        plain = [math.pow(base, -e) for e in exponents]
        frequencies = [c * w / d if d else c for c, w, d in zip(computed, frequencies, plain)]
    elif fmt:
        frequencies = _round_row(frequencies, fmt)
    angles = [p * w for w in frequencies]
    if other and "angles" in steps:
        angles = _round_row([2 * a - b for a, b in zip(angles, narrow(angles, "angles"))], steps["angles"])
    else:
        angles = narrow(angles, "angles")
    made_cosines, made_sines = [], []  # those asked for, times factor (a C loop where it is 1)
    if cosines:
        made_cosines = narrow(
            list(map(math.cos, angles)) if factor == 1.0 else [math.cos(a) * factor for a in angles], "output"
        )
    if sines:
        made_sines = narrow(
            list(map(math.sin, angles)) if factor == 1.0 else [math.sin(a) * factor for a in angles], "output"
        )
    return made_cosines, made_sines


class _Candidate:
    """A way of computing the table, in words, with the rows it gives."""

    def __init__(
        self,
        description: str,
        make_row: "Callable[[int], List[float]]",
        convention: "Optional[Convention]",
        seq_len: int,
        local: bool = False,
        precision: int = 53,
        causes: "Tuple[str, ...]" = (),
    ) -> None:
        self.description = description
        self.make_row = make_row
        #: The convention whose angles (and output scale) set each element's allowance, in a table of seq_len
        #: rows; None for a rotary cache's candidate, whose allowance is its own (tolerances).
        self.convention = convention
        self.seq_len = seq_len
        #: Whether local damage is looked for against it (a convention, not a mistake).
        self.local = local
        #: The bits of the narrowest format it rounds to: its allowance is that format's.
        self.precision = precision
        self.frequencies: "Optional[List[float]]" = None
        self.scale = 1.0
        #: Whether it differs from the convention asked for by its allowance alone (kept, not pruned).
        self.distinct = False
        #: What more to say when it explains the table.
        self.note = ""
        #: How it differs from the convention asked for, as Report.causes keys: the fields a call sets
        #: otherwise (base, layout, scale, ...), or the mistake's (positions:float16, transposed, ...).
        self.causes = causes
        #: Allowances made, by (convention, precision, dtype, row): _candidates shares one among its candidates.
        self.memo: "Dict[Tuple[object, ...], List[float]]" = {}
        #: Row r with its rounded angles taken to their other neighbours, for a mistake that rounds angles:
        #: where the pipeline's angle lay at a midpoint, either is its rounding.
        self.other_rounding: "Optional[Callable[[int], List[float]]]" = None
        #: Each element's allowance in row r, where the candidate sets its own (a rotary cache's).
        self.tolerances: "Optional[Callable[[int], List[float]]]" = None
        #: For a candidate checked on every element by the default rule (local), where it is not a table's
        #: convention (a rotary setup): that check's tally, and the call that computes the candidate.
        self.check: "Optional[Callable[[], _Comparison]]" = None
        self.call = ""
        #: The words before the description when it explains the table ("the table is" a grid of ...).
        self.lead = "the table follows"
        #: Whether its damage is told element by element, at most _DAMAGE_ITEMS of them (a grid's, a
        #: multi-axis cache's), not as the local faults of a sequence's rows (_damage).
        self.by_element = False

    def allowance(self, r: int, dtype: str, d_model: int) -> "List[float]":
        """Each element's allowance in row r (see _row_allowance)."""
        if self.tolerances is not None:
            return self.tolerances(r)
        assert self.convention is not None  # a candidate without tolerances has a convention
        if self.frequencies is None:
            self.scale = self.convention._output_scale(d_model).value
            shared = ("frequencies", self.convention, d_model)  # one list per convention: its allowances shared
            self.frequencies = self.memo.get(shared) or _column_frequencies(self.convention, d_model)
            self.memo[shared] = self.frequencies
        precision = min(self.precision, _DTYPES[dtype][0])
        # The frequencies' identity: a mistake's own (set when it is made) are not its convention's.
        key = (self.convention, id(self.frequencies), precision, dtype, r)
        found = self.memo.get(key)
        if found is None:
            position = _to_float(self.convention._position(r, self.seq_len))
            unit_key = ("unit", dtype)  # the default rule's unit, made once per format, not per row
            judged = (self.memo.get(unit_key) or [_Allowance([], [], dtype).unit])[0]
            if len(self.memo) >= _CACHE_LIMIT // 4:
                # A sample's rows for one convention at most (on a board, one row): memory does not grow with
                # the table.
                self.memo.clear()
            found = self.memo[key] = _row_allowance(self.frequencies, position, precision, self.scale, judged)
            self.memo[unit_key] = [judged]
        return found

    def loosely(self, dtype: str) -> "_Candidate":
        """This candidate, told by element (a grid's, a multi-axis cache's), with a loose allowance for its
        sample: 2**-9 + 2**(1-p) |value| for p bits of dtype; its check on every element is the default rule's."""
        loose = _power_of_two(1 - _DTYPES[dtype][0])
        self.tolerances = lambda r: [_power_of_two(-9) + loose * abs(x) for x in self.make_row(r)]
        self.by_element = True
        return self

    def row(self, r: int, dtype: str) -> "Optional[List[float]]":
        """Row r rounded to dtype, as the table's values are; None where it cannot be computed (beyond float64)."""
        try:
            return _round_row(self.make_row(r), dtype)
        except (ValueError, OverflowError, ZeroDivisionError):
            return None


def _row_allowance(
    frequencies: "List[float]", position: float, precision: int, scale: float, judged: float
) -> "List[float]":
    """Each column's allowance: twice the default tolerance of a format of this precision.

    That is u = 2**(6 - precision) * (1 + |position * w|) * scale for each
    column's frequency w (a candidate computes in float64), capped at 2**-10,
    or at one unit of the format, 2**(1 - precision) * scale, where that is
    more (bfloat16: a value computed in float32 and then rounded to it lands
    one unit from the exact value's rounding where the two straddle a
    midpoint), or, for an element the default rule judges coarsely, at the
    default rule's own allowance; infinite for an element the default rule
    does not judge (see _Allowance), which then counts for no candidate.
    judged is the default rule's unit for the table's format (_Allowance.unit).
    """
    unit = _power_of_two(6 - precision) * scale
    least = _power_of_two(1 - precision) * scale  # one unit of the format at the largest value
    least = least if least > _CAP else _CAP
    try:
        reach = abs(float(position))
    except OverflowError:
        reach = _INF
    fastest = 1.0 + reach * (max(frequencies) if frequencies else 0.0)  # the largest growth: it rises with w
    tolerances: "List[float]" = []
    if reach < _INF and fastest < _INF:
        n = len(frequencies)
        try:
            from operator import add, mul  # unit * (1 + reach * w) in C loops, where there is operator

            tolerances = list(map(mul, [unit] * n, map(add, [1.0] * n, map(mul, [reach] * n, frequencies))))
        except ImportError:
            tolerances = [unit * (1.0 + reach * w) for w in frequencies]
        if unit * fastest < least:
            return tolerances  # the common row: every element within the cap
        if not reach > 0.0:
            tolerances = []  # position 0: every column below
    if tolerances:
        # Only the columns past the cap or not judged differ from the common row: those beyond the smaller of
        # the two edges, found in one pass and made below.
        edge = (least if least < _Allowance.UNJUDGED * unit / judged else _Allowance.UNJUDGED * unit / judged) * (
            1.0 - _power_of_two(-40)
        )
        columns = [] if max(tolerances) < edge else [c for c, t in enumerate(tolerances) if not t < edge]
    else:
        columns = list(range(len(frequencies)))
        tolerances = [0.0] * len(frequencies)
    for c in columns:
        w = frequencies[c]
        growth = 1.0 + reach * w if w else 1.0
        if growth != growth:
            tolerances[c] = _CAP  # position 0 times an infinite frequency
        elif not growth < _INF or judged * growth > _Allowance.UNJUDGED:
            tolerances[c] = _INF  # not judged
        else:
            own = judged * growth * scale
            cap = least if own < least else own
            t = unit * growth
            tolerances[c] = t if t < cap else cap
    return tolerances


# ---------------------------------------------------------------------------
# Oracle: compare a table with the exact one
# ---------------------------------------------------------------------------
#
# The default verdict, for tables and rotary caches alike, in a format of p
# bits: an element passes when
#
#     |value - exact| <= u * A + 2**-p * |value|,   u = 2**(5-q) * (1 + |angle|)
#
# where exact is the exact value rounded to float64, angle the element's own
# position * frequency as float64 computes it, A the output scale (a rotary
# cache's attention factor, times |x[a]| + |x[b]| for rotated vectors), and
# q the precision of the format the table is computed in: the table's own
# (53 bits for float64, 24 for float32), float32's for bfloat16 and float16,
# which store a table computed in float32.  u is 32 roundings of the angle
# in that format (benchmarks/tolerance.py measures the pipelines people use
# at 15.2 or fewer, up to 131072 positions); 2**-p * |value| is the storing:
# at least half a step of the format at a normal value, less than a whole one.
#
# Where u passes 2**-10, the computing format holds the angle too coarsely
# to judge the element to 2**-10: the element is judged all the same, and
# counted apart as coarse.  Where u passes 2**-4, the check could not tell a
# faithful value from one off by a sixteenth: the element is not judged, and
# counted apart; a table most of whose elements are such cannot be checked
# in its format.  In float32 the first starts past angle 511, the second past
# 32767; in float64 past 2**38 - 1 and 2**44 - 1.  So an error of 1e-3 fails
# in every float32 or float64 element that is not coarse (its allowance is at
# most 2**-10 + 2**-24), and in bfloat16 and float16 beyond their own step.


# Failing rows the damage analysis looks at, at most.
_DAMAGE_ROWS = 256


_DAMAGE_ITEMS = 8


# A candidate explains the table when it reproduces this share of the
# sampled elements, or when what it does not reproduce is local damage of at
# most _DAMAGE_ITEMS items.
_EXPLAINED_SHARE = 0.99


# Rows the diagnosis samples when it tries candidates: the first ones and a spread.
_SAMPLE_ROWS = 48


def _tally(
    table: "_Source",
    asked: "Convention",
    dtype: str,
    atol: "Optional[float]",
    ulps: "Optional[float]",
    measure: bool = True,
) -> "_Comparison":
    """The tally of every element of the table against the asked convention's exact values rounded to dtype.

    The table's values are read rounded to table.rounding: dtype, or a wider format that holds them.  Without
    measure, the verdicts alone: no largest errors, no worst element (a story verified on every element).
    """
    seq_len, d_model = table.count, table.width
    exponents = asked._exponents(d_model)
    allowance = _Allowance(
        _column_frequencies(asked, d_model),
        list(asked._float_positions(seq_len)),
        dtype,
        asked._output_scale(d_model).value,
    )
    comparison = _Comparison(allowance, dtype, atol, ulps, measure)
    fast: "_LawTable" = (
        asked._frequencies(),
        exponents,
        asked._plan(d_model),
        asked._output_scale(d_model),
        allowance.positions,
        lambda r: asked._position(r, seq_len),
    )
    return comparison.tally(table, lambda rounding, first: _exact_rows(seq_len, d_model, asked, rounding, first), fast)


def _grid_tally(
    table: "_Source",
    plan: "_Grid",
    dtype: str,
    atol: "Optional[float]",
    ulps: "Optional[float]",
    measure: bool,
) -> "_Comparison":
    """_tally's tally for a grid's table: each element judged at its axis's position in the row's cell.

    Each axis's columns are a 1-D table at the axis's positions, with its own allowance (_axes_allowance).  The
    references are the exact rows, made from each axis's exact table (the grid's are small), with _references'
    ties.  A prefix row (a class token's zeros) is judged as a row at position 0.
    """
    allowances = [
        _Allowance(
            _column_frequencies(moved, width),
            list(moved._float_positions(n)) + [0.0],  # the prefix's rows at index n
            dtype,
            moved._output_scale(width).value,
        )
        for moved, n, width in plan["axes"]
    ]
    cells = _axes_allowance(allowances, plan["columns"], plan["cell"], dtype)  # a prefix row at index n: position 0
    comparison = _Comparison(cells, dtype, atol, ulps, measure)
    held: "Dict[str, List[List[List[float]]]]" = {}  # each format's axes' tables, made once

    def exact_rows(rounding: str, first: int) -> "Iterator[List[float]]":
        if rounding not in held:
            held[rounding] = plan["tables"](True, rounding)
        return (plan["row_at"](held[rounding], r) for r in range(first, plan["count"]))

    return comparison.tally(table, exact_rows, None)


def _axes_allowance(
    allowances: "List[_Allowance]", columns: "List[_AxisColumn]", indices: "Callable[[int], List[int]]", dtype: str
) -> "_Allowance":
    """The allowance of a table whose columns are several axes' (a grid's, a multi-axis rotary cache's).

    Axis a's allowance judges its own table, row indices(r)[a] of it for the table's row r; column c of the
    table is column columns[c] = (a, its column) of axis a's table, and an axis's column that the table does
    not hold (cut off, or a pair another axis takes) is judged on nothing.  A row's tolerances, screen and
    classes are those of its axes' rows, each column taken from its axis's.
    """

    def getter(index: "List[int]") -> "Callable[[List[float]], Sequence[float]]":
        # The items at index (two or more), in one C loop where there is an operator module (not MicroPython).
        try:
            from operator import itemgetter

            return itemgetter(*index)
        except ImportError:
            return lambda values: [values[i] for i in index]

    width = len(columns)
    # Each axis's columns in the table (-1 where it has none), and where each table column is in the axes'
    # columns laid end to end.
    where = [[-1] * len(allowance.frequencies) for allowance in allowances]
    for c, (axis, local) in enumerate(columns):
        where[axis][local] = c
    offsets = [sum(len(allowance.frequencies) for allowance in allowances[:axis]) for axis in range(len(allowances))]
    gather = getter([offsets[axis] + local for axis, local in columns])
    spread = [getter([width if c < 0 else c for c in cs]) if len(cs) > 1 else None for cs in where]

    def joined(parts: "List[List[float]]") -> "List[float]":
        if width == 1:
            return [parts[columns[0][0]][columns[0][1]]]
        return list(gather([x for part in parts for x in part]))

    class Axes(_Allowance):
        def row(self, r: int, values: "List[float]") -> "List[float]":
            padded = values + [0.0]
            parts = [
                allowance.row(i, list(pick(padded)) if pick else [padded[cs[0]]])
                for allowance, i, pick, cs in zip(allowances, indices(r), spread, where)
            ]
            return joined(parts)

        def screen(self, r: int) -> "List[float]":
            parts = [allowance.screen(i) for allowance, i in zip(allowances, indices(r))]
            return joined(parts) if all(parts) else []

        def lines(
            self, r: int, bound: "List[float]", values: "Optional[List[float]]", largest: "Optional[float]" = None
        ) -> "Optional[Tuple[List[float], List[float]]]":
            return None  # checked against exact rows: no bound to draw lines with

        def classes(self, r: int) -> "Tuple[int, int, int, int]":
            counts, firsts = [0, 0], [width, width]
            for allowance, i, cs in zip(allowances, indices(r), where):
                coarse, unjudged, _, _ = allowance.classes(i)
                # As _Allowance's: the coarse columns follow the columns not judged in falling frequency, and
                # the first of each class is the first of those columns and every faster one.
                present = [cs[c] for c in allowance._order[: unjudged + coarse] if cs[c] >= 0]
                fastest = present[: sum(1 for c in allowance._order[:unjudged] if cs[c] >= 0)]
                counts[0] += len(present) - len(fastest)
                counts[1] += len(fastest)
                firsts = [min(present + [firsts[0]]), min(fastest + [firsts[1]])]
            return counts[0], counts[1], firsts[0] if counts[0] else -1, firsts[1] if counts[1] else -1

    first = allowances[0]
    made = Axes([], [], dtype, first.factor, first.weights)
    made.rule = first.rule
    return made


class _Allowance:
    """The default rule's allowance of each element, and which elements are coarse or not judged.

    An element is coarse where u passes COARSE (judged, counted apart), not judged where it passes UNJUDGED.

    frequencies: each column's, as float64 computes it (0 for a padding column); positions: each row's;
    factor: A, the output scale or attention factor; weights: rotated vectors' x and each column's partner, for
    the weight |x[a]| + |x[b]| of each element.
    """

    COARSE = 1.0 / 1024
    UNJUDGED = 1.0 / 16

    def __init__(
        self,
        frequencies: "List[float]",
        positions: "List[float]",
        dtype: str,
        factor: float = 1.0,
        weights: "Optional[Tuple[_Table, List[int]]]" = None,
    ) -> None:
        self.frequencies = frequencies
        self.positions = positions
        self.dtype = dtype
        self.precision = _DTYPES[dtype][0]
        computing = self.precision if self.precision >= 24 else 24
        #: The format the table is computed in: its own, or float32 for a narrow one.
        # Annotated, not inferred: mypy 1.14 (the last for Python 3.8) meets their readers first, above.
        self.computing: "str" = "float64" if computing == 53 else "float32"
        self.unit: "float" = _power_of_two(5 - computing)
        self.factor: "float" = abs(factor)
        self.storing = _power_of_two(-self.precision)
        self.weights: "Optional[Tuple[_Table, List[int]]]" = weights
        #: The rule in words, as the report's first line gives it.
        self.rule: "str" = (
            f"default tolerance 2**{5 - computing} * (1 + |angle|)"
            + ("" if self.factor == 1.0 else f" * {self.factor:.6g}")
            + ("" if weights is None else " * (|x[a]| + |x[b]|)")
            + f" + 2**-{self.precision} * |value|"
        )
        self._screen: "List[float]" = []  # the last screen made, for (position, columns not judged):
        self._screen_key = (-1.0, 0)
        self._classes = (-1, (0, 0, -1, -1))  # the last row's classes, by row
        # The last pass and fail lines made (see lines): their keys, and (the bound, the line).
        self._passing_key: "Tuple[float, int]" = (-1.0, -1)
        self._failing_key: "Tuple[float, int, float]" = (-1.0, -1, -1.0)
        self._passing: "Tuple[Optional[List[float]], List[float]]" = (None, [])
        self._failing: "Tuple[Optional[List[float]], List[float]]" = (None, [])
        # The arithmetic of whole rows, as functions for map: operator's where there is one (not MicroPython).
        self.add: "Callable[[Any, Any], Any]"
        self.sub: "Callable[[Any, Any], Any]"
        self.mul: "Callable[[Any, Any], Any]"
        self.le: "Callable[[Any, Any], Any]"
        self.div: "Callable[[Any, Any], Any]"
        #: The columns where not errors[c] <= tolerances[c] (a NaN error among them), in order.
        self.outside: "Callable[[List[float], List[float]], List[int]]"
        try:
            from itertools import compress

            # ImportError where one is missing (MicroPython's wasm port)
            from operator import add, le, mul, not_, sub, truediv

            self.add, self.sub, self.mul, self.le, self.div = add, sub, mul, le, truediv
            self.outside = lambda errors, tolerances: list(
                compress(range(len(errors)), map(not_, map(le, errors, tolerances)))
            )
        except ImportError:
            self.add, self.sub, self.mul = (lambda x, y: x + y), (lambda x, y: x - y), (lambda x, y: x * y)
            self.le, self.div = (lambda x, y: x <= y), (lambda x, y: x / y)
            self.outside = lambda errors, tolerances: [
                c for c, (error, tolerance) in enumerate(zip(errors, tolerances)) if not error <= tolerance
            ]
        # Columns by falling frequency, with the first column among each prefix: where each class starts.
        order: "List[int]" = sorted(range(len(frequencies)), key=lambda c: -frequencies[c])
        self._order: "List[int]" = order
        self._falling = [frequencies[c] for c in order]
        self._first: "List[int]" = []
        for c in order:
            self._first.append(c if not self._first or c < self._first[-1] else self._first[-1])

    def row(self, r: int, values: "List[float]") -> "List[float]":
        """The tolerance of each element of row r, holding values: infinite where not judged (NaN still fails)."""
        unit, factor, storing, unjudged = self.unit, self.factor, self.storing, self.UNJUDGED
        try:
            scaled = unit * abs(float(self.positions[r]))
        except OverflowError:
            scaled = _INF
        if scaled == 0.0:
            allowed = [unit] * len(self.frequencies)  # angle 0, whatever the frequency
        elif self.weights is None and scaled < _INF:
            # The common row, by map (each step a C loop): unit A + scaled A w + storing |v|, and infinity for
            # the columns classes() counts as not judged, the first of the falling frequencies.
            add, mul, n = self.add, self.mul, len(values)
            allowed = list(
                map(
                    add,
                    map(add, [unit * factor] * n, map(mul, self.frequencies, [scaled * factor] * n)),
                    map(mul, map(abs, values), [storing] * n),
                )
            )
            for c in self._order[: self.classes(r)[1]]:
                allowed[c] = _INF
            return allowed
        else:
            # An infinite u (a position or frequency beyond float64) fails u <= unjudged: not judged.
            allowed = [unit + scaled * w if w else unit for w in self.frequencies]
        if self.weights is not None:
            x, partner = self.weights[0][r], self.weights[1]
            factors = [factor * (abs(x[c]) + abs(x[partner[c]])) for c in range(len(x))]
        else:
            factors = [factor] * len(allowed)
        return [u * a + storing * abs(v) if u <= unjudged else _INF for u, a, v in zip(allowed, factors, values)]

    def screen(self, r: int) -> "List[float]":
        """Below each tolerance of row r by more than the element's two references can differ (empty: none).

        An element whose error from the exact value rounded to dtype is within its screen passes, since that
        reference is within 2**-p |exact| + 2**(emin-p) of the one the rule judges against (the rounding to
        float64, 2**-53 |exact| from the exact value), |exact| <= A, and the storing term pays the 2**-p |exact|
        but for 2**-p of the error: the screen is (u A)(1 - 2**-p - 2**-40) - 2**-50 A - 2**(emin-p), the
        2**-40 for the rounding of these sums.  None for rotated vectors and float64.
        """
        position = abs(float(self.positions[r]))
        if self.weights is not None or self.precision == 53 or not position < _INF:
            return []
        # Made for a position at most |p| and within 1/16 of it (5 bits of it, rounded down), and kept
        # for the rows that follow with the same: a lower bound still, in rows of any order.
        position = _five_bits(position, False)
        count = self.classes(r)[1]
        if self._screen_key != (position, count):
            unit, factor, n = self.unit, self.factor, len(self.frequencies)
            shrink = 1.0 - self.storing - _power_of_two(-40)
            least = unit * factor * shrink - _power_of_two(-50) * factor
            least -= _power_of_two(_DTYPES[self.dtype][1] - self.precision)
            screen = list(
                map(self.add, [least] * n, map(self.mul, self.frequencies, [unit * position * factor * shrink] * n))
            )
            for c in self._order[:count]:
                screen[c] = _INF
            self._screen_key, self._screen = (position, count), screen
        return self._screen

    def lines(
        self, r: int, bound: "List[float]", values: "Optional[List[float]]", largest: "Optional[float]" = None
    ) -> "Optional[Tuple[List[float], List[float]]]":
        """Row r's pass and fail lines for errors from a float64 row within bound B of the exact one; None for rotated vectors.

        An element of values (row r, largest in magnitude at most largest) whose error from that row is at
        most its pass line passes the default rule, and one whose error is beyond its fail line fails it,
        whatever the exact value: the pass line is u A (1 - 2**-40) - 2 B at a position at most |p|, plus
        the storing term 2**-p |value| for a narrow format (elsewhere left out: it is never negative), the
        fail line (u A + 2**-p V)(1 + 2**-40) + 2 B at a position at least |p|, for V the power of two above
        largest and A; both infinite for the elements not judged.  2**-40 covers the rounding of the
        tolerances and errors (see screen), B the reference's distance from the exact value.  Without
        largest, the pass line alone; without values, the fail line alone.  Each line is made for positions within 1/16 of |p| (5 bits, rounded
        down or up) and kept for the rows that follow with the same, with the same bound (and V).
        """
        position = abs(float(self.positions[r]))
        if self.weights is not None or not position < _INF or (largest is not None and not largest < _INF):
            return None
        count = self.classes(r)[1]
        add, sub, mul, n = self.add, self.sub, self.mul, len(self.frequencies)
        margin = _power_of_two(-40)
        below = _five_bits(position, False)
        twice: "List[float]" = []  # 2 B, made once for the lines this call makes
        if self._passing_key != (below, count) or self._passing[0] is not bound:
            low = self.unit * self.factor * (1.0 - margin)
            twice = list(map(add, bound, bound))
            passing = list(map(sub, map(add, [low] * n, map(mul, self.frequencies, [low * below] * n)), twice))
            for c in self._order[:count]:
                passing[c] = _INF
            self._passing_key, self._passing = (below, count), (bound, passing)
        passing = self._passing[1] if values is not None else []
        if self.precision < 24 and values is not None:
            # A narrow format: its storing term is most of each tolerance, kept in the pass line, element by element.
            passing = list(map(add, passing, map(mul, map(abs, values), [self.storing] * n)))
        if largest is None:
            return passing, []
        above = _five_bits(position, True)
        largest = math.ldexp(1.0, math.frexp(largest if largest > self.factor else self.factor)[1])
        if self._failing_key != (above, count, largest) or self._failing[0] is not bound:
            high = self.unit * self.factor * (1.0 + margin)
            stored = self.storing * largest * (1.0 + margin)
            twice = twice or list(map(add, bound, bound))
            failing = list(
                map(add, map(add, [high + stored] * n, map(mul, self.frequencies, [high * above] * n)), twice)
            )
            for c in self._order[:count]:
                failing[c] = _INF
            self._failing_key, self._failing = (above, count, largest), (bound, failing)
        return passing, self._failing[1]

    def classes(self, r: int) -> "Tuple[int, int, int, int]":
        """Row r's coarse and not judged elements: (coarse, not judged, the first column of each or -1)."""
        if r == self._classes[0]:
            return self._classes[1]  # asked again for the same row: the tally, the row's tolerance, its screen
        counts = []
        for bound in (self.COARSE, self.UNJUDGED):
            # u > bound  <=>  |position| * w > bound / unit - 1.
            try:
                reach = abs(float(self.positions[r])) / (bound / self.unit - 1.0)
            except (OverflowError, ZeroDivisionError):
                reach = _INF
            count = 0
            if reach > 0.0:
                # Columns whose frequency w > 1 / reach: a prefix of the falling frequencies.
                limit = 1.0 / reach if reach < _INF else 0.0
                low, high = 0, len(self._falling)
                while low < high:
                    middle = (low + high) // 2
                    if self._falling[middle] > limit:
                        low = middle + 1
                    else:
                        high = middle
                count = low
            counts.append(count)
        coarse, unjudged = counts
        found = (
            coarse - unjudged,
            unjudged,
            self._first[coarse - 1] if coarse else -1,
            self._first[unjudged - 1] if unjudged else -1,
        )
        self._classes = (r, found)
        return found


def _column_frequencies(convention: "Convention", d_model: int) -> "List[float]":
    """Each column's frequency in float64 (0 for a padding column; inf past float64)."""
    by_pair = convention._float_frequencies(d_model)
    return [0.0 if kind == _ZERO else by_pair[pair] for kind, pair in convention._plan(d_model)]


class _Comparison:
    """The running tally of a check: failures, largest errors, coarse and unjudged elements, damaged cells.

    add() takes each row as the table holds it (rounded to dtype), the exact row rounded to float64 (what the
    default rule judges against) and a call giving it rounded to dtype (what atol and ulps, the largest errors
    and the worst element are measured against; the same list for float64).
    """

    # Damaged elements kept for the diagnosis, at most: a table wrong everywhere is counted, not held.
    KEPT_CELLS = 1 << 18

    def __init__(
        self,
        allowance: "_Allowance",
        dtype: str,
        atol: "Optional[float]",
        ulps: "Optional[float]",
        measure: bool = True,
    ) -> None:
        self.allowance = allowance
        #: Whether the largest errors and the worst element are wanted, or the verdicts alone (a verification).
        self.measure = measure
        self.dtype = dtype
        self.default = atol is None and ulps is None
        self.atol = 0.0 if atol is None else atol
        self.ulps = 0.0 if ulps is None else ulps
        self.failures = 0
        self.max_abs = 0.0
        self.max_ulps = 0.0
        self.worst: "Optional[Tuple[int, int, float, float]]" = None
        #: Elements the default rule judges coarser than 2**-10, and elements it does not judge.
        self.coarse = 0
        self.unjudged = 0
        #: (row, column) of the first of each, in row order.
        self.coarse_from: "Optional[_Element]" = None
        self.unjudged_from: "Optional[_Element]" = None
        #: row -> the columns outside the default tolerance (what the diagnosis explains), for the first rows
        #: that hold up to KEPT_CELLS of them; and how many rows and elements are outside it in all.
        self.damaged: "Dict[int, List[int]]" = {}
        self.damaged_rows = self.damaged_cells = 0
        self._bound: "Optional[List[float]]" = None  # the last bound given, and twice it
        self._margins: "List[float]" = []
        # The last bound given to _reach, its reach for it (in value, in place), and its largest B.
        self._reached: "Tuple[Optional[List[float]], float, int, float]" = (None, 0.0, 0, 0.0)
        self._misses = 0  # the rows in a row whose largest errors _decided could not rule out
        #: The largest error over its element's tolerance, under the default rule (measured only).
        self.share = 0.0
        self._scaled: "Tuple[Optional[List[float]], float, List[float]]" = (None, 0.0, [])  # share times a screen

    def tally(
        self,
        table: "_Source",
        exact_rows: "Callable[[str, int], Iterator[List[float]]]",
        fast: "Optional[_LawTable]",
    ) -> "_Comparison":
        """Every row of the table added against its references (_references: the exact rows, row r alone as the
        first of exact_rows(dtype, r), and the fast law, as it takes them): the one loop of a table's, a grid's
        and a rotary cache's tally.  exact_rows(format, first) yields the exact rows from row first rounded to
        a format."""
        settle = None if fast is None else (lambda r, c: _law_element(fast, r, c, "float64"))
        references = _references(
            lambda rounding: exact_rows(rounding, 0), self.dtype, lambda r: next(exact_rows(self.dtype, r)), fast
        )
        for r, ((row, bad), (exact, expect, bound)) in enumerate(zip(table.read(), references)):
            self.add(r, row, exact, expect, bad, bound, settle)
        return self

    def add(
        self,
        r: int,
        row: "List[float]",
        exact: "Sequence[float]",
        expect: "Callable[[], List[float]]",
        has_not_finite: bool,
        bound: "Optional[List[float]]",
        settle: "Optional[Callable[[int, int], float]]",
    ) -> None:
        """Tally row r: exact is the exact row rounded to float64, or a float64 row within bound of it.

        expect() gives the exact row rounded to dtype.  With a bound (see _references), an element whose
        error from exact is more than bound[c] from its tolerance is settled by that error; one nearer the
        edge is judged against settle(r, c), its exact value rounded to float64.  The verdict is the same
        as with the exact row.  A row whose verdicts _decided() gives from exact alone, and that it shows cannot
        reach the largest errors (or whose errors are not measured), is not rounded to dtype.

        Long because a row's tally is one sequence: the largest error, the classes, the verdict of each
        element, the distance in places.
        """
        sub = self.allowance.sub
        judged: "Optional[List[float]]" = None
        decided: "Optional[List[int]]" = None  # the damaged columns of a row whose verdicts _decided() gives
        short = False  # whether the row cannot reach the largest errors (_decided)
        if (
            bound is not None
            and self.default
            and not has_not_finite
            and (not self.measure or (self.worst is not None and self.max_ulps > 1 << self.allowance.precision))
        ):
            # Verdicts alone, or a failing table whose largest errors are known: the float64 row may decide.
            decided, judged, short = self._decided(r, row, exact, bound)
        expected: "List[float]" = []
        errors: "List[float]" = []
        largest = -1.0  # not wanted: the verdicts alone, or a row that cannot reach the largest errors
        if decided is None or (self.measure and not short):
            expected = expect()
            errors = list(map(abs, map(sub, row, expected)))
            if not self.measure:
                pass
            elif has_not_finite:
                finite = [x for x in errors if x < _INF]
                largest = max(finite) if finite else -1.0
            else:
                largest = max(errors)
        if largest >= 0.0 and (largest > self.max_abs or self.worst is None):
            c = errors.index(largest)
            self.max_abs = largest
            self.worst = (r, c, row[c], expected[c])
        # Counted whatever the rule: the diagnosis works with the default one.
        coarse, unjudged, first_coarse, first_unjudged = self.allowance.classes(r)
        if coarse:
            self.coarse += coarse
            if self.coarse_from is None:
                self.coarse_from = (r, first_coarse)
        if unjudged:
            self.unjudged += unjudged
            if self.unjudged_from is None:
                self.unjudged_from = (r, first_unjudged)
        if largest == 0.0 and not has_not_finite:
            return  # every value is the exact one rounded to dtype: it passes every rule
        screen = [] if has_not_finite or decided is not None else self.allowance.screen(r)
        damaged: "List[int]" = []
        tolerances: "Optional[List[float]]" = None
        if decided is not None:
            damaged = decided
        elif screen and all(map(self.allowance.le, errors, screen)):
            pass  # the common row, decided in C loops
        elif bound is None:
            judged = errors if exact is expected else list(map(abs, map(sub, row, exact)))
            tolerances = self.allowance.row(r, row)
            if not all(map(self.allowance.le, judged, tolerances)):
                damaged = self.allowance.outside(judged, tolerances)
        else:
            # Within 2 B of the reference f (see _references): below tolerance - 2B an element passes, above
            # tolerance + 2B it fails, between them the exact value decides.  In C loops but for those.
            add, le = self.allowance.add, self.allowance.le
            if judged is None:
                judged = list(map(abs, map(sub, row, exact)))
            tolerances = self.allowance.row(r, row)
            if bound is not self._bound:  # the same list for the rows of a band of positions
                self._bound, self._margins = bound, list(map(add, bound, bound))
            lower = list(map(sub, tolerances, self._margins))
            if not all(map(le, judged, lower)):
                upper = list(map(add, tolerances, self._margins))
                within = sum(map(le, judged, upper))
                near = within - sum(map(le, judged, lower))  # how many the exact value decides
                if not near and self.damaged_cells > self.KEPT_CELLS and not has_not_finite:
                    damaged = [0] * (len(row) - within)  # counted, not kept
                else:
                    damaged = self.allowance.outside(judged, upper)  # these fail
                    if near:
                        for c in set(self.allowance.outside(judged, lower)).difference(damaged):
                            error = judged[c] if settle is None else abs(row[c] - settle(r, c))
                            if not error <= tolerances[c]:
                                damaged.append(c)
                        damaged.sort()
        if self.default and self.measure and not has_not_finite:
            # The share: the largest error over its element's tolerance (errors from a float64 row within B of
            # the exact one: off by B / tolerance, below 2**-30).  A row whose errors are all within share times
            # the screen (each tolerance, less a little) cannot raise it, and is left in C loops.
            allowance = self.allowance
            judged = judged if judged is not None else list(map(abs, map(sub, row, exact)))
            screen = allowance.screen(r) if tolerances is None else []
            if screen and (self._scaled[0] is not screen or self._scaled[1] != self.share):
                self._scaled = (screen, self.share, list(map(allowance.mul, screen, [self.share] * len(screen))))
            if not (screen and all(map(allowance.le, judged, self._scaled[2]))):
                tolerances = tolerances or allowance.row(r, row)
                self.share = max(self.share, max(map(allowance.div, judged, tolerances)))
        if has_not_finite:
            # The storing term of an infinite value is infinite: NaN and infinity fail whatever the rule.
            outside = set(damaged)
            damaged = [c for c, x in enumerate(row) if c in outside or not -_INF < x < _INF]
        if damaged:
            self.damaged_rows += 1
            self.damaged_cells += len(damaged)
            if self.damaged_cells <= self.KEPT_CELLS:
                self.damaged[r] = damaged
        if self.default:
            self.failures += len(damaged)
        elif self.ulps == 0.0:
            self.failures += sum(1 for error in errors if not error <= self.atol)
        if not self.measure or short:
            return
        by_place = not self.default and self.ulps != 0.0  # whether each element's distance in places is wanted
        if not (has_not_finite or by_place) and self.max_ulps > 1 << self.allowance.precision:
            # No element of the row is further in places than the largest magnitudes of the two rows together
            # (|x| < |y| as their patterns are): a row that cannot reach the largest distance so far is done.
            # Tried only once the distance is past 2**p (a sign crossed, or magnitudes apart): never in a
            # table that passes, where the bound could not beat it.
            top = _ordered([max(max(row), -min(row)), max(max(expected), -min(expected))], self.dtype, False)
            if top[0] + top[1] <= self.max_ulps:
                return
        if not (has_not_finite or by_place):
            # Only the largest distance is wanted: the bit patterns' differences, in C loops; where one
            # reaches 2**(p-1), a sign may differ, and the places decide.
            differences = list(map(sub, _ordered(row, self.dtype, False), _ordered(expected, self.dtype, False)))
            high, low = max(differences), -min(differences)
            if high < 1 << (self.allowance.precision - 1) and low < 1 << (self.allowance.precision - 1):
                self.max_ulps = max(self.max_ulps, high if high > low else low)
                return
        finite_row = [x if -_INF < x < _INF else 0.0 for x in row] if has_not_finite else row
        places = list(map(abs, map(sub, _ordered(finite_row, self.dtype, True), _ordered(expected, self.dtype, True))))
        if has_not_finite:
            largest = max((n for n, error in zip(places, errors) if error < _INF), default=0)
        else:
            largest = max(places)
        self.max_ulps = max(self.max_ulps, largest)
        if by_place:
            # A NaN or infinite element fails whatever its place (its substitute's is meaningless).
            self.failures += sum(
                1 for error, n in zip(errors, places) if not (error <= self.atol or (error < _INF and n <= self.ulps))
            )

    def _decided(
        self, r: int, row: "List[float]", exact: "Sequence[float]", bound: "List[float]"
    ) -> "Tuple[Optional[List[int]], List[float], bool]":
        """Row r's verdicts under the default rule from exact, a float64 row within bound of the exact one, if that decides them.

        It decides them where the error of every element from exact is below its pass line or beyond its
        fail line (_Allowance.lines).  Return the columns outside the tolerance where it does, else None
        (add() then judges the row as it does without); the errors from exact; and whether the row cannot
        reach the largest errors measured, which add() then need not measure: no error from the exact
        values rounded to dtype is more than the error from exact + B + half a unit of dtype at A
        (|exact| <= A, see _reach), and no element is further in places than _beyond_places() allows.
        """
        allowance = self.allowance
        judged = list(map(abs, map(allowance.sub, row, exact)))
        lines = allowance.lines(r, bound, row)
        damaged: "Optional[List[int]]" = None
        largest = -1.0  # the row's largest magnitude, once made

        def magnitude() -> float:
            high, low = max(row), -min(row)
            return high if high > low else low

        if lines is not None:
            le, passing = allowance.le, lines[0]
            damaged = []
            if not all(map(le, judged, passing)):
                largest = magnitude()
                lines = allowance.lines(r, bound, None, largest)
                failing = [] if lines is None else lines[1]
                within = sum(map(le, judged, failing)) if failing else -1
                if within != sum(map(le, judged, passing)):
                    damaged = None  # some elements lie between their lines: the exact values decide them
                elif self.damaged_cells > self.KEPT_CELLS:
                    damaged = [0] * (len(row) - within)  # counted, not kept
                else:
                    damaged = allowance.outside(judged, failing)
        reached = True
        # Tried on every row while it helps, else on one row in 16 (a table whose rows keep coming near the
        # largest distance in places would pay for it on every row, for nothing).
        if self.measure and (self._misses < 4 or not r % 16) and max(judged) + self._reach(bound)[0] <= self.max_abs:
            reached = self._beyond_places(row, exact, bound, largest if largest >= 0.0 else magnitude())
            self._misses = self._misses + 1 if reached else 0
        return damaged, judged, not reached

    def _beyond_places(
        self, row: "List[float]", exact: "Sequence[float]", bound: "List[float]", largest: float
    ) -> bool:
        """Whether an element of row could be further in places from its exact value's rounding than max_ulps (or cannot be told).

        Its rounding E lies between the roundings of exact[c] -+ B[c] (rounding is monotone), and E's place
        is at most T (_reach).  Values of one sign (or a zero) are at most the larger of their places apart;
        of opposite signs, their places summed.  So only an element x whose sign may differ from E's (x f <
        2 B L, L the row's largest |x|: elsewhere |f| >= 2 B > B, and f's sign is E's) and whose own place is
        beyond max_ulps - T could be further.  Up to 16 such elements are each measured against both
        roundings; more are bounded together: |E| is at most |f| + B rounded, so x and E are at most the
        places of |x| and of that rounding apart, summed.
        """
        top, most = self._reach(bound)[1], self.max_ulps
        place = _ordered([largest], self.dtype, False)[0]
        if place + top <= most:
            return False
        if place > most or top > most:
            return True  # values of one sign might be further apart
        import struct

        # The number of dtype whose place is most - top: the elements beyond it in magnitude may be further.
        code, pattern = {"float16": ("e", "H"), "bfloat16": ("f", "I")}.get(self.dtype, ("f", "I"))
        bits = int(most) - top if self.dtype != "bfloat16" else (int(most) - top) << 16
        edge = struct.unpack("<" + code, struct.pack("<" + pattern, bits))[0]
        n, threshold = len(row), 2.0 * self._reached[3] * largest  # _reach's largest B, for this bound
        products = list(map(self.allowance.mul, row, exact))
        if min(products) >= threshold:
            return False  # no element's sign may differ from its exact value's: the common row
        signs = self.allowance.outside([threshold] * n, products)  # x f < 2 B L (no product is NaN)
        suspects = [c for c in signs if abs(row[c]) > edge]
        if len(suspects) > 16:
            # Too many to measure one by one (a table whose signs differ from the reference's): in C loops.
            outer = _round_row([abs(exact[c]) + bound[c] for c in suspects], self.dtype)
            own = _ordered([abs(row[c]) for c in suspects], self.dtype, False)
            farthest: int = max(map(self.allowance.add, own, _ordered(outer, self.dtype, False)))
            return farthest > most
        for c in suspects:
            low, high = _round_row([exact[c] - bound[c], exact[c] + bound[c]], self.dtype)
            places = _ordered([row[c], low, high], self.dtype, True)
            if abs(places[0] - places[1]) > most or abs(places[0] - places[2]) > most:
                return True
        return False

    def _reach(self, bound: "List[float]") -> "Tuple[float, int]":
        """How far the exact values' rounding to dtype can be from a float64 row within bound of them: (in value, in place).

        |exact| <= A (1 + 2**-53) <= A + B for A the factor, and rounding is monotone: no exact value's rounding
        is further from 0 than A + B's.  In value: B and half a unit of dtype at A and at its subnormals, doubled
        for the rounding of these sums and for a binade A's float64 rounding may have left; infinite where A + B
        rounds past the format (an exact value's rounding may be infinite there).  In place: the place of A + B
        rounded to dtype.  Kept for the same bound, with its largest B.
        """
        if self._reached[0] is not bound:
            precision, smallest, _ = _DTYPES[self.dtype]
            factor, most = self.allowance.factor, max(bound)
            half = factor * _power_of_two(-precision) + _power_of_two(smallest - precision)
            rounded = _round_row([factor + most], self.dtype)
            margin = 2.0 * (most + half) if rounded[0] < _INF else _INF
            self._reached = (bound, margin, _ordered(rounded, self.dtype, False)[0], most)
        return self._reached[1], self._reached[2]


def _ordered(values: "List[float]", dtype: str, places: bool) -> "Sequence[int]":
    """Each value's place among the numbers of dtype (values the format holds): ulps apart = places apart.

    Without places, the bit patterns themselves (bfloat16's 16 bits), sign and magnitude.
    """
    import struct

    code, pattern, half = {"float64": ("d", "Q", 1 << 63), "float16": ("e", "H", 1 << 15)}.get(
        dtype, ("f", "I", 1 << 31)
    )
    bits = struct.unpack(f"<{len(values)}{pattern}", struct.pack(f"<{len(values)}{code}", *values))
    if dtype == "bfloat16":
        bits = tuple(b >> 16 for b in bits)
        half = 1 << 15
    # Sign and magnitude to a signed integer: -0.0 and 0.0 are the same place.
    return [b if b < half else half - b for b in bits] if places else bits


def _references(
    exact_rows: "Callable[[str], Iterator[List[float]]]",
    dtype: str,
    exact_row: "Callable[[int], List[float]]",
    fast: "Optional[_LawTable]",
) -> "Iterator[Tuple[Sequence[float], Callable[[], List[float]], Optional[List[float]]]]":
    """Each row's references: (the exact row rounded to float64, a call giving the same rounded to dtype, None).

    The rounding to dtype is a call, made only where it is wanted (a row whose tally the float64 row and
    its bound decide does without it).

    exact_rows(format) yields the exact rows rounded to a format.  Rounding the float64 value to dtype
    gives the exact value's rounding, except where the float64 value lies exactly halfway between two
    numbers of dtype (those halfway points are float64 numbers, so the exact value and its float64
    rounding are on the same side of every other one).  Such a tie, once in 2**(52 - p) values or so,
    takes exact_row(r), the row computed in dtype by the exact kernel.  A runtime of single-precision
    floats holds no float64 value: there both are the row in dtype.

    fast, a table's law (_LawTable: a convention's table or a rotary cache) in a narrow format, whose
    elements _law_element rounds exactly to a format one at a time: each row is then made as
    the fast path makes it: the first item is a float64 row f, the third each element's bound B on
    its error (see below), and the second is still the exact rounding: where f - B and f + B round to
    the same number of dtype, so does the exact value between them; elsewhere element() decides.

    The bound.  With each pair's frequency w within 2**-52 w of the exact law's, a position p within
    2**-53 |p| of its own, and the product p w rounded once, the angle a is within 4.01 * 2**-53 |a|
    of the true one; sin and cos are taken as within 2 units of 2**-53 of theirs (glibc's, musl's and
    macOS's are within 1: _sine_within_bound tries them, and the exact rows are used where they are
    not); the output scale s and its product add 3 units.  So
    |f - exact| <= s * 2**-53 * (5 + 4.02 |a|) < s * 2**-50 * (1 + |a|) = B, and f is within B of
    the exact value's float64 rounding too; 2 B also covers the rounding of errors and tolerances.
    B is made for a position at least |p|, the same for the rows whose positions are within 1/16.
    Past angle 2**20 or with no operator module (MicroPython), the exact rows are used.

    Long because the two ways to the same references are one generator: the fast one's setup, its
    checks, then its rows; or the exact rows with their ties.
    """
    import struct

    def given(made: "List[float]") -> "Callable[[], List[float]]":
        return lambda: made  # a row made already

    if dtype == "float64" or _single_precision():
        for row in exact_rows(dtype):
            yield row, given(row), None
        return
    if fast is not None:
        try:
            from operator import add, itemgetter, mul, ne, or_, sub
        except ImportError:
            fast = None
    if fast is not None:
        known, (law, exponents, plan, output, positions, _) = fast, fast
        frequencies = []  # each pair's, within 2**-52 of it: 53 bits of the exact law's 64, whose error is 2**-62
        for exponent in exponents:
            m, k = law.frequency(exponent, 64)
            drop = _bit_length(m) - 53
            if not -1000 < k - 64 + drop < 900:
                fast = None  # near float64's smallest or largest numbers: the exact rows
                break
            frequencies.append(_make_float(False, m >> drop, k - 64 + drop))
    if fast is not None:
        pairs, n, sin, cos = len(frequencies), len(plan), math.sin, math.cos
        index = [pair if kind == _SINE else pairs + pair if kind == _COSINE else 2 * pairs for kind, pair in plan]
        columns = [0.0 if kind == _ZERO else frequencies[pair] for kind, pair in plan]
        # The functions the plan takes (a rotary cache is all cosines or all sines): the other's place held by zeros.
        sines, cosines, nothing = any(k == _SINE for k, _ in plan), any(k == _COSINE for k, _ in plan), [0.0] * pairs
        arrange = itemgetter(*index) if n > 1 else (lambda values: (values[index[0]],))
        scale = output.value
        unit = scale * _power_of_two(-50)

        def made(p: float) -> "Sequence[float]":
            """Row at position p by the fast path's arithmetic."""
            angles = list(map(mul, frequencies, [p] * pairs))
            values = arrange(
                (list(map(sin, angles)) if sines else nothing)
                + (list(map(cos, angles)) if cosines else nothing)
                + [0.0]
            )
            return values if scale == 1.0 else tuple(map(mul, values, [scale] * n))

        def bound(p: float) -> "List[float]":
            """Each element's B at position p."""
            return list(map(add, [unit] * n, map(mul, columns, [unit * p] * n)))

        far = max(map(abs, positions), default=_INF) * max(columns)
        if not (far <= _power_of_two(20) and _power_of_two(-500) <= scale <= _power_of_two(500)):
            fast = None  # angles past 2**20, or a scale whose square float64 cannot hold (B's last term)
        elif not _sine_within_bound():
            fast = None
    if fast is not None:

        def rounding(r: int, values: "Sequence[float]", bounds: "List[float]") -> "Callable[[], List[float]]":
            """The call that gives row r's exact values rounded to dtype, from its float64 row and bounds."""
            return lambda: to_dtype(r, values, bounds)

        def to_dtype(r: int, values: "Sequence[float]", bounds: "List[float]") -> "List[float]":
            low = _round_row(list(map(sub, values, bounds)), dtype)
            high = _round_row(list(map(add, values, bounds)), dtype)
            if low != high or 0.0 in low:
                # The elements element() decides, found in C loops: those whose bounds round apart, and zeros
                # whose signs differ (-0.0 == 0.0 hides them from !=).
                differ = list(map(ne, low, high))
                if 0.0 in low:
                    ones = [1.0] * n
                    signs = map(ne, map(math.copysign, ones, low), map(math.copysign, ones, high))
                    differ = list(map(or_, differ, signs))
                c = -1
                while True:
                    try:
                        c = differ.index(True, c + 1)
                    except ValueError:
                        break
                    low[c] = _law_element(known, r, c, dtype)
            return low

        top = -1.0
        for r, p in enumerate(positions):
            values = made(p)
            # B for a position at least |p| and within 1/16 of it (5 bits, rounded up), kept for the rows that follow.
            band = _five_bits(abs(p), True)
            if band != top:
                top, bounds = band, bound(band)
            yield values, rounding(r, values, bounds), bounds
        return
    rows = exact_rows("float64")
    precision, smallest, _ = _DTYPES[dtype]
    low_bits, half = (1 << (53 - precision)) - 1, 1 << (52 - precision)
    tiny = _power_of_two(smallest)  # below it, dtype's numbers are evenly spaced and the halfway points move
    for r, row in enumerate(rows):
        rounded = _round_row(row, dtype)
        bits = struct.unpack(f"<{len(row)}Q", struct.pack(f"<{len(row)}d", *row))
        suspects = [c for c, (b, x) in enumerate(zip(bits, row)) if b & low_bits == half or -tiny < x < tiny]
        ties = [
            c
            for c in suspects
            if rounded[c] != row[c] and _round_float(2 * row[c] - rounded[c], dtype) == 2 * row[c] - rounded[c]
        ]
        if ties:
            decided = exact_row(r)
            for c in ties:
                rounded[c] = decided[c]
        yield row, given(rounded), None


def _law_element(table: "_LawTable", r: int, c: int, rounding: str) -> float:
    """Row r's column c of a table given by its law (_LawTable), correctly rounded to a format."""
    law, exponents, plan, scale, _, position = table
    kind, pair = plan[c]
    return _exact_value(position(r), kind, exponents[pair] if kind != _ZERO else (0, 1), law, scale, rounding)


def _sine_within_bound() -> bool:
    """Whether math.sin and math.cos are within 2 units of 2**-53 of the true values, as the check's bound takes them.

    Tried against the exact kernel at two angles in each binade from 2**-4 to 2**20 (the largest angle the
    fast references take): glibc's, musl's and macOS's are within 1 unit; a runtime whose sine is poorer,
    or reduces large angles badly, is checked with the exact rows instead (see _references).
    """
    if "sine" not in _RUNTIME:
        law, within = _Frequencies((1, 1), (1, 1), False), True  # frequency 1: the angle is the position
        one = _OutputScale("square", ((1, 1),), 1.0)
        for k in range(-4, 21):
            for x in (math.ldexp(1.1, k), math.ldexp(1.7, k)):
                for kind, f in ((_SINE, math.sin), (_COSINE, math.cos)):
                    exact = _exact_value(_float_ratio("angle", x), kind, (0, 1), law, one, "float64")
                    within = within and abs(f(x) - exact) <= _power_of_two(-52)
        _RUNTIME["sine"] = within
    return _RUNTIME["sine"]


def _source(actual: object, name: str = "actual") -> "_Source":
    """A table to check as the checker reads it: a file's as read, an array's or tensor's by blocks, else lists."""
    if isinstance(actual, _Source):
        return actual
    source = _Source(name, None, None)
    shape = getattr(actual, "shape", None)
    if (
        callable(getattr(actual, "tolist", None))
        and isinstance(shape, tuple)
        and len(shape) == 2
        and all(isinstance(n, int) and n > 0 for n in shape)
    ):
        source.array, (source.count, source.width) = actual, shape
    else:
        source.held = _as_table(actual, name)
        source.count, source.width = len(source.held), len(source.held[0])
    return source


def _as_table(actual: object, name: str = "actual") -> "List[List[float]]":
    """Read a 2-D table of numbers into lists of floats, refusing anything else."""
    lines = _items(actual, f"{name} must be a 2-D table of numbers")
    table: "List[List[float]]" = []
    for r, row in enumerate(lines):
        if type(row) is list and all(type(x) is float for x in row):
            values = row  # the common case, already floats
        else:
            values = _as_row(row, r, name)
        if table and len(values) != len(table[0]):
            raise ValueError(f"{name} must be rectangular: row {r} has {len(values)} values, row 0 has {len(table[0])}")
        table.append(values)
    if not table or not table[0]:
        raise ValueError(f"{name} must have at least one row and one column, got an empty table")
    return table


def _check_format(actual: object, table: "_Source", dtype: object, atol: object, ulps: object) -> "_Rule":
    """A check's rule: the format it rounds to (the table set to round to it), where that came from (None for a
    list without dtype, or a dtype given for one), atol and ulps checked.

    Without dtype, the data's own: an array's or tensor's dtype (float16, float32, float64, bfloat16), a .npy
    file's; float64 for lists and text.  A dtype given is honoured; where the data says another, the origin says so.
    """
    kind = getattr(actual, "dtype", None)
    # numpy's dtype.name is "float32" whatever the byte order (str() would say ">f4"); torch's str() is "torch.float32".
    held = getattr(kind, "name", None)
    held = held if isinstance(held, str) else str(kind)
    what = "the file's dtype" if isinstance(actual, _Source) else "the array's dtype"
    if held.startswith("torch."):
        held, what = held[6:], "the tensor's dtype"
    origin: "Optional[str]" = None
    if held not in _DTYPES:
        dtype = _check_dtype("float64" if dtype is None else dtype, True)
    else:
        dtype = _check_dtype(held if dtype is None else dtype, True)
        origin = what if held == dtype else f"as given; {what} is {held}"
    table.rounding = dtype
    if origin in ("the array's dtype", "the tensor's dtype"):
        table.dtype = dtype  # its values are numbers of dtype already
    return (
        dtype,
        origin,
        None if atol is None else _check_tolerance("atol", atol),
        None if ulps is None else _check_tolerance("ulps", ulps),
    )


def _not_finite_text(cells: "Sequence[Tuple[int, int, float]]", count: int, dtype: str) -> str:
    shown = ", ".join(
        f"[{r}][{c}] is {x!r}" + ("" if x != x or x in (_INF, -_INF) else f", beyond {dtype}'s range")
        for r, c, x in cells[:5]
    )
    more = f", and {count - 5} more" if count > 5 else ""
    what = "element is not a finite number" if count == 1 else "elements are not finite numbers"
    return f"{count} {what}: {shown}{more}"


# ---------------------------------------------------------------------------
# Input: tables to check, read without trusting them
# ---------------------------------------------------------------------------
#
# A table to check is untrusted input.  The readers execute and unpickle
# nothing, check a declared shape against the data before they allocate,
# and refuse what is not a rectangular, 2-D table of numbers.  NaN and
# infinity are numbers here: a framework that emits them has a wrong table,
# which compare() reports, not an unreadable file.


# Limits: bytes read, values in a table, bytes in a .npy header.
_MAX_BYTES = 1 << 31


def _read_table(source: str) -> "_Source":
    """Read a CSV, JSON or .npy table from a path, or from standard input for "-" (spooled to a temporary file)."""
    import sys

    name = "standard input" if source == "-" else source
    handle: "Optional[IO[bytes]]" = None
    try:
        try:
            if source == "-":
                import tempfile

                handle = tempfile.TemporaryFile()
                size = 0
                while size <= _MAX_BYTES:
                    chunk = sys.stdin.buffer.read(1 << 20)
                    if not chunk:
                        break
                    handle.write(chunk)
                    size += len(chunk)
            else:
                import os

                size = os.path.getsize(source)
                with open(source, "rb"):
                    pass  # a folder, or a file that cannot be read, says so here
        except OSError as error:
            raise _Unreadable(f"cannot read {name}: {error.strerror or error}") from None
        if size > _MAX_BYTES:
            raise _Unreadable(f"{name} is larger than {_MAX_BYTES} bytes")
        table = _Source(name, None if handle is not None else source, handle)
        return table.scan(source.lower())
    except BaseException:
        if handle is not None:
            handle.close()
        raise


_MAX_HEADER = 1 << 16


# A .npy descr's type code, struct's code, the bytes of a value, the format (constant tuples: in flash when frozen).
_NPY_CODES = (("f2", "e", 2, "float16"), ("f4", "f", 4, "float32"), ("f8", "d", 8, "float64"))


class _Source:
    """A table to check, wherever it comes from: its shape, its rows one by one or a block at a time.

    Rows are held (a list, JSON, a Fortran-order .npy file), or read as needed, so that a table of any
    length is checked in memory that does not grow with it: a numpy array's or torch tensor's by slicing
    and tolist(), a .npy file's from the file, a CSV file's lines again by their offsets, a block of about
    BLOCK values at a time.  dtype is a .npy file's format (None for text).  handle is the open file
    (standard input spooled to a temporary file), or None for a path opened at each read.

    As the checker reads it, the table is a list of rows rounded to ``rounding``: len(), [r] and
    iteration; [r] keeps the last KEPT rows it read (the diagnosis's samples and damaged rows).
    """

    # Values per block read: 64K floats, 2 MB as Python lists; rows kept once read by index.
    BLOCK = 1 << 16
    KEPT = 512

    def __init__(self, name: str, path: "Optional[str]", handle: "Optional[IO[bytes]]") -> None:
        self.name, self.path, self.handle = name, path, handle
        self.dtype: "Optional[str]" = None
        self.count = self.width = 0
        self.held: "Optional[List[List[float]]]" = None  # a list, JSON, or a .npy file in Fortran order
        self.array: "Any" = None  # a 2-D numpy array or torch tensor
        self.rounding = "float64"
        self.kept: "Dict[int, List[float]]" = {}
        self.start = 0  # a .npy file's first data byte
        self.layout = ""  # struct's layout of one .npy row
        self.offsets: "List[Tuple[int, int, int]]" = []  # a CSV row's (byte offset, line number, line within)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, r: int) -> "List[float]":
        if r < 0:
            r += self.count
        if not 0 <= r < self.count:
            raise IndexError(r)
        row = self.kept.get(r)
        if row is None:
            row = _round_row(self.row(r), self.rounding)
            if len(self.kept) >= self.KEPT:
                del self.kept[next(iter(self.kept))]
            self.kept[r] = row
        return row

    def __iter__(self) -> "Iterator[List[float]]":
        rounding = "float64" if self.dtype == self.rounding else self.rounding  # a format's values are its numbers
        for block in self.blocks(0, self.count):
            for row in block:
                yield _round_row(row, rounding)

    def read(self) -> "Iterator[Tuple[List[float], bool]]":
        """Each row rounded, and whether it may hold a value that is not finite (NaN, infinity, beyond the format).

        Such values are counted in not_finite_count, and the first KEPT kept in not_finite as (row, column,
        value as read).
        """
        self.not_finite: "List[Tuple[int, int, float]]" = []
        self.not_finite_count = 0
        r = 0
        rounding = "float64" if self.dtype == self.rounding else self.rounding  # a format's values are its numbers
        for block in self.blocks(0, self.count):
            for read in block:
                row = _round_row(read, rounding)
                bad = not -_INF < sum(row) < _INF
                if bad:
                    cells = [(r, c, read[c]) for c, x in enumerate(row) if not -_INF < x < _INF]
                    self.not_finite_count += len(cells)
                    self.not_finite.extend(cells[: self.KEPT - len(self.not_finite)])
                yield row, bad
                r += 1

    def row(self, r: int) -> "List[float]":
        """Row r as read."""
        return next(self.blocks(r, r + 1))[0]

    def blocks(self, first: int, stop: int) -> "Iterator[List[List[float]]]":
        """Rows first to stop - 1 as read, a block of about BLOCK values at a time."""
        if self.held is not None:
            yield self.held if first == 0 and stop == self.count else self.held[first:stop]
            return
        step = max(1, self.BLOCK // self.width)
        if self.array is not None:
            for begin in range(first, stop, step):
                rows = self.array[begin : min(begin + step, stop)].tolist()
                for i, row in enumerate(rows):
                    # An array's rows as lists of floats (an integer array's too); what is not a number is refused.
                    if not (type(row) is list and set(map(type, row)) == {float}):
                        rows[i] = _as_row(row, begin + i, self.name)
                yield rows
            return
        handle = self.handle if self.handle is not None else open(self.path or "", "rb")
        try:
            if self.layout:
                import struct

                size = struct.calcsize(self.layout)
                handle.seek(self.start + first * size)
                for begin in range(first, stop, step):
                    n = min(step, stop - begin)
                    flat = struct.unpack(self.layout[0] + f"{n * self.width}" + self.layout[-1], handle.read(n * size))
                    yield [list(flat[i * self.width : (i + 1) * self.width]) for i in range(n)]
                return
            # CSV: from the \n-line where row first starts, skipping the lines before it within that line.
            if first >= stop:
                return
            offset, line_number, within = self.offsets[first]
            handle.seek(offset)
            block: "List[List[float]]" = []
            r = first
            for number, line, _, _ in self.lines(handle, offset, line_number - within - 1):
                values = self.values(line, number) if number >= line_number and r < stop else None
                if values is not None:
                    block.append(values)
                    r += 1
                    if len(block) * self.width >= self.BLOCK:
                        yield block
                        block = []
                if r == stop:
                    break
            if block:
                yield block
        finally:
            if self.handle is None:
                handle.close()

    def scan(self, lower: str) -> "_Source":
        """Read the table's kind, shape and format, checking all of it: .npy by name or magic, JSON by name or a leading [, else CSV.

        Long because each kind is read here in one piece (the map's budget): a .npy header checked field by
        field, JSON parsed whole, every CSV line checked and its offset noted.
        """
        handle = self.handle if self.handle is not None else open(self.path or "", "rb")
        try:
            handle.seek(0)
            head = handle.read(_MAX_HEADER + 16)
            if lower.endswith(".npy") or head.startswith(b"\x93NUMPY"):
                # A NumPy .npy file of float16, float32 or float64, either byte order, C or Fortran order: its header checked.
                import ast
                import struct

                name, data = self.name, head
                if not data.startswith(b"\x93NUMPY") or len(data) < 10:
                    raise _Unreadable(f"{name} is not a .npy file (its first bytes are not \\x93NUMPY)")
                major = data[6]
                if major == 1:
                    header_length, offset = data[8] | data[9] << 8, 10
                elif major in (2, 3) and len(data) >= 12:
                    header_length, offset = int.from_bytes(data[8:12], "little"), 12
                else:
                    raise _Unreadable(f"{name}: unsupported .npy version {major}.{data[7]}")
                if header_length > _MAX_HEADER:
                    raise _Unreadable(f"{name}: .npy header of {header_length} bytes, more than {_MAX_HEADER}")
                if len(data) < offset + header_length:
                    raise _Unreadable(f"{name}: the .npy header is cut short")
                try:
                    header_text = data[offset : offset + header_length].decode("utf-8" if major == 3 else "latin-1")
                    # literal_eval reads Python literals and executes nothing.
                    header = ast.literal_eval(header_text.strip())
                except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError, UnicodeDecodeError):
                    raise _Unreadable(f"{name}: the .npy header is not a Python literal") from None
                if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
                    raise _Unreadable(f"{name}: the .npy header must have exactly descr, fortran_order and shape")
                descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
                if not isinstance(descr, str):
                    raise _Unreadable(f"{name}: structured arrays are refused, got descr {_short(descr)}")
                if "O" in descr:
                    raise _Unreadable(f"{name}: object arrays are refused (reading them would mean unpickling)")
                codes = [row for row in _NPY_CODES if row[0] == descr[1:]]
                if len(descr) != 3 or descr[0] not in "<>=" or not codes:
                    raise _Unreadable(f"{name}: dtype must be float16, float32 or float64 (f2, f4, f8), got {descr!r}")
                if not isinstance(fortran, bool):
                    raise _Unreadable(f"{name}: fortran_order must be True or False, got {_short(fortran)}")
                if not isinstance(shape, tuple) or not all(
                    isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
                ):
                    raise _Unreadable(f"{name}: shape must be a tuple of non-negative integers, got {_short(shape)}")
                if len(shape) != 2:
                    raise _Unreadable(f"{name}: a table must be 2-D, got shape {shape}")
                rows_count, columns = shape
                # Read a block at a time, a C-order table may be as long as the bytes allow; a Fortran-order one is held.
                _check_table_size(rows_count, columns, name, held=fortran)
                _, code, size, held = codes[0]
                needed = rows_count * columns * size
                handle.seek(0, 2)
                present = handle.tell() - offset - header_length
                if present != needed:
                    cut = "cut short" if present < needed else "followed by extra bytes"
                    raise _Unreadable(f"{name}: data {cut}: {present} bytes, shape {shape} of {descr} needs {needed}")
                order = ">" if descr[0] == ">" else "<" if descr[0] == "<" else "="
                self.dtype, self.count, self.width = held, rows_count, columns
                self.start, self.layout = offset + header_length, f"{order}{columns}{code}"
                if fortran:
                    handle.seek(self.start)
                    flat = struct.unpack(f"{order}{rows_count * columns}{code}", handle.read(needed))
                    self.held = [[flat[c * rows_count + r] for c in range(columns)] for r in range(rows_count)]
                return self
            try:
                text = head.decode("utf-8-sig")
            except UnicodeDecodeError as error:
                # Refused, unless it is a character the head cut in two: then the text before it.
                text = self.text(head if error.start < len(head) - 4 else head[: error.start])
            if lower.endswith(".json") or text.lstrip().startswith("["):
                handle.seek(0)
                self.held = _parse_json(self.text(handle.read(_MAX_BYTES + 1)), self.name)
                self.count, self.width = len(self.held), len(self.held[0])
                return self
            # Check every line of a CSV table and note where each row starts: comma-separated numbers, a row a line.
            handle.seek(0)
            for line_number, line, offset, within in self.lines(handle, 0, 0):
                values = self.values(line, line_number)
                if values is None:
                    continue
                if self.count and len(values) != self.width:
                    raise _Unreadable(
                        f"{self.name}: ragged table: line {line_number} has {len(values)} values, the first has {self.width}"
                    )
                self.width = len(values)
                self.offsets.append((offset, line_number, within))
                self.count += 1
            if not self.count:
                raise _Unreadable(f"{self.name}: the table is empty")
            return self
        finally:
            if self.handle is None:
                handle.close()

    def lines(
        self, handle: "IO[bytes]", offset: int = 0, line_number: int = 0
    ) -> "Iterator[Tuple[int, str, int, int]]":
        """Each line of a UTF-8 text from the handle's place, as str.splitlines() splits it.

        Yields (line number, text, byte offset of its \\n-line, index within); offset and line_number are those
        of the handle's place (the lines before it).
        """
        for raw in handle:
            for within, line in enumerate(self.text(raw, offset).splitlines()):
                line_number += 1
                yield line_number, line, offset, within
            offset += len(raw)

    def values(self, line: str, line_number: int) -> "Optional[List[float]]":
        """The numbers of a CSV line; None for a blank line, or a first line of column names (such as sin_0,cos_0,...)."""
        if _is_number_text(line, True):
            # The common line, plain numbers: float() takes exactly the text checked.
            return list(map(float, line.split(",")))
        import csv

        if "\0" in line:
            # Refused here on every version: csv itself raises for it before Python 3.11.
            raise _Unreadable(f"{self.name}: line {line_number} holds a NUL character")
        fields = next(csv.reader([line]), [])
        if not fields or all(not field.strip() for field in fields):
            return None
        if line_number == 1 and not any(_is_number_text(field) for field in fields):
            return None
        values = []
        for c, field in enumerate(fields, start=1):
            # Convert the text that is checked: float() would take other spaces than the check.
            field_text = field.strip(" \t")
            if not _is_number_text(field_text):
                raise _Unreadable(f"{self.name}: line {line_number}, field {c} is not a number: {_short(field_text)}")
            values.append(float(field_text))
        return values

    def text(self, data: bytes, offset: int = 0) -> str:
        """data, the file's bytes from byte offset, decoded as UTF-8 (a byte-order mark skipped at offset 0)."""
        try:
            return data.decode("utf-8-sig" if offset == 0 else "utf-8")
        except UnicodeDecodeError as error:
            raise _Unreadable(
                f"{self.name} is neither a .npy file nor UTF-8 text (byte {offset + error.start})"
            ) from None


def _as_row(row: object, r: int, name: str = "actual") -> "List[float]":
    cells = _iterate(row)
    if isinstance(row, (str, bytes)) or cells is None:
        raise ValueError(f"{name} must be a 2-D table of numbers, got row {r} of type {type(row).__name__}")
    values = []
    for c, x in enumerate(cells):
        number = _real_number(x)
        if number is None:
            raise TypeError(f"{name}[{r}][{c}] must be a number, got {type(x).__name__} {_short(x)}")
        values.append(number)
    return values


def _parse_json(text: str, name: str) -> "List[List[float]]":
    """A JSON array of arrays of numbers."""
    import json

    try:
        # NaN, Infinity and -Infinity, as Python's json writes them, are read.
        document = json.loads(text)
    except RecursionError:
        raise _Unreadable(f"{name}: JSON nested too deeply") from None
    except ValueError as error:
        if isinstance(error, _Unreadable):
            raise
        raise _Unreadable(f"{name}: not valid JSON: {str(error).splitlines()[0]}") from None
    if not isinstance(document, list):
        raise _Unreadable(f"{name}: JSON must be an array of arrays of numbers, got {type(document).__name__}")
    table: "List[List[float]]" = []
    for r, row in enumerate(document):
        if not isinstance(row, list):
            raise _Unreadable(f"{name}: row {r} must be an array of numbers, got {type(row).__name__}")
        values = []
        for c, x in enumerate(row):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise _Unreadable(f"{name}: [{r}][{c}] must be a number, got {_short(x)}")
            try:
                values.append(float(x))
            except OverflowError:
                values.append(_INF if x > 0 else -_INF)  # an integer beyond float64
        if not values:
            raise _Unreadable(f"{name}: row {r} is empty")
        if table and len(values) != len(table[0]):
            raise _Unreadable(f"{name}: ragged table: row {r} has {len(values)} values, the first has {len(table[0])}")
        table.append(values)
    if not table:
        raise _Unreadable(f"{name}: the table is empty")
    _check_table_size(len(table), len(table[0]), name)
    return table


_MAX_VALUES = 1 << 26


def _check_table_size(rows_count: int, columns: int, name: str, held: bool = True) -> None:
    """Refuse an empty table, and one held in memory (JSON, a Fortran-order .npy) of more than _MAX_VALUES values."""
    if rows_count == 0 or columns == 0:
        raise _Unreadable(f"{name}: the table is empty (shape {rows_count} x {columns})")
    if held and rows_count * columns > _MAX_VALUES:
        raise _Unreadable(f"{name}: {rows_count} x {columns} values, more than the limit of {_MAX_VALUES}")


class _Unreadable(ValueError):
    """A table that cannot be read; the message says why, in one line."""


_NUMBER_PATTERNS: "List[Pattern[str]]" = []


def _is_number_text(text: str, line: bool = False) -> bool:
    """A number as CSV writers print it (with line, a line of them, comma-separated): a plain decimal, nan, inf or
    infinity; no underscores or hex.

    Only spaces and tabs may surround it (str.strip() would also take control
    characters such as \x1f, which float() does not).
    """
    if not _NUMBER_PATTERNS:
        import re

        # [0-9], not \d, which would take other scripts' digits.
        exponent = "(?:[eE][+-]?[0-9]+)?"
        number = f"[ \t]*[+-]?(?:[0-9]+(?:\\.[0-9]*)?{exponent}|\\.[0-9]+{exponent}|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])[ \t]*"
        _NUMBER_PATTERNS.append(re.compile(number))
        _NUMBER_PATTERNS.append(re.compile(f"{number}(?:,{number})*"))
    return _NUMBER_PATTERNS[1 if line else 0].fullmatch(text) is not None


# ---------------------------------------------------------------------------
# Grids: a 1-D table per axis of a 2-D or 3-D grid, its columns placed
# ---------------------------------------------------------------------------


def _grid_rows(
    function: str,
    shape: "Sequence[object]",
    d_model: int,
    exact: bool,
    dtype: str,
    convention: object,
    fields: "Dict[str, object]",
) -> "_Grid":
    """A grid's table (_Grid: how many rows, the rows, one per cell, the last axis fastest, after the prefix, the
    columns' names), its fields checked.

    Each axis has its share of d_model and the 1-D convention asked (a grid preset's, or any preset's,
    changed by the keywords), at positions ``(start + k * step) * position_scale``, divided by the axis's
    length plus ``epsilon`` when ``normalize``; its 1-D table at those positions is computed as a
    sequence's is, exact or fast.  ``axis_order`` orders the axes' blocks and ``arrangement`` places them:
    ``axes``, each block whole (MAE's), or ``functions``, every block's first half (its sines) then every
    second half (timm's):

    >>> grid = _grid_rows("encoding", (2, 3), 8, False, "float64", None, {"preset": "mae"})
    >>> grid["count"], grid["names"]
    (6, ['sin_x0', 'sin_x1', 'cos_x0', 'cos_x1', 'sin_y0', 'sin_y1', 'cos_y0', 'cos_y1'])
    >>> table = grid["rows"](False, "float64")
    >>> [round(x, 6) for x in next(table)], [round(x, 6) for x in next(table)]
    ([0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0], [0.841471, 0.01, 0.540302, 0.99995, 0.0, 0.0, 1.0, 1.0])

    Long because the grid's checks and its assembly are one piece, built only when a grid is asked for (the
    map's budget).
    """
    parameter = "grid" if function == "compare" else "seq_len"
    if not 2 <= len(shape) <= 3:
        kinds = (
            "a tuple of 2 or 3 integers" if function == "compare" else "an integer or a grid's shape of 2 or 3 integers"
        )
        raise TypeError(f"{parameter} must be {kinds}, got {type(shape).__name__} {_short(shape)}")
    # compare()'s grid is its own parameter, each size named by its index; encoding()'s is seq_len.
    sizes = [_check_integer(f"grid[{i}]" if function == "compare" else parameter, n, 0) for i, n in enumerate(shape)]
    width = "the table's width" if function == "compare" else "d_model"
    letters = "yx" if len(sizes) == 2 else "tyx"
    grid_fields = [row[0] for row in _GRID_FIELDS]
    settings = {row[0]: row[1] for row in _GRID_FIELDS}
    one_d = {name: given for name, given in fields.items() if name not in grid_fields}
    per_axis = convention
    preset = one_d.get("preset")
    for name, _, axis_count, changes, grid_changes in _GRID_PRESETS:
        if preset == name:
            if convention is not None:
                raise ValueError(f"give preset or convention, not both, got preset={_short(name)}")
            if axis_count != len(sizes):
                raise ValueError(
                    f"{parameter} must be a shape of {axis_count} axes in the {name} grid, got {_short(tuple(shape))}"
                )
            per_axis = Convention()._with(**dict(changes))
            settings.update(grid_changes)
            del one_d["preset"]
    if isinstance(preset, str) and "preset" in one_d and preset not in PRESETS:
        known = ", ".join(list(PRESETS) + [row[0] for row in _GRID_PRESETS])
        raise ValueError(f"preset must be one of {known}, got {_short(preset)}")
    for name, given in fields.items():
        if name in grid_fields and given is not None:
            settings[name] = given
    # The grid's fields checked, each as its kind.
    axis_order, split, function_major, normalize = letters, [1] * len(sizes), False, False
    epsilon: "_Fraction" = (0, 1)
    scales: "List[_Fraction]" = []
    prefix = 0

    def text(name: str, given: object) -> str:
        if not isinstance(given, str):
            raise TypeError(f"{name} must be a str, got {type(given).__name__} {_short(given)}")
        return given

    for name, given in settings.items():
        if name == "axis_order" and given is not None:
            axis_order = text(name, given)
            if sorted(axis_order) != sorted(letters):
                raise ValueError(
                    f"axis_order must order the letters {letters} of the shape's axes, got {_short(given)}"
                )
        elif name == "split":
            weights = text(name, given).split(":")
            if given == "round-up":
                split = []
            elif given != "equal":
                if len(weights) != len(sizes) or not all(_is_decimal_integer(w) and int(w) > 0 for w in weights):
                    raise ValueError(
                        f"split must be equal, round-up or {len(sizes)} positive weights such as 2:3:3,"
                        f" got {_short(given)}"
                    )
                split = [int(w) for w in weights]
        elif name == "arrangement":
            function_major = _check_choice(name, given, ("axes", "functions")) == "functions"
        elif name == "normalize":
            normalize = _check_flag(name)(given)
        elif name == "epsilon":
            epsilon = _rational(name, given)
            if epsilon[0] < 0:
                raise ValueError(f"epsilon must be at least 0, got {_short(given)}")
        elif name == "position_scale":
            many = list(given) if isinstance(given, (tuple, list)) else [given] * len(sizes)
            if len(many) != len(sizes):
                raise ValueError(f"position_scale must be one number or {len(sizes)}, got {_short(given)}")
            scales = [_positive(name)(x) for x in many]
        elif name == "prefix":
            prefix = _check_integer(name, given, 0)
    if one_d.get("positions") is not None:
        raise ValueError(
            "positions must not be given for a grid, whose cells have theirs (give start, step and position_scale),"
            f" got {_short(one_d['positions'])}"
        )
    if fields.get("epsilon") is not None and not normalize:
        given_epsilon = _short(settings["epsilon"])
        raise ValueError(f"epsilon must go with normalize=True, got epsilon={given_epsilon} without it")
    asked = _convention(function, d_model, per_axis, one_d, refuse_odd=False)
    # Each axis's width, in the shape's order: a share of d_model, or (round-up) d_model / axes rounded
    # up to even, the table cut to d_model.  order: the axes in the columns' order.
    order = [letters.index(letter) for letter in axis_order]
    if split:
        if d_model % sum(split):
            raise ValueError(f"{width} must be a multiple of {sum(split)} to split among the axes, got {d_model}")
        widths = [d_model * w // sum(split) for w in split]
    else:
        widths = [-(-d_model // (2 * len(sizes))) * 2] * len(sizes)
    if function_major and asked._fields["layout"] == "interleaved":
        raise ValueError("arrangement must be axes for an interleaved layout, got 'functions'")
    if any(w % 2 for w in widths) and (function_major or asked._fields["odd"] == "error"):
        shown = ", ".join(str(w) for w in widths)
        raise ValueError(f"{width} must split into even widths in this grid, got {d_model} (widths {shown})")
    # Each axis's 1-D convention, at (start + k * step) * scale, over n + epsilon when normalized, and its
    # width: checked now (_rows), computed at the first row.
    axes: "List[Tuple[Convention, int, int]]" = []
    start, step = asked._fields["start"], asked._fields["step"]
    for axis, n in enumerate(sizes):
        p, q = scales[axis] if scales else (1, 1)
        if normalize:
            p, q = p * epsilon[1], q * (n * epsilon[1] + epsilon[0])
        moved = asked._with(start=_reduced(start[0] * p, start[1] * q), step=_reduced(step[0] * p, step[1] * q))
        axes.append((moved, n, widths[axis]))
        if n:
            _rows(moved, n, widths[axis], exact, dtype)
    cells = 1
    for n in sizes:
        cells *= n

    def place(parts: "List[List[Any]]") -> "List[Any]":
        # The axes' parts, in the columns' order, as the arrangement places them, cut to d_model.
        row = [x for part in parts for x in (part[: len(part) // 2] if function_major else part)]
        if function_major:
            row += [x for part in parts for x in part[len(part) // 2 :]]
        return row[:d_model]

    def tables(exact: bool, dtype: str) -> "List[List[List[float]]]":
        # Each axis's 1-D table.
        return [list(_rows(moved, n, width, exact, dtype)) if n else [] for moved, n, width in axes]

    def cell(r: int) -> "List[int]":
        # Row r's index on each axis, the last fastest; for a prefix row, each axis's length.
        if r < prefix:
            return sizes[:]
        index, rest = [0] * len(sizes), r - prefix
        for axis in range(len(sizes) - 1, -1, -1):
            rest, index[axis] = divmod(rest, sizes[axis])
        return index

    def row_at(made: "List[List[List[float]]]", r: int) -> "List[float]":
        # Row r of the grid's table from its axes' tables: zeros for the prefix, else its cell's axes' rows.
        if r < prefix:
            return [0.0] * d_model
        index = cell(r)
        return place([made[axis][index[axis]] for axis in order])

    def rows(exact: bool, dtype: str) -> "Iterator[List[float]]":
        made = tables(exact, dtype)
        for r in range(prefix + cells):
            yield row_at(made, r)

    # Each column's name, sin_x0 the sine of the x axis's pair 0; and its (axis, column of the axis's table).
    names = place(
        [
            [
                ("sin_", "cos_", "zero")[kind] + (letters[axis] + str(pair) if kind != _ZERO else "")
                for kind, pair in plan
            ]
            for plan, axis in ((asked._plan(widths[axis]), axis) for axis in order)
        ]
    )
    columns = place([[(axis, c) for c in range(widths[axis])] for axis in order])
    return {
        "count": prefix + cells,
        "names": names,
        "axes": axes,
        "columns": columns,
        "prefix": prefix,
        "tables": tables,
        "row_at": row_at,
        "cell": cell,
        "rows": rows,
    }


# ---------------------------------------------------------------------------
# The fast path: float64 with math.sin and math.cos
# ---------------------------------------------------------------------------


def _rows(
    convention: "Convention", seq_len: int, d_model: int, exact: bool, dtype: str, first: int = 0
) -> "Iterator[List[float]]":
    """Rows ``first`` to ``seq_len - 1`` of the table of seq_len rows, checked arguments: what rows() returns."""
    convention._check_rows(seq_len)
    convention._exponents(d_model)  # refuses a shift too large for this width
    if exact:
        return _exact_rows(seq_len, d_model, convention, dtype, first)
    denominators = convention._denominators(d_model)
    if seq_len > first and denominators:
        # The largest angle belongs to the largest position and the smallest
        # denominator; if it is finite, every angle is.
        given = convention._fields["positions"]
        candidates: "Sequence[_Fraction]"
        if given is None:
            candidates = (convention._position(first, seq_len), convention._position(seq_len - 1, seq_len))
        else:
            candidates = given[first:seq_len]  # a slice of the tuple: no list built
        largest = max(candidates, key=lambda p: abs(_to_float(p)))
        _angle(largest, min(denominators))
    table = _fast_rows(convention, seq_len, d_model, denominators, first)
    if dtype == "float64":
        return table
    return ([_round_float(x, dtype) for x in row] for row in table)


def _angle(position: "Union[int, _Fraction]", denominator: float) -> float:
    """Return position / denominator in float64, refusing an angle that is not finite."""
    fraction = (position, 1) if isinstance(position, int) else position
    p = _to_float(fraction)
    if not -_INF < p < _INF:
        raise ValueError(
            f"pos must be less than 2**1024 to be held in float64, got {_short(_number(fraction))};"
            " exact=True has no such limit"
        )
    angle = p / denominator
    if angle - angle != 0.0:
        raise ValueError(
            f"angle pos / base**(2i/d_model) must be finite in float64, got {_number(fraction)} / {denominator!r};"
            " exact=True has no such limit"
        )
    return angle


def _fast_rows(
    convention: "Convention", seq_len: int, d_model: int, denominators: "List[float]", first: int
) -> "Iterator[List[float]]":
    """Yield the rows; ``value()`` computes each element with the same operations."""
    sin = math.sin
    cos = math.cos
    plan = convention._plan(d_model)
    scale = convention._output_scale(d_model).value
    layout = convention._fields["layout"]
    sines = sum(1 for kind, _ in plan if kind == _SINE)
    cosines = sum(1 for kind, _ in plan if kind == _COSINE)
    padding = [0.0] * (d_model - sines - cosines)
    # Every pair has its sine but the last may lack its cosine, except in
    # cos-sin rounded up, which loses the last sine: that one goes by the plan.
    simple = sines == len(denominators)
    if simple and layout == "interleaved" and not padding and _EXTENDED_SLICES:
        # The paper's layout: the formula as it reads.
        for position in convention._float_positions(seq_len, first):
            row = _paper_row(position, denominators, d_model)
            yield row if scale == 1.0 else [x * scale for x in row]
        return
    for position in convention._float_positions(seq_len, first):
        angles = [position / denominator for denominator in denominators]
        # With an odd width the last pair may have no cosine column.
        cosine_angles = angles if cosines == len(angles) else angles[:cosines]
        if not simple:
            row = [
                0.0 if kind == _ZERO else sin(angles[pair]) if kind == _SINE else cos(angles[pair])
                for kind, pair in plan
            ]
        elif layout == "interleaved":
            sine_values = list(map(sin, angles))
            row = [x for pair in zip(sine_values, map(cos, cosine_angles)) for x in pair]
            row += sine_values[cosines:] + padding
        else:
            row = list(map(sin, angles)) if layout == "sin-cos" else list(map(cos, cosine_angles))
            row += map(cos, cosine_angles) if layout == "sin-cos" else map(sin, angles)
            row += padding
        if scale != 1.0:
            row = [x * scale for x in row]
        yield row


# ---------------------------------------------------------------------------
# Exact tables: a Chebyshev recurrence per column, and the float64 finish
# ---------------------------------------------------------------------------


_LOW_MASK = (1 << 53) - 1


_WINDOW_BITS = (1 << 40) - (1 << 22)


def _exact_rows(
    seq_len: int, d_model: int, convention: "Convention", dtype: str, first: int = 0
) -> "Iterator[List[float]]":
    """Yield the correctly rounded rows ``first`` to ``seq_len - 1`` of the table of ``seq_len`` rows."""
    plan = convention._plan(d_model)
    exponents = convention._exponents(d_model)
    frequencies = convention._frequencies()
    scale = convention._output_scale(d_model)
    given = convention._fields["positions"]
    if given is not None:
        fixed = _fixed_rows_of(given[first:seq_len], seq_len - first, plan, exponents, frequencies)
    else:
        (start, step), denominator = convention._progression(seq_len)
        fixed = _fixed_rows(seq_len - first, start + first * step, step, denominator, plan, exponents, frequencies)
    return _finish_rows(fixed, plan, exponents, frequencies, scale, dtype)


def _fixed_rows_of(
    positions: "Optional[Sequence[_Fraction]]",
    count: int,
    plan: "List[_Column]",
    exponents: "List[_Fraction]",
    frequencies: "_Frequencies",
) -> "Iterator[Tuple[_Fraction, List[int], int]]":
    """(position, values, error), as _fixed_rows yields them, at the positions given (None: 0, 1, 2, ...
    up to count): each run of at least 8 positions that rise by one step (0, 1, 2, ..., an offset, halves,
    packed sequences' runs) by the recurrence, anchored; the rows between, each computed directly (five
    times slower or more).
    """
    if positions is None:
        yield from _fixed_rows(count, 0, 1, 1, plan, exponents, frequencies)
        return
    first = 0
    while first < len(positions):
        start, denominator = positions[first]
        step, end = 0, first + 1
        if end < len(positions):
            # Over the least denominator of the first two (0, 1/2, 1, 3/2, ... are held in lowest terms), the
            # start and step are whole numbers: the run goes on while position k is (start + k step) / common.
            numerator, other = positions[end]
            common = denominator * other // _gcd(denominator, other)
            start, step, denominator = start * (common // denominator), numerator * (common // other), common
            step -= start
            while (
                step > 0
                and end < len(positions)
                and positions[end][0] * denominator == (start + (end - first) * step) * positions[end][1]
            ):
                end += 1
        if end - first >= 8:
            yield from _fixed_rows(end - first, start, step, denominator, plan, exponents, frequencies)
        else:
            for position in positions[first:end]:  # each pair computed directly, error <= 1 unit
                yield (
                    position,
                    _arrange([_anchor(position, e, frequencies, _TABLE_BITS) for e in exponents], plan, 0),
                    1,
                )
        first = end


# The table kernel's working precision, and the rows between two anchors.
_TABLE_BITS = 105


_ANCHOR_INTERVAL = 1024


# Anchors move by whole intervals; they are computed afresh after this many.
_ANCHOR_JUMPS = 1 << 16


def _fixed_rows(
    count: int,
    start: int,
    step: int,
    denominator: int,
    plan: "List[_Column]",
    exponents: "List[_Fraction]",
    frequencies: "_Frequencies",
) -> "Iterator[Tuple[_Fraction, List[int], int]]":
    """Yield (position, values, error) for the positions (start + r step) / denominator, r < count.

    The values have P = 105 fraction bits, each within ``error`` units: a
    Chebyshev recurrence per column, anchored.  Every column x_r (a sine or a
    cosine of p_r w, p_r = p_0 + r s) obeys x_(r+1) = 2 cos(s w) x_r - x_(r-1),
    one multiplication per value.  In fixed point, K = 2 cos(s w) is rounded
    (error <= 1 unit), and each step floors (< 1 unit): the step's local
    error tau is below 2.01 units.  The error e_r then obeys the same
    recurrence, so

        |e_r| <= |e_1| |U_(r-1)| + |e_0| |U_(r-2)| + sum |tau_k| |U_(r-1-k)|

    with U the Chebyshev polynomials of the second kind, |U_n(cos s w)| <= n + 1.
    With |e_0|, |e_1| <= 1 this is at most 1.005 r**2 + r + 1 units, below
    2**21 for r < 1024 rows after an anchor.

    Anchors: (cos, sin) of each pair at rows 0, 1024, 2048, ... with
    P + 24 bits, each from the last by one multiplication by exp(1024 i s w)
    (computed directly, error <= 1 unit), adding at most 3 units of that grid
    a time; after 2**16 such jumps the anchor is computed directly again.  So
    the anchor and its successor, rounded to P bits, are within 1 unit.  A
    padding column is 0 throughout (its multiplier is 0).
    """
    P = _TABLE_BITS
    fine = P + 24
    rotors: "List[_CosSin]" = []
    twice_cos: "List[int]" = []
    for exponent in exponents:
        # As in _anchor: each rounded to fine bits within 1 unit (K = 2 cos(s w) to P + 1 bits, within 1 unit of P bits).
        sine, cosine, F, _ = _sin_cos((step, denominator), exponent, frequencies, fine + 8)
        if _COLLECT_GARBAGE is not None:
            _COLLECT_GARBAGE()  # So that what each pair keeps fills the holes of the series: see _garbage_collector.
        rotors.append((_round_shift(cosine, F - fine), _round_shift(sine, F - fine)))
        twice_cos.append(_round_shift(cosine, F - P - 1))
    # One multiplier per column, in the row's order; 0 keeps a padding column 0.
    multipliers = [0 if kind == _ZERO else twice_cos[pair] for kind, pair in plan]
    to_table = fine - P
    jumps: "List[_CosSin]" = []
    anchors = [_anchor((start, denominator), exponent, frequencies, fine) for exponent in exponents]
    for block, first in enumerate(range(0, count, _ANCHOR_INTERVAL)):
        if block and block % _ANCHOR_JUMPS == 0:
            anchors = [_anchor((start + first * step, denominator), e, frequencies, fine) for e in exponents]
        if _COLLECT_GARBAGE is not None:
            _COLLECT_GARBAGE()  # The series' garbage, before the rows: see _garbage_collector.
        previous = _arrange(anchors, plan, to_table)
        current = _arrange(
            [((c * uc - s * us) >> fine, (s * uc + c * us) >> fine) for (c, s), (uc, us) in zip(anchors, rotors)],
            plan,
            to_table,
        )
        # Rows 0 and 1 of the block, each within 1 unit of P bits: the anchor is off by at most 3 units of the fine
        # grid per jump, under 3 * 2**16 + 4 in all (2**-6 of a unit of P bits), then rounded (half a unit).
        rows_in_block = min(_ANCHOR_INTERVAL, count - first)
        if first + rows_in_block < count:
            # The next block's anchors, one jump on (the jumps made when first needed).
            if not jumps:
                jumps = [_anchor((_ANCHOR_INTERVAL * step, denominator), e, frequencies, fine) for e in exponents]
            anchors = [
                ((c * jc - s * js) >> fine, (s * jc + c * js) >> fine) for (c, s), (jc, js) in zip(anchors, jumps)
            ]
        else:
            # The last block needs only its two rows and the multipliers: a board gets the rest of the heap back.
            anchors = rotors = jumps = []
        for r in range(rows_in_block):
            if r == 0:
                values = previous
            elif r == 1:
                values = current
            else:
                previous, current = current, [((k * x) >> P) - y for k, x, y in zip(multipliers, current, previous)]
                values = current
            # error 1.005 r**2 + r + 1: rows 0 and 1, through the recurrence (U), and each step's tau < 2.01
            yield (start + (first + r) * step, denominator), values, r * r + (r * r >> 7) + r + 1


def _anchor(position: "_Fraction", exponent: "_Fraction", frequencies: "_Frequencies", F: int) -> "_CosSin":
    """(cos, sin) of position * w with F fraction bits, error <= 1 unit."""
    if position[0] == 0:
        return 1 << F, 0
    # _sin_cos's error, |q| + 2 terms + 6 units of G bits, is below 2**-10 units of F bits: G - F >= 24 + |log2 theta| + t
    # while |q| < 2**(|log2 theta| + 5 + t), and the series take under 200 terms at these F (105 and 129 bits).
    sine, cosine, G, _ = _sin_cos(position, exponent, frequencies, F + 8)
    return _round_shift(cosine, G - F), _round_shift(sine, G - F)  # + half a unit (the rounding): error < 1 unit


def _arrange(pairs: "List[_CosSin]", plan: "List[_Column]", shift: int) -> "List[int]":
    """The row's columns from each pair's (cos, sin), rounded ``shift`` bits down, in the plan's order."""
    return [0 if kind == _ZERO else _round_shift(pairs[pair][kind == _SINE], shift) for kind, pair in plan]


# The float64 finish of a table row, P = 105 fraction bits, written out in
# _finish_rows: (v >> 53) * 2**-52 + (v & _LOW_MASK) * 2**-105.
#
# Rounding: v = high * 2**53 + low with |high| < 1.5 * 2**52 + 1 (a value
# below 1.5, as _finish_rows ensures) and 0 <= low < 2**53.  Multiplying an int by a float converts the int first,
# exactly for these (CPython rounds correctly, and MicroPython too accumulates
# integers below 2**53 exactly); the scalings by powers of two are exact, and
# the one addition is correctly rounded by IEEE 754: the result is v rounded
# to nearest, ties to even.
#
# Deciding: the error is below 2**21 units.  If (v + 2**21) mod 2**40 >= 2**22,
# that is if bits 22 to 39 of v + 2**21 are not all zero, no multiple of 2**40
# lies within 2**21 of v; the rounding boundaries of a value of magnitude
# above 2**-11 (at least 94 bits; above 1, coarser still) are such multiples, so v rounds as the true
# value does.  Smaller values, or a failed test, take the general path.
_HALF_WINDOW = 1 << 21


def _finish_rows(
    fixed: "Iterator[Tuple[_Fraction, List[int], int]]",
    plan: "List[_Column]",
    exponents: "List[_Fraction]",
    frequencies: "_Frequencies",
    scale: "_OutputScale",
    dtype: str,
) -> "Iterator[List[float]]":
    """Round each row of fixed-point values to dtype, times the output scale.

    The float64 rows are finished by the arithmetic stated beside
    _HALF_WINDOW when the scale is at most 1 and the error below 2**21; a value whose rounding that cannot
    decide goes to _round_fixed, and if that cannot either, to the Ziv loop
    of _exact_value.
    """
    P = _TABLE_BITS
    scaled = not scale.one
    multiplier, multiplier_error = scale.fixed(P)
    # The float64 finish needs |v| < 1.5 * 2**105 (a scale below 1.5), and an addition that rounds once.
    float64 = dtype == "float64" and multiplier + multiplier_error < 3 << (P - 1) and _addition_rounds_once()
    high, low, smallest = _finish_constants()
    for position, values, error in fixed:
        if scaled:
            # As _scale_fixed, with the multiplier computed once.
            values = [(v * multiplier) >> P for v in values]
            # As _scale_fixed's, with |v| <= 2**P + error.
            error = ((error * multiplier + ((1 << P) + 2 * error) * multiplier_error) >> P) + 2
        if float64 and error < _HALF_WINDOW:
            # The finish and the window test stated beside _HALF_WINDOW,
            # written out: a call per value would cost a third more.
            # Undecided values become 0.0, which the check below catches
            # with the small ones.  The literals are _LOW_MASK,
            # _HALF_WINDOW and _WINDOW_BITS (a constant loads faster).
            row = [
                (v >> 53) * high + (v & 9007199254740991) * low if (v + 2097152) & 1099507433472 else 0.0
                for v in values
            ]
            open_dims: "Sequence[int]" = ()
            if min(map(abs, row)) <= smallest:
                # A comprehension finds the few open elements faster than a loop over the plan.
                open_dims = [dim for dim, element in enumerate(row) if -smallest <= element <= smallest]
        else:
            row = [0.0] * len(values)
            open_dims = range(len(values))  # every element open
        # Decide the elements the finish left open, row[dim] for each dim of open_dims: by _round_fixed, else by Ziv.
        for dim in open_dims:
            kind, pair = plan[dim]
            element = 0.0 if kind == _ZERO else _round_fixed(values[dim], P, error, dtype)
            if element is None:
                element = _exact_value(position, kind, exponents[pair], frequencies, scale, dtype)
            row[dim] = element
        if _COLLECT_GARBAGE is not None:
            _COLLECT_GARBAGE()
        yield row


def _finish_constants() -> "Tuple[float, float, float]":
    """2**-52 and 2**-105, the scales of the two halves, and 2**-11, the smallest value decided.

    The halves are v >> 53 and v & _LOW_MASK of a value with _TABLE_BITS
    fraction bits.  Made on first use, from bits: importing the module
    needs no struct.
    """
    return _power_of_two(53 - _TABLE_BITS), _power_of_two(-_TABLE_BITS), _power_of_two(-11)


# ---------------------------------------------------------------------------
# Conventions
# ---------------------------------------------------------------------------
#
# Frameworks compute the same sines and cosines with different choices: the
# layout of the columns, the spacing of the frequencies and their base, a
# factor on every angle, the positions, what an odd d_model does, and a
# factor on every value.  A Convention holds them all, exactly: its numbers
# are fractions (numerator, denominator), so that a float, a decimal string
# and a Fraction are each taken for the number they are.


if TYPE_CHECKING:
    # A Convention's fields, checked, by name: _FIELDS declares them, in this order.
    _Fields = TypedDict(
        "_Fields",
        {
            "layout": str,
            "spacing": str,
            "shift": _Fraction,
            "base": _Fraction,
            "angle_scale": _Fraction,
            "full_turns": bool,
            "start": _Fraction,
            "step": _Fraction,
            "descending": bool,
            "positions": Optional[Tuple[_Fraction, ...]],
            "odd": str,
            "scale": Tuple[int, int, bool],  # its square p/q, divided by d_model if the flag is set
        },
    )


# A Convention's fields, declared once, in order: (name, check, default, help).  The check is the tuple
# of the values a named field may take, or the kind of its value: "number" (a fraction), "positive",
# "flag", "step" (a fraction, not 0), "positions" (None, or fractions one by one) or "scale" (its square
# p/q, and whether that is divided by d_model).  The default is the checked form; help is the command
# line's.  Convention's keywords and attributes, its checks, the command line's options and the stub's
# fields (tests/test_conventions.py compares them) follow from it.  A constant tuple, in flash when frozen.
_FIELDS: "Tuple[Tuple[str, Union[str, Tuple[str, ...]], object, str], ...]" = (
    ("layout", ("interleaved", "sin-cos", "cos-sin"), "interleaved", "order of the sine and cosine columns"),
    (
        "spacing",
        ("paper", "tensor2tensor"),
        "paper",
        "paper: base**(-2i/d); tensor2tensor: base**(-i/(h - shift))",
    ),
    ("shift", "number", (1, 1), "tensor2tensor spacing's shift (default 1)"),
    ("base", "positive", (10000, 1), "base of the wavelengths (default 10000)"),
    ("angle_scale", "positive", (1, 1), "a factor on every frequency (default 1)"),
    ("full_turns", "flag", False, "angles in turns: every frequency times 2 pi"),
    ("start", "number", (0, 1), "the first position (default 0)"),
    ("step", "step", (1, 1), "from one position to the next (default 1)"),
    ("descending", "flag", False, "positions count down to --start"),
    ("positions", "positions", None, "the positions one by one (SEQ_LEN of them), instead of --start"),
    (
        "odd",
        ("sine", "zero", "error", "round-up"),
        "sine",
        "an odd D_MODEL: one more sine, a zero column, rounded up, or refused",
    ),
    ("scale", "scale", (1, 1, False), "a factor on every value, e.g. 0.5 or sqrt(2/d) (default 1)"),
)


def _convention(
    function: str,
    d_model: int,
    convention: object,
    shortcuts: "Dict[str, object]",
    refuse_odd: bool = True,
) -> "Convention":
    """The convention a call asks for, in one place: a Convention or a preset, changed by the fields given as keywords.

    A keyword given as None is not given.  An odd d_model in a convention
    without an odd rule raises ValueError, unless refuse_odd is False
    (compare() then reports a mismatch).
    """
    for name in shortcuts:
        if name != "preset" and _check_of(name) is None:
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
    preset = shortcuts.get("preset")
    if convention is not None:
        if not isinstance(convention, Convention):
            raise TypeError(f"convention must be a Convention, got {type(convention).__name__} {_short(convention)}")
        if preset is not None:
            raise ValueError(f"give preset or convention, not both, got preset={_short(preset)}")
        chosen = convention
    else:
        if any(preset == row[0] for row in _GRID_PRESETS):
            if function in ("encoding", "rows", "main"):
                rule = "for an integer seq_len; a grid's takes seq_len as its shape, as (16, 16) (16x16 on the command line)"
            else:
                rule = f"in {function}(); a grid's goes with encoding() and rows() only"
            raise ValueError(f"preset must be a sequence's convention {rule}, got {_short(preset)}")
        chosen = PRESETS[_check_choice("preset", "paper" if preset is None else preset, tuple(PRESETS))]
    changes = {name: given for name, given in shortcuts.items() if name != "preset" and given is not None}
    asked = chosen.replace(**changes) if changes else chosen
    asked._preset = chosen._preset
    if refuse_odd and asked._fields["odd"] == "error" and d_model % 2:
        raise ValueError(
            f"d_model must be even in the {asked._name()} convention, which has no odd rule, got {d_model}"
        )
    return asked


# (name, what it is in plain words, its fields that differ from the paper's).
# docs/conventions.md gives each one's formula and source.  The fields are
# in their checked forms (a number n/m as (n, m); MLX's scale sqrt(2/d) as
# (2, 1, True)) and the table is a tuple of constants, not a dict: a board
# holds all of it in flash when the module is frozen.  test_presets_are_conventions checks each
# against the Convention that docs/conventions.md writes out for it.
_PRESETS: "Tuple[Tuple[str, str, Tuple[Tuple[str, object], ...]], ...]" = (
    ("paper", "the paper's: sin and cos interleaved per pair", ()),
    (
        "tensor2tensor",
        "tensor2tensor's: all sines then all cosines, frequencies spaced by i/(h-1)",
        (("layout", "sin-cos"), ("spacing", "tensor2tensor"), ("odd", "zero")),
    ),
    (
        "fairseq",
        "fairseq's: tensor2tensor's table, first token at position padding_idx + 1 = 2",
        (("layout", "sin-cos"), ("spacing", "tensor2tensor"), ("start", (2, 1)), ("odd", "zero")),
    ),
    (
        "tf-tutorial",
        "the TensorFlow tutorial's: all sines then all cosines",
        (("layout", "sin-cos"), ("odd", "error")),
    ),
    (
        "guided-diffusion",
        "guided-diffusion's: all cosines then all sines",
        (("layout", "cos-sin"), ("odd", "zero")),
    ),
    ("xlm", "HF XLM's and DistilBERT's: the paper's table", ()),
    ("keras-hub", "keras-hub SinePositionEncoding's: the paper's table, max_wavelength as the base", ()),
    (
        "tatp22",
        "positional-encodings' PositionalEncoding1D: the paper's table, an odd width rounded up then cut",
        (("odd", "round-up"),),
    ),
    (
        "marian",
        "HF Marian's and Pegasus's: all sines then all cosines, one more sine for an odd d_model",
        (("layout", "sin-cos"),),
    ),
    (
        "gpt-j",
        "GPT-J's and CodeGen's sinusoid table: all sines then all cosines",
        (("layout", "sin-cos"), ("odd", "error")),
    ),
    (
        "transformer-xl",
        "Transformer-XL's: all sines then all cosines, positions descending to 0",
        (("layout", "sin-cos"), ("descending", True), ("odd", "error")),
    ),
    (
        "whisper",
        "OpenAI Whisper's sinusoids: tensor2tensor's table, for an even d_model only",
        (("layout", "sin-cos"), ("spacing", "tensor2tensor"), ("odd", "error")),
    ),
    (
        "m2m100",
        "HF M2M100's, Speech2Text's and FSMT's: fairseq's table",
        (("layout", "sin-cos"), ("spacing", "tensor2tensor"), ("start", (2, 1)), ("odd", "zero")),
    ),
    (
        "diffusers",
        "diffusers' get_timestep_embedding: all sines then all cosines, frequencies spaced by i/(h - shift)",
        (("layout", "sin-cos"), ("spacing", "tensor2tensor"), ("odd", "zero")),
    ),
    (
        "pyg",
        "PyG's PositionalEncoding: a logspace of frequencies from 1 to 1e-4, all sines then all cosines",
        (("layout", "sin-cos"), ("spacing", "tensor2tensor"), ("odd", "error")),
    ),
    (
        "mlx",
        "MLX's SinusoidalPositionalEncoding: frequencies from 1 to 1e-4, all sines then all cosines,"
        " values times sqrt(2/d)",
        (("layout", "sin-cos"), ("spacing", "tensor2tensor"), ("odd", "error"), ("scale", (2, 1, True))),
    ),
)


# A grid's fields, declared once: (name, default, help).  An axis is named by a letter: a 2-D shape's
# axes are y and x, a 3-D shape's t, y and x.  The table functions take them as keywords beside a
# Convention's fields, and _grid_rows checks them.
_GRID_FIELDS: "Tuple[Tuple[str, object, str], ...]" = (
    ("axis_order", None, "the axes' blocks in the columns' order, as letters of t, y, x (default the shape's order)"),
    ("split", "equal", "each axis's share of d_model in the shape's order: equal, round-up or weights as 2:3:3"),
    ("arrangement", "axes", "axes: each axis's columns together; functions: every axis's sines, then cosines"),
    ("normalize", False, "divide each axis's positions by its length plus epsilon"),
    ("epsilon", 0, "what normalize adds to an axis's length (default 0)"),
    ("position_scale", 1, "a factor on each axis's positions: one number, or one per axis of the shape"),
    ("prefix", 0, "rows of zeros before the grid's, as a class token's (default 0)"),
)

# The grid presets: (name, what it is, its axes, the 1-D fields that differ from the paper's (checked
# forms, as _PRESETS'), the grid's fields that differ from their defaults (as a call gives them)).
# docs/conventions.md gives each one's formula and source.  Constants: a board keeps them in flash.
_GRID_PRESETS: "Tuple[Tuple[str, str, int, Tuple[Tuple[str, object], ...], Tuple[Tuple[str, object], ...]], ...]" = (
    (
        "mae",
        "MAE's and DiT's get_2d_sincos_pos_embed: x's sines and cosines, then y's",
        2,
        (("layout", "sin-cos"), ("odd", "error")),
        (("axis_order", "xy"),),
    ),
    (
        "diffusers-2d",
        "diffusers' get_2d_sincos_pos_embed: MAE's, positions k * base_size / n (base_size 16)",
        2,
        (("layout", "sin-cos"), ("odd", "error")),
        (("axis_order", "xy"), ("normalize", True), ("position_scale", 16)),
    ),
    (
        "sd3",
        "Stable Diffusion 3's PatchEmbed: diffusers' 2-D table with base_size 64",
        2,
        (("layout", "sin-cos"), ("odd", "error")),
        (("axis_order", "xy"), ("normalize", True), ("position_scale", 64)),
    ),
    (
        "timm-sincos2d",
        "timm's build_sincos2d_pos_embed: y's and x's sines, then their cosines",
        2,
        (("layout", "sin-cos"), ("odd", "error")),
        (("arrangement", "functions"),),
    ),
    (
        "rt-detr",
        "transformers' build_2d_sinusoidal_position_embedding (RT-DETR): y's sines and cosines, then x's",
        2,
        (("layout", "sin-cos"), ("odd", "error")),
        (),
    ),
    (
        "detr",
        "transformers' DetrSinePositionEmbedding: y then x, each interleaved, positions (k + 1) / (n + 1e-6) turns",
        2,
        (("start", (1, 1)), ("full_turns", True), ("odd", "error")),
        (("normalize", True), ("epsilon", "1e-6")),
    ),
    (
        "deformable-detr",
        "transformers' DeformableDetrSinePositionEmbedding: DETR's, positions (k + 0.5) / (n + 1e-6) turns",
        2,
        (("start", (1, 2)), ("full_turns", True), ("odd", "error")),
        (("normalize", True), ("epsilon", "1e-6")),
    ),
    (
        "tatp22-2d",
        "positional-encodings' PositionalEncoding2D: each axis interleaved, widths rounded up to even, then cut",
        2,
        (),
        (("split", "round-up"),),
    ),
    (
        "tatp22-3d",
        "positional-encodings' PositionalEncoding3D: each axis interleaved, widths rounded up to even, then cut",
        3,
        (),
        (("split", "round-up"),),
    ),
    (
        "diffusers-3d",
        "diffusers' get_3d_sincos_pos_embed: t, x, y, each sines then cosines, a quarter of the width for t",
        3,
        (("layout", "sin-cos"), ("odd", "error")),
        (("axis_order", "txy"), ("split", "2:3:3")),
    ),
    (
        "cogvideox",
        "CogVideoX's 3-D table: diffusers', the spatial positions divided by 1.875",
        3,
        (("layout", "sin-cos"), ("odd", "error")),
        (("axis_order", "txy"), ("split", "2:3:3"), ("position_scale", (1, "8/15", "8/15"))),
    ),
)


def _make_presets() -> "Dict[str, Convention]":
    # Each a convention that names its row of _PRESETS and makes its fields from it when first read
    # (Convention._fields): the import holds a small object a preset, not its table of fields.
    presets = {}
    for name, _, _ in _PRESETS:
        convention = presets[name] = object.__new__(Convention)
        convention._held, convention._preset = None, name
    return presets


_LAWS: "Dict[object, _Frequencies]" = {}


class Convention:
    """How a framework computes the table: layout, frequencies, positions and scales.

    >>> Convention()
    Convention(layout='interleaved', spacing='paper', base=10000, start=0, odd='sine')
    >>> print(Convention())
    PE(p, 2i) = sin(p * w_i), PE(p, 2i + 1) = cos(p * w_i); w_i = 10000**(-2i/d); p = 0, 1, 2, ...; an odd d_model ends with one more sine

    ``layout`` places the sines and cosines: ``interleaved`` (a sine and a
    cosine per pair), ``sin-cos`` (all sines, then all cosines) or
    ``cos-sin``.  ``spacing`` sets pair ``i``'s frequency among ``h`` pairs:
    ``paper``, ``base**(-2i/d)``, or ``tensor2tensor``,
    ``base**(-i/(h - shift))`` with ``shift`` 1 unless given.  ``angle_scale``
    multiplies every frequency (diffusers' ``scale``, MLX's ``max_freq``) and
    ``full_turns`` multiplies it by 2 pi.  Row ``r`` has position
    ``start + r * step``, or counting down to ``start`` when ``descending``;
    ``positions`` gives them one by one instead.  ``odd`` says what an odd
    ``d_model`` does: ``sine`` ends it with the sine of one more pair,
    ``zero`` appends a column of zeros, ``round-up`` computes the table of
    ``d_model + 1`` columns and drops the last, ``error`` refuses it.
    ``scale`` multiplies every value; ``"sqrt(2/d)"`` is MLX's.

    Numbers are exact: an int, a float (the binary number it is), a
    ``fractions.Fraction``, or a string such as ``"999.5"`` or ``"1/3"``
    (the decimal or fraction it says).  ``PRESETS`` holds the frameworks'
    conventions by name:

    >>> print(PRESETS["tensor2tensor"])
    PE(p, i) = sin(p * w_i), PE(p, h + i) = cos(p * w_i); w_i = 10000**(-i/(h - 1)); p = 0, 1, 2, ...; an odd d_model gets a column of zeros
    >>> print(PRESETS["mlx"])
    PE(p, i) = sqrt(2/d) * sin(p * w_i), PE(p, h + i) = sqrt(2/d) * cos(p * w_i); w_i = 10000**(-i/(h - 1)); p = 0, 1, 2, ...; no odd d_model

    Every function that takes ``preset`` also takes ``convention``, and
    every field as a keyword:

    >>> encoding(2, 4, convention=PRESETS["fairseq"]) == encoding(2, 4, preset="tensor2tensor", start=2)
    True

    A convention cannot change; ``replace`` makes a changed copy:

    >>> PRESETS["tensor2tensor"].replace(start=2) == PRESETS["fairseq"]
    True
    >>> PRESETS["diffusers"].replace(start="999.5", shift=0)
    Convention(layout='sin-cos', spacing='tensor2tensor', shift=0, base=10000, start=999.5, odd='zero')
    """

    # What it holds: its fields by name (_fields, read as attributes through __getattr__), and the preset a
    # call named.  Nothing else can be set: a convention cannot change (MicroPython does not enforce this).
    __slots__ = ("_held", "_preset")

    def __init__(self, **fields: object) -> None:
        # The keywords are _FIELDS' names; a field not given takes its default.
        for name in fields:
            if _check_of(name) is None:
                raise TypeError(f"Convention() got an unexpected keyword argument {name!r}")
        self._held: "Optional[_Fields]" = _checked_fields(fields)
        # The preset a call named, to be called by that name among the presets it is the same as.
        self._preset: "Optional[str]" = None

    def __getattr__(self, name: str) -> object:
        """A field, read as an attribute: its value as given (_shown)."""
        if name.startswith("_") or _check_of(name) is None:
            raise AttributeError(f"'Convention' object has no attribute {name!r}")
        return self._shown(name)

    def replace(self, **changes: object) -> "Convention":
        """A copy with the fields given changed (the same keywords as the constructor).

        Giving ``positions`` resets ``start``, ``step`` and ``descending``,
        which it replaces.
        """
        for name in changes:
            if _check_of(name) is None:
                raise TypeError(f"replace() got an unexpected keyword argument {name!r}")
        return self._with(**{name: _checked_field(name, changes[name]) for name in changes})

    def _with(self, **checked: object) -> "Convention":
        """replace() with fields already checked (their inner forms)."""
        fields: "Dict[str, object]" = dict(self._fields)
        fields.update(checked)
        if checked.get("positions") is not None:
            # Positions replace these (their defaults); given in the same call, they conflict (refused below).
            for name, _, default, _ in _FIELDS:
                if name in ("start", "step", "descending") and name not in checked:
                    fields[name] = default
        copy = Convention()
        copy._held = _checked_fields(fields, checked=True)
        return copy

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Convention) and self._fields == other._fields

    def __ne__(self, other: object) -> bool:
        return not self == other  # MicroPython does not derive it from __eq__

    def __hash__(self) -> int:
        return hash(self._table_key(None))

    def __repr__(self) -> str:
        shown = []
        fields: "Mapping[str, object]" = self._fields
        for name, _, default, _ in _FIELDS:
            if name in ("layout", "spacing", "base", "start", "odd") or fields[name] != default:
                shown.append(f"{name}={self._shown(name)!r}")
        return f"Convention({', '.join(shown)})"

    def __str__(self) -> str:
        first, second = ("sin", "cos") if self._fields["layout"] != "cos-sin" else ("cos", "sin")
        factor = "" if self._fields["scale"] == (1, 1, False) else f"{_scale_text(self._fields['scale'], False)} * "
        if self._fields["layout"] == "interleaved":
            columns = f"PE(p, 2i) = {factor}sin(p * w_i), PE(p, 2i + 1) = {factor}cos(p * w_i)"
        else:
            columns = f"PE(p, i) = {factor}{first}(p * w_i), PE(p, h + i) = {factor}{second}(p * w_i)"
        exponent = (
            "-2i/d" if self._fields["spacing"] == "paper" else f"-i/(h - {_fraction_text(self._fields['shift'])})"
        )
        frequency = f"{_fraction_text(self._fields['base'])}**({exponent})"
        if self._fields["angle_scale"] != (1, 1):
            frequency = f"{_fraction_text(self._fields['angle_scale'])} * {frequency}"
        if self._fields["full_turns"]:
            frequency = f"2 pi * {frequency}"
        return f"{columns}; w_i = {frequency}; p = {self._positions_text()}; {self._odd_text()}"

    def _positions_text(self) -> str:
        given = self._fields["positions"]
        if given is not None:
            shown = ", ".join(_fraction_text(p) for p in given[:3])
            return shown + (", ..." if len(given) > 3 else "") if given else "(none)"
        start, step = self._fields["start"], self._fields["step"]
        terms = [_fraction_text(_add(start, step, k)) for k in range(3)]
        if self._fields["descending"]:
            return f"..., {terms[2]}, {terms[1]}, {terms[0]} (descending: the last row is {terms[0]})"
        return f"{', '.join(terms)}, ..."

    def _odd_text(self) -> str:
        return {
            "sine": "an odd d_model ends with one more sine",
            "zero": "an odd d_model gets a column of zeros",
            "error": "no odd d_model",
            "round-up": "an odd d_model is computed as d_model + 1 columns, the last dropped",
        }[self._fields["odd"]]

    def _name(self, d_model: "Optional[int]" = None) -> str:
        """The preset this is (the one named, if it is among them), or its fields."""
        presets = self._presets(d_model)
        if presets:
            return self._preset if self._preset in presets else presets[0]
        # The preset named, or the closest one, and what differs from it.
        key = self._table_key(d_model)
        origin = (
            self._preset
            if self._preset in PRESETS
            else max(PRESETS, key=lambda name: sum(1 for x, y in zip(PRESETS[name]._table_key(d_model), key) if x == y))
        )
        mine: "Mapping[str, object]" = self._fields
        theirs: "Mapping[str, object]" = PRESETS[origin]._fields
        changed = [
            f"{name}={_short(self._shown(name))}".replace("'", "")
            for name, _, _, _ in _FIELDS
            if mine[name] != theirs[name] and not (name == "odd" and d_model is not None and d_model % 2 == 0)
        ]
        return f"{origin} ({', '.join(changed)})" if changed else origin

    def _presets(self, d_model: "Optional[int]" = None) -> "List[str]":
        """Every preset whose table this one's is (for d_model, or for every d_model)."""
        key = self._table_key(d_model)
        if self._fields["positions"] is None:
            return [name for name, preset in PRESETS.items() if preset._table_key(d_model) == key]
        # Positions given one by one are the data, not the convention: the rest must match.
        mine = self._table_key(d_model, False)
        return [name for name, preset in PRESETS.items() if preset._table_key(d_model, False) == mine]

    def _table_key(self, d_model: "Optional[int]", positions: bool = True) -> "Tuple[object, ...]":
        """What sets the table of this width: equal keys, equal tables (any width when d_model is None).

        Without positions, the key leaves out start, step, descending and positions.
        """
        fields: "Dict[str, object]" = dict(self._fields)
        if d_model is not None:
            fields["scale"] = self._scale_square(d_model)
            odd = self._fields["odd"]
            if fields["spacing"] == "tensor2tensor" and (odd != "sine" or d_model % 2 == 0) and d_model > 1:
                # i/(h - shift) with shift 0 is 2i/(2h): the paper's spacing for these rules.
                if fields["shift"] == (0, 1):
                    fields["spacing"], fields["shift"] = "paper", (1, 1)
            if d_model % 2 == 0:
                fields["odd"] = "sine"  # an even width has no odd rule
            elif odd == "round-up" and fields["spacing"] == "tensor2tensor" and self._fields["layout"] != "cos-sin":
                fields["odd"] = "sine"
            if fields["spacing"] == "tensor2tensor" and self._pairs(d_model) == 1:
                fields["shift"] = (1, 1)  # one pair: its exponent is 0 whatever the shift
        dropped = () if positions else ("start", "step", "descending", "positions")
        return tuple(fields[name] for name, _, _, _ in _FIELDS if name not in dropped)

    def _shown(self, name: str) -> object:
        """A field as given: a choice or a flag as it is, a number as the int, float or decimal text it is.

        The module reads its conventions' fields here and in _fields, never as attributes: MicroPython
        lets an attribute be set on a convention (it ignores __slots__), and none such is read.
        """
        check = _check_of(name)
        fields: "Mapping[str, Any]" = self._fields
        given = fields[name]
        if isinstance(check, tuple) or check == "flag":
            return given
        if check == "positions":
            return None if given is None else tuple(_number(p) for p in given)
        if check == "scale":
            return _scale_text(given, True)
        return _number(given)

    # The table's structure for a width d_model: h pairs, a frequency
    # exponent t per pair, and a plan of (kind, pair) per column.

    def _plan(self, d_model: int) -> "List[_Column]":
        """(kind, pair) of each column: _SINE, _COSINE or _ZERO, and the pair's index."""
        return [self._column(dim, d_model) for dim in range(d_model)]

    def _column(self, dim: int, d_model: int) -> "_Column":
        """(kind, pair) of one column: value() needs no plan of the whole width (a board's heap may lack it)."""
        h = self._pairs(d_model)
        cosines = d_model // 2 if self._fields["odd"] == "sine" else h
        if self._fields["layout"] == "interleaved":
            # A sine and a cosine per pair while the cosines last, then the remaining sines.
            if dim < 2 * cosines:
                return (_SINE if dim % 2 == 0 else _COSINE), dim // 2
            pair = cosines + dim - 2 * cosines
            return (_SINE, pair) if pair < h else (_ZERO, 0)
        first, second = (
            ((_SINE, h), (_COSINE, cosines))
            if self._fields["layout"] == "sin-cos"
            else ((_COSINE, cosines), (_SINE, h))
        )
        if dim < first[1]:
            return first[0], dim
        return (second[0], dim - first[1]) if dim - first[1] < second[1] else (_ZERO, 0)

    def _frequencies(self) -> "_Frequencies":
        """The exact frequency law, shared by conventions with the same one (its caches with it)."""
        key = (self._fields["base"], self._fields["angle_scale"], self._fields["full_turns"])
        found = _LAWS.get(key)
        if found is None:
            if len(_LAWS) > _CACHE_LIMIT // 16:
                _LAWS.clear()
            found = _LAWS[key] = _Frequencies(
                self._fields["base"], self._fields["angle_scale"], self._fields["full_turns"]
            )
        return found

    def _output_scale(self, d_model: int) -> "_OutputScale":
        """The output scale for this width: exact for the kernel, its ``value`` in float64 for the fast path."""
        p, q = square = self._scale_square(d_model)
        return _OutputScale("square", (square,), 1.0 if p == q else math.sqrt(p / q))

    def _scale_square(self, d_model: int) -> "_Fraction":
        """The square of the output scale for this width, a fraction in lowest terms."""
        p, q, per_width = self._fields["scale"]
        return _reduced(p, q * d_model) if per_width else (p, q)

    def _float_frequencies(self, d_model: int) -> "List[float]":
        """Each pair's frequency in float64, as the fast path computes it (0 past float64's range)."""
        factor = _to_float(self._fields["angle_scale"]) * (2 * math.pi if self._fields["full_turns"] else 1.0)
        return [factor / denominator if denominator > 0.0 else _INF for denominator in self._denominators(d_model, 1.0)]

    def _denominators(self, d_model: int, factor: "Optional[float]" = None) -> "List[float]":
        """Each pair's angle divisor, base**t / angle_scale (or / factor), in float64: the fast path's angle is p / divisor."""
        base = _to_float(self._fields["base"])
        if factor is None:
            factor = _to_float(self._fields["angle_scale"]) * (2 * math.pi if self._fields["full_turns"] else 1.0)
        return [_denominator(exponent, base) / factor for exponent in self._exponents(d_model)]

    def _exponents(self, d_model: int) -> "List[_Fraction]":
        """Each pair's exponent t = (a, b): its frequency is angle_scale * base**(-a/b).

        The paper's spacing is 2i/d, over the d_model columns for the
        ``sine`` rule and over 2h columns otherwise; tensor2tensor's is
        i/(h - shift) (i/1 for a single pair, as tensor2tensor guards it).
        """
        return [self._exponent(d_model, i) for i in range(self._pairs(d_model))]

    def _exponent(self, d_model: int, pair: int) -> "_Fraction":
        """One pair's exponent, as _exponents(d_model)[pair] (a single value needs no list of them all)."""
        h = self._pairs(d_model)
        if self._fields["spacing"] == "paper":
            return 2 * pair, d_model if self._fields["odd"] == "sine" else 2 * h
        if h <= 1:
            return 0, 1
        n, m = self._fields["shift"]
        if h * m - n <= 0:
            raise ValueError(
                f"shift must be less than the number of frequencies ({h}, for d_model {d_model}),"
                f" got {_fraction_text(self._fields['shift'])}"
            )
        return pair * m, h * m - n

    def _pairs(self, d_model: int) -> int:
        """h, the number of frequencies."""
        return d_model // 2 if self._fields["odd"] in ("zero", "error") else (d_model + 1) // 2

    def _position(self, r: int, seq_len: "Optional[int]") -> "_Fraction":
        """The position of row r, a fraction."""
        given = self._fields["positions"]
        if given is not None:
            if not 0 <= r < len(given):
                raise ValueError(f"pos must be less than the number of positions ({len(given)}), got {r}")
            return given[r]
        if seq_len is None and self._fields["descending"]:
            raise ValueError(
                "pos has no position in a descending convention without seq_len; use encoding() or rows(),"
                " or descending=False with start and a negative step"
            )
        (start, step), denominator = self._progression(seq_len or 0)
        return _reduced(start + r * step, denominator)

    def _float_positions(self, seq_len: int, first: int = 0) -> "Iterator[float]":
        """The positions of rows first to seq_len - 1 as floats (their nearest)."""
        given = self._fields["positions"]
        if given is not None:
            return (_to_float(p) for p in given[first:seq_len])
        (start, step), denominator = self._progression(seq_len)
        end = start + seq_len * step
        if denominator == 1 and -(1 << 1000) < start < 1 << 1000 and -(1 << 1000) < end < 1 << 1000:
            return (float(p) for p in range(start + first * step, end, step))
        return (_to_float((start + r * step, denominator)) for r in range(first, seq_len))

    # Positions: a progression start + r * step (counted down when
    # descending), or given one by one.

    def _progression(self, seq_len: int) -> "Tuple[Tuple[int, int], int]":
        """((start, step), denominator) with integer start and step over a common denominator, when not given one by one."""
        (a, b), (c, d) = self._fields["start"], self._fields["step"]
        denominator = b * d // _gcd(b, d)
        start, step = a * (denominator // b), c * (denominator // d)
        if self._fields["descending"]:
            start, step = start + (seq_len - 1) * step, -step
        return (start, step), denominator

    def _check_rows(self, seq_len: int) -> None:
        given = self._fields["positions"]
        if given is not None and len(given) != seq_len:
            raise ValueError(f"seq_len must equal the number of positions ({len(given)}), got {seq_len}")

    @property
    def _fields(self) -> "_Fields":
        """Every field by name, in its inner form; a preset's made from its row of _PRESETS when first read."""
        if self._held is None:
            fields: "Dict[str, object]" = {}
            for name, _, changes in _PRESETS:
                if name == self._preset:
                    fields.update(changes)
            self._held = _checked_fields(fields, checked=True)
        return self._held


def _checked_fields(fields: "Dict[str, object]", checked: bool = False) -> "_Fields":
    """Every field by name, each given one checked (unless already), the others their defaults; the rules between them."""
    # Each value is of the type its check returns, the type _Fields gives it.
    values: "Any" = {
        name: default if name not in fields else fields[name] if checked else _checked_field(name, fields[name])
        for name, _, default, _ in _FIELDS
    }
    shift = values["shift"]
    if values["spacing"] == "paper" and shift != (1, 1):
        raise ValueError(f"shift goes with spacing tensor2tensor, got shift={_fraction_text(shift)} with spacing paper")
    replaced = [(values[name], default) for name, _, default, _ in _FIELDS if name in ("start", "step", "descending")]
    if values["positions"] is not None and any(value != default for value, default in replaced):
        raise ValueError("positions replace start, step and descending: give one or the other")
    return values  # type: ignore[no-any-return]


def _checked_field(name: str, given: object) -> object:
    """One field as the Convention holds it, checked by its row of _FIELDS: a choice, a flag, a fraction..."""
    check = _check_of(name)
    if isinstance(check, tuple):
        return _check_choice(name, given, check)
    if check == "flag":
        return _check_flag(name)(given)
    if check == "positive":
        return _positive(name)(given)
    if check == "step":
        fraction = _rational("step", given)
        if fraction[0] == 0:
            raise ValueError(f"step must not be 0, got {_short(given)}")
        return fraction
    if check == "positions":
        return _check_positions(given)
    if check == "scale":
        return _check_scale(given)
    assert check == "number", check  # _FIELDS names no other kind
    return _rational(name, given)


def _check_of(name: str) -> "Optional[Union[str, Tuple[str, ...]]]":
    """A field's check in _FIELDS (its choices, or the kind of its value), or None if name is no field."""
    for row in _FIELDS:
        if row[0] == name:
            return row[1]
    return None


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


def _check_integer(name: str, given: object, minimum: int) -> int:
    """Return ``value`` as an int, or raise TypeError or ValueError naming ``name``."""
    if not isinstance(given, int) or isinstance(given, bool):
        # Accept integer types of other libraries (numpy.int64) by __index__;
        # refuse bool, whose __index__ would turn True into 1.
        index = getattr(type(given), "__index__", None)
        whole = index(given) if index is not None and not isinstance(given, bool) else None
        # An __index__ called directly may return anything: only an int (not a bool) is an integer.
        if not isinstance(whole, int) or isinstance(whole, bool):
            raise TypeError(f"{name} must be an integer, got {type(given).__name__} {_short(given)}")
        given = whole
    if given < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {given}")
    return given


def _check_flag(name: str) -> "Callable[[object], bool]":
    def check(x: object) -> bool:
        if not isinstance(x, bool):
            raise TypeError(f"{name} must be True or False, got {type(x).__name__} {_short(x)}")
        return x

    return check


def _check_dtype(dtype: object, exact: bool = False) -> str:
    """dtype checked; with exact (or a check, which compares exact values), one this runtime's floats can hold."""
    dtype = _check_choice("dtype", dtype, tuple(_DTYPES))
    if exact and dtype == "float64" and _single_precision():
        raise ValueError(
            "dtype must be float32, bfloat16 or float16 for exact values on this runtime, whose floats are"
            " single precision (24 bits), got 'float64'"
        )
    return dtype


def _check_choice(name: str, given: object, choices: "Sequence[str]") -> str:
    if not isinstance(given, str):
        raise TypeError(f"{name} must be a str, got {type(given).__name__} {_short(given)}")
    if given not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {_short(given)}")
    return given


def _check_tolerance(name: str, tolerance: object) -> float:
    number = _real_number(tolerance)
    if number is None:
        raise TypeError(f"{name} must be a number, got {type(tolerance).__name__} {_short(tolerance)}")
    if not 0.0 <= number < _INF:
        raise ValueError(f"{name} must be finite and at least 0, got {_short(tolerance)}")
    return number


def _real_number(x: object) -> "Optional[float]":
    """x as a float if it is a real number (int, float, numpy scalar...), else None.

    An integer beyond float64 becomes an infinity of its sign: as far off.
    """
    if isinstance(x, (bool, str, bytes)):
        return None
    # MicroPython's float has no __float__ attribute, so test the built-in types first.
    if not isinstance(x, (int, float)) and getattr(type(x), "__float__", None) is None:
        return None
    number: "Any" = x  # int, float, or any type with __float__: numpy's scalars, Fraction, Decimal
    try:
        return float(number)
    except OverflowError:
        return _INF if number > 0 else -_INF
    except (TypeError, ValueError):
        return None  # complex has a __float__ that refuses, before Python 3.10


def _check_scale(scale: object) -> "Tuple[int, int, bool]":
    """The output scale as (p, q, per_width): its square is p/q, divided by d_model if per_width."""
    if isinstance(scale, str) and scale.replace(" ", "").startswith("sqrt(") and scale.rstrip().endswith(")"):
        inside = scale.replace(" ", "")[5:-1]
        per_width = inside.endswith("/d")
        try:
            p, q = _rational("scale", inside[:-2] if per_width else inside)
        except ValueError:
            raise ValueError(
                f"scale must be a number, 'sqrt(X)' or 'sqrt(X/d)' with X a decimal or a fraction, got {_short(scale)}"
            ) from None
    else:
        root = _rational("scale", scale)
        p, q, per_width = root[0] * root[0] * (1 if root[0] >= 0 else -1), root[1] * root[1], False
    if p <= 0:
        raise ValueError(f"scale must be greater than 0, got {_short(scale)}")
    if not 0.0 < _to_float((p, q)) < _INF:
        raise ValueError(f"scale must be between 2**-511 and 2**511, its square a normal float64, got {_short(scale)}")
    return p, q, per_width


def _scale_text(scale: "Tuple[int, int, bool]", as_number: bool) -> "Union[int, float, str]":
    p, q, per_width = scale
    if per_width:
        return f"sqrt({_fraction_text((p, q))}/d)"
    roots = _root(p, 2), _root(q, 2)
    if roots[0] is not None and roots[1] is not None:
        root = (roots[0], roots[1])
        return _number(root) if as_number else _fraction_text(root)
    return f"sqrt({_fraction_text((p, q))})"


def _positive(name: str) -> "Callable[[object], _Fraction]":
    def check(x: object) -> "_Fraction":
        refused = f"{name} must be finite and greater than 0, got {_short(x)}"
        if isinstance(x, float) and not -_INF < x < _INF:
            raise ValueError(refused)
        fraction = _rational(name, x)
        if fraction[0] <= 0:
            raise ValueError(refused)
        if not 0.0 < _to_float(fraction) < _INF:
            # The fast path and the diagnosis compute with it in float64.
            raise ValueError(
                f"{name} must be finite and greater than 0 in float64, which the fast path uses, got {_short(x)}"
            )
        return fraction

    return check


def _check_positions(positions: object) -> "Optional[Tuple[_Fraction, ...]]":
    if positions is None:
        return None
    items = _items(positions, "positions must be a sequence of real numbers")
    return tuple(_rational(f"positions[{i}]", p) for i, p in enumerate(items))


def _items(thing: object, must: str) -> "Iterator[object]":
    """The items of a sequence given (an array's or tensor's as its tolist() gives them); a TypeError, ``must``
    and what thing is, for a str, bytes or anything not iterable."""
    tolist = getattr(thing, "tolist", None)
    items = tolist() if callable(tolist) else thing
    iterator = None if isinstance(items, (str, bytes)) else _iterate(items)
    if iterator is None:
        raise TypeError(f"{must}, got {type(thing).__name__} {_short(thing)}")
    return iterator


def _iterate(thing: object) -> "Optional[Iterator[object]]":
    """An iterator over thing, or None if it has none (iter(), not hasattr(x, "__iter__"): MicroPython's list has
    no such attribute)."""
    iterable: "Any" = thing  # whatever iter() accepts; it raises TypeError for the rest
    try:
        iterator: "Iterator[object]" = iter(iterable)
    except TypeError:
        return None
    return iterator


# ---------------------------------------------------------------------------
# Exact kernel: Python integers only
# ---------------------------------------------------------------------------
#
# A fixed-point number X with F fraction bits stands for the real X / 2**F; "unit" means 2**-F,
# and a kernel named *_fixed returns such a number.  Every function states the error of its result
# in units, and each step that adds to it says how much in a comment beside it ("# error < ...").
# Inside, each works with _GUARD extra bits, so that the sum of its internal floor errors (at most
# a few thousand units of the finer grid) is below a quarter unit of the result; the final rounding
# adds half a unit.  This holds for F < 2**20, far beyond any precision the Ziv loop reaches.
# No math function, no float arithmetic but the last exact scaling, and no decimal or fractions:
# the bits are the same on every runtime.


if TYPE_CHECKING:
    # The kernel's other values, each a pair of ints with its own meaning:
    # a float's exact value m * 2**e, as (m, e);
    _Dyadic = Tuple[int, int]
    # a number W * 2**(k - F) held at F fraction bits, as (W, k): a frequency, an exponential;
    _Scaled = Tuple[int, int]
    # a fixed-point number X at F fraction bits and its error bound in units, as (X, error);
    _Bounded = Tuple[int, int]
    # a pair's cosine and sine at F fraction bits, as (cos, sin);
    _CosSin = Tuple[int, int]
    # a real number known to lie in [a, b] * 2**-G, as (a, b);
    _Interval = Tuple[int, int]
    # a table column's kind (_SINE, _COSINE or _ZERO) and the pair whose angle it takes, as (kind, pair).
    _Column = Tuple[int, int]


_SINE, _COSINE, _ZERO = 0, 1, 2


def _exact_value(
    position: "_Fraction",
    kind: int,
    exponent: "_Fraction",
    frequencies: "_Frequencies",
    scale: "_OutputScale",
    dtype: str,
) -> float:
    """One correctly rounded element, scale * sin or cos, by the Ziv loop: more bits until the rounding is decided.

    ``kind`` is _SINE, _COSINE or _ZERO (a padding column); ``scale`` is the
    output scale.  An element that is rational
    (_rational_element) is rounded as the fraction it is.  Any other is
    irrational: for a non-zero angle that is an algebraic number, its sine
    and cosine are transcendental (Lindemann-Weierstrass); in full turns,
    sin(2 pi x) for an algebraic irrational x is transcendental
    (Gelfond-Schneider), and for a rational x algebraic, its product with
    the scale rational only where _rational_element finds it.  So an
    element left to the loop is never a number of the format or a midpoint,
    and the loop ends.
    """
    if kind == _ZERO:
        return 0.0
    fraction = _rational_element(position, kind, exponent, frequencies, scale)
    if fraction is not None:
        return _round_fraction(fraction, dtype)
    precision = _DTYPES[dtype][0]
    tiny = frequencies.log2_angle(position, exponent) < -(2 * precision + 24 + exponent[0] // exponent[1])
    root = scale.root() if kind == _COSINE and tiny else None
    if root is not None and root[1] & (root[1] - 1) == 0:
        # cos of a tiny angle: scale * (1 - theta**2 / 2 ...), just below the scale, closer to it than a
        # quarter of the format's spacing; when the scale is a number of the format or a midpoint (a
        # dyadic rational), the loop could never tell, so round "just below" it here: the scale less 2**-F
        # rounds to the scale if the format holds it, to the lower neighbour if the scale is a midpoint.
        F = _bit_length(root[1]) + precision + 65
        return _round_fraction(((root[0] << F) // root[1] - 1, 1 << F), dtype)  # exact: root[1] divides 2**F
    bits = precision + 32
    margin = 16 + exponent[0] // exponent[1]
    while True:
        if frequencies.log2_angle(position, exponent) < -(bits + margin):
            v, F, error = _tiny_angle(position, kind, exponent, frequencies, scale, bits)
        else:
            sine, cosine, F, error = _sin_cos(position, exponent, frequencies, bits)
            v = sine if kind == _SINE else cosine
            if not scale.one:
                v, error = _scale_fixed(v, error, scale, F)
        result = _round_fixed(v, F, error, dtype)
        if result is not None:
            return result
        bits *= 2


def _rational_element(
    position: "_Fraction",
    kind: int,
    exponent: "_Fraction",
    frequencies: "_Frequencies",
    scale: "_OutputScale",
) -> "Optional[_Fraction]":
    """The element as a fraction (n, m) when it is rational, else None.

    The element is scale * sin or cos, so its square is the scale's square
    times that of the sine or cosine, when the scale is a root.  The angle 0 gives sin 0 and
    cos 1.  In full turns the angle is 2 pi x; when x is rational, sin**2 is
    (1 - cos(4 pi x)) / 2, rational exactly when 8 x or 12 x is whole
    (Niven's theorem on cos(4 pi x)).  Any other element is irrational.
    """
    n, m = position
    if n == 0:
        unit: "Optional[Tuple[int, _Fraction]]" = (0, (0, 1)) if kind == _SINE else (1, (1, 1))
    elif frequencies.full_turns:
        unit = _turn_square(position, kind, exponent, frequencies)
    else:
        return None
    if unit is None:
        return None
    sign, square = unit
    if sign == 0:
        return 0, 1
    root = scale.root(square)
    if root is None:
        return None
    return sign * root[0], root[1]


# cos(pi j / 6) for j = 0 .. 11 where it is rational, else None.  A tuple of constants, not a dict: a
# frozen module keeps it in flash, off a board's heap.
_SIXTHS_COSINE = ((1, 1), None, (1, 2), (0, 1), (-1, 2), None, (-1, 1), None, (-1, 2), (0, 1), (1, 2), None)


def _turn_square(
    position: "_Fraction", kind: int, exponent: "_Fraction", frequencies: "_Frequencies"
) -> "Optional[Tuple[int, _Fraction]]":
    """(sign, square) of sin or cos of 2 pi x, x = position * angle_scale * base**(-t), when the square is rational; else None.

    With k = 24 x mod 24 whole, the angle is pi k / 12, and
    sin**2 = (1 - cos(pi k / 6)) / 2, cos**2 = (1 + cos(pi k / 6)) / 2.
    """
    a, b = exponent
    divisor = _gcd(a, b)
    a, b = a // divisor, b // divisor
    base_n, base_m = frequencies.base
    # With a/b in lowest terms, base**(a/b) is rational exactly when both
    # parts of base are b-th powers.
    root_n, root_m = _root(base_n, b), _root(base_m, b)
    if root_n is None or root_m is None:
        return None  # base**t is irrational, and so is x
    numerator = 24 * position[0] * frequencies.angle_scale[0]
    denominator = position[1] * frequencies.angle_scale[1]
    # x * 24 = numerator * root_m**a / (denominator * root_n**a), root_n and root_m coprime:
    # whole only if root_n**a divides the numerator, which it cannot when it is larger.
    if root_n > 1 and a * (_bit_length(root_n) - 1) > _bit_length(abs(numerator)):
        return None
    denominator *= root_n**a
    modulus = 24 * denominator
    twelfths = (numerator * _power_mod(root_m, a, modulus)) % modulus
    if twelfths % denominator:
        return None
    k = twelfths // denominator
    double = _SIXTHS_COSINE[k % 12]
    if double is None:
        return None
    c, d = double
    if kind == _SINE:
        return (0 if k % 12 == 0 else 1 if k < 12 else -1), (d - c, 2 * d)
    return (0 if k % 12 == 6 else 1 if k < 6 or k > 18 else -1), (d + c, 2 * d)


def _power_mod(x: int, e: int, modulus: int) -> int:
    """x**e % modulus by squaring (MicroPython's pow may lack its third argument)."""
    result, x = 1 % modulus, x % modulus
    while e:
        if e & 1:
            result = result * x % modulus
        x = x * x % modulus
        e >>= 1
    return result


def _tiny_angle(
    position: "_Fraction",
    kind: int,
    exponent: "_Fraction",
    frequencies: "_Frequencies",
    scale: "_OutputScale",
    bits: int,
) -> "Tuple[int, int, int]":
    """(v, F, error): scale * sin or cos of a tiny theta, |theta| < 2**-(bits + 12), as v / 2**F.

    The fixed point of _sin_cos would need |log2 theta| bits; here the sine
    keeps relative precision instead.  sin theta = theta (1 - d) with
    0 <= d < theta**2 / 6, far below 2**-Fw: v = n W 2**s / m floored is
    theta in units of 2**-(Fw - k + s), relative error < 4 * 2**-Fw plus the
    floor, so error <= |v| / 2**(Fw - 3) + 2.  The cosine is 1 - d with
    d < theta**2 / 2, below a unit of 2**-bits: v = 2**bits, error 1; times
    the scale to bits + 2 bits (error e, from scale.fixed, and 3 to spare).
    """
    if kind == _COSINE:
        G = bits + 2
        # 1 - cos theta < theta**2 / 2 < 2**-(2 bits + 24): times the scale s, s >> (2 bits + 24) units more.
        s, e = scale.fixed(G)
        return s, G, e + 3 + (s >> (2 * bits + 24))  # error: the scale's e, + 3 to spare, + (1 - cos) s
    Fw = bits + 16
    W, k = frequencies.frequency(exponent, Fw)
    n, m = position
    extra = Fw + _bit_length(m)
    v = ((n * W) << extra) // m  # theta, for sin theta: their relative difference d is far below 2**-Fw
    F = Fw - k + extra
    error = ((v if v >= 0 else -v) >> (Fw - 3)) + 2  # w's relative error times |v|, + 1 for each floor
    if not scale.one:
        G = _bit_length(v if v >= 0 else -v) + 1
        v, error = _scale_fixed(v, error, scale, G)  # error: _scale_fixed's, with |v| <= 2**G
    return v, F, error


def _scale_fixed(v: int, error: int, scale: "_OutputScale", F: int) -> "_Bounded":
    """v times the scale in v's units, the scale taken to F bits, and its error bound in units.

    With v = V + d (|d| <= error) and the scale's s = S + f (|f| <= e,
    from scale.fixed): v s - V S = d s + f V, at most error s + e (|v| +
    error) in units of 2**-2F; shifted down by F, + 1 for the floor of the
    product and + 1 for that of the bound.
    """
    s, e = scale.fixed(F)
    return (v * s) >> F, ((error * s + ((v if v >= 0 else -v) + error) * e) >> F) + 2


class _OutputScale:
    """The factor on every value of an exact table, to any precision: the root of a fraction, or an attention factor.

    ``kind`` "square": ``numbers`` is (p/q,), and the scale is sqrt(p/q), a
    convention's output scale or a rational attention factor.  "yarn":
    (0.1 m1 ln f + 1) / (0.1 m2 ln f + 1), ``numbers`` (f, m1, m2), m2 = 0
    for no denominator; "longrope": sqrt(1 + ln f / ln L0), (f, L0).  Either
    of those is transcendental: ln f is (Lindemann), and so is a ratio of
    logarithms that is irrational (Gelfond-Schneider), which _Rope checks
    before it makes one (a rational ratio makes a "square").  ``value`` is
    the scale in float64, for the fast path and the allowance.
    """

    def __init__(self, kind: str, numbers: "Tuple[_Fraction, ...]", value: float) -> None:
        self.kind = kind
        self.numbers = numbers
        self.value = value
        self.one = kind == "square" and numbers[0][0] == numbers[0][1]  # the scale is 1: no step to take
        self.cache: "Dict[int, _Bounded]" = {}
        # Guard bits: each step's error in units, bounded by the numbers' sizes (see fixed()).
        sizes = sum(_bit_length(n // m + 1) for n, m in numbers)
        self.guard = 24 + 2 * sizes

    def root(self, times: "_Fraction" = (1, 1)) -> "Optional[_Fraction]":
        """sqrt(p/q * times) in lowest terms when the scale is a root and that is rational, else None."""
        if self.kind != "square":
            return None  # transcendental: times a non-zero rational, irrational
        (p, q), (n, m) = self.numbers[0], times
        a, b = _reduced(p * n, q * m)
        root_a, root_b = _root(a, 2), _root(b, 2)
        if root_a is None or root_b is None:
            return None
        return root_a, root_b

    def fixed(self, F: int) -> "_Bounded":
        """(s, e): the scale times 2**F, within e units (below by less than 2 for a root, within 1 otherwise)."""
        found = self.cache.get(F)
        if found is not None:
            return found
        if self.kind == "square":
            p, q = self.numbers[0]
            # floor(p/q 4**F) is below by less than 1, its isqrt by less than 1 more: below by less than 2
            found = self.cache[F] = (_isqrt((p << (2 * F)) // q), 2)
            return found
        G = F + self.guard
        one = 1 << G
        if self.kind == "yarn":
            # ln f within 2 units; N = 1 + 0.1 m1 ln f within m1 + 1 units,
            # D likewise (or exact); N / D >= ... with D >= 1: the quotient
            # is off by at most (m1 + 1) + (N / D)(m2 + 1) + 1 units, far
            # below 2**(guard - 2) units.
            factor, m1, m2 = self.numbers
            ln_factor = _ln_ratio(factor, G)
            numerator = one + (m1[0] * ln_factor) // (10 * m1[1])
            denominator = one + (m2[0] * ln_factor) // (10 * m2[1]) if m2[0] else one
            v = (numerator << G) // denominator
        else:
            # R = ln f / ln L0 (L0 >= 2, ln L0 >= 0.69): off by at most
            # (2 + 2R) / 0.69 + 1 units; the square root of (1 + R) halves
            # that and adds 1 for the floor.
            factor, length = self.numbers
            ratio = (_ln_ratio(factor, G) << G) // _ln_ratio(length, G)
            v = _isqrt((one + ratio) << G)
        found = self.cache[F] = (_round_shift(v, self.guard), 1)
        return found


def _root(n: int, b: int) -> "Optional[int]":
    """The integer b-th root of n >= 0 if n is a perfect b-th power, else None."""
    if n < 2 or b == 1:
        return n
    if b >= _bit_length(n):
        return None  # 2**b > n: no whole root but 1
    low, high = 1, 1 << (_bit_length(n) // b + 1)
    while low < high:
        middle = (low + high) // 2
        if middle**b < n:
            low = middle + 1
        else:
            high = middle
    return low if low**b == n else None


def _sin_cos(
    position: "_Fraction", exponent: "_Fraction", frequencies: "_Frequencies", bits: int
) -> "Tuple[int, int, int, int]":
    """Return (S, C, F, E): sin and cos of theta = position * w(t), F fraction bits, error <= E units.

    ``position`` is a fraction (n, m), m > 0, of any sign; ``exponent`` is
    t = (a, b), the pair's exponent (2i/d_model in the paper's spacing).

    F gives about ``bits`` significant bits to theta even when it is tiny;
    the frequency is taken with about bits + log2(theta) + margin bits of
    relative precision, so that theta itself is known to a few units
    (a tiny theta needs no more than ``bits``: its error is relative).  The
    sizing estimate is off by at most 4 + t bits, which the margin 16 + t
    covers.

    1. theta = n * W * 2**(k - Fw) / m, relative error < 4 * 2**-Fw, floored
       once: as T with F fraction bits its error is below
       |T| * 2**(3 - Fw) + 2 units.
    2. Quadrant q = round(theta / (pi/2)); r = T - q * H with H = pi/2 to 1
       unit: error of r <= error of T + |q|.
    3. sin and cos of |r| <= pi/4 by Taylor, terms floored from the last
       (< 2 units each, the alternating tail < 1 unit); sin and cos are
       1-Lipschitz, so the error of r carries over unchanged.
    4. The quadrant permutes and negates the pair exactly.
    """
    n, m = position
    log2_angle = frequencies.log2_angle(position, exponent)
    margin = 16 + exponent[0] // exponent[1]
    if log2_angle < -(bits + margin):
        # |theta| < 2**-G, G = bits + margin - (4 + t): sin is 0 and cos 1 within a unit of G bits
        # (1 - cos < theta**2 / 2); an absolute answer needs no more.
        G = bits + 12
        return 0, 1 << G, G, 2
    F = bits + (log2_angle if log2_angle > 0 else -log2_angle) + margin
    Fw = F + log2_angle + margin
    W, k = frequencies.frequency(exponent, Fw)
    shift = k - Fw + F
    product = n * W
    T = (product << shift) // m if shift >= 0 else product // (m << -shift)
    error = ((T if T >= 0 else -T) >> (Fw - 3)) + 2  # step 1: w's relative error times |T|, + 1 for each floor
    if -(1 << (F - 1)) < T < 1 << (F - 1):
        q, r = 0, T  # |theta| < 1/2 < pi/4: no reduction, and no pi to F bits
    else:
        H = _pi(F - 1)  # pi / 2 with F fraction bits, error <= 1 unit
        q = (2 * T + H) // (2 * H)
        r = T - q * H
        error += q if q >= 0 else -q  # step 2: H's error, |q| times
    negative_r = r < 0
    a = -r if negative_r else r
    a_squared = (a * a) >> F
    sine, sine_terms = _alternating_series(a, a_squared, 1, F)
    cosine, cosine_terms = _alternating_series(1 << F, a_squared, 0, F)
    if negative_r:
        sine = -sine
    error += 2 * (sine_terms + cosine_terms) + 2  # step 3: both series' (one bound serves both); step 4 is exact
    quadrant = q & 3
    if quadrant == 0:
        return sine, cosine, F, error
    if quadrant == 1:
        return cosine, -sine, F, error
    if quadrant == 2:
        return -sine, -cosine, F, error
    return -cosine, sine, F, error


def _alternating_series(first: int, x_squared: int, n: int, F: int) -> "Tuple[int, int]":
    """Sum first - first x**2/((n+1)(n+2)) + ..., the Taylor series of sin (n = 1) or cos (n = 0).

    Return (sum, number of terms).  Each term is floored from the last: with
    x <= pi/4 the carried error shrinks, so each is off by less than 2 units;
    the tail of an alternating series of falling terms is below the first
    term left out, which is below 1 unit.
    """
    total = term = first
    count = 0
    while term:
        term = ((term * x_squared) >> F) // ((n + 1) * (n + 2))  # error < 2 units: x**2 < 0.62 shrinks the carried
        total = total + term if count & 1 else total - term
        n += 2
        count += 1
    return total, count  # error < 2 units a term + 1 (the alternating tail)


class _Frequencies:
    """A convention's frequency law, exactly: w(t) = angle_scale * base**(-t) (times 2*pi in full turns), with caches.

    ``base`` and ``angle_scale`` are positive fractions (n, m); t = a/b is a
    pair's exponent, any non-negative fraction.
    """

    def __init__(self, base: "_Fraction", angle_scale: "_Fraction", full_turns: bool) -> None:
        self.base = base
        self.angle_scale = angle_scale
        self.full_turns = full_turns
        # floor(log2) of each, within 1, to size the working precision.
        self.log2_base = _bit_length(base[0]) - _bit_length(base[1])
        self.log2_scale = _bit_length(angle_scale[0]) - _bit_length(angle_scale[1]) + (3 if full_turns else 0)
        self.frequencies: "Dict[Tuple[int, int, int], _Scaled]" = {}

    def frequency(self, exponent: "_Fraction", F: int) -> "_Scaled":
        """Return (W, k): w = W * 2**(k - F) * (1 + rho), |rho| < 4 * 2**-F, for the exponent t = (a, b).

        At G = F + 4 + log2(1 + t) bits: ln(angle_scale) and ln(base) are each a
        difference of two logarithms (error <= 2 units), so
        y = ln(angle_scale) - t ln(base), floored, is off by at most 3 + 2t units
        of G bits, below 3/16 of a unit of F bits (2**(G-F) >= 16 (1 + t));
        rounded to F bits, by at most 0.69 units, which perturbs exp(y) by a
        relative 0.7 * 2**-F; _exp adds less than 2**-F (|rho| < 1.7 * 2**-F).
        In full turns W is then multiplied by 2 pi (pi to F bits, error <= 1
        unit, relative 0.32 * 2**-F) and floored to W' in [0.55, 1.12] * 2**F
        (relative 1.82 * 2**-F): |rho| < 3.9 * 2**-F.
        """
        key = (exponent[0], exponent[1], F)
        found = self.frequencies.get(key)
        if found is None:
            if len(self.frequencies) > 4 * _CACHE_LIMIT:
                self.frequencies.clear()
            a, b = exponent
            G = F + 4 + _bit_length(a // b + 1)  # 2**(G - F) >= 16 (1 + t)
            # error <= 2 + 2 t (the two logarithms) + 1 (the floor) units of G bits, below 3/16 of a unit of F bits
            y = _ln_ratio(self.angle_scale, G) - (a * _ln_ratio(self.base, G)) // b
            # rounding y adds half a unit (0.69 in all: a relative 0.7 * 2**-F in exp), _exp a relative < 2**-F
            W, k = _exp(_round_shift(y, G - F), F)
            if self.full_turns:
                # times pi (error <= 1 unit, relative 0.32 * 2**-F) / 4, floored (relative 1.82 * 2**-F)
                W, k = (W * _pi(F)) >> (F + 2), k + 3
            found = self.frequencies[key] = (W, k)
        return found

    def log2_angle(self, position: "_Fraction", exponent: "_Fraction") -> int:
        """An integer within 4 + t of log2(|position| * w(t)), for sizing."""
        n, m = position
        return _bit_length(abs(n)) - _bit_length(m) + self.log2_scale - (exponent[0] * self.log2_base) // exponent[1]


_GUARD = 40


_CONSTANTS: "Dict[Tuple[str, int], int]" = {}


def _pi(F: int) -> int:
    """pi * 2**F, error at most 1 unit.

    Machin: pi = 16 atan(1/5) - 4 atan(1/239).  At F + _GUARD bits the two
    series are off by at most 20 * (3 * terms + 1) units of that grid, far
    below a quarter unit of F bits; the rounding adds half a unit.
    """
    key = ("pi", F)
    if key not in _CONSTANTS:
        if len(_CONSTANTS) > _CACHE_LIMIT:
            _CONSTANTS.clear()
        fine = F + _GUARD
        # error < 16 + 4 series errors of the fine grid, below a quarter unit; + half a unit (the rounding)
        _CONSTANTS[key] = _round_shift(16 * _atan_inverse_fixed(5, fine) - 4 * _atan_inverse_fixed(239, fine), _GUARD)
    return _CONSTANTS[key]


def _atan_inverse_fixed(q: int, F: int) -> int:
    """atan(1/q) * 2**F for an integer q >= 2; error at most 3 * terms + 1 units.

    atan(1/q) = sum (-1)**k / ((2k+1) q**(2k+1)).  The power q**-(2k+1) is
    floored from the previous one (its error stays below 1 / (1 - 1/q**2) < 2),
    the division by 2k+1 floors once more (< 1): each term is off by < 3.  The
    series alternates with falling terms, so stopping at a zero term leaves an
    error below 1.
    """
    power = (1 << F) // q  # error < 1 unit (the floor)
    square = q * q
    total = 0
    k = 0
    while power:
        term = power // (2 * k + 1)  # error < 2 (carried in power) + 1 (this floor) = 3 units
        total = total - term if k & 1 else total + term
        power //= square  # error < (carried) / q**2 + 1 (the floor) <= 1 / (1 - 1/q**2) < 2 units
        k += 1
    return total  # error < 3 units a term + 1 (the alternating tail)


def _isqrt(n: int) -> int:
    """floor(sqrt(n)) for an integer n >= 0, by Newton's method on integers (math.isqrt is 3.8+ CPython only)."""
    if n < 2:
        return n
    x = 1 << ((_bit_length(n) + 1) // 2)
    while True:
        y = (x + n // x) // 2
        if y >= x:
            return x
        x = y


class _RopeFrequencies(_Frequencies):
    """A rotary embedding's frequency law, exactly: one frequency per pair k of h, the exponent (k, h).

    w_k = r_k * base**(-k/h) * g**(-k/(h - 1)): r_k a rational multiplier
    (linear, YaRN, LongRoPE), g dynamic NTK's growth of the base (None
    without).  A llama3 pair in the band between its two wavelengths
    blends w and w / f (``blends``).  The contract is _Frequencies': the
    frequency with relative error below 4 * 2**-F.
    """

    def __init__(
        self,
        base: "_Fraction",
        pairs: int,
        multipliers: "List[_Fraction]",
        growth: "Optional[_Fraction]",
        blend: "Optional[_Blend]",
    ) -> None:
        _Frequencies.__init__(self, base, (1, 1), False)
        self.pairs = pairs
        self.multipliers = multipliers
        self.growth = growth
        self.blend = blend
        self.log2: "Dict[int, int]" = {}

    def log2_angle(self, position: "_Fraction", exponent: "_Fraction") -> int:
        """An integer within 3 of log2(|position| * w_k): the position's within 1, the frequency's within 2."""
        k = exponent[0]
        e = self.log2.get(k)
        if e is None:
            e = self.log2[k] = self.frequency(exponent, 64)[1]
        n, m = position
        return _bit_length(abs(n)) - _bit_length(m) + e

    def frequency(self, exponent: "_Fraction", F: int) -> "_Scaled":
        """(W, k): w = W * 2**(k - F) within a relative 4 * 2**-F.

        Without a blend, at G2 = G + 4 = F + 12 bits: y = ln r - (k/h) ln base
        - (k/(h-1)) ln g, each logarithm within 2 units and each product
        floored, is off by at most 8 units of G2, half a unit of G; rounded
        to G bits, by 1 unit, a relative 1.01 * 2**-G on exp(y); _exp adds
        less than 2**-G.  Rounding W to F bits adds 0.72 * 2**-F.
        """
        key = (exponent[0], 0, F)
        found = self.frequencies.get(key)
        if found is not None:
            return found
        if len(self.frequencies) > 4 * _CACHE_LIMIT:
            self.frequencies.clear()
        k = exponent[0]
        h = self.pairs
        if self.blend is not None and self.blend.blends(k):
            found = self.blend.frequency(k, F)
        else:
            G = F + 8
            G2 = G + 4
            y = 0
            r = self.multipliers[k]
            if r != (1, 1):
                y += _ln_ratio(r, G2)
            if k:
                y -= (k * _ln_ratio(self.base, G2)) // h
                if self.growth is not None:
                    y -= (k * _ln_ratio(self.growth, G2)) // (h - 1)
            W, e = _exp(_round_shift(y, G2 - G), G)
            found = (_round_shift(W, G - F), e)
        self.frequencies[key] = found
        return found


def _ln_ratio(ratio: "_Fraction", F: int) -> int:
    """ln(n/m) * 2**F for positive integers n, m; error at most 2 units."""
    n, m = ratio
    return _ln(n, 0, F) - (_ln(m, 0, F) if m != 1 else 0)


_LOGARITHMS: "Dict[Tuple[int, int, int], int]" = {}


def _ln(mantissa: int, exponent: int, F: int) -> int:
    """ln(mantissa * 2**exponent) * 2**F for an integer mantissa >= 1; error at most 1 unit.

    With k = bit_length(mantissa) - 1 and x = mantissa / 2**k in [1, 2):
    ln x = 2 atanh((x - 1) / (x + 1)), the ratio at most 1/3, and the
    logarithm is ln x + (k + exponent) ln 2.  At F + _GUARD bits the error is
    2 e1 + |k + exponent| e2 (e1, e2 the series' bounds), at most about 2**24
    units of that grid for any float or any integer below 2**1024.
    """
    key = (mantissa, exponent, F)
    cached = _LOGARITHMS.get(key)
    if cached is not None:
        return cached
    fine = F + _GUARD
    k = _bit_length(mantissa) - 1
    one = 1 << k
    series = _atanh_fixed(mantissa - one, mantissa + one, fine)  # (ln x) / 2, error e1 units of the fine grid
    ln2 = _ln2_fixed(fine)  # error e2 units of the fine grid
    # error 2 e1 + |k + exponent| e2 of the fine grid, below a quarter unit; + half a unit (the rounding)
    result = _round_shift(2 * series + (k + exponent) * ln2, _GUARD)
    if len(_LOGARITHMS) > _CACHE_LIMIT:
        _LOGARITHMS.clear()
    _LOGARITHMS[key] = result
    return result


def _exp(y: int, F: int) -> "_Scaled":
    """Return (W, k) with exp(y / 2**F) = W * 2**(k - F) * (1 + rho), |rho| < 2**-F.

    W lies in [0.7, 1.42] * 2**F.  With y taken as exact: k = round(y / ln 2)
    and r = y - k ln 2 (|r| <= 0.35 + tiny), whose error is |k| e(ln 2) units
    of the fine grid; exp(r) by Taylor, each term floored from the last
    (error < 3 units each, the tail after a zero term < 1 unit).  The fine
    grid has F + _GUARD + E bits, E the bits of |y| above the point, so that
    |k| < 2**(E + 1) keeps |k| e(ln 2) below 2**(E + 2) (F + _GUARD + E + 5)
    units, a small fraction of 2**(_GUARD + E).  Relative to exp(r) >= 0.7
    these stay below 2**-(F+2); rounding W to F bits adds at most 0.72 * 2**-F.
    """
    guard = _GUARD + _bit_length((y if y >= 0 else -y) >> F)  # _GUARD + E
    fine = F + guard
    ln2 = _ln2_fixed(fine)  # error e(ln 2) < 2 (fine + 5) units of the fine grid (_ln2_fixed's, fine / 3.17 + 1 terms)
    y_fine = y << guard  # exact
    k = (2 * y_fine + ln2) // (2 * ln2)  # round(y / ln 2), |k| < 2**(E + 1)
    r = y_fine - k * ln2  # error |k| e(ln 2) < 2**(E + 2) (fine + 5) units, below 2**(guard - 3) for fine < 2**35
    total = term = 1 << fine
    n = 1
    while term:
        term = ((term * r) >> fine) // n  # error < 3 units a term: |r| < 0.35 shrinks the carried error
        total += term
        n += 1
    # error < 3 units a term + 1 (the tail) + r's, relative to exp(r) >= 0.7 below 2**-(F+2); + half a unit (rounding)
    return _round_shift(total, guard), k


def _ln2_fixed(F: int) -> int:
    """ln 2 * 2**F = 2 atanh(1/3) * 2**F; error below 2 (3k + 2) units, k the series' terms (about F / 3)."""
    return 2 * _atanh_fixed(1, 3, F)


def _atanh_fixed(numerator: int, denominator: int, F: int) -> int:
    """atanh(n/m) * 2**F for 0 <= n/m <= 1/3; error below 3k + 2 units over its k terms (about F / 3).

    atanh(t) = sum t**(2k+1) / (2k+1).  t is floored (< 1 unit), t**2 floored
    (< 2 units), each power floored from the last (its error stays < 2 as
    t**2 <= 1/9 shrinks the carried error), each term divided once more (< 3
    units per term).  The terms fall by 9 at least, so the tail after a zero
    term is below 9/8 units.
    """
    t = (numerator << F) // denominator  # error < 1 unit (the floor)
    t_squared = (t * t) >> F  # error < 2/3 (t's, times 2 t <= 2/3) + 1 (the floor) < 2 units
    power = t
    total = 0
    k = 0
    while power:
        total += power // (2 * k + 1)  # error < 2 (carried in power) + 1 (this floor) = 3 units a term
        power = (power * t_squared) >> F  # error < 2/9 (carried, times t**2) + 2/3 (t_squared's) + 1 < 2 units
        k += 1
    return total  # error < 3 units a term + 9/8 (the tail after a zero term)


def _round_shift(x: int, bits: int) -> int:
    """Return x / 2**bits rounded to nearest (error at most half a unit)."""
    return (x + (1 << (bits - 1))) >> bits if bits > 0 else x << -bits


# ---------------------------------------------------------------------------
# Exact numbers: fractions (numerator, denominator > 0) in lowest terms
# ---------------------------------------------------------------------------


def _add(x: "_Fraction", y: "_Fraction", k: int = 1) -> "_Fraction":
    """x + k y."""
    return _reduced(x[0] * y[1] + k * y[0] * x[1], x[1] * y[1])


def _to_float(x: "_Fraction") -> float:
    """The nearest float (within an ulp past 2**1000; infinite past float64's range), for the fast path and the diagnosis."""
    n, m = x
    a = -n if n < 0 else n
    if a < 1 << 1000 and m < 1 << 1000:
        return n / m if m != 1 else float(n)
    # MicroPython turns each int into a float before dividing: divide 64-bit
    # leading parts, and scale by the power of two.
    shift_a, shift_m = _bit_length(a) - 64, _bit_length(m) - 64
    a = a >> shift_a if shift_a > 0 else a << -shift_a
    m = m >> shift_m if shift_m > 0 else m << -shift_m
    try:
        result = math.ldexp(a / m, shift_a - shift_m)
    except OverflowError:
        result = _INF
    return -result if n < 0 else result


def _rational(name: str, x: object) -> "_Fraction":
    """x as an exact fraction, or TypeError / ValueError naming ``name``.

    An int is itself; a float the binary number it holds; an object with
    integer ``numerator`` and ``denominator`` (``fractions.Fraction``) or an
    ``as_integer_ratio`` (``decimal.Decimal``, numpy's floats) that ratio; a
    string a decimal (``"999.5"``, ``"-1e-4"``) or a fraction (``"1/3"``).
    """
    if isinstance(x, bool):
        raise TypeError(f"{name} must be a real number, got bool {x!r}")
    if isinstance(x, int):
        return x, 1
    if isinstance(x, float):
        return _float_ratio(name, x)
    if isinstance(x, str):
        return _parse_number(name, x)
    numerator, denominator = getattr(x, "numerator", None), getattr(x, "denominator", None)
    if isinstance(numerator, int) and isinstance(denominator, int) and denominator > 0:
        return _reduced(numerator, denominator)
    index = getattr(type(x), "__index__", None)
    if index is not None:
        try:
            return index(x), 1
        except TypeError:
            pass  # a 0-d array of floats has an __index__ that refuses
    ratio = getattr(x, "as_integer_ratio", None)
    if ratio is not None:
        try:
            n, m = ratio()
        except (ValueError, OverflowError):
            raise ValueError(f"{name} must be finite, got {_short(x)}") from None
        return _reduced(n, m)
    to_float = getattr(type(x), "__float__", None)
    if to_float is not None:
        try:
            return _float_ratio(name, float(to_float(x)))
        except TypeError:
            pass  # complex, before Python 3.10
    raise TypeError(f"{name} must be a real number, got {type(x).__name__} {_short(x)}")


def _float_ratio(name: str, x: float) -> "_Fraction":
    if not -_INF < x < _INF:
        raise ValueError(f"{name} must be finite, got {x!r}")
    if x == 0.0:
        return 0, 1
    m, e = _float_parts(-x if x < 0.0 else x)
    if x < 0.0:
        m = -m
    return (m << e, 1) if e >= 0 else _reduced(m, 1 << -e)


def _parse_number(name: str, text: str) -> "_Fraction":
    """A decimal (digits, a point, an exponent) or a fraction "n/m" of two decimals, exactly; no float() involved."""
    decimals: "List[_Fraction]" = []
    for part in text.strip().split("/"):
        decimal = _parse_decimal(part)
        if decimal is None or len(decimals) == 2:
            raise ValueError(f"{name} must be a decimal or a fraction such as '999.5' or '1/3', got {_short(text)}")
        decimals.append(decimal)
    if len(decimals) == 1:
        return decimals[0]
    (a, b), (c, d) = decimals
    if c == 0:
        raise ValueError(f"{name} must have a denominator other than 0, got {_short(text)}")
    return _reduced(a * d * (1 if c > 0 else -1), b * abs(c))


def _parse_decimal(text: str) -> "Optional[_Fraction]":
    """A decimal such as '-1.5e3' as a fraction, or None if it is not one."""
    body = text.strip()
    sign = 1
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    mantissa, exponent = body, 0
    for marker in ("e", "E"):
        if marker in body:
            mantissa, _, power = body.partition(marker)
            digits = power[1:] if power[:1] in ("+", "-") else power
            if not _is_decimal_integer(digits) or len(digits) > 6:
                return None
            exponent = -int(digits) if power[0] == "-" else int(digits)
    whole, _, fraction = mantissa.partition(".")
    if not _is_decimal_integer(whole + fraction):
        return None
    n = sign * int(whole + fraction)
    exponent -= len(fraction)
    return (n * 10**exponent, 1) if exponent >= 0 else _reduced(n, 10**-exponent)


def _reduced(n: int, m: int) -> "_Fraction":
    divisor = _gcd(n, m)
    return n // divisor, m // divisor


def _short(given: object) -> str:
    """Return ``repr(value)``, cut short when it would swamp a message."""
    text = repr(given)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


def _number(x: "_Fraction") -> "Union[int, float, str]":
    """A fraction as a user reads it back: an int, a float if it is one exactly, else a decimal or "n/m" string."""
    n, m = x
    if m == 1:
        return n
    if m & (m - 1) == 0 and -(1 << 53) < n < 1 << 53 and m <= 1 << 1074:
        return _make_float(n < 0, abs(n), 1 - _bit_length(m))
    return _fraction_text(x)


def _fraction_text(x: "_Fraction") -> str:
    """A fraction as text: an integer, a terminating decimal, or "n/m"."""
    n, m = x
    if m == 1:
        return str(n)
    twos = fives = 0
    rest = m
    while rest % 2 == 0:
        rest //= 2
        twos += 1
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1 or max(twos, fives) > 30:
        return f"{n}/{m}"
    places = max(twos, fives)
    digits = str(abs(n) * 10**places // m)
    digits = "0" * (places + 1 - len(digits)) + digits  # MicroPython's str has no rjust
    return ("-" if n < 0 else "") + digits[:-places] + "." + digits[-places:]


def _is_decimal_integer(text: str) -> bool:
    # Stricter than int(): no sign, spaces, underscores or non-ASCII digits.
    return bool(text) and all("0" <= c <= "9" for c in text)


# ---------------------------------------------------------------------------
# Binary formats: IEEE 754 bits, and rounding to float64, float32, bfloat16, float16
# ---------------------------------------------------------------------------


# name: (bits of precision, counting the leading one; smallest normal exponent;
# exponent field width).  The total width is 1 + exponent bits + precision - 1.
_DTYPES = {
    "float64": (53, -1022, 11),
    "float32": (24, -126, 8),
    "bfloat16": (8, -126, 8),
    "float16": (11, -14, 5),
}


def _bit_pattern(x: float, dtype: str) -> int:
    """The IEEE bits of x in dtype, which must hold x exactly."""
    precision, emin, exponent_bits = _DTYPES[dtype]
    width = exponent_bits + precision
    sign = 1 << (width - 1) if x < 0.0 or (x == 0.0 and _float_bits(x) >> 63) else 0
    if x == 0.0:
        return sign
    if x in (_INF, -_INF):
        return sign | ((1 << exponent_bits) - 1) << (precision - 1)
    m, e = _float_parts(-x if x < 0.0 else x)
    top = _bit_length(m) - 1 + e
    if top >= emin:
        # Normal: the leading bit is implicit.
        fraction = (
            (m << (precision - _bit_length(m))) if _bit_length(m) <= precision else m >> (_bit_length(m) - precision)
        )
        return sign | (top - emin + 1) << (precision - 1) | (fraction - (1 << (precision - 1)))
    shift = e - (emin - precision + 1)
    return sign | (m << shift if shift >= 0 else m >> -shift)


def _round_fraction(fraction: "_Fraction", dtype: str) -> float:
    """The fraction n/m (m > 0) rounded to nearest in dtype; more bits until decided (a non-dyadic n/m is no midpoint)."""
    n, m = fraction
    F = _DTYPES[dtype][0] + 16 + _bit_length(m)
    while True:
        v = (n << F) // m
        exact = v * m == n << F
        result = _round_fixed(v, F, 0 if exact else 1, dtype)
        if result is not None:
            return result
        F *= 2


def _narrowest_format(table: "_Table", dtype: str) -> "Optional[str]":
    """The narrowest format narrower than dtype that holds every value of a table with some non-trivial value, or None."""
    found = None
    for narrow in ("float32", "float16", "bfloat16"):  # fewer bits of precision each
        if _DTYPES[narrow][0] >= _DTYPES[dtype][0] or narrow == dtype:
            continue
        if all(_round_row(row, narrow) == row for row in table):
            found = narrow
    if found is not None and all(x in (0.0, 1.0, -1.0) for row in table for x in row):
        return None  # zeros and ones are every format's
    return found


def _five_bits(x: float, up: bool) -> float:
    """x >= 0 to 5 significant bits, rounded down (up if up): within 1/16 of x, the same for its band (0 stays 0).

    The oracle and the diagnosis make a bound once per band of positions, at the band's end that
    keeps it a bound for every position in the band: the start for what grows with the position,
    the end for what must cover it.

    >>> _five_bits(1000.0, False), _five_bits(1000.0, True), _five_bits(33.0, True)
    (992.0, 1024.0, 34.0)
    """
    m, e = math.frexp(x)
    return math.ldexp(float(math.ceil(m * 32) if up else math.floor(m * 32)), e - 5)


def _round_row(row: "List[float]", dtype: str) -> "List[float]":
    """Round each value to dtype, to nearest, ties to even; beyond its range, to infinity."""
    if dtype == "float64":
        return row
    import struct

    code = "f" if dtype == "float32" else "e" if dtype == "float16" else ""
    try:
        if code:
            layout = f"<{len(row)}{code}"
            return list(struct.unpack(layout, struct.pack(layout, *row)))
        return _round_row_to_bfloat16(row)
    except (OverflowError, struct.error):
        pass  # beyond the format's range, or no such code (MicroPython): one by one
    return [_round_float(x, dtype) if -_INF < x < _INF else x for x in row]


def _round_row_to_bfloat16(row: "List[float]") -> "List[float]":
    """Round to bfloat16 on the float64 bits: keep 8 significant bits, to nearest, ties to even.

    Adding 2**44 - 1 plus the last kept bit, then clearing the 45 bits below
    it, rounds the significand to nearest even; a carry moves into the
    exponent as it should.  That holds for zero and where bfloat16 is normal,
    2**-126 <= |x| < 2**128 (biased float64 exponents 897 to 1150); anything
    else, and a carry to 2**128, raises OverflowError for the one-by-one path.
    """
    import struct

    layout = f"<{len(row)}"
    bits = struct.unpack(layout + "Q", struct.pack(layout + "d", *row))
    rounded = []
    for b in bits:
        if not b & 0x7FFFFFFFFFFFFFFF:
            rounded.append(b)  # a zero of either sign
            continue
        if not 897 <= (b >> 52) & 0x7FF <= 1150:
            raise OverflowError("outside bfloat16's normal range")
        b = ((b + 0xFFFFFFFFFFF + ((b >> 45) & 1)) >> 45) << 45
        if (b >> 52) & 0x7FF > 1150:
            raise OverflowError("beyond bfloat16's range")
        rounded.append(b)
    return list(struct.unpack(layout + "d", struct.pack(layout + "Q", *rounded)))


def _round_float(x: float, dtype: str) -> float:
    """Round a float64 to dtype, to nearest, ties to even (x itself if dtype is float64)."""
    if dtype == "float64" or x == 0.0:
        return x
    negative = x < 0.0
    m, e = _float_parts(-x if negative else x)
    # m / 2**-e exactly: shift so that the exponent is a fraction-bit count.
    rounded = (
        _round_fixed(-m if negative else m, -e, 0, dtype)
        if e <= 0
        else _round_fixed(-(m << e) if negative else m << e, 0, 0, dtype)
    )
    assert rounded is not None
    return rounded


def _float_parts(x: float) -> "_Dyadic":
    """Return (m, e) with x = m * 2**e exactly, for a finite float x > 0 (read from its bits)."""
    bits = _float_bits(x)
    biased = (bits >> 52) & 0x7FF
    fraction = bits & ((1 << 52) - 1)
    if biased:
        return fraction | (1 << 52), biased - 1075
    return fraction, -1074


def _float_bits(x: float) -> int:
    import struct

    bits: int = struct.unpack("<Q", struct.pack("<d", x))[0]
    return bits


def _round_fixed(v: int, F: int, error: int, dtype: str) -> "Optional[float]":
    """Round the real v / 2**F, known within error units, to dtype; None if undecided.

    This is the Ziv test: when error > 0 the interval [v - error, v + error]
    must not contain a rounding boundary of the format (a midpoint between
    two of its numbers, or where its spacing changes), else the answer is
    None and the caller tries again with more bits.  With error == 0 the value
    is exact and is rounded to nearest, ties to even.  Subnormals get the
    format's fixed smallest spacing.
    """
    precision, emin, _ = _DTYPES[dtype]
    negative = v < 0
    a = -v if negative else v
    if a == 0 and error == 0:
        return 0.0
    top = _bit_length(a) - 1 - F  # exponent of a's leading bit
    quantum = (top if top > emin else emin) - precision + 1
    shift = quantum + F  # bits of a below the format's last place
    if shift <= 0:
        if error:
            return None
        return _finite_or_infinite(negative, a << -shift, quantum, precision, emin)
    if error:
        # Rounding boundaries are multiples of half a last place: none may
        # lie in (a - error, a + error].
        low = (a - error) >> (shift - 1)
        if low != (a + error) >> (shift - 1):
            return None
        m = (low + 1) >> 1
    else:
        m = a >> shift
        rest = a - (m << shift)
        half = 1 << (shift - 1)
        if rest > half or (rest == half and m & 1):
            m += 1
    return _finite_or_infinite(negative, m, quantum, precision, emin)


def _finite_or_infinite(negative: bool, m: int, quantum: int, precision: int, emin: int) -> float:
    """m * 2**quantum, rounded already, or infinity when it is past the format's largest number (2**(1 - emin) * 2).

    A value rounds to infinity exactly when its rounding to the format's
    precision, with an unbounded exponent, reaches 2**(emax + 1).
    """
    if m and _bit_length(m) + quantum > 2 - emin:
        return -_INF if negative else _INF
    return _make_float(negative, m, quantum)


def _make_float(negative: bool, m: int, q: int) -> float:
    """Return (-1)**negative * m * 2**q, a value float64 holds exactly (m <= 2**53).

    float(m) is exact for m <= 2**53, and scaling by a power of two whose
    product is representable is exact in IEEE arithmetic.
    """
    if m == 0:
        return -0.0 if negative else 0.0
    result = float(m) * _power_of_two(q)
    return -result if negative else result


def _addition_rounds_once() -> bool:
    """Whether a float addition is rounded once to float64, as IEEE 754 says, and not twice.

    The x87 unit (32-bit x86 without SSE2) adds in 64-bit significands and
    rounds again when the result is stored: 1 + (2**-53 + 2**-78) becomes
    1 + 2**-53, a tie, then 1.0, where the true rounding is 1 + 2**-52.
    There the float64 finish is not used; every value is built from
    integers instead (_round_fixed).
    """
    if "rounds once" not in _RUNTIME:
        one = _power_of_two(0)
        _RUNTIME["rounds once"] = one + (_power_of_two(-53) + _power_of_two(-78)) == one + _power_of_two(-52)
    return _RUNTIME["rounds once"]


def _single_precision() -> bool:
    """Whether this runtime's floats are single precision, as MicroPython's on most boards (ESP32, RP2040...).

    There a float64 cannot be held, so exact float64 values are refused;
    float32, bfloat16 and float16 values are built from integers as
    everywhere, and have the same bits.  Decided at run time (a constant
    folded by a cross-compiler would answer for its host).
    """
    if "single" not in _RUNTIME:
        one = _power_of_two(0)
        _RUNTIME["single"] = one + _power_of_two(-30) == one
    return _RUNTIME["single"]


_POWERS_OF_TWO: "Dict[int, float]" = {}


def _power_of_two(e: int) -> float:
    """2.0**e for -1074 <= e <= 1023, built from its bits."""
    found = _POWERS_OF_TWO.get(e)
    if found is None:
        bits = (e + 1023) << 52 if e >= -1022 else 1 << (e + 1074)
        found = _POWERS_OF_TWO[e] = _float_from_bits(bits)
    return found


def _float_from_bits(bits: int) -> float:
    import struct

    result: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return result


# ---------------------------------------------------------------------------
# Portability: what runtimes differ in, decided once
# ---------------------------------------------------------------------------


#: What this runtime's floats do, each decided once, on first use, by the function that asks.
_RUNTIME: "Dict[str, bool]" = {}


# Infinity and NaN, made at run time: MicroPython's compiler folds math.inf into a constant that
# its freezer writes as C text that does not compile, so a module frozen into firmware cannot use it.
_INF = float("inf")


_NAN = _INF - _INF


class _NeverRaised(Exception):
    """Stands in for an exception class a runtime lacks (MicroPython has no BrokenPipeError)."""


try:
    _BROKEN_PIPE: "Type[BaseException]" = BrokenPipeError
except NameError:
    _BROKEN_PIPE = _NeverRaised


def _bit_length_portable(n: int) -> int:
    # MicroPython's int has no bit_length.
    return len(bin(n)) - 2 if n else 0


_bit_length: "Callable[[int], int]" = getattr(int, "bit_length", _bit_length_portable)


def _gcd_portable(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a if a >= 0 else -a


# MicroPython's math has no gcd.
_gcd: "Callable[[int, int], int]" = getattr(math, "gcd", _gcd_portable)


def _extended_slices() -> bool:
    """Whether lists take assignment to a slice with a step (MicroPython's do not)."""
    row = [0.0, 0.0]
    try:
        row[0::2] = [1.0]
    except NotImplementedError:
        return False
    return True


_EXTENDED_SLICES = _extended_slices()


def _garbage_collector() -> "Optional[Callable[[], object]]":
    """gc.collect on a MicroPython heap of at most 512 KB, as a board's; else None.

    MicroPython collects only when its heap is full, and by then the floats
    of a table's rows lie scattered among the garbage of the big-integer
    arithmetic that made them: the holes between them are too small for the
    next rows' lists.  Collecting after each exact row keeps the rows packed;
    on a 32-bit board build it cuts the heap encoding(64, 64, exact=True)
    needs by nearly half (benchmarks/board_heap.py).  A collection costs
    time in proportion to the heap, so a larger heap, which can spare the
    room, is left alone.
    """
    import sys

    if sys.implementation.name != "micropython":
        return None
    import gc

    heap: int = getattr(gc, "mem_free")() + getattr(gc, "mem_alloc")()  # MicroPython's, not CPython's
    return gc.collect if heap <= 512 * 1024 else None


_COLLECT_GARBAGE = _garbage_collector()


# The entries a cache of exact constants may hold before it is emptied (a
# law's frequencies may hold four times as many): a desktop spares thousands,
# a board's heap only a few (on a 32-bit build each is about 100 bytes).
_CACHE_LIMIT = 1024 if _COLLECT_GARBAGE is None else 2


# The frameworks' conventions by name, made last: they use the portability decisions above.
PRESETS = _make_presets()


if __name__ == "__main__":
    raise SystemExit(main())
