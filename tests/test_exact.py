"""Exact mode against an independent reference (mpmath at 600 bits), in all four formats."""

import inspect
import json
import random
import struct
from pathlib import Path
from typing import Any, Dict, List, Tuple, Union

import mpmath
import pytest

import pe_reference
from pe_reference import encoding, rows, value
from tests import reference

DTYPES = list(reference.FORMATS)
DATA = Path(__file__).parent / "data"


def same(got: float, want: float) -> bool:
    """Equal as bit patterns: also tells 0.0 from -0.0."""
    return struct.pack("<d", got) == struct.pack("<d", want)


def random_cases(seed: int, count: int) -> List[Tuple[int, int, int, Union[int, float]]]:
    generator = random.Random(seed)
    cases = []
    for _ in range(count):
        d_model = generator.choice([1, 2, 3, 4, 7, 64, 512, 1000, 4096, 8192])
        dim = generator.randrange(d_model)
        pos = generator.choice(
            [1, 2, 3, generator.randrange(1, 5000), generator.randrange(1, 10**6), generator.randrange(1, 10**9 + 1)]
        )
        base = generator.choice([10000.0, 500000.0, 10000, 12345.678, 2.5, 0.75])
        cases.append((pos, dim, d_model, base))
    return cases


# A fixed seed per format: the same cases on every run.
SEEDS = {"float64": 64, "float32": 32, "bfloat16": 16, "float16": 15}


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_values(dtype: str) -> None:
    for pos, dim, d_model, base in random_cases(SEEDS[dtype], 150):
        want = reference.expected(pos, dim, d_model, base, dtype)
        got = value(pos, dim, d_model, base=base, exact=True, dtype=dtype)
        assert same(got, want), (pos, dim, d_model, base, dtype, got, want)


def near_multiples_of_half_pi(w: "mpmath.mpf", limit: int, count: int) -> List[int]:
    """Positions p <= limit whose angle p*w lies close to a multiple of pi/2 (continued fractions)."""
    with mpmath.workprec(reference.PRECISION):
        ratio = (mpmath.pi / 2) / w  # p ~ k * ratio
        found = []
        # Convergents q of ratio: q * (1/ratio) is nearly an integer k.
        x = 1 / ratio
        h0, h1, k0, k1 = 0, 1, 1, 0
        for _ in range(60):
            a = int(mpmath.floor(x))
            h0, h1 = h1, a * h1 + h0
            k0, k1 = k1, a * k1 + k0
            if k1 > limit:
                break
            if k1 > 0:
                found.append(k1)
            fraction = x - a
            if fraction == 0:
                break
            x = 1 / fraction
    return found[-count:]


@pytest.mark.parametrize("dtype", DTYPES)
def test_angles_near_multiples_of_half_pi(dtype: str) -> None:
    # Where sin or cos is tiny, its relative accuracy needs many more bits.
    closest = mpmath.mpf(1)
    for pair, d_model, base in [(0, 4, 10000.0), (1, 4, 10000.0), (3, 64, 500000.0), (5, 512, 12345.678)]:
        w = reference.frequency(pair, d_model, base)
        for pos in near_multiples_of_half_pi(w, 10**9, 4):
            with mpmath.workprec(reference.PRECISION):
                distance = abs(mpmath.mpf(pos) * w - mpmath.nint(pos * w / (mpmath.pi / 2)) * mpmath.pi / 2)
            closest = min(closest, distance)
            for dim in (2 * pair, 2 * pair + 1):
                want = reference.expected(pos, dim, d_model, base, dtype)
                assert same(value(pos, dim, d_model, base=base, exact=True, dtype=dtype), want), (
                    pos,
                    dim,
                    d_model,
                    base,
                )
    assert closest < mpmath.ldexp(1, -20)


@pytest.mark.parametrize("dtype", DTYPES)
def test_huge_positions(dtype: str) -> None:
    for pos in (10**12, 2**64 + 1, 10**30, 3**100):
        for dim, d_model in ((0, 4), (1, 4), (6, 8), (511, 512)):
            want = reference.expected(pos, dim, d_model, 10000.0, dtype)
            assert same(value(pos, dim, d_model, exact=True, dtype=dtype), want), (pos, dim, d_model)


@pytest.mark.parametrize("dtype", DTYPES)
def test_exact_tables_are_the_reference_rounded_once(dtype: str) -> None:
    for seq_len, d_model, base in [(40, 64, 10000.0), (12, 7, 500000.0), (9, 33, 12345.678), (5, 16, 10000)]:
        table = encoding(seq_len, d_model, base=base, exact=True, dtype=dtype)
        for dim in range(d_model):
            w = reference.frequency(dim // 2, d_model, base)
            for pos in range(seq_len):
                want = reference.round_to(reference.element(pos, dim, d_model, base, w), dtype)
                assert same(table[pos][dim], want), (pos, dim, d_model, base, dtype)


def test_table_across_anchors() -> None:
    # The recurrence restarts from a new anchor every 1024 rows.
    stream = rows(3100, 6, exact=True)
    for pos, row in enumerate(stream):
        if pos % 1024 in (0, 1, 2, 1021, 1022, 1023) or pos == 3099:
            for dim in range(6):
                assert same(row[dim], reference.expected(pos, dim, 6, 10000.0, "float64")), (pos, dim)


def test_table_equals_values() -> None:
    table = encoding(1100, 10, base=500000.0, exact=True, dtype="float32")
    generator = random.Random(5)
    for _ in range(300):
        pos, dim = generator.randrange(1100), generator.randrange(10)
        assert same(table[pos][dim], value(pos, dim, 10, base=500000.0, exact=True, dtype="float32"))


def test_subnormal_results() -> None:
    # float16's smallest normal is 2**-14: sin of a small angle lands below it.
    base = 2.0**40  # w = 2**-20 for pair 1 of 4: between 2**-24 and 2**-14
    for pos in (1, 3, 7):
        for dtype in DTYPES:
            want = reference.expected(pos, 2, 4, base, dtype)
            assert same(value(pos, 2, 4, base=base, exact=True, dtype=dtype), want)
    assert 0 < value(1, 2, 4, base=base, exact=True, dtype="float16") < 2.0**-14


def test_position_zero_is_exact() -> None:
    for dtype in DTYPES:
        assert encoding(1, 5, exact=True, dtype=dtype) == [[0.0, 1.0, 0.0, 1.0, 0.0]]


def test_results_are_representable_in_their_format() -> None:
    for dtype in DTYPES:
        for x in encoding(3, 64, exact=True, dtype=dtype)[2]:
            assert reference.round_to(x, dtype, exact=True) == x


def test_fast_path_dtype_rounds_the_float64_values() -> None:
    table = encoding(20, 16)
    for dtype in DTYPES:
        rounded = encoding(20, 16, dtype=dtype)
        for fast_row, row in zip(table, rounded):
            assert [reference.round_to(x, dtype, exact=True) for x in fast_row] == row


# The 15 elements of the 5000 x 512 table where rounding the correctly
# rounded float32 again to bfloat16 misses the correctly rounded bfloat16
# (found by a scan of the whole table; each is checked here against mpmath).
DOUBLE_ROUNDING_CASES = [
    (45, 111),
    (450, 239),
    (589, 283),
    (799, 248),
    (1025, 322),
    (1075, 13),
    (1214, 405),
    (1247, 432),
    (2603, 103),
    (3231, 415),
    (3805, 64),
    (4235, 353),
    (4500, 367),
    (4854, 338),
    (4952, 13),
]


def test_double_rounding_would_be_wrong() -> None:
    # Exact mode rounds once, from the true value, straight to the format.
    for pos, dim in DOUBLE_ROUNDING_CASES:
        true = reference.element(pos, dim, 512, 10000.0)
        once = reference.round_to(true, "bfloat16")
        twice = reference.round_to(mpmath.mpf(reference.round_to(true, "float32")), "bfloat16", exact=True)
        assert once != twice
        assert same(value(pos, dim, 512, exact=True, dtype="bfloat16"), once)
        assert same(value(pos, dim, 512, exact=True, dtype="float32"), reference.round_to(true, "float32"))


def load_corpus() -> List[Dict[str, Any]]:
    cases: List[Dict[str, Any]] = json.loads((DATA / "hard_cases.json").read_text())["cases"]
    return cases


def test_hard_case_corpus() -> None:
    cases = load_corpus()
    assert len(cases) >= 100
    for case in cases:
        base = case["base"] if isinstance(case["base"], int) else float.fromhex(case["base"])
        got = value(case["pos"], case["dim"], case["d_model"], base=base, exact=True, dtype=case["dtype"])
        assert reference.bits(got, case["dtype"]) == int(case["bits"], 16), case


@pytest.mark.long
def test_long_run() -> None:
    """Over a million values against mpmath (pytest --long); several minutes."""
    checked = 0
    generator = random.Random(2026)
    shapes = [(2048, 512, 10000.0), (1200, 256, 500000.0), (1100, 128, 12345.678), (2000, 64, 10000)]
    for seq_len, d_model, base in shapes:
        for dtype in DTYPES:
            table = encoding(seq_len, d_model, base=base, exact=True, dtype=dtype)
            frequencies = [reference.frequency(pair, d_model, base) for pair in range((d_model + 1) // 2)]
            step = 1 if dtype == "float64" else 3
            for pos in range(0, seq_len, step):
                for dim in range(d_model):
                    want = reference.round_to(reference.element(pos, dim, d_model, base, frequencies[dim // 2]), dtype)
                    assert same(table[pos][dim], want), (pos, dim, d_model, base, dtype)
                    checked += 1
    for pos, dim, d_model, base in random_cases(99, 20000):
        dtype = generator.choice(DTYPES)
        assert same(
            value(pos, dim, d_model, base=base, exact=True, dtype=dtype),
            reference.expected(pos, dim, d_model, base, dtype),
        )
        checked += 1
    print(f"long run: {checked} values agree with mpmath")
    assert checked >= 10**6


def test_float64_finish_literals_are_its_named_constants() -> None:
    """_finish_rows writes _LOW_MASK, _HALF_WINDOW and _WINDOW_BITS as literals (faster); they must stay the same."""
    source = inspect.getsource(pe_reference._finish_rows)
    assert pe_reference._LOW_MASK == (1 << 53) - 1 and f"v & {pe_reference._LOW_MASK}" in source
    assert pe_reference._HALF_WINDOW == 1 << 21 and f"v + {pe_reference._HALF_WINDOW}" in source
    assert pe_reference._WINDOW_BITS == (1 << 40) - (1 << 22) and f") & {pe_reference._WINDOW_BITS}" in source
    # The halves: v >> 53 scaled by 2**(53 - P) and the low 53 bits by 2**-P, P the table's fraction bits.
    high, low, _ = pe_reference._finish_constants()
    assert high == 2.0 ** (53 - pe_reference._TABLE_BITS) and low == 2.0**-pe_reference._TABLE_BITS
