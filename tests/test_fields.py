"""Every field of a Convention, exactly: real, negative, descending and given positions, spacings and scales.

The reference is the definition evaluated by mpmath at 600 bits (tests/reference.py), written here from
the formula, not from pe_reference: row r holds position p_r, pair i has frequency
w_i = angle_scale * base**(-t_i) (times 2 pi in full turns), and each value is scale * sin or cos(p_r w_i).
"""

from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Union

import mpmath
import pytest

from pe_reference import Convention, PRESETS, encoding, rows, value
from tests import reference
from tests.helpers import need

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
