"""Conventions: the presets reproduce each framework's table, in the fast and the exact path."""

import random
import re
from pathlib import Path
from typing import Callable, Dict, List, Tuple, Type

import mpmath
import pytest

from pe_reference import encoding, rows, value
from tests import reference

PRESETS = ["paper", "tensor2tensor", "fairseq", "tf-tutorial", "guided-diffusion"]
SHARED = Path(__file__).resolve().parents[2] / "shared" / "conventions.md"


def independent(preset: str, seq_len: int, d_model: int, base: float = 10000.0) -> List[List["mpmath.mpf"]]:
    """Each framework's table at 600 bits, written from its definition (not from pe_reference)."""
    with mpmath.workprec(reference.PRECISION):
        b = mpmath.mpf(base)
        if preset == "paper":
            # Interleaved; exponent 2i/d with the odd width itself.
            def column(pos: int, j: int) -> "mpmath.mpf":
                angle = pos * b ** (-mpmath.mpf(2 * (j // 2)) / d_model)
                return mpmath.sin(angle) if j % 2 == 0 else mpmath.cos(angle)

            return [[column(pos, j) for j in range(d_model)] for pos in range(seq_len)]
        half = d_model // 2
        first = 2 if preset == "fairseq" else 0
        if preset in ("tensor2tensor", "fairseq"):
            increment = mpmath.log(b) / max(half - 1, 1)
            frequencies = [mpmath.exp(-increment * i) for i in range(half)]
        else:
            frequencies = [mpmath.exp(-mpmath.log(b) * i / half) for i in range(half)]
        table = []
        for pos in range(first, first + seq_len):
            sines = [mpmath.sin(pos * w) for w in frequencies]
            cosines = [mpmath.cos(pos * w) for w in frequencies]
            row = cosines + sines if preset == "guided-diffusion" else sines + cosines
            table.append(row + [mpmath.mpf(0)] * (d_model % 2))
        return table


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("d_model", [1, 2, 4, 5, 6, 9, 64])
def test_presets_are_exact(preset: str, d_model: int) -> None:
    if preset == "tf-tutorial" and d_model % 2:
        with pytest.raises(ValueError, match="d_model must be even in the tf-tutorial convention"):
            encoding(3, d_model, preset=preset)
        return
    want = independent(preset, 12, d_model)
    for dtype in ("float64", "float16"):
        got = encoding(12, d_model, preset=preset, exact=True, dtype=dtype)
        for pos in range(12):
            assert got[pos] == [reference.round_to(x, dtype) for x in want[pos]], (preset, d_model, pos, dtype)


@pytest.mark.parametrize("preset", PRESETS)
def test_presets_fast_path_is_close(preset: str) -> None:
    want = independent(preset, 50, 16)
    got = encoding(50, 16, preset=preset)
    assert max(abs(g - w) for gr, wr in zip(got, want) for g, w in zip(gr, wr)) < 1e-13


def shared_matrices() -> Dict[str, List[List[float]]]:
    """The d = 4 matrices of ../shared/conventions.md, by their heading's first word."""
    text = SHARED.read_text(encoding="utf-8")
    found = {}
    for heading, block in re.findall(r"^([\w-]+)[^\n]*\n```\n(.*?)```", text, re.S | re.M):
        found[heading] = [[float(x) for x in line.strip(" []").split()] for line in block.strip().splitlines()]
    return found


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/conventions.md is not beside the repository")
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
    ({"preset": "bert"}, ValueError, "preset must be one of paper, tensor2tensor, fairseq, tf-tutorial, guided-diffusion, xlm, keras-hub, marian, gpt-j, whisper, m2m100, got 'bert'"),
    ({"preset": 3}, TypeError, "preset must be a str, got int 3"),
    ({"layout": "sin_cos"}, ValueError, "layout must be one of interleaved, sin-cos, cos-sin, got 'sin_cos'"),
    ({"spacing": "t2t"}, ValueError, "spacing must be one of paper, tensor2tensor, got 't2t'"),
    ({"odd": "pad"}, ValueError, "odd must be one of sine, zero, error, got 'pad'"),
    ({"start": -1}, ValueError, "start must be at least 0, got -1"),
    ({"start": 1.0}, TypeError, "start must be an integer, got float 1.0"),
]


@pytest.mark.parametrize("keywords, error, message", BAD)
def test_bad_convention_keywords(keywords: Dict[str, object], error: Type[Exception], message: str) -> None:
    calls: List[Callable[[], object]] = [
        lambda: encoding(2, 4, **keywords),  # type: ignore[arg-type]
        lambda: rows(2, 4, **keywords),  # type: ignore[arg-type]
        lambda: value(1, 1, 4, **keywords),  # type: ignore[arg-type]
    ]
    for call in calls:
        with pytest.raises(error) as caught:
            call()
        assert str(caught.value) == message
