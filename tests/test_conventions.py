"""Conventions: the presets reproduce each framework's table, in the fast and the exact path."""

import itertools
import math
import random
import re
import struct
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, Union

import mpmath
import pytest

import pe_reference
from pe_reference import PRESETS, Convention, compare, encoding, rows, value
from tests import framework_tables as built
from tests import reference
from tests.helpers import assert_call_reproduces, need, peer

# The presets ../shared/conventions.md works out (its d = 4 matrices); pe_reference.PRESETS has them all.
WORKED_PRESETS = ["paper", "tensor2tensor", "fairseq", "tf-tutorial", "guided-diffusion"]
SHARED = Path(__file__).resolve().parents[2] / "shared" / "conventions.md"


@pytest.mark.parametrize("preset", WORKED_PRESETS)
@pytest.mark.parametrize("d_model", [1, 2, 4, 5, 6, 9, 64])
def test_presets_are_exact(preset: str, d_model: int) -> None:
    if preset == "tf-tutorial" and d_model % 2:
        with pytest.raises(ValueError, match="d_model must be even in the tf-tutorial convention"):
            encoding(3, d_model, preset=preset)
        return
    want = reference.convention_table(preset, 12, d_model)
    for dtype in ("float64", "float16"):
        got = encoding(12, d_model, preset=preset, exact=True, dtype=dtype)
        for pos in range(12):
            assert got[pos] == [reference.round_to(x, dtype) for x in want[pos]], (preset, d_model, pos, dtype)


@pytest.mark.parametrize("preset", WORKED_PRESETS)
def test_presets_fast_path_is_close(preset: str) -> None:
    want = reference.convention_table(preset, 50, 16)
    got = encoding(50, 16, preset=preset)
    assert max(abs(g - w) for gr, wr in zip(got, want) for g, w in zip(gr, wr)) < 1e-13


def shared_matrices() -> Dict[str, List[List[float]]]:
    """The d = 4 matrices of ../shared/conventions.md, by their heading's first word."""
    text = SHARED.read_text(encoding="utf-8")
    found = {}
    for heading, block in re.findall(r"^([\w-]+)[^\n]*\n```\n(.*?)```", text, re.S | re.M):
        found[heading] = [[float(x) for x in line.strip(" []").split()] for line in block.strip().splitlines()]
    return found


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/conventions.md beside the repository, as CI lays it")
def test_presets_reproduce_the_shared_matrices() -> None:
    matrices = shared_matrices()
    assert set(matrices) == set(WORKED_PRESETS)
    for preset, matrix in matrices.items():
        for dtype_exact in (False, True):
            table = encoding(4, 4, preset=preset, exact=dtype_exact)
            assert [[round(x, 8) + 0.0 for x in row] for row in table] == matrix, preset


def test_keywords_override_the_preset() -> None:
    assert encoding(6, 8, preset="tensor2tensor", spacing="paper") == encoding(6, 8, preset="tf-tutorial")
    assert encoding(6, 8, preset="tensor2tensor", start=2) == encoding(6, 8, preset="fairseq")
    assert encoding(6, 8, layout="interleaved", spacing="paper", start=0, odd="sine") == encoding(6, 8)
    assert encoding(5, 7, layout="cos-sin", odd="zero")[3][-1] == 0.0


@pytest.mark.parametrize("preset", WORKED_PRESETS)
def test_value_and_rows_agree_with_encoding(preset: str) -> None:
    generator = random.Random(preset)
    for d_model in (4, 6, 7) if preset != "tf-tutorial" else (4, 6, 8):
        for exact in (False, True):
            table = encoding(30, d_model, preset=preset, exact=exact)
            assert list(rows(30, d_model, preset=preset, exact=exact)) == table
            for _ in range(40):
                pos, dim = generator.randrange(30), generator.randrange(d_model)
                assert value(pos, dim, d_model, preset=preset, exact=exact) == table[pos][dim]


def test_exact_conventions_across_anchors() -> None:
    # The recurrence with a padding column and a start offset, past an anchor.
    table = encoding(1030, 5, preset="fairseq", exact=True)
    for pos in (0, 1, 1022, 1023, 1024, 1025, 1029):
        for dim in range(5):
            assert table[pos][dim] == value(pos, dim, 5, preset="fairseq", exact=True)


BAD: List[Tuple[Dict[str, object], Type[Exception], str]] = [
    (
        {"preset": "bert"},
        ValueError,
        "preset must be one of paper, tensor2tensor, fairseq, tf-tutorial, guided-diffusion, xlm, keras-hub, tatp22, marian, gpt-j, transformer-xl, whisper, m2m100, diffusers, pyg, mlx, got 'bert'",
    ),
    ({"preset": 3}, TypeError, "preset must be a str, got int 3"),
    ({"layout": "sin_cos"}, ValueError, "layout must be one of interleaved, sin-cos, cos-sin, got 'sin_cos'"),
    ({"spacing": "t2t"}, ValueError, "spacing must be one of paper, tensor2tensor, got 't2t'"),
    ({"odd": "pad"}, ValueError, "odd must be one of sine, zero, error, round-up, got 'pad'"),
    ({"start": "1.5.2"}, ValueError, "start must be a decimal or a fraction such as '999.5' or '1/3', got '1.5.2'"),
    ({"start": [1]}, TypeError, "start must be a real number, got list [1]"),
    ({"step": 0}, ValueError, "step must not be 0, got 0"),
    ({"base": "-1e4"}, ValueError, "base must be finite and greater than 0, got '-1e4'"),
    ({"scale": "sqrt(-2/d)"}, ValueError, "scale must be greater than 0, got 'sqrt(-2/d)'"),
    ({"shift": 2}, ValueError, "shift goes with spacing tensor2tensor, got shift=2 with spacing paper"),
    ({"colour": "red"}, TypeError, "{function}() got an unexpected keyword argument 'colour'"),
]


@pytest.mark.parametrize("keywords, error, message", BAD)
def test_bad_convention_keywords(keywords: Dict[str, object], error: Type[Exception], message: str) -> None:
    calls: List[Callable[[], object]] = [
        lambda: encoding(2, 4, **keywords),  # type: ignore[arg-type]
        lambda: rows(2, 4, **keywords),  # type: ignore[arg-type]
        lambda: value(1, 1, 4, **keywords),  # type: ignore[arg-type]
    ]
    for name, call in zip(("encoding", "rows", "value"), calls):
        with pytest.raises(error) as caught:
            call()
        assert str(caught.value) == message.replace("{function}", name)


def test_a_convention_shows_its_choices_and_its_formula() -> None:
    convention = pe_reference.Convention(layout="sin-cos", spacing="tensor2tensor", start=2, odd="zero")
    assert repr(convention) == "Convention(layout='sin-cos', spacing='tensor2tensor', base=10000, start=2, odd='zero')"
    assert str(convention) == (
        "PE(p, i) = sin(p * w_i), PE(p, h + i) = cos(p * w_i); w_i = 10000**(-i/(h - 1)); p = 2, 3, 4, ...;"
        " an odd d_model gets a column of zeros"
    )
    assert str(pe_reference.Convention(layout="cos-sin", odd="error")).startswith(
        "PE(p, i) = cos(p * w_i), PE(p, h + i) = sin(p * w_i); w_i = 10000**(-2i/d)"
    )
    every = pe_reference.Convention(
        layout="cos-sin",
        spacing="tensor2tensor",
        shift="0.5",
        base=Fraction(1, 3),
        angle_scale=2.5,
        full_turns=True,
        start=-1,
        step="1/3",
        descending=True,
        odd="round-up",
        scale="sqrt(2/d)",
    )
    assert repr(every) == (
        "Convention(layout='cos-sin', spacing='tensor2tensor', shift=0.5, base='1/3', angle_scale=2.5, full_turns=True,"
        " start=-1, step='1/3', descending=True, odd='round-up', scale='sqrt(2/d)')"
    )
    assert eval(repr(every), {"Convention": pe_reference.Convention}) == every
    assert str(every) == (
        "PE(p, i) = sqrt(2/d) * cos(p * w_i), PE(p, h + i) = sqrt(2/d) * sin(p * w_i);"
        " w_i = 2 pi * 2.5 * 1/3**(-i/(h - 0.5)); p = ..., -1/3, -2/3, -1 (descending: the last row is -1);"
        " an odd d_model is computed as d_model + 1 columns, the last dropped"
    )
    given = pe_reference.Convention(positions=[999.5, "0.3", Fraction(1, 3), 7])
    assert given.positions == (999.5, "0.3", "1/3", 7)
    assert "p = 999.5, 0.3, 1/3, ..." in str(given)


# The one declaration of a Convention's fields, and what follows from it.  Its names are written out here,
# from the paper's and the frameworks' vocabulary, so that a row lost or reordered in _FIELDS fails.
FIELD_NAMES = [
    "layout",
    "spacing",
    "shift",
    "base",
    "angle_scale",
    "full_turns",
    "start",
    "step",
    "descending",
    "positions",
    "odd",
    "scale",
]


def test_the_fields_are_declared_once_and_the_stub_the_types_and_the_options_follow() -> None:
    import argparse
    import ast

    assert [row[0] for row in pe_reference._FIELDS] == FIELD_NAMES
    stub = ast.parse((Path(__file__).parent.parent / "stubs" / "pe_reference-stubs" / "__init__.pyi").read_text())
    classes = {node.name: node for node in stub.body if isinstance(node, ast.ClassDef)}
    init = next(n for n in classes["Convention"].body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert [a.arg for a in init.args.kwonlyargs] == FIELD_NAMES
    properties = [
        n.name
        for n in classes["Convention"].body
        if isinstance(n, ast.FunctionDef)
        and any(isinstance(d, ast.Name) and d.id == "property" for d in n.decorator_list)
    ]
    assert properties == FIELD_NAMES
    changes = [
        n.target.id for n in classes["_Changes"].body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    ]
    assert changes == FIELD_NAMES
    # The module's own static type of the checked fields (its TYPE_CHECKING block).
    module = ast.parse(Path(pe_reference.__file__).read_text(encoding="utf-8"))
    typed = next(
        node.value
        for node in ast.walk(module)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "_Fields"
    )
    assert isinstance(typed, ast.Call) and isinstance(typed.args[1], ast.Dict)
    assert [key.value for key in typed.args[1].keys if isinstance(key, ast.Constant)] == FIELD_NAMES
    # The command line: one option a field, in this order, with the table's help.
    parser = pe_reference._parser("pe_reference", "all")  # every group shown, each option with its help
    options = [a for a in parser._actions if a.dest in FIELD_NAMES]
    assert [a.dest for a in options] == FIELD_NAMES
    assert [a.help for a in options] == [
        "order of the sine and cosine columns",
        "paper: base**(-2i/d); tensor2tensor: base**(-i/(h - shift))",
        "tensor2tensor spacing's shift (default 1)",
        "base of the wavelengths (default 10000)",
        "a factor on every frequency (default 1)",
        "angles in turns: every frequency times 2 pi",
        "the first position (default 0)",
        "from one position to the next (default 1)",
        "positions count down to --start",
        "the positions one by one (SEQ_LEN of them), instead of --start",
        "an odd D_MODEL: one more sine, a zero column, rounded up, or refused",
        "a factor on every value, e.g. 0.5 or sqrt(2/d) (default 1)",
    ]
    # stubtest allows the stub's properties (read through __getattr__ at run time): the same twelve.
    allowed = (Path(__file__).parent.parent / ".ci" / "consumer" / "stubtest-allowlist.txt").read_text()
    assert [line.split(".")[-1] for line in allowed.splitlines() if line and not line.startswith("#")] == FIELD_NAMES
    assert all(isinstance(a, argparse._StoreConstAction) == (a.dest in ("full_turns", "descending")) for a in options)


@pytest.mark.parametrize("text", ["0.2", "0.04", "-0.6", "0.008", "0.0001", "0.3", "1/3", "-7/6"])
def test_a_decimal_or_fraction_given_as_a_string_is_shown_as_given(text: str) -> None:
    # A terminating decimal is shown as one, whatever powers of 2 and 5 its denominator holds (1/5, 1/25,
    # 3/10, 1/125); another fraction as n/m.
    convention = Convention(start=text, step=text)
    assert convention.start == convention.step == text
    assert f"p = {text}, " in str(convention)


def test_each_field_is_read_and_checked_as_its_row_says() -> None:
    # A default is what a Convention() holds; every public attribute is a field, as given.
    plain = Convention()
    assert [getattr(plain, name) for name in FIELD_NAMES] == [
        "interleaved",
        "paper",
        1,
        10000,
        1,
        False,
        0,
        1,
        False,
        None,
        "sine",
        1,
    ]
    given = Convention(spacing="tensor2tensor", shift="1/3", base=0.5, positions=[3, "2.5"], scale="sqrt(2/d)")
    assert (given.shift, given.base, given.positions, given.scale) == ("1/3", 0.5, (3, 2.5), "sqrt(2/d)")
    with pytest.raises(AttributeError, match="no attribute 'basis'"):
        given.basis  # noqa: B018
    # Each kind of check refuses what its row forbids, naming the field.
    for name, bad, error in [
        ("layout", "diagonal", ValueError),
        ("base", 0, ValueError),
        ("angle_scale", -1, ValueError),
        ("full_turns", 1, TypeError),
        ("step", 0, ValueError),
        ("positions", "0,1", TypeError),
        ("shift", "x", ValueError),
        ("scale", [], TypeError),
    ]:
        with pytest.raises(error, match=name):
            Convention(**{name: bad})
    with pytest.raises(TypeError, match="unexpected keyword argument 'basis'"):
        Convention(basis=2)


def test_a_convention_cannot_change() -> None:
    convention = pe_reference.Convention()
    with pytest.raises(AttributeError):
        convention.start = 3  # type: ignore[attr-defined]
    assert convention.replace(start=3) == pe_reference.Convention(start=3) != convention
    assert convention.start == 0
    assert hash(convention.replace()) == hash(convention)
    assert len({convention, pe_reference.Convention(), pe_reference.PRESETS["paper"]}) == 1


def test_presets_are_conventions() -> None:
    stated = documented_presets()
    for name, text in stated.items():
        assert eval(text, {"Convention": pe_reference.Convention}) == pe_reference.PRESETS[name], name
        assert repr(pe_reference.PRESETS[name]) == text, name
    assert list(pe_reference.PRESETS) == list(stated)


def documented_presets() -> Dict[str, str]:
    """The presets as docs/conventions.md's table states them: name -> the Convention written out."""
    found = {}
    page = (Path(__file__).resolve().parent.parent / "docs" / "conventions.md").read_text(encoding="utf-8")
    for line in page.splitlines():
        match = re.fullmatch(r"\| `([a-z0-9-]+)` \| `(Convention\(.*\))` \|", line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


@pytest.mark.parametrize("exact", [False, True])
def test_convention_is_the_same_as_its_keywords(exact: bool) -> None:
    t2t = pe_reference.PRESETS["tensor2tensor"]
    assert encoding(3, 6, convention=t2t, exact=exact) == encoding(3, 6, preset="tensor2tensor", exact=exact)
    assert list(pe_reference.rows(3, 6, convention=t2t, exact=exact)) == encoding(
        3, 6, preset="tensor2tensor", exact=exact
    )
    assert (
        pe_reference.value(2, 3, 6, convention=t2t, exact=exact)
        == encoding(3, 6, preset="tensor2tensor", exact=exact)[2][3]
    )
    # Keywords still override it.
    assert encoding(3, 6, convention=t2t, start=2, exact=exact) == encoding(3, 6, preset="fairseq", exact=exact)
    table = encoding(3, 6, preset="tensor2tensor")
    assert pe_reference.compare(table, convention=t2t).ok
    pe_reference.assert_close(table, convention=t2t)
    assert "the marian convention" in str(
        pe_reference.compare(encoding(3, 6, preset="marian"), convention=pe_reference.PRESETS["marian"])
    )


# Misuses the types forbid, made on purpose.
MISUSED_NAME: Any = "paper"
MISUSED_NONE: Any = None
MISUSED_INT: Any = 5


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: encoding(2, 4, convention=MISUSED_NAME),
            TypeError,
            "convention must be a Convention, got str 'paper'",
        ),
        (
            lambda: encoding(2, 4, convention=pe_reference.Convention(), preset="paper"),
            ValueError,
            "give preset or convention, not both, got preset='paper'",
        ),
        (
            lambda: pe_reference.Convention(layout="zigzag"),
            ValueError,
            "layout must be one of interleaved, sin-cos, cos-sin, got 'zigzag'",
        ),
        (lambda: pe_reference.Convention(start=math.nan), ValueError, "start must be finite, got nan"),
        (
            lambda: pe_reference.Convention(positions=[1], start=2),
            ValueError,
            "positions replace start, step and descending: give one or the other",
        ),
        (
            lambda: pe_reference.Convention(positions=MISUSED_INT),
            TypeError,
            "positions must be a sequence of real numbers, got int 5",
        ),
        (lambda: encoding(3, 4, positions=[1, 2]), ValueError, "seq_len must equal the number of positions (2), got 3"),
        (
            lambda: encoding(3, 4, preset="diffusers", shift=2),
            ValueError,
            "shift must be less than the number of frequencies (2, for d_model 4), got 2",
        ),
        (
            lambda: value(0, 0, 4, preset="transformer-xl"),
            ValueError,
            "pos has no position in a descending convention without seq_len; use encoding() or rows(), or descending=False with start and a negative step",
        ),
        (lambda: pe_reference.Convention(odd=MISUSED_NONE), TypeError, "odd must be a str, got NoneType None"),
        (
            lambda: encoding(2, 5, convention=pe_reference.PRESETS["gpt-j"]),
            ValueError,
            "d_model must be even in the gpt-j convention, which has no odd rule, got 5",
        ),
    ],
)
def test_bad_conventions(call: Any, error: Any, message: str) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value) == message


def expected_plan(layout: str, odd: str, d_model: int) -> List[Tuple[str, int]]:
    """Each column's (kind, pair) as the layouts are defined: the sines and cosines of h pairs, cut or padded."""
    h = d_model // 2 if odd in ("zero", "error") else (d_model + 1) // 2
    cosines = d_model // 2 if odd == "sine" else h
    sines = [("sin", i) for i in range(h)]
    coss = [("cos", i) for i in range(cosines)]
    if layout == "interleaved":
        plan = [column for i in range(h) for column in ([sines[i], coss[i]] if i < cosines else [sines[i]])]
    else:
        plan = sines + coss if layout == "sin-cos" else coss + sines
    plan = plan[:d_model]  # round-up drops the last column
    return plan + [("zero", 0)] * (d_model - len(plan))


def test_each_column_holds_the_sine_or_cosine_its_layout_defines() -> None:
    """value() takes one column's (kind, pair) and one exponent; tables take them all: both follow the definition."""
    kinds = {pe_reference._SINE: "sin", pe_reference._COSINE: "cos", pe_reference._ZERO: "zero"}
    for layout, odd, spacing in itertools.product(
        ("interleaved", "sin-cos", "cos-sin"), ("sine", "zero", "round-up", "error"), ("paper", "tensor2tensor")
    ):
        convention = pe_reference.Convention(layout=layout, odd=odd, spacing=spacing)
        for d_model in range(1, 13):
            if odd == "error" and d_model % 2:
                continue
            plan = [(kinds[kind], pair) for kind, pair in convention._plan(d_model)]
            assert plan == expected_plan(layout, odd, d_model), (layout, odd, d_model)
            # Pair i's exponent: 2i / d (over 2h columns without the sine rule), or i / (h - 1) for tensor2tensor.
            h = len(convention._exponents(d_model))
            for i in range(h):
                if spacing == "paper":
                    want = (2 * i, d_model if odd == "sine" else 2 * h)
                else:
                    want = (0, 1) if h == 1 else (i, h - 1)
                assert convention._exponent(d_model, i) == convention._exponents(d_model)[i] == want


# ---------------------------------------------------------------------------
# How a convention is named, and which conventions share a table
# ---------------------------------------------------------------------------


def test_a_convention_that_is_no_preset_is_named_by_the_closest_preset_and_what_differs() -> None:
    assert compare(encoding(4, 8, base=500), base=500).convention == "paper (base=500)"


def test_an_even_width_does_not_name_the_odd_rule_as_a_difference() -> None:
    # The odd rule changes nothing at an even width; at an odd width it is a real difference.
    assert compare(encoding(4, 8, base=500, odd="zero"), base=500, odd="zero").convention == "paper (base=500)"
    assert (
        compare(encoding(4, 7, base=500, odd="zero"), base=500, odd="zero").convention == "paper (base=500, odd=zero)"
    )


@pytest.mark.parametrize("d_model", [2, 4, 8])
def test_tensor2tensor_spacing_with_shift_0_is_the_papers_and_is_named_paper(d_model: int) -> None:
    # i / (h - 0) with h = d/2 pairs is 2i / d: the paper's table, whatever the width.
    assert compare(encoding(3, d_model), spacing="tensor2tensor", shift=0).convention == "paper"


def test_positions_given_one_by_one_do_not_change_the_conventions_name() -> None:
    assert compare(encoding(3, 8, positions=[5, 7, 9]), positions=[5, 7, 9]).convention == "paper"


def independent_table(seq_len: int, layout: str, odd: str) -> List[List[float]]:
    """The width-5 tensor2tensor table with the odd rule, from its definition in mpmath (not from pe_reference)."""
    d_model = 5
    pairs = 3  # (d + 1) // 2 for both rules
    with mpmath.workprec(200):
        w = [mpmath.power(10000, -mpmath.mpf(i) / (pairs - 1)) for i in range(pairs)]
        table = []
        for p in range(seq_len):
            sines = [float(mpmath.sin(p * x)) for x in w]
            cosines = [float(mpmath.cos(p * x)) for x in w]
            if odd == "round-up":  # the table of d + 1 columns, its last one dropped
                columns = {
                    "interleaved": [v for s, c in zip(sines, cosines) for v in (s, c)],
                    "sin-cos": sines + cosines,
                    "cos-sin": cosines + sines,
                }[layout][:d_model]
            else:  # one more sine than cosines
                cosines = cosines[: d_model // 2]
                columns = {
                    "interleaved": [sines[0], cosines[0], sines[1], cosines[1], sines[2]],
                    "sin-cos": sines + cosines,
                    "cos-sin": cosines + sines,
                }[layout]
            table.append(columns)
    return table


@pytest.mark.parametrize("layout", ["interleaved", "sin-cos", "cos-sin"])
def test_rounding_tensor2tensor_up_is_the_sine_rule_unless_the_cosines_come_first(layout: str) -> None:
    up = Convention(layout=layout, spacing="tensor2tensor", odd="round-up")
    sine = Convention(layout=layout, spacing="tensor2tensor", odd="sine")
    same = layout != "cos-sin"  # cos-sin rounded up drops its last sine, not a cosine
    assert (independent_table(4, layout, "round-up") == independent_table(4, layout, "sine")) == same
    assert encoding(4, 5, exact=True, convention=up) == independent_table(4, layout, "round-up")
    assert (up._table_key(5) == sine._table_key(5)) == same


@pytest.mark.parametrize(
    "d_model, odd, same",
    [(2, "sine", True), (4, "sine", True), (8, "sine", True), (5, "zero", True), (5, "sine", False)],
)
def test_shift_0_keys_the_papers_table_where_the_tables_are_equal(d_model: int, odd: str, same: bool) -> None:
    # Shift 0 spaces h pairs by i/h; the paper's spacing is 2i/d over d columns (sine rule) or 2i/(2h) otherwise:
    # the same at an even width, and for the zero rule; not for the sine rule at an odd width (i/3 against 2i/5).
    shifted = Convention(spacing="tensor2tensor", shift=0, odd=odd)
    paper = Convention(odd=odd)
    tables_equal = encoding(3, d_model, exact=True, convention=shifted) == encoding(
        3, d_model, exact=True, convention=paper
    )
    assert tables_equal == same
    assert (shifted._table_key(d_model) == paper._table_key(d_model)) == same


def test_a_frequency_past_float64s_range_is_not_judged_not_an_error() -> None:
    # base**(i / (h - 1.5)) = (1e-200)**2 underflows to 0 in float64: the frequency is infinite, and an angle
    # float64 cannot hold is reported, not raised.
    options = {"base": 1e-200, "spacing": "tensor2tensor", "shift": 1.5}
    report = compare(encoding(2, 4, exact=True, **options), **options)  # type: ignore[arg-type]
    # Row 1's angles in pair 1 (columns 2 and 3, the infinite frequency) are infinite: those two are not judged.
    assert report.ok and (report.unjudged, report.unjudged_from) == (2, (1, 2))
    assert "2 of 8 elements (25%) have angles past 17592186044415, which float64 holds so coarsely" in str(report)


# ---------------------------------------------------------------------------
# The float64 path of an odd width rounded up
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["cos-sin", "sin-cos", "interleaved"])
def test_the_fast_path_of_an_odd_width_rounded_up_drops_the_last_column_of_the_wider_table(layout: str) -> None:
    # d = 5 rounded up is the table of 6 columns (3 pairs, exponents 2i/6) without its last column: in cos-sin
    # that is the last sine, so the row keeps three cosines and two sines.
    with mpmath.workprec(120):
        w = [mpmath.power(10000, -mpmath.mpf(2 * i) / 6) for i in range(3)]
        for p in range(6):
            sines = [mpmath.sin(p * x) for x in w]
            cosines = [mpmath.cos(p * x) for x in w]
            wide = {
                "cos-sin": cosines + sines,
                "sin-cos": sines + cosines,
                "interleaved": [v for s, c in zip(sines, cosines) for v in (s, c)],
            }[layout]
            got = encoding(6, 5, layout=layout, odd="round-up")[p]
            assert len(got) == 5
            for value, want in zip(got, wide[:5]):
                assert abs(value - want) <= 1e-15, (p, got)
            assert list(rows(6, 5, layout=layout, odd="round-up"))[p] == got


# ---------------------------------------------------------------------------
# Every field of a Convention, exactly: real, negative, descending and given positions, spacings and scales
# ---------------------------------------------------------------------------
#
# The reference is the definition evaluated by mpmath at 600 bits (tests/reference.py), written here from
# the formula, not from pe_reference: row r holds position p_r, pair i has frequency
# w_i = angle_scale * base**(-t_i) (times 2 pi in full turns), and each value is scale * sin or cos(p_r w_i).


Number = Union[int, float, str, Fraction]


def exact(x: Number) -> Fraction:
    """A number as the fraction pe_reference documents: a float's binary value, a string's decimal."""
    return Fraction(x) if not isinstance(x, float) else Fraction(*x.as_integer_ratio())


def mpf(x: Fraction) -> "mpmath.mpf":
    return mpmath.mpf(x.numerator) / x.denominator


def model(seq_len: int, d_model: int, **fields: Any) -> List[List["mpmath.mpf"]]:
    """The table of a convention from its definition, at 600 bits (more for large angles)."""
    layout = fields.get("layout", "interleaved")
    spacing = fields.get("spacing", "paper")
    odd = fields.get("odd", "sine")
    given: Optional[Sequence[Number]] = fields.get("positions")
    if given is not None:
        positions = [exact(p) for p in given]
    else:
        start, step = exact(fields.get("start", 0)), exact(fields.get("step", 1))
        positions = [start + r * step for r in range(seq_len)]
        if fields.get("descending"):
            positions = [start + (seq_len - 1 - r) * step for r in range(seq_len)]
    pairs = d_model // 2 if odd in ("zero", "error") else (d_model + 1) // 2
    if spacing == "paper":
        width = d_model if odd == "sine" else 2 * pairs
        exponents = [Fraction(2 * i, width) for i in range(pairs)]
    else:
        shift = exact(fields.get("shift", 1))
        exponents = [Fraction(0) if pairs == 1 else i / (pairs - shift) for i in range(pairs)]
    sines = [("sin", i) for i in range(pairs)]
    cosines = [("cos", i) for i in range(d_model // 2 if odd == "sine" else pairs)]
    if layout == "interleaved":
        plan = [column for i in range(pairs) for column in ([sines[i], cosines[i]] if i < len(cosines) else [sines[i]])]
    elif layout == "sin-cos":
        plan = sines + cosines
    else:
        plan = cosines + sines
    plan = plan[:d_model] + [("zero", 0)] * (d_model - len(plan[:d_model]))
    table = []
    for p in positions:
        with mpmath.workprec(reference.PRECISION + max(0, abs(p).numerator.bit_length())):
            base, angle_scale = mpf(exact(fields.get("base", 10000))), mpf(exact(fields.get("angle_scale", 1)))
            turn = 2 * mpmath.pi if fields.get("full_turns") else 1
            scale_text = str(fields.get("scale", 1))
            if scale_text.startswith("sqrt("):
                inside = scale_text[5:-1]
                scale = mpmath.sqrt(
                    mpf(Fraction(inside[:-2])) / d_model if inside.endswith("/d") else mpf(Fraction(inside))
                )
            else:
                scale = mpf(exact(fields.get("scale", 1)))
            row = []
            for kind, i in plan:
                angle = mpf(p) * angle_scale * turn * mpmath.power(base, -mpf(exponents[i]))
                x = (
                    mpmath.mpf(0)
                    if kind == "zero"
                    else scale * (mpmath.sin(angle) if kind == "sin" else mpmath.cos(angle))
                )
                # In full turns cos(2 pi / 4) is 0 exactly but about 1e-180 at 600 bits; no other value there is that small.
                row.append(mpmath.mpf(0) if fields.get("full_turns") and abs(x) < mpmath.ldexp(1, -400) else x)
        table.append(row)
    return table


CASES: List[Dict[str, Any]] = [
    {"start": 999.5},
    {"start": "0.3", "step": "0.3"},
    {"start": -7.25, "layout": "sin-cos"},
    {"start": Fraction(-10, 3), "step": Fraction(1, 3), "layout": "cos-sin", "odd": "zero"},
    {"start": 5, "descending": True, "layout": "sin-cos", "odd": "error"},
    {"start": 3, "step": -2, "odd": "round-up"},
    # start and step over different denominators, each the larger: positions on their common one.
    {"start": 7, "step": "-0.25"},
    {"start": "0.5", "step": "1/3", "descending": True},
    {"positions": ["999.5", "0.3", 17, -1e-4, Fraction(22, 7), "-123456.789"], "layout": "cos-sin", "odd": "zero"},
    {"spacing": "tensor2tensor", "shift": 0, "layout": "cos-sin", "odd": "zero"},
    {"spacing": "tensor2tensor", "shift": "0.5", "base": 500000},
    {"spacing": "tensor2tensor", "shift": -1, "base": "1e4", "angle_scale": 2.5},
    {"base": Fraction(1, 3), "start": 1},
    {"base": 12345.678, "angle_scale": "1/7", "odd": "round-up", "layout": "cos-sin"},
    {"full_turns": True, "positions": [0.25, "1/3", "0.5", 1, "5/12", "1e-3"], "spacing": "tensor2tensor"},
    {"full_turns": True, "start": "1/12", "step": "1/12", "base": 100, "odd": "zero"},
    {"scale": "sqrt(2/d)", "spacing": "tensor2tensor", "layout": "sin-cos", "odd": "error"},
    {"scale": 0.5, "start": 2**40 + 0.5},
    {"scale": 3, "start": -1000},
    {"scale": "sqrt(3)", "full_turns": True, "positions": [0, "1/4", "1/6"]},
    {"scale": "sqrt(2)", "full_turns": True, "positions": ["1/8", "3/8", "-5/8", "1/24"]},
    {
        "scale": "sqrt(1/3)",
        "full_turns": True,
        "angle_scale": 2,
        "positions": ["1/12", "1/3"],
        "base": 4,
        "spacing": "tensor2tensor",
    },
]


def test_row_r_of_a_descending_table_is_at_start_plus_its_rows_after_r_steps() -> None:
    # compare() settles an element of such a table one at a time: the row's position alone, counted from
    # the last row, which the whole table's seq_len places.
    convention = Convention(start="0.5", step="1/3", descending=True)
    for seq_len in (1, 4):
        for r in range(seq_len):
            expected = Fraction(1, 2) + (seq_len - 1 - r) * Fraction(1, 3)
            assert convention._position(r, seq_len) == (expected.numerator, expected.denominator)


def table_size(fields: Dict[str, Any]) -> int:
    return len(fields["positions"]) if "positions" in fields else 9


@pytest.mark.parametrize("fields", CASES, ids=repr)
@pytest.mark.parametrize("d_model", [6, 7])
def test_exact_tables_match_the_definition(fields: Dict[str, Any], d_model: int) -> None:
    if fields.get("odd") == "error" and d_model % 2:
        d_model -= 1
    seq_len = table_size(fields)
    truth = model(seq_len, d_model, **fields)
    for dtype in reference.FORMATS:
        table = encoding(seq_len, d_model, exact=True, dtype=dtype, **fields)
        assert table == [[reference.round_to(x, dtype) for x in row] for row in truth], (dtype, fields)


@pytest.mark.parametrize("fields", [case for case in CASES if not case.get("descending")], ids=repr)
def test_value_is_the_table_element(fields: Dict[str, Any]) -> None:
    seq_len = table_size(fields)
    d_model = 8 if fields.get("odd") == "error" else 7
    for exact_mode in (False, True):
        table = encoding(seq_len, d_model, exact=exact_mode, **fields)
        for pos in range(seq_len):
            for dim in range(d_model):
                assert value(pos, dim, d_model, exact=exact_mode, **fields) == table[pos][dim]


@pytest.mark.parametrize("fields", CASES, ids=repr)
def test_the_fast_path_is_close(fields: Dict[str, Any]) -> None:
    seq_len = table_size(fields)
    d_model = 8
    fast = encoding(seq_len, d_model, **fields)
    for row, truth in zip(fast, model(seq_len, d_model, **fields)):
        for x, t in zip(row, truth):
            # Angles here stay below 2**41: float64 rounds them to 2**-12 at worst.
            assert abs(x - float(t)) <= 2.0**-11 * 4


def test_a_rational_step_across_anchors() -> None:
    # The recurrence runs 1024 rows from each anchor; the anchors advance by 1024 steps of 1/3.
    fields: Dict[str, Any] = {"start": "-100.5", "step": "1/3", "layout": "sin-cos"}
    table = list(rows(2100, 6, exact=True, **fields))
    truth = model(2100, 6, **fields)
    for r in (0, 1, 1023, 1024, 1025, 2047, 2048, 2099):
        assert table[r] == [reference.round_to(x, "float64") for x in truth[r]], r


def test_descending_rows_are_the_ascending_rows_reversed() -> None:
    down = encoding(50, 16, preset="transformer-xl", exact=True)
    up = encoding(50, 16, preset="gpt-j", exact=True)
    assert down == up[::-1]


def test_exact_values_in_full_turns() -> None:
    # sin(2 pi / 4) = 1, cos(2 pi / 3) = -1/2, sin(2 pi * 5/12) = 1/2: exactly, in every format.
    table = encoding(3, 2, positions=["1/4", "1/3", "5/12"], full_turns=True, layout="sin-cos", exact=True)
    assert table == [[1.0, 0.0], [table[1][0], -0.5], [0.5, table[2][1]]]
    assert value(0, 1, 2, positions=["1/3"], full_turns=True, scale=4, exact=True, dtype="bfloat16") == -2.0


def test_presets_name_their_fields() -> None:
    assert PRESETS["mlx"].scale == "sqrt(2/d)"
    assert PRESETS["transformer-xl"].descending
    assert Convention(start="999.5").start == 999.5 and Convention(start="0.3").start == "0.3"
    assert Convention(base="1e4") == Convention() and Convention(base=Fraction(20000, 2)) == Convention()


def test_values_past_the_format_round_to_infinity() -> None:
    # 1 * 100000 is past float16's largest number, 65504; 65519 rounds down to it, 65520 up to infinity.
    assert value(0, 1, 2, exact=True, dtype="float16", scale=100000) == float("inf")
    assert value(0, 1, 2, exact=True, dtype="float16", scale=65520) == float("inf")
    assert value(0, 1, 2, exact=True, dtype="float16", scale=65519) == 65504.0
    assert value(0, 1, 2, dtype="float16", scale=65520) == float("inf")
    assert value(0, 1, 2, exact=True, dtype="bfloat16", scale=2**200) == float("inf")
    with pytest.raises(ValueError, match="scale must be between 2\\*\\*-511 and 2\\*\\*511"):
        encoding(2, 4, scale="1e400")


def test_numbers_the_fast_path_cannot_hold_are_refused_or_handled() -> None:
    with pytest.raises(ValueError, match="angle_scale must be finite and greater than 0 in float64"):
        encoding(2, 4, angle_scale="1e-400")
    with pytest.raises(ValueError, match="base must be finite and greater than 0 in float64"):
        encoding(2, 4, base="1e-400")
    # base**t past float64: the frequency is 0 there, as float64 computes it.
    assert encoding(2, 6, base=1e300, spacing="tensor2tensor", shift="1.5")[1][4:] == [0.0, 1.0]
    with pytest.raises(ValueError, match="pos must be less than 2\\*\\*1024"):
        encoding(2, 4, step=10**400)
    assert encoding(2, 1, odd="zero", step=10**400) == [[0.0], [0.0]]


def test_positions_conflict_with_start_given_with_them() -> None:
    for call in (
        lambda: encoding(2, 2, positions=[1, 2], start=5),
        lambda: Convention().replace(positions=[1, 2], descending=True),
    ):
        with pytest.raises(ValueError, match="positions replace start, step and descending"):
            call()
    assert PRESETS["fairseq"].replace(positions=[1, 2]).start == 0


def test_array_scalars_are_numbers() -> None:
    numpy = need("numpy")
    assert encoding(2, 4, base=numpy.array(100.0)) == encoding(2, 4, base=100)
    assert encoding(2, 4, start=numpy.float32(0.5)) == encoding(2, 4, start=0.5)


def test_tiny_angles_and_huge_exponents_end_quickly() -> None:
    # t = i / (h - 3.999) reaches 3000: angles near 2**-40000, whose cosines are a hair below 1.
    assert encoding(2, 8, spacing="tensor2tensor", shift="3.999", exact=True)[1][2:] == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    assert (
        encoding(2, 8, spacing="tensor2tensor", shift="3.999", exact=True, scale="sqrt(2/d)", dtype="bfloat16")[1][3]
        == 0.5
    )
    # A shift of 0.1 as a float has a denominator of 2**55: base**t is tested without raising base to it.
    assert value(1, 2, 8, exact=True, full_turns=True, spacing="tensor2tensor", shift=0.1) == reference.round_to(
        model(2, 8, full_turns=True, spacing="tensor2tensor", shift=0.1)[1][2], "float64"
    )


def test_malformed_numbers_are_refused_whole() -> None:
    for text in ("1/2/3", "1/x", "1e", "--1", ".", "1_000"):
        with pytest.raises(ValueError) as caught:
            Convention(start=text)
        assert str(caught.value) == f"start must be a decimal or a fraction such as '999.5' or '1/3', got {text!r}"
    with pytest.raises(ValueError, match="got 'sqrt\\(/d\\)'"):
        Convention(scale="sqrt(/d)")


@pytest.mark.parametrize("scale", [1, "sqrt(2/d)", "sqrt(3)"])
def test_tiny_angles_keep_relative_precision(scale: Any) -> None:
    # t = 1 / (2 - 1.995) = 200: w = 2**-200, far below the working precision of _sin_cos.
    fields: Dict[str, Any] = {
        "spacing": "tensor2tensor",
        "shift": "1.995",
        "base": 2,
        "layout": "sin-cos",
        "scale": scale,
    }
    fields["positions"] = [1, -3, "1/3", 12345.5, "1e-300"]
    truth = model(5, 4, **fields)
    for dtype in reference.FORMATS:
        assert encoding(5, 4, exact=True, dtype=dtype, **fields) == [
            [reference.round_to(x, dtype) for x in row] for row in truth
        ]


# ---------------------------------------------------------------------------
# Each framework's table, built by its own code where it installs, checked with its preset and diagnosed without
# ---------------------------------------------------------------------------
# Done when a framework's table passes compare(..., preset=NAME) in its own dtype (float32), and, checked
# without naming a convention, is diagnosed as NAME or as the family of presets NAME belongs to. The
# builders are in tests/framework_tables.py; the frameworks are test-only dependencies (.ci/run installs
# transformers, diffusers, torch_geometric and positional-encodings; the others are written out there).

numpy = peer("numpy")  # imported on first use: a test without it skips (peers mark)

TIMESTEPS = [999.5, 0.3, 17.0, 500.25, 1.0, 0.0, 981.0, 3.75]


def float32(values: List[float]) -> List[float]:
    """The timesteps as the framework holds them: its float32 numbers (struct rounds to nearest), taken exactly."""
    return [struct.unpack("<f", struct.pack("<f", x))[0] for x in values]


# name -> (builder, its keyword arguments, the fields that describe its data, the widths it takes)
FRAMEWORKS: Dict[str, List[Any]] = {
    "marian": [lambda d: built.marian(100, d), {}, (16, 15)],
    "xlm": [lambda d: built.xlm(100, d), {}, (16, 15)],
    "m2m100": [lambda d: built.m2m100(100, d), {}, (16, 15)],
    "fairseq": [lambda d: built.fairseq(100, d), {}, (16, 15)],
    "whisper": [lambda d: built.whisper(100, d), {}, (16,)],
    "whisper-500": [lambda d: built.whisper(100, d, max_timescale=500), {"base": 500}, (16,)],
    "gpt-j": [lambda d: built.gptj(100, d), {}, (16,)],
    "transformer-xl": [lambda d: built.transformer_xl(100, d), {}, (16,)],
    "tatp22": [lambda d: built.tatp22(100, d), {}, (16, 15)],
    "keras-hub": [lambda d: built.keras_hub(100, d), {}, (16, 15)],
    "keras-hub-1000": [
        lambda d: built.keras_hub(100, d, max_wavelength=1000, start_index=5),
        {"base": 1000, "start": 5},
        (16,),
    ],
    "tensor2tensor": [lambda d: built.tensor2tensor(100, d), {}, (16, 15)],
    "guided-diffusion": [lambda d: built.guided_diffusion(TIMESTEPS, d), {"positions": float32(TIMESTEPS)}, (16, 15)],
    "diffusers": [lambda d: built.diffusers(TIMESTEPS, d), {"positions": float32(TIMESTEPS)}, (16, 15)],
    "diffusers-unet": [
        lambda d: built.diffusers(TIMESTEPS, d, flip_sin_to_cos=True, downscale_freq_shift=0),
        {"positions": float32(TIMESTEPS), "layout": "cos-sin", "shift": 0},
        (16,),
    ],
    "diffusers-scaled": [
        lambda d: built.diffusers(TIMESTEPS, d, downscale_freq_shift=0.5, scale=2.0),
        {"positions": float32(TIMESTEPS), "shift": "0.5", "angle_scale": 2},
        (16,),
    ],
    "pyg": [lambda d: built.pyg([float(p) for p in range(100)], d), {}, (16,)],
    "pyg-granularity": [
        lambda d: built.pyg([float(p) for p in range(100)], d, granularity=0.5),
        {"step": 2},
        (16,),
    ],
    "mlx": [lambda d: built.mlx(float32(TIMESTEPS), d), {"positions": float32(TIMESTEPS)}, (16,)],
    "mlx-turns": [
        lambda d: built.mlx([float(p) for p in range(40)], d, full_turns=True, cos_first=True, scale=1.0),
        {"full_turns": True, "layout": "cos-sin", "scale": 1},
        (16,),
    ],
}


def preset_of(case: str) -> str:
    return case if case in PRESETS else case.rsplit("-", 1)[0] if case.rsplit("-", 1)[0] in PRESETS else "diffusers"


@pytest.mark.peers("numpy", "torch", "transformers", "diffusers", "torch_geometric", "positional_encodings")
@pytest.mark.parametrize("case", list(FRAMEWORKS))
def test_a_framework_table_passes_with_its_preset(case: str) -> None:
    make, fields, widths = FRAMEWORKS[case]
    for d_model in widths:
        table = make(d_model)
        assert table.dtype == numpy.float32
        report = compare(table, preset=preset_of(case), dtype="float32", **fields)
        assert report.ok, f"{case} d_model {d_model}\n{report}"
        # The same with the columns in another order does not pass: the check can tell.
        layout = str(PRESETS[preset_of(case)].replace(**fields).layout)
        other = {"interleaved": "sin-cos", "sin-cos": "cos-sin", "cos-sin": "interleaved"}[layout]
        assert not compare(table, preset=preset_of(case), dtype="float32", **dict(fields, layout=other)).ok, case


# Variants no preset makes (a shift of 0.5 and a scaled angle; MLX in full turns): checked with their fields above.
VARIANTS = ("diffusers-scaled", "mlx-turns")


@pytest.mark.peers("numpy", "torch", "transformers", "diffusers", "torch_geometric", "positional_encodings")
@pytest.mark.parametrize("case", [case for case in FRAMEWORKS if case not in VARIANTS])
def test_a_framework_table_is_diagnosed_without_its_name(case: str) -> None:
    make, fields, widths = FRAMEWORKS[case]
    # The data of the table (its positions, its base) are given; the convention is not.
    data = {name: fields[name] for name in ("positions", "base", "step", "start") if name in fields}
    name = preset_of(case)
    for d_model in widths:
        table = make(d_model)
        report = compare(table, dtype="float32", **data)
        # Its convention, with the data (base, step, start) set back to the preset's.
        expected = PRESETS[name].replace(**{k: v for k, v in fields.items() if k not in data})
        family = expected._presets(d_model)
        assert family, (case, d_model)
        if report.ok:
            # The paper's own table: nothing to diagnose.
            assert "paper" in family, (case, d_model, str(report))
            continue
        diagnosis = report.diagnosis or ""
        assert diagnosis.startswith("Diagnosis: the table follows "), (case, d_model, diagnosis)
        assert "it reproduces every element. The call that reproduces it: " in diagnosis, (case, d_model, diagnosis)
        assert_call_reproduces(diagnosis, table, **data)
        named = diagnosis.split("(preset ", 1)[1].split(")", 1)[0]
        assert [n for n in family if n in named] == family, (case, d_model, family, diagnosis)
