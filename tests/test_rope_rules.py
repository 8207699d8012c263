"""The rotary diagnosis's rules the mutation run found untested (tests/test_rope_cases.py has the whole-model cases)."""

import math
from typing import Dict

import pytest

import pe_reference
from pe_reference import apply_rope, compare_rope, rope

YARN = {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 16}
PREFIX = "Diagnosis: the table is the RoPE cos cache (half layout, base 10000, yarn scaling) "
SUFFIX = "; that reproduces 100% of the sampled elements."


@pytest.mark.parametrize("scaling", [YARN, dict(YARN, rope_theta=10000)])
def test_another_base_is_tried_with_the_same_scaling(scaling: Dict[str, object]) -> None:
    # The table has yarn scaling at base 500000: only a candidate keeping the scaling (and dropping the
    # scaling's own rope_theta) reproduces it.
    cos, _ = rope(40, 16, base=500000, scaling=YARN)
    report = compare_rope(cos, scaling=scaling)
    assert report.causes == ("base",)
    assert report.diagnosis == PREFIX + "with base 500000" + SUFFIX


@pytest.mark.parametrize(
    "made_with, words",
    [
        ({"rope_type": "dynamic", "factor": 4, "max_position_embeddings": 16}, "dynamic"),
        ({"rope_type": "linear", "factor": 4}, "linear"),
        (
            {
                "rope_type": "llama3",
                "factor": 4,
                "low_freq_factor": 1,
                "high_freq_factor": 4,
                "original_max_position_embeddings": 16,
            },
            "llama3",
        ),
    ],
)
def test_each_other_scaling_with_the_same_factor_and_length_is_tried(made_with: Dict[str, object], words: str) -> None:
    # 40 rows, past the length 16: dynamic's base has grown.
    cos, _ = rope(40, 16, scaling=made_with)
    report = compare_rope(cos, scaling=YARN)
    assert report.causes == ("scaling",)
    assert report.diagnosis == PREFIX + f"with {words} scaling instead" + SUFFIX


@pytest.mark.parametrize("dtype, precision", [("bfloat16", 8), ("float16", 11), ("float32", 24)])
def test_a_candidate_reproduces_an_element_within_the_formats_storing_error(dtype: str, precision: int) -> None:
    # At position 0 every cos is 1: the allowance is 2**-18 (1 + |angle| = 1) for the arithmetic plus
    # 2**(1 - p) max(1, |value|) for storing, so 2**(1-p) + 2**-18 in all.
    setup = pe_reference._Rope(8, None, "half", None)
    storing = 2.0 ** (1 - precision)
    for error, share in ((storing, 1.0), (storing + 2.0**-17, 7 / 8)):
        row = [1.0] * 8
        row[3] = 1.0 - error
        assert pe_reference._rope_share([row], [0], setup, "cos", None, [0.0], None, {}, 1.0, dtype) == share


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
