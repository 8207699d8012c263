"""Convention's rules the mutation run found untested: how a convention is named, and which share a table.

A table's convention is named by the preset whose table it is, else by the closest preset and the fields that
differ.  Two conventions that make the same table for a width must be recognised as one (Convention._table_key):
tensor2tensor's spacing i/(h - 0) is the paper's 2i/(2h), and rounding an odd width up then dropping the last
column is the sine rule whenever the dropped column is a cosine.
"""

from typing import List

import mpmath
import pytest

from pe_reference import Convention, compare, encoding


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
