"""The rotary diagnosis's rules the mutation run found untested (tests/test_rope_cases.py has the whole-model cases)."""

import math
from typing import Dict, List, Optional

import mpmath
import pytest

import pe_reference
from pe_reference import apply_rope, compare_rope, rope
from tests import reference

YARN = {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 16}
# A setup read from the cache, or a known mistake: a story verified on every element, as a table's is.
PREFIX = "Diagnosis: the table follows the RoPE cos cache (half layout, base 10000, yarn scaling) "
SUFFIX = "; it reproduces every element."


YARN_CALL = "scaling={'rope_type': 'yarn', 'factor': 4, 'original_max_position_embeddings': 16}"
YARN_OPTIONS = """--rope-scaling '{"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 16}'"""


@pytest.mark.parametrize("scaling", [YARN, dict(YARN, rope_theta=10000)])
def test_another_base_is_tried_with_the_same_scaling(scaling: Dict[str, object]) -> None:
    # The table has yarn scaling at base 500000: only a setup keeping the scaling (and dropping the
    # scaling's own rope_theta) reproduces it. Read from the table when its rows are positions 0, 1, ...;
    # among the candidates tried one change at a time when the positions are given.
    cos, _ = rope(40, 16, base=500000, scaling=YARN)
    report = compare_rope(cos, scaling=scaling)
    assert report.causes == ("base",)
    assert report.diagnosis == PREFIX + "with base 500000 instead of 10000; it reproduces every element." + (
        f" The call that reproduces it: rope(40, 16, base=500000, {YARN_CALL})[0]"
        f" (on the command line: --rope cos --base 500000 {YARN_OPTIONS})."
    )
    report = compare_rope(cos, scaling=scaling, positions=list(range(40)))
    assert report.causes == ("base",)
    assert report.diagnosis == PREFIX + "with base 500000" + SUFFIX


@pytest.mark.parametrize(
    "made_with, words",
    [
        (
            {"rope_type": "dynamic", "factor": 4, "max_position_embeddings": 16},
            "dynamic scaling (factor 4, max_position_embeddings 16) instead of yarn",
        ),
        ({"rope_type": "linear", "factor": 4}, "linear scaling (factor 4) instead of yarn"),
        (
            {
                "rope_type": "llama3",
                "factor": 4,
                "low_freq_factor": 1,
                "high_freq_factor": 4,
                "original_max_position_embeddings": 16,
            },
            "llama3 scaling (factor 4, low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 16)"
            " instead of yarn",
        ),
    ],
)
def test_each_other_scaling_with_the_same_factor_and_length_is_tried(made_with: Dict[str, object], words: str) -> None:
    # 40 rows, past the length 16: dynamic's base has grown.
    cos, _ = rope(40, 16, scaling=made_with)
    report = compare_rope(cos, scaling=YARN)
    assert report.causes == ("scaling",)
    assert report.diagnosis is not None
    assert report.diagnosis.startswith(PREFIX + f"with {words}; it reproduces every element."), report.diagnosis
    report = compare_rope(cos, scaling=YARN, positions=list(range(40)))
    assert report.causes == ("scaling",)
    kind = str(made_with["rope_type"])
    assert report.diagnosis == PREFIX + f"with {kind} scaling instead" + SUFFIX


def rope_share(
    row: "List[float]", setup: "pe_reference._Rope", kind: str, vector: "Optional[List[float]]", at: float, dtype: str
) -> float:
    """The share of one row at position ``at`` that the rotary candidate without a change reproduces."""
    vectors = None if vector is None else [vector]
    candidate = pe_reference._rope_candidate("", (), len(row), setup, kind, vectors, [at], None, {}, 1.0, dtype)
    reproduced, compared = pe_reference._reproduced([row], candidate, [0], dtype)
    return reproduced / compared


@pytest.mark.parametrize("dtype, precision", [("bfloat16", 8), ("float16", 11), ("float32", 24)])
def test_a_candidate_reproduces_an_element_within_the_formats_storing_error(dtype: str, precision: int) -> None:
    # At position 0 every cos is 1: the allowance is 2**-18 (1 + |angle| = 1) for the arithmetic plus
    # 2**(1 - p) max(1, |value|) for storing, so 2**(1-p) + 2**-18 in all.
    setup = pe_reference._Rope(8, None, "half", None)
    storing = 2.0 ** (1 - precision)
    for error, share in ((storing, 1.0), (storing + 2.0**-17, 7 / 8)):
        row = [1.0] * 8
        row[3] = 1.0 - error
        assert rope_share(row, setup, "cos", None, 0.0, dtype) == share


@pytest.mark.parametrize("exact", [False, True])
def test_apply_rope_refuses_a_vector_that_is_not_finite_or_whose_pair_could_overflow(exact: bool) -> None:
    with pytest.raises(ValueError, match=r"^x\[1\]\[2\] must be finite, got nan$"):
        apply_rope([[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, math.nan, 0.0]], exact=exact)
    # In the half layout columns 0 and 2 turn together: 1e308 + 1e308 is past float64.
    with pytest.raises(ValueError, match=r"^x\[0\] must have \|x\[a\]\| \+ \|x\[b\]\| finite for each pair"):
        apply_rope([[1e308, 0.0, -1e308, 0.0]], exact=exact)


def test_comparing_rotated_vectors_needs_the_vectors_before_rotation() -> None:
    with pytest.raises(
        ValueError, match=r"^x must be given for kind 'rotated': the vectors before rotation, got None$"
    ):
        compare_rope(rope(2, 4)[0], kind="rotated")


def test_the_arithmetic_allowance_grows_with_the_angle() -> None:
    # cos at position 1024, head_dim 8: column 0 turns by w_0 = 1, so its allowance is
    # 2**-18 (1 + 1024), about 2**-8; column 3 turns by w_3 = 10000**-0.75 = 0.001, allowance
    # 2**-18 (1 + 1.024), about 2**-17.
    setup = pe_reference._Rope(8, None, "half", None)
    row = rope(1025, 8)[0][1024]

    def share(column: int, error: float) -> float:
        changed = list(row)
        changed[column] += error
        return rope_share(changed, setup, "cos", None, 1024.0, "float64")

    assert share(0, 2.0**-9) == 1.0
    assert share(0, 2.0**-7) == 7 / 8
    assert share(3, 2.0**-18) == 1.0
    assert share(3, 2.0**-16) == 7 / 8


def test_a_rotated_elements_arithmetic_allowance_is_weighted_by_its_pair() -> None:
    # Rotation at position 0 leaves the vector as it was.  In the half layout columns 0 and 4 turn
    # together: their weight is |x[0]| + |x[4]| = 4, so 4 * 2**-19 is within 4 * 2**-18; the pair of
    # columns 1 and 5 is zero, so no arithmetic allowance at all is left for them, only storing's.
    setup = pe_reference._Rope(8, None, "half", None)
    vector = [4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for column, error, share in ((0, 4 * 2.0**-19, 1.0), (0, 4 * 2.0**-17, 7 / 8), (1, 2.0**-40, 7 / 8)):
        row = list(vector)
        row[column] += error
        found = rope_share(row, setup, "rotated", vector, 0.0, "float64")
        assert found == share


@pytest.mark.parametrize("position", [1, 2, 3, 4, 8, 100])
def test_a_rotary_element_left_to_the_ziv_loop_is_the_sine_of_its_angle_in_radians(position: int) -> None:
    # The float64 finish leaves the rare element it cannot decide to _exact_value with the rotary
    # law; pair 0 turns by w_0 = 1 radian per position, so its sine is sin(position), never the
    # sine of a whole number of full turns (0).
    law = pe_reference._Rope(8, None, "half", None).law((position, 1))
    for kind, function in ((pe_reference._SINE, mpmath.sin), (pe_reference._COSINE, mpmath.cos)):
        with mpmath.workprec(reference.PRECISION):
            expected = reference.round_to(function(position), "float64")
        assert pe_reference._exact_value((position, 1), kind, (0, 4), law, (1, 1), "float64") == expected


@pytest.mark.parametrize("size", [2.0**200, 1e300])
def test_a_huge_vector_is_rotated_exactly(size: float) -> None:
    # Its elements are whole multiples of 2**q with q far above 105, the kernel's fraction bits:
    # the rotated sum is moved onto the kernel's grid (its fraction bits go to 0), then rounded once.
    x = [[size, 0.0, 0.0, -size], [size, 0.0, 0.0, -size]]
    rotated = apply_rope(x, exact=True)
    with mpmath.workprec(reference.PRECISION):
        # Half layout, head_dim 4: pairs (0, 2) and (1, 3), w_0 = 1 and w_1 = 10000**-0.5 = 1/100.
        expected = [
            size * mpmath.cos(1),
            size * mpmath.sin(mpmath.mpf(1) / 100),
            size * mpmath.sin(1),
            -size * mpmath.cos(mpmath.mpf(1) / 100),
        ]
    assert rotated[0] == x[0]
    assert rotated[1] == [reference.round_to(value, "float64") for value in expected]


def test_the_pairs_layout_is_for_caches_and_takes_any_number_of_pairs() -> None:
    # Vectors have head_dim columns, two per pair: the pairs layout is refused for them, naming the layouts that fit.
    refused = r"^layout 'pairs' is a cache's \(one column per pair\), not a vector's, got 'pairs': rotate vectors"
    with pytest.raises(ValueError, match=refused):
        apply_rope([[1.0, 0.0]], layout="pairs")
    with pytest.raises(ValueError, match=refused):
        compare_rope([[1.0, 0.0]], kind="rotated", x=[[1.0, 0.0]], layout="pairs")
    # Three pairs (head_dim 6): three columns, which the other layouts refuse, saying which layout takes them.
    cos, sin = rope(8, 6, layout="pairs")
    assert [len(row) for row in cos + sin] == [3] * 16
    assert compare_rope(cos, layout="pairs").ok and compare_rope(sin, kind="sin", layout="pairs").ok
    odd = r"^a half-layout cache must have an even number of columns \(head_dim\), got 3: .* takes layout='pairs'$"
    with pytest.raises(ValueError, match=odd):
        compare_rope(cos)


def bfloat16_inv_freq_cache(seq_len: int, head_dim: int) -> "List[List[float]]":
    """A cos cache whose inv_freq was rounded to bfloat16, the rest in float64, rounded to float32 (by struct)."""
    inv_freq = [reference.round_to(10000.0 ** (-2 * k / head_dim), "bfloat16") for k in range(head_dim // 2)]
    return [[reference.round_to(math.cos(p * w), "float32") for w in inv_freq] * 2 for p in range(seq_len)]


def test_a_rotary_mistake_is_verified_on_every_row_and_its_damage_named() -> None:
    # Before, a mistake's story was judged on the sampled rows alone ("reproduces 100% of the sampled
    # elements"): rows zeroed between them went unmentioned, and rows wrong everywhere but there still
    # got the story.
    seq_len = 2000
    sampled = set(pe_reference._sample_rows(seq_len))
    quiet = [r for r in range(1000, seq_len) if r not in sampled]
    positions = list(range(seq_len))
    cache = bfloat16_inv_freq_cache(seq_len, 16)
    report = compare_rope(cache, positions=positions, dtype="float32")
    assert report.causes == ("inv_freq:bfloat16",), str(report)
    assert report.diagnosis is not None and report.diagnosis.endswith("; it reproduces every element."), str(report)
    zeroed = quiet[:2]
    for r in zeroed:
        cache[r] = [0.0] * 16
    report = compare_rope(cache, positions=positions, dtype="float32")
    assert report.causes == ("inv_freq:bfloat16", "damage"), str(report)
    assert f"row {zeroed[0]}, all zeros" in str(report.diagnosis) and f"row {zeroed[1]}, all zeros" in str(
        report.diagnosis
    ), str(report)
    for r in quiet[:400]:
        cache[r] = [x + 0.25 for x in cache[r]]
    report = compare_rope(cache, positions=positions, dtype="float32")
    assert report.causes == (), str(report)
    assert str(report.diagnosis).endswith("but elsewhere the table differs from it by more than local damage."), str(
        report
    )


def test_a_setup_read_from_a_cache_names_its_local_damage_as_a_tables_convention_does() -> None:
    # The setup read from the cache is checked on every element, and what it misses is told as a table's
    # damage is (rows zeroed, moved, isolated elements), with the cause "damage". Before, the rotary diagnosis
    # counted the failures only ("it passes on all but 16 of the 32768 elements (damage)").
    cos = rope(2048, 16, base=500000, layout="interleaved", dtype="float32")[0]
    cos[700] = [0.0] * 16
    report = compare_rope(cos, dtype="float32")
    assert report.causes == ("layout", "base", "damage"), str(report)
    assert report.diagnosis == (
        "Diagnosis: the table follows the RoPE cos cache (half layout, base 10000) in the interleaved layout and"
        " with base 500000 instead of 10000, except for row 700, all zeros (as the row of a padding index is)."
        " The call that computes it without the damage: rope(2048, 16, base=500000, layout='interleaved',"
        " dtype='float32')[0] (on the command line: --rope cos --base 500000 --rope-layout interleaved"
        " --dtype float32)."
    ), str(report)


def test_an_angle_whose_other_rounding_is_past_float16_is_judged_without_it() -> None:
    # Angles in [65512, 65520) round to 65504 in float16; their other neighbour, 2a - 65504, is past the
    # format (infinite), whose cosine cannot be taken: that element has no other rounding, and the
    # diagnosis goes on (it raised ValueError: math domain error).
    positions = [65512 + i for i in range(8)]
    inv_freq = [10000.0 ** (-k / 64) for k in range(64)]
    cache = [[math.cos(pe_reference._round_float(p * w, "float16")) for w in inv_freq] * 2 for p in positions]
    cache[3][70] = 5.0
    report = compare_rope(cache, positions=positions)
    assert report.causes == ("angles:float16", "damage"), str(report)
    assert "except for 1 element: [3][70] is 5.0" in str(report.diagnosis), str(report)


def test_a_damaged_cache_is_told_by_its_simplest_story() -> None:
    # One element off in a cache of base 500000: the setup read from it picks up a yarn scaling of factor 1
    # that changes nothing, while the story with one cause (the base) explains it as well; the fewest causes
    # win, as they did when the sample alone was judged.
    cos = rope(32, 8, base=500000, dtype="float32")[0]
    cos[5][1] = 0.3
    report = compare_rope(cos, dtype="float32")
    assert report.causes == ("base", "damage"), str(report)
    assert "with base 500000, except for 1 element: [5][1] is 0.30000001192092896" in str(report.diagnosis)
