"""The known errors of the seed documents (../shared/seeds/README.md), pinned.

Each test states the slip and checks that pe_reference does not repeat it,
against an independent reference (mpmath) where a value is involved.
"""

import math

import mpmath
import pytest

from pe_reference import derivation, encoding, main, value
from tests import reference


def test_exponent_of_pair_1_at_d4_is_one_half_not_one_quarter() -> None:
    # Seed 002 wrote 10000^((2*1)/4) = 10000^(1/4) = 10.
    text = derivation(1, 2, 4)
    assert "10000^((2*1)/4) = " not in text or "10000^0.5" in text
    assert "sin(1 / 10000^0.5) = sin(1 / 100)" in text
    assert "1/4" not in text and "0.25" not in text and "/ 10)" not in text


def test_pos_1_dim_2_is_sin_of_0_01_not_0_1() -> None:
    # Seed 002 wrote sin(0.1) = 0.00999983; 0.00999983 is sin(0.01).
    got = value(1, 2, 4)
    with mpmath.workprec(reference.PRECISION):
        sin_0_01, sin_0_1 = mpmath.sin(mpmath.mpf("0.01")), mpmath.sin(mpmath.mpf("0.1"))
    assert reference.distance(got, sin_0_01) < 1e-17
    assert reference.distance(got, sin_0_1) > 0.08
    assert "sin(0.01) ≈ 0.0099998333" in derivation(1, 2, 4)
    for pos in range(4):
        for dim in range(4):
            assert "(0.1)" not in derivation(pos, dim, 4)


def test_fourth_row_is_position_3(capsys: pytest.CaptureFixture[str]) -> None:
    # Seed 002 labelled the fourth row "pos 4".
    assert main(["4", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    labels = [line.split()[0] for line in lines[1:]]
    assert labels == ["0", "1", "2", "3"]
    assert lines[4].split()[1:] == [repr(x) for x in encoding(4, 4)[3]]


def test_value_at_position_0_is_sin_0() -> None:
    # Seed 002 said "sine(1)=0" for the first token's first value.
    assert value(0, 0, 4) == 0.0
    assert "sin(0) = 0.0" in derivation(0, 0, 4)
    assert value(1, 0, 4) == math.sin(1.0) != 0.0


def odd_exponent_cosine(pos: int, dim: int, d_model: int) -> float:
    """Seed 000's mistake: the cosine of odd column j uses exponent j/d, not (j-1)/d."""
    return math.cos(pos / 10000.0 ** (dim / d_model))


def test_cosine_columns_use_the_pair_exponent() -> None:
    # Seed 000 computed cos(pos / 10000^(j/d)) for odd j; at d = 8 over
    # 256 positions that is wrong by up to 2.0.  The reference is not.
    d_model, seq_len = 8, 256
    table = encoding(seq_len, d_model)
    worst_seed_error = 0.0
    for pos, row in enumerate(table):
        for dim in range(1, d_model, 2):
            truth = reference.element(pos, dim, d_model, 10000)
            assert reference.distance(row[dim], truth) < 1e-13
            worst_seed_error = max(worst_seed_error, reference.distance(odd_exponent_cosine(pos, dim, d_model), truth))
    assert worst_seed_error > 1.99


@pytest.mark.parametrize("d_model", [1, 3, 5, 7, 9, 511])
def test_odd_d_model_does_not_crash(d_model: int) -> None:
    # Seeds 001, 003 and 004 crash for an odd d_model.
    table = encoding(5, d_model)
    assert [len(row) for row in table] == [d_model] * 5
    for pos in range(5):
        assert reference.distance(table[pos][-1], reference.element(pos, d_model - 1, d_model, 10000)) < 1e-15
    assert main([str(5), str(d_model), "--format", "csv"]) == 0
