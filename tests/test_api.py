"""The public functions: shapes, values against mpmath, and agreement with each other."""

import builtins
import math
import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Set, Tuple

import mpmath
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import pe_reference
from pe_reference import compare, derivation, encoding, rows, value
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


# ---------------------------------------------------------------------------
# Properties of every mode and convention (hypothesis)
# ---------------------------------------------------------------------------


DTYPES = ["float64", "float32", "bfloat16", "float16"]
# The presets as docs/checking.md states them: (layout, spacing, start, odd).
PRESETS: Dict[str, Tuple[str, str, int, str]] = {
    "paper": ("interleaved", "paper", 0, "sine"),
    "tensor2tensor": ("sin-cos", "tensor2tensor", 0, "zero"),
    "fairseq": ("sin-cos", "tensor2tensor", 2, "zero"),
    "tf-tutorial": ("sin-cos", "paper", 0, "error"),
    "guided-diffusion": ("cos-sin", "paper", 0, "zero"),
    "xlm": ("interleaved", "paper", 0, "sine"),
    "keras-hub": ("interleaved", "paper", 0, "sine"),
    "marian": ("sin-cos", "paper", 0, "sine"),
    "gpt-j": ("sin-cos", "paper", 0, "error"),
    "whisper": ("sin-cos", "tensor2tensor", 0, "error"),
    "m2m100": ("sin-cos", "tensor2tensor", 2, "zero"),
}

conventions = st.fixed_dictionaries(
    {},
    optional={
        "layout": st.sampled_from(["interleaved", "sin-cos", "cos-sin"]),
        "spacing": st.sampled_from(["paper", "tensor2tensor"]),
        "start": st.integers(0, 10**6),
        "odd": st.sampled_from(["sine", "zero"]),
        "preset": st.sampled_from(list(PRESETS)),
    },
)
bases = st.sampled_from([10000.0, 10000, 500000.0, 12345.678, 100.0, 2.5, 0.5])


def fits(keywords: Dict[str, Any], d_model: int) -> bool:
    """False for the one refused combination: an odd width in a convention with no odd rule."""
    odd = keywords.get("odd") or PRESETS[keywords.get("preset", "paper")][3]
    return not (odd == "error" and d_model % 2)


@given(
    seq_len=st.integers(1, 12),
    d_model=st.integers(1, 24),
    keywords=conventions,
    base=bases,
    exact=st.booleans(),
    dtype=st.sampled_from(DTYPES),
    data=st.data(),
)
def test_value_equals_the_table_element(
    seq_len: int, d_model: int, keywords: Dict[str, Any], base: float, exact: bool, dtype: str, data: Any
) -> None:
    assume(fits(keywords, d_model))
    table = encoding(seq_len, d_model, base=base, exact=exact, dtype=dtype, **keywords)
    pos = data.draw(st.integers(0, seq_len - 1))
    dim = data.draw(st.integers(0, d_model - 1))
    got = value(pos, dim, d_model, base=base, exact=exact, dtype=dtype, **keywords)
    assert struct.pack("<d", got) == struct.pack("<d", table[pos][dim])
    assert list(rows(seq_len, d_model, base=base, exact=exact, dtype=dtype, **keywords)) == table


@given(
    pos=st.one_of(st.integers(1, 5000), st.integers(1, 10**9), st.integers(10**9, 10**15)),
    d_model=st.integers(1, 8192),
    base=bases,
    dtype=st.sampled_from(DTYPES),
    data=st.data(),
)
def test_exact_values_are_the_nearest(pos: int, d_model: int, base: float, dtype: str, data: Any) -> None:
    dim = data.draw(st.integers(0, d_model - 1))
    got = value(pos, dim, d_model, base=base, exact=True, dtype=dtype)
    true = reference.element(pos, dim, d_model, base)
    below, above = reference.neighbours(got, dtype)
    with mpmath.workprec(reference.PRECISION):
        distance = abs(mpmath.mpf(got) - true)
        assert distance < abs(mpmath.mpf(below) - true)
        assert distance < abs(mpmath.mpf(above) - true)


@given(
    pos=st.integers(0, 10**9),
    d_model=st.integers(1, 2048),
    base=st.sampled_from([10000.0, 500000.0, 12345.678, 100.0, 2.5, 10**6]),
    keywords=conventions,
    data=st.data(),
)
def test_fast_path_within_its_bound(pos: int, d_model: int, base: float, keywords: Dict[str, Any], data: Any) -> None:
    # docs/accuracy.md: abs(fast - exact) <= 2**-48 (1 + angle) + 2**-50, bases up to 10**6.
    assume(fits(keywords, d_model))
    dim = data.draw(st.integers(0, d_model - 1))
    fast = value(pos, dim, d_model, base=base, **keywords)
    exact = value(pos, dim, d_model, base=base, exact=True, **keywords)
    convention = pe_reference._convention("value", d_model, None, dict(keywords))
    kind, pair = convention._column(dim, d_model)
    a, b = convention._exponents(d_model)[pair] if kind != 2 else (0, 1)
    angle = pe_reference._to_float(convention._position(pos, None)) / base ** (a / b)
    assert abs(fast - exact) <= 2.0**-48 * (1 + angle) + 2.0**-50


@given(
    pos=st.integers(0, 10**12),
    d_model=st.integers(2, 512),
    base=bases,
    exact=st.booleans(),
    dtype=st.sampled_from(["float64", "float32"]),
    data=st.data(),
)
def test_each_pair_is_on_the_unit_circle(
    pos: int, d_model: int, base: float, exact: bool, dtype: str, data: Any
) -> None:
    # Both columns of a pair come from one angle: sin^2 + cos^2 = 1 within the format's rounding,
    # 2**-50 for float64 and 2**-21 for float32 (two values each within an ulp, and the arithmetic).
    pair = data.draw(st.integers(0, d_model // 2 - 1))
    s = value(pos, 2 * pair, d_model, base=base, exact=exact, dtype=dtype)
    c = value(pos, 2 * pair + 1, d_model, base=base, exact=exact, dtype=dtype)
    assert abs(s * s + c * c - 1.0) <= (2.0**-50 if dtype == "float64" else 2.0**-21)


@given(
    seq_len=st.integers(1, 30),
    d_model=st.integers(1, 16),
    dtype=st.sampled_from(DTYPES),
    change=st.floats(1e-3, 1.0),
    down=st.booleans(),
    data=st.data(),
)
def test_compare_finds_the_one_perturbed_element(
    seq_len: int, d_model: int, dtype: str, change: float, down: bool, data: Any
) -> None:
    table = encoding(seq_len, d_model, exact=True, dtype=dtype)
    r, c = data.draw(st.integers(0, seq_len - 1)), data.draw(st.integers(0, d_model - 1))
    original = table[r][c]
    table[r][c] += -change if down else change
    # compare() rounds what it reads to dtype: a change that rounds away is no change.
    assume(reference.round_to(mpmath.mpf(table[r][c]), dtype, exact=True) != original)
    # atol=0: the default tolerance of a narrow format may be as large as the change.
    report = compare(table, dtype=dtype, atol=0)
    assert report.failures == 1
    assert report.worst is not None and report.worst[:2] == (r, c)


@given(
    preset=st.sampled_from(list(PRESETS)), seq_len=st.integers(1, 10), d_model=st.integers(1, 20), exact=st.booleans()
)
def test_presets_equal_their_explicit_choices(preset: str, seq_len: int, d_model: int, exact: bool) -> None:
    layout, spacing, start, odd = PRESETS[preset]
    assume(not (odd == "error" and d_model % 2))
    named = encoding(seq_len, d_model, preset=preset, exact=exact)
    explicit = encoding(seq_len, d_model, layout=layout, spacing=spacing, start=start, odd=odd, exact=exact)
    assert named == explicit
