"""Conventions: the presets reproduce each framework's table, in the fast and the exact path."""

import itertools
import math
import random
import re
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple, Type

import mpmath
import pytest

import pe_reference
from pe_reference import Convention, compare, encoding, rows, value
from tests import reference

PRESETS = ["paper", "tensor2tensor", "fairseq", "tf-tutorial", "guided-diffusion"]
SHARED = Path(__file__).resolve().parents[2] / "shared" / "conventions.md"


@pytest.mark.parametrize("preset", PRESETS)
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


@pytest.mark.parametrize("preset", PRESETS)
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
    assert set(matrices) == set(PRESETS)
    for preset, matrix in matrices.items():
        for dtype_exact in (False, True):
            table = encoding(4, 4, preset=preset, exact=dtype_exact)
            assert [[round(x, 8) + 0.0 for x in row] for row in table] == matrix, preset


def test_keywords_override_the_preset() -> None:
    assert encoding(6, 8, preset="tensor2tensor", spacing="paper") == encoding(6, 8, preset="tf-tutorial")
    assert encoding(6, 8, preset="tensor2tensor", start=2) == encoding(6, 8, preset="fairseq")
    assert encoding(6, 8, layout="interleaved", spacing="paper", start=0, odd="sine") == encoding(6, 8)
    assert encoding(5, 7, layout="cos-sin", odd="zero")[3][-1] == 0.0


@pytest.mark.parametrize("preset", PRESETS)
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


def test_a_convention_cannot_change() -> None:
    convention = pe_reference.Convention()
    with pytest.raises(AttributeError):
        convention.start = 3  # type: ignore[misc]
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
