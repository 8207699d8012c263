"""The pictures' rules the mutation run found untested."""

from typing import Any, Iterator, List

import pytest

import pe_reference


@pytest.mark.parametrize("seq_len", [2000, 801, 100, 2])
def test_the_waves_sample_one_row_per_pixel_column_from_the_first_row_to_the_last(
    monkeypatch: pytest.MonkeyPatch, seq_len: int
) -> None:
    asked: List[List[int]] = []
    original = pe_reference._Request.sampled_rows

    def record(self: Any, indices: List[int]) -> Iterator[List[float]]:
        asked.append(list(indices))
        return original(self, indices)

    monkeypatch.setattr(pe_reference._Request, "sampled_rows", record)
    assert pe_reference._waves(pe_reference._Request(seq_len, 2)).startswith(b"\x89PNG\r\n\x1a\n")
    (indices,) = asked
    # The plot is 800 pixels wide: every row when there are fewer, else 800 rows spread evenly.
    assert indices[0] == 0 and indices[-1] == seq_len - 1
    assert indices == sorted(set(indices))
    if seq_len <= 800:
        assert indices == list(range(seq_len))
    else:
        assert len(indices) == 800
        spacing = (seq_len - 1) / 799
        steps = {indices[i + 1] - indices[i] for i in range(len(indices) - 1)}
        assert steps <= {int(spacing), int(spacing) + 1}


def test_a_colour_outside_minus_1_to_1_is_the_colour_of_the_nearer_end() -> None:
    # Pictures of a scaled table hold values past 1: they take the end colours, not colours of their own.
    for far in (1.5, 2.0, 1e300):
        assert pe_reference._colour(far) == pe_reference._colour(1.0)
        assert pe_reference._colour(-far) == pe_reference._colour(-1.0)
    assert pe_reference._colour(-1.0) != pe_reference._colour(-0.9)
