"""The public functions: shapes, values against mpmath, and agreement with each other."""

import builtins
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Dict, Set

import pytest

import pe_reference
from pe_reference import derivation, encoding, rows, value
from tests import reference


def fast_path_bound(pos: int, dim: int, d_model: int, base: float) -> float:
    # The float64 angle pos / base**(2i/d) carries a relative error of a few
    # units of 2**-53 (exponent rounding, pow, division): bound it by 16 of
    # them, plus one ulp for sin/cos.  Generous on purpose: exact mode (and
    # docs/accuracy.md) measure the real figures.
    angle = pos / math.pow(base, (2 * (dim // 2)) / d_model)
    return 16 * 2.0**-53 * angle + 2.0**-52


@pytest.mark.parametrize("seq_len, d_model", [(1, 1), (4, 4), (3, 5), (17, 64), (2, 513)])
def test_table_shape(seq_len: int, d_model: int) -> None:
    table = encoding(seq_len, d_model)
    assert len(table) == seq_len
    assert all(len(row) == d_model for row in table)
    assert all(type(x) is float for row in table for x in row)


def test_empty_table() -> None:
    assert encoding(0, 4) == []
    assert list(rows(0, 7)) == []


def test_position_zero_is_exact() -> None:
    assert encoding(1, 8) == [[0.0, 1.0] * 4]
    assert encoding(1, 7) == [[0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]]


@pytest.mark.parametrize("base", [10000.0, 500000.0, 100.0, 2.5, 0.5, 10000])
def test_values_match_mpmath(base: float) -> None:
    for pos in range(0, 60, 7):
        row = encoding(pos + 1, 32, base=base)[pos]
        for dim, got in enumerate(row):
            want = reference.element(pos, dim, 32, base)
            assert reference.distance(got, want) <= fast_path_bound(pos, dim, 32, base), (pos, dim)


def test_columns_are_sine_then_cosine_of_one_angle() -> None:
    # The defining property of the interleaved layout: columns 2i and 2i+1
    # share one angle, so sin^2 + cos^2 = 1 for each pair.
    for row in encoding(50, 16):
        for pair in range(8):
            s, c = row[2 * pair], row[2 * pair + 1]
            assert abs(s * s + c * c - 1.0) < 4e-16


def test_frequencies_fall_geometrically() -> None:
    # Pair i turns at angle pos / 10000**(2i/d): at pos = 1 and d = 4 the
    # angles are 1 and 1/100, so column 2 is sin(0.01), not sin(0.1).
    row = encoding(2, 4)[1]
    assert row[0] == math.sin(1.0)
    assert abs(row[2] - math.sin(0.01)) < 1e-18


def test_value_equals_encoding_bit_for_bit() -> None:
    generator = random.Random(20261121)
    shapes = [(9, 1), (9, 4), (9, 7), (40, 128), (12, 511)]
    for seq_len, d_model in shapes:
        for base in (10000.0, 500000.0, 123.456):
            table = encoding(seq_len, d_model, base=base)
            for _ in range(60):
                pos = generator.randrange(seq_len)
                dim = generator.randrange(d_model)
                assert value(pos, dim, d_model, base=base) == table[pos][dim]


def test_rows_equals_encoding() -> None:
    assert list(rows(30, 10)) == encoding(30, 10)
    assert list(rows(5, 9, base=77.0)) == encoding(5, 9, base=77.0)


def test_rows_is_lazy() -> None:
    # A table of 10**12 rows can be started: only one row exists at a time.
    iterator = rows(10**12, 4)
    assert next(iterator) == [0.0, 1.0, 0.0, 1.0]
    assert next(iterator) == encoding(2, 4)[1]


def test_value_at_large_positions() -> None:
    for pos in (10**9, 2**40 + 3, 2**53):
        for dim in (0, 1, 510, 511):
            got = value(pos, dim, 512)
            assert -1.0 <= got <= 1.0
            assert got == (math.sin if dim % 2 == 0 else math.cos)(float(pos) / 10000.0 ** ((2 * (dim // 2)) / 512))
    # Close to the truth where float64 can hold the angle well.
    want = reference.element(10**9, 511, 512, 10000)
    assert reference.distance(value(10**9, 511, 512), want) <= fast_path_bound(10**9, 511, 512, 10000.0)


def test_integer_like_arguments_are_accepted() -> None:
    class Index:
        """An integer type of another library (as numpy.int64 is): it has __index__."""

        def __init__(self, number: int) -> None:
            self.number = number

        def __index__(self) -> int:
            return self.number

    assert encoding(Index(2), Index(4)) == encoding(2, 4)  # type: ignore[arg-type]
    assert value(Index(1), Index(2), Index(4)) == value(1, 2, 4)  # type: ignore[arg-type]


def test_base_may_be_any_real_number_type() -> None:
    from fractions import Fraction

    assert encoding(3, 4, base=Fraction(10000)) == encoding(3, 4)
    assert encoding(3, 4, base=10000) == encoding(3, 4)


def test_odd_d_model_last_column_is_a_sine() -> None:
    for d_model in (1, 3, 5, 513):
        table = encoding(6, d_model)
        last = (d_model - 1) // 2
        for pos, row in enumerate(table):
            assert row[-1] == math.sin(pos / math.pow(10000.0, (2 * last) / d_model))


def test_public_names() -> None:
    assert list(pe_reference.__all__) == sorted(pe_reference.__all__)
    assert set(pe_reference.__all__) == {
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
    }
    assert isinstance(pe_reference.__version__, str)
    for name in pe_reference.__all__:
        function = getattr(pe_reference, name)
        assert function.__doc__ and ">>>" in function.__doc__ or name in ("main", "Report", "PRESETS")


def test_derivation_value_is_the_value() -> None:
    for pos, dim, d_model in [(0, 0, 4), (3, 3, 4), (1000, 5, 6), (7, 6, 7)]:
        text = derivation(pos, dim, d_model)
        assert text.endswith(repr(value(pos, dim, d_model)))


def test_module_uses_no_other_runtime_module() -> None:
    # The vendorable-file promise: only math is imported at the top.
    import ast
    from pathlib import Path

    tree = ast.parse(Path(pe_reference.__file__).read_text(encoding="utf-8"))
    top_imports: Set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top_imports.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            top_imports.add(str(node.module))
    assert top_imports == {"math"}


# ---------------------------------------------------------------------------
# The public functions' and the module header's rules: refusals, imports, stand-ins
# ---------------------------------------------------------------------------


ROOT = Path(__file__).resolve().parent.parent


def test_derivation_refuses_d_model_0_by_naming_d_model() -> None:
    with pytest.raises(ValueError, match="^d_model must be at least 1, got 0$"):
        derivation(0, 0, 0)


def test_importing_the_module_loads_neither_typing_nor_argparse() -> None:
    # MicroPython has neither: the annotations' imports run only under a type checker, argparse only in main().
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import pe_reference; "
        "print(sorted(m for m in ('typing', 'argparse') if m in sys.modules))"
    )
    process = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(ROOT)], capture_output=True, text=True, check=False
    )
    assert (process.returncode, process.stdout, process.stderr) == (0, "[]\n", "")


def test_without_brokenpipeerror_a_class_never_raised_stands_in_for_it() -> None:
    # MicroPython has no BrokenPipeError: the module, run where the name is missing, catches a class nothing raises.
    names: Dict[str, object] = {name: getattr(builtins, name) for name in dir(builtins) if name != "BrokenPipeError"}
    namespace: Dict[str, object] = {"__builtins__": names, "__name__": "pe_reference_without_brokenpipeerror"}
    path = Path(pe_reference.__file__)
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102 (the module itself)
    assert namespace["_BROKEN_PIPE"] is namespace["_NeverRaised"]
    assert pe_reference._BROKEN_PIPE is BrokenPipeError


def test_the_portable_gcd_for_runtimes_without_math_gcd_agrees_with_math_gcd() -> None:
    # MicroPython's math has no gcd: the module then uses its own, which must give the same numbers.
    generator = random.Random(14)
    pairs = [(0, 0), (0, 5), (5, 0), (-12, 18), (12, -18), (2**100 * 3, 2**90 * 9), (1, 1)]
    pairs += [(generator.randrange(-(10**30), 10**30), generator.randrange(-(10**30), 10**30)) for _ in range(200)]
    for a, b in pairs:
        assert pe_reference._gcd_portable(a, b) == math.gcd(a, b), (a, b)
