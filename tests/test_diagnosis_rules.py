"""The diagnosis's rules of local damage that the mutation run found untested.

Each table is the exact table with a known fault put in by hand; the expected words are the rule's.
"""

import pytest

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
        + "; it reproduces every element."
    )


def test_a_presets_table_with_another_base_is_described_as_that_preset_with_the_base() -> None:
    diagnosis = compare(encoding(6, 8, preset="tensor2tensor", base=500), base=500).diagnosis
    assert diagnosis is not None
    assert diagnosis.startswith("Diagnosis: the table follows tensor2tensor's convention (preset tensor2tensor")
    assert diagnosis.endswith("frequencies spaced by i/(h-1), with base 500; it reproduces every element.")
