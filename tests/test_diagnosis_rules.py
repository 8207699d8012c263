"""The diagnosis's rules that the mutation runs found untested: local damage, and the candidates tried.

Each table is the exact table with a known fault put in by hand, or one built here from the formula
with a known mistake; the expected words are the rule's.
"""

import math
import struct
from typing import List, Tuple

import pytest

import pe_reference
from pe_reference import compare, encoding

EXCEPT = "Diagnosis: the table follows the paper convention except for "


@pytest.mark.parametrize("offset", [k for k in range(-8, 9) if k])
def test_a_row_holding_the_values_of_a_row_up_to_8_away_is_named(offset: int) -> None:
    table = encoding(20, 8, exact=True)
    table[9] = list(table[9 + offset])
    assert compare(table).diagnosis == EXCEPT + f"row 9, which holds row {9 + offset}'s values."


def test_a_column_wrong_in_three_quarters_of_the_rows_is_a_wrong_column() -> None:
    table = encoding(8, 16, exact=True)
    for r in range(2, 8):  # 6 of 8 rows: exactly three quarters
        table[r][5] = 0.25
    assert compare(table).diagnosis == EXCEPT + "column 5, which matches no column."


def test_damage_is_local_only_while_it_covers_at_most_a_quarter_of_the_cells() -> None:
    wrong = [0.3, -0.3, 0.2, 0.7, 0.3, -0.3, 0.2, 0.7]
    table = encoding(12, 8, exact=True)
    table[1] = list(wrong)  # 8 of 96 cells
    assert compare(table).diagnosis == EXCEPT + "row 1, which matches no nearby position."
    table = encoding(3, 8, exact=True)
    table[1] = list(wrong)  # 8 of 24 cells: a third of the table is not local damage
    diagnosis = compare(table).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table.")


@pytest.mark.parametrize(
    "preset, words",
    [
        ("mlx", "MLX's SinusoidalPositionalEncoding convention (preset mlx)"),
        ("transformer-xl", "Transformer-XL's convention (preset transformer-xl)"),
    ],
)
def test_a_preset_without_an_odd_rule_is_a_candidate_at_an_even_width(preset: str, words: str) -> None:
    # No other preset makes these tables, so only the preset itself, a candidate at even widths, names them.
    diagnosis = compare(encoding(6, 8, preset=preset)).diagnosis
    assert (
        diagnosis
        == f"Diagnosis: the table follows {words}: "
        + {
            "mlx": "frequencies from 1 to 1e-4, all sines then all cosines, values times sqrt(2/d)",
            "transformer-xl": "all sines then all cosines, positions descending to 0",
        }[preset]
        + "; it reproduces every element. The call that reproduces it:"
        + f" encoding(6, 8, preset={preset!r}) (on the command line: --preset {preset})."
    )


def test_a_presets_table_with_another_base_is_described_as_that_preset_with_the_base() -> None:
    diagnosis = compare(encoding(6, 8, preset="tensor2tensor", base=500), base=500).diagnosis
    assert diagnosis is not None
    assert diagnosis.startswith("Diagnosis: the table follows tensor2tensor's convention (preset tensor2tensor")
    assert diagnosis.endswith(
        "frequencies spaced by i/(h-1), with base 500 instead of 10000; it reproduces every element. The call that"
        " reproduces it:"
        " encoding(6, 8, preset='tensor2tensor', base=500) (on the command line: --preset tensor2tensor --base 500)."
    )


def test_several_local_faults_are_joined_by_semicolons_and_a_last_and() -> None:
    table = encoding(20, 8, exact=True)
    table[3][5] = 0.5  # column 5 is the cosine of pair 2: cos(3 / 10000**(4/8)) = cos(0.03)
    table[7] = [0.0] * 8
    table[12] = [0.0] * 8
    padding = "all zeros (as the row of a padding index is)"
    assert compare(table).diagnosis == EXCEPT + (
        f"1 element: [3][5] is 0.5, expected {math.cos(0.03):.6g}; row 7, {padding}; and row 12, {padding}."
    )


@pytest.mark.parametrize("d_model, local", [(16, 2), (32, 4)])
def test_wrong_columns_are_local_damage_up_to_an_eighth_of_d_model_or_two(d_model: int, local: int) -> None:
    columns = [1, 5, 9, 13, 17][: local + 1]
    table = encoding(8, d_model, exact=True)
    for c in columns[:local]:
        for row in table:
            row[c] = 0.25
    named = [f"column {c}, which matches no column" for c in columns[:local]]
    assert compare(table).diagnosis == EXCEPT + "; ".join(named[:-1]) + "; and " + named[-1] + "."
    for row in table:
        row[columns[local]] = 0.25  # one more column than d_model allows
    diagnosis = compare(table).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table.")


def test_damage_is_local_only_while_it_touches_at_most_a_quarter_of_the_rows() -> None:
    # 12 rows: at most 3 damaged rows are local damage, however few cells each holds.
    faults = [(1, 0, math.sin(1)), (4, 2, math.sin(0.4)), (7, 4, math.sin(0.07)), (10, 6, math.sin(0.01))]
    table = encoding(12, 8, exact=True)
    for r, c, _ in faults[:3]:
        table[r][c] = 0.5
    named = ", ".join(f"[{r}][{c}] is 0.5, expected {value:.6g}" for r, c, value in faults[:3])
    assert compare(table).diagnosis == EXCEPT + "3 elements: " + named + "."
    r, c, _ = faults[3]
    table[r][c] = 0.5
    diagnosis = compare(table).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table.")


@pytest.mark.parametrize("d_model", [5, 9])
def test_an_odd_width_table_is_tried_with_each_odd_rule(d_model: int) -> None:
    # The odd rules differ only at an odd width; 9 is odd and a multiple of 3.
    diagnosis = compare(encoding(6, d_model, odd="zero")).diagnosis
    assert diagnosis == (
        "Diagnosis: the table follows the paper's convention (preset paper, the same as xlm and keras-hub): sin and"
        " cos interleaved per pair, with an odd d_model's rule 'zero' instead of 'sine'; it reproduces every element. The"
        f" call that reproduces it: encoding(6, {d_model}, odd='zero') (on the command line: --odd zero)."
    )


def paper_element(position: int, dim: int, d_model: int) -> float:
    angle = position / 10000 ** (2 * (dim // 2) / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def test_a_cosine_first_interleave_at_an_odd_width_keeps_its_last_sine() -> None:
    # [cos, sin] per pair, and the last column, a pair without a cosine, is its sine.
    d_model = 9
    table = [
        [paper_element(p, dim + 1 if dim % 2 == 0 else dim - 1, d_model) for dim in range(d_model - 1)]
        + [paper_element(p, d_model - 1, d_model)]
        for p in range(6)
    ]
    assert compare(table).diagnosis == (
        "Diagnosis: the table follows an interleave with the cosine first, [cos, sin] per pair;"
        " it reproduces every element."
    )


@pytest.mark.parametrize("seq_len, d_model", [(7, 4), (8, 5)])
def test_a_transposed_table_is_named_whatever_the_parity_of_its_rows(seq_len: int, d_model: int) -> None:
    # The table given has seq_len rows; transposed, they are the d_model = seq_len columns of d_model positions.
    table = [[paper_element(p, dim, seq_len) for p in range(d_model)] for dim in range(seq_len)]
    assert compare(table).diagnosis == (
        "Diagnosis: the table follows the transposed table: rows are dimensions, columns positions;"
        " it reproduces every element."
    )


def test_of_two_stories_that_explain_the_table_the_simpler_is_told() -> None:
    # fairseq's frequencies, 10000**(-i/(h-1)), are also the paper's spacing with base 10000**(h/(h-1)): the
    # same table, which the fit reads both ways; the story with the preset's round base is told.
    text = compare(encoding(300, 32, preset="fairseq")).diagnosis or ""
    assert "(preset fairseq, the same as m2m100)" in text and "; it reproduces every element." in text, text
    assert "instead of" not in text, text


def test_an_angle_at_a_rounding_midpoint_is_reproduced_rounded_either_way() -> None:
    # Angles rounded to bfloat16 half up, where the candidate rounds ties to even: on every row (not a
    # sample), the elements whose angle lay on a midpoint are the story's too, not damage.
    def bfloat16(x: float) -> float:
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        return float(struct.unpack("<d", struct.pack("<Q", (bits + (1 << 44)) & ~((1 << 45) - 1)))[0])

    table = [
        [(math.sin if j % 2 == 0 else math.cos)(bfloat16(p / 10000 ** (2 * (j // 2) / 16))) for j in range(16)]
        for p in range(300)
    ]
    text = compare(table).diagnosis or ""
    assert "its angles rounded to bfloat16; it reproduces every element." in text, text


# ---------------------------------------------------------------------------
# Report.causes: what the diagnosis names, as keys a program reads
# ---------------------------------------------------------------------------


def paper_row(position: float, d_model: int, base: float = 10000.0) -> List[float]:
    """The paper's row at a position in float64, by the formula."""
    row = []
    for i in range(d_model // 2):
        angle = position / base ** (2 * i / d_model)
        row += [math.sin(angle), math.cos(angle)]
    return row


def half_row(position: float, d_model: int) -> List[float]:
    """The same angles as paper_row, all sines then all cosines."""
    row = paper_row(position, d_model)
    return row[0::2] + row[1::2]


def float16(x: float) -> float:
    held: float = struct.unpack("<e", struct.pack("<e", x))[0]
    return held


# (name, the table, the causes: the fields a call sets otherwise, a mistake's steps, damage)
CAUSES = [
    ("base", [paper_row(p, 16, 500000.0) for p in range(64)], ("base",)),
    ("values halved", [[x / 2 for x in paper_row(p, 16)] for p in range(64)], ("scale",)),
    ("layout and scale", [[x / 4 for x in half_row(p, 16)] for p in range(64)], ("layout", "scale")),
    ("positions from 3", [paper_row(p + 3, 16) for p in range(64)], ("start",)),
    ("positions in float16", [paper_row(float16(p), 16) for p in range(3000)], ("positions:float16",)),
    ("a zeroed row", [[0.0] * 16 if p == 40 else paper_row(p, 16) for p in range(300)], ("damage",)),
    ("zeros", [[0.0] * 8 for _ in range(4)], ("zeros",)),
    ("transposed", [list(column) for column in zip(*[paper_row(p, 12) for p in range(8)])], ("transposed",)),
    ("stored in float16", [[float16(x) for x in paper_row(p, 16)] for p in range(64)], ("output:float16",)),
    (
        "a NaN",
        [[math.nan if (p, c) == (7, 3) else x for c, x in enumerate(paper_row(p, 16))] for p in range(30)],
        ("not_finite",),
    ),
]


@pytest.mark.parametrize("table, causes", [case[1:] for case in CAUSES], ids=[case[0] for case in CAUSES])
def test_report_causes_name_what_the_diagnosis_says(table: List[List[float]], causes: Tuple[str, ...]) -> None:
    report = compare(table)
    assert not report.ok and report.causes == causes, f"{report.causes}\n{report}"


def test_a_table_nothing_explains_has_no_causes() -> None:
    table = [[math.sin(1.7 * p + c * c) for c in range(8)] for p in range(20)]
    report = compare(table)
    assert report.diagnosis is not None and "nothing known explains the table" in report.diagnosis, str(report)
    assert report.causes == ()
    assert compare(encoding(8, 8)).causes == ()  # a table that passes


def test_a_candidates_allowance_is_at_least_one_unit_of_a_narrow_format() -> None:
    """bfloat16: a value computed in float32 and then rounded lands a unit (2**-7 at 1) from the exact one's rounding.

    So a candidate's allowance, capped at 2**-10 otherwise, is capped at 2**(1 - p) times the scale where that is more.
    """
    from pe_reference import _row_allowance

    assert _row_allowance([1.0, 0.01], 1000.0, 8, 1.0, 2.0**-19) == [2.0**-7, 2.0**-7]
    assert _row_allowance([1.0, 0.01], 1000.0, 8, 0.5, 2.0**-19) == [2.0**-8, 2.0**-8]
    # float16's unit at 1, 2**-10, is the cap itself; float32's is below it (the cap, or the default rule's own).
    assert _row_allowance([0.01], 1000.0, 11, 1.0, 2.0**-19) == [2.0**-10]
    assert _row_allowance([0.3], 1000.0, 24, 1.0, 2.0**-19) == [2.0**-10]
    assert _row_allowance([1.0], 1000.0, 24, 1.0, 2.0**-19) == [2.0**-19 * 1001.0]


def test_a_table_angle_whose_other_rounding_is_past_float16_is_judged_without_it() -> None:
    # The table's twin of the rotary rule: angles from 65512 round to 65504 in float16, and their other
    # neighbour is infinite. Before, the whole row's other rounding raised ValueError (math domain error).
    def half(angle: float) -> float:
        return pe_reference._round_float(angle, "float16")

    table = []
    for p in range(65512, 65520):  # the paper's d_model 64, sin and cos interleaved; pair 0 turns by 1 radian
        angles = [half(p * 10000.0 ** (-2 * i / 64)) for i in range(32)]
        table.append([f(angle) for angle in angles for f in (math.sin, math.cos)])
    table[3][40] = 5.0
    report = compare(table, start=65512)
    assert report.causes == ("angles:float16", "damage"), str(report)
    assert "except for 1 element: [3][40] is 5.0" in str(report.diagnosis), str(report)
