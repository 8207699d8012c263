"""Exact mode against an independent reference (mpmath at 600 bits), in all four formats."""

import inspect
import json
import math
import random
import struct
from fractions import Fraction
from pathlib import Path
from typing import Any, Dict, List, Tuple, Union

import mpmath
import pytest

import pe_reference
from pe_reference import Convention, encoding, rows, value
from tests import reference
from tests.helpers import run_main

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


# ---------------------------------------------------------------------------
# Exact numbers: reading, converting and writing back fractions
# ---------------------------------------------------------------------------


def ulp(x: float) -> float:
    """math.ulp(x) (Python 3.9+), on 3.8 too: the gap from |x| to the next float away from zero."""
    bits = struct.unpack("<q", struct.pack("<d", abs(x)))[0]
    return float(struct.unpack("<d", struct.pack("<q", bits + 1))[0]) - abs(x)


@pytest.mark.parametrize(
    "numerator_bits, denominator_bits",
    [(65, 1001), (1001, 65), (64, 1001), (1001, 64), (66, 1100), (1080, 66), (1050, 1040), (1, 1010), (1010, 1)],
)
def test_a_fraction_with_a_part_past_2_to_the_1000_converts_to_within_an_ulp_of_its_value(
    numerator_bits: int, denominator_bits: int
) -> None:
    generator = random.Random(numerator_bits * 10007 + denominator_bits)
    for _ in range(20):
        n = generator.getrandbits(numerator_bits) | 1 << (numerator_bits - 1)
        m = generator.getrandbits(denominator_bits) | 1 << (denominator_bits - 1)
        for sign in (1, -1):
            got = pe_reference._to_float((sign * n, m))
            want = float(Fraction(sign * n, m))
            assert abs(got - want) <= ulp(want), (n, m)


@pytest.mark.parametrize(
    "text, value",
    [
        ("+2.5", Fraction(5, 2)),
        ("+500", Fraction(500)),
        ("+1e-3", Fraction(1, 1000)),
        ("-2.5", Fraction(-5, 2)),
        ("+1/3", Fraction(1, 3)),
    ],
)
def test_a_decimal_may_carry_a_sign_and_a_plus_changes_nothing(text: str, value: Fraction) -> None:
    n, m = pe_reference._rational("start", text)
    assert Fraction(n, m) == value
    assert Fraction(str(Convention(start=text).start)) == value


@pytest.mark.parametrize(
    "given",
    [
        Fraction(-(2**53 + 1), 2),
        Fraction(2**53 + 1, 2),
        Fraction(-(2**54 - 1), 4),
        Fraction(-(2**53 - 1), 2),
        Fraction(-3, 2**1074),
        Fraction(7, 2**60),
        Fraction(-5, 8),
    ],
)
def test_a_conventions_number_reads_back_as_exactly_what_was_given(given: Fraction) -> None:
    # A float when one holds it exactly, else its decimal or n/m text: either way the same number.
    start = Convention(start=given).start
    assert isinstance(start, (int, float, str))
    assert Fraction(start) == given, start


def test_a_fraction_needing_more_than_30_decimal_places_is_written_as_n_over_m() -> None:
    # 1/2**30 has 30 decimal places; 1/2**31 would need 31.
    assert "p = 0.000000000931322574615478515625, " in str(Convention(start=Fraction(1, 2**30)))
    assert "p = 1/2147483648, 2147483649/2147483648, " in str(Convention(start=Fraction(1, 2**31)))
    assert "p = 1/3, 4/3, 7/3, ..." in str(Convention(start="1/3"))


class OnlyAnIndex:
    """An integer-like object with __index__ and nothing else (no numerator, no as_integer_ratio)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


def test_a_number_known_only_by_its_index_is_that_integer() -> None:
    convention = Convention(base=OnlyAnIndex(100), start=OnlyAnIndex(3))
    assert convention.base == 100 and convention.start == 3
    assert pe_reference.encoding(2, 4, base=OnlyAnIndex(100)) == pe_reference.encoding(2, 4, base=100)


# ---------------------------------------------------------------------------
# The exact kernel: ties to even, and every format's bit patterns
# ---------------------------------------------------------------------------


def struct_bits(x: float, dtype: str) -> int:
    """x's IEEE bits in dtype, which holds x exactly: by struct (bfloat16: float32's top half)."""
    if dtype == "float64":
        return int(struct.unpack("<Q", struct.pack("<d", x))[0])
    if dtype == "float16":
        return int(struct.unpack("<H", struct.pack("<e", x))[0])
    bits = int(struct.unpack("<I", struct.pack("<f", x))[0])
    return bits >> 16 if dtype == "bfloat16" else bits


# (a tie that rounds down to the even neighbour, a tie that rounds up to it), each with its rounding.
TIES = {
    "float32": [(1 + 2**-24, 1.0), (1 + 3 * 2**-24, 1 + 2**-22)],
    "float16": [(1 + 2**-11, 1.0), (1 + 3 * 2**-11, 1 + 2**-9)],
    "bfloat16": [(1 + 2**-8, 1.0), (1 + 3 * 2**-8, 1 + 2**-6)],
}


@pytest.mark.parametrize("dtype", sorted(TIES))
@pytest.mark.parametrize("exact", [True, False])
def test_a_value_halfway_between_two_numbers_of_the_format_rounds_to_the_even_one(dtype: str, exact: bool) -> None:
    # cos(0) times the scale is the scale itself, exactly: a tie in the narrower format (exact=False: the
    # float64 value rounded to the format).
    for scale, rounded in TIES[dtype]:
        if dtype != "bfloat16":  # the C library's conversion agrees with the hand-worked rounding
            code = "<f" if dtype == "float32" else "<e"
            assert struct.unpack(code, struct.pack(code, scale))[0] == rounded
        assert encoding(1, 2, scale=scale, exact=exact, dtype=dtype) == [[0.0, rounded]]
        # cos of half a turn is -1 exactly, and -1.0 in float64 too: the negative tie.
        half_turn = encoding(1, 2, scale=scale, full_turns=True, positions=[0.5], exact=exact, dtype=dtype)
        assert half_turn[0][1] == -rounded


def special_values(dtype: str) -> List[float]:
    precision, emin, exponent_bits = {
        "float64": (53, -1022, 11),
        "float32": (24, -126, 8),
        "bfloat16": (8, -126, 8),
        "float16": (11, -14, 5),
    }[dtype]
    smallest_normal = 2.0**emin
    largest = (2 - 2.0 ** (1 - precision)) * 2.0 ** (2 ** (exponent_bits - 1) - 1)
    values = [
        0.0,
        -0.0,
        math.inf,
        -math.inf,
        smallest_normal,
        -smallest_normal,
        largest,
        -largest,
        2.0 ** (emin - precision + 1),
        smallest_normal - 2.0 ** (emin - precision + 1),
        1.0,
        -1.0,
        -0.5,
    ]
    generator = random.Random(precision)
    for _ in range(200):  # numbers of the format: a random significand at a random exponent, both signs
        e = generator.randint(emin - precision + 1, 2 ** (exponent_bits - 1) - 1)
        m = generator.getrandbits(precision) | 1 << (precision - 1)
        value = math.ldexp(m, e - precision + 1)
        if e < emin:  # subnormal: keep only the bits the format has
            value = math.ldexp(m >> (emin - e), emin - precision + 1)
        values += [value, -value]
    return values


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_each_values_bit_pattern_is_its_ieee_encoding(dtype: str) -> None:
    for x in special_values(dtype):
        assert pe_reference._bit_pattern(x, dtype) == struct_bits(x, dtype), (x, dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_the_hex_table_prints_each_values_ieee_bits_negative_ones_too(
    capsys: "pytest.CaptureFixture[str]", dtype: str
) -> None:
    status, out, err = run_main(capsys, "5", "4", "--exact", "--dtype", dtype, "--format", "hex")
    assert (status, err) == (0, "")
    table = encoding(5, 4, exact=True, dtype=dtype)
    assert any(x < 0 for row in table for x in row)  # cos(2), cos(3), sin(4)
    printed = [[int(cell, 16) for cell in line.split(",")] for line in out.splitlines()]
    assert printed == [[struct_bits(x, dtype) for x in row] for row in table]


# The largest finite number of each format: its bits, its largest exponent and its precision.
LARGEST = {"float32": (0x7F7FFFFF, 127, 24), "bfloat16": (0x7F7F, 127, 8), "float16": (0x7BFF, 15, 11)}


@pytest.mark.parametrize("dtype", sorted(LARGEST))
def test_the_largest_number_of_a_format_is_kept_and_the_midpoint_above_it_rounds_to_infinity(dtype: str) -> None:
    bits, emax, precision = LARGEST[dtype]
    largest = (2 - 2.0 ** (1 - precision)) * 2.0**emax
    assert struct_bits(largest, dtype) == bits
    # Halfway to 2**(emax + 1): a tie, and the even neighbour is 2**(emax + 1), past the format: infinity.
    midpoint = (2 - 2.0**-precision) * 2.0**emax
    just_below = midpoint - 2.0 ** (emax - precision - 20)
    for sign in (1, -1):
        assert pe_reference._round_float(sign * largest, dtype) == sign * largest
        assert pe_reference._round_float(sign * just_below, dtype) == sign * largest
        assert pe_reference._round_float(sign * midpoint, dtype) == sign * math.inf


@pytest.mark.parametrize("position", [(1, 1), (-5, 3), (10**6, 1), (10**12 + 3, 7), (1, 10**9)])
@pytest.mark.parametrize("exponent", [(0, 1), (1, 4), (5, 8)])
def test_sin_and_cos_are_within_the_error_the_kernel_states(
    position: Tuple[int, int], exponent: Tuple[int, int]
) -> None:
    # _sin_cos promises sin and cos of position * 10000**(-t) with F fraction bits, each within E units;
    # large positions take many quarter turns off, each paying for pi/2's error.
    frequencies = pe_reference._Frequencies((10000, 1), (1, 1), False)
    for bits in (60, 120):
        sine, cosine, F, error = pe_reference._sin_cos(position, exponent, frequencies, bits)
        assert error >= 1
        with mpmath.workprec(F + 200):
            theta = mpmath.mpf(position[0]) / position[1] * mpmath.power(10000, -mpmath.mpf(exponent[0]) / exponent[1])
            scale = mpmath.ldexp(1, F)
            assert abs(sine - mpmath.sin(theta) * scale) <= error
            assert abs(cosine - mpmath.cos(theta) * scale) <= error


OUTPUT_SCALES = [
    # (the scale, its true value): roots of fractions, and YaRN's and LongRoPE's transcendental factors.
    (pe_reference._OutputScale("square", ((2, 3),), 0.0), lambda: mpmath.sqrt(mpmath.mpf(2) / 3)),
    (pe_reference._OutputScale("square", ((1, 512),), 0.0), lambda: mpmath.sqrt(mpmath.mpf(1) / 512)),
    (pe_reference._OutputScale("square", ((9, 4),), 0.0), lambda: mpmath.mpf(3) / 2),
    (
        pe_reference._OutputScale("yarn", ((4, 1), (1, 1), (0, 1)), 0.0),
        lambda: mpmath.mpf("0.1") * mpmath.log(4) + 1,
    ),
    (
        pe_reference._OutputScale("yarn", ((16, 1), (3, 2), (1, 2)), 0.0),
        lambda: (mpmath.mpf("0.15") * mpmath.log(16) + 1) / (mpmath.mpf("0.05") * mpmath.log(16) + 1),
    ),
    (
        pe_reference._OutputScale("longrope", ((32, 1), (4096, 1)), 0.0),
        lambda: mpmath.sqrt(1 + mpmath.log(32) / mpmath.log(4096)),
    ),
]


@pytest.mark.parametrize("scale, true", OUTPUT_SCALES)
def test_an_output_scale_and_a_value_times_it_are_within_the_errors_they_state(scale: Any, true: Any) -> None:
    # fixed(F) is the scale times 2**F within e units; _scale_fixed(v, error, scale, F) is (V + d) times
    # the scale in v's units, |d| <= error, within the bound it returns: checked at both ends of d, for
    # values far below 2**F, near it and far above.
    rng = random.Random(26)
    for F in (8, 30, 61, 130):
        s, e = scale.fixed(F)
        with mpmath.workprec(F + 200):
            exact = true()
            assert abs(s - exact * mpmath.ldexp(1, F)) <= e, F
            for _ in range(20):
                V = rng.choice([1, -1]) * rng.randrange(1 << rng.choice([3, F, F + 1, F + 40]))
                error = rng.choice([0, 1, 7, 1 << (F // 2)])
                for v in (V - error, V + error):
                    product, bound = pe_reference._scale_fixed(v, error, scale, F)
                    assert abs(product - V * exact) <= bound, (F, V, v, error)


@pytest.mark.parametrize(
    "square, times, root",
    [((9, 4), (1, 1), (3, 2)), ((2, 1), (2, 1), (2, 1)), ((2, 3), (1, 1), None), ((4, 18), (1, 2), (1, 3))],
)
def test_an_output_scale_knows_the_root_of_its_square_times_a_fraction_when_it_is_rational(
    square: Tuple[int, int], times: Tuple[int, int], root: Any
) -> None:
    # sqrt(2) * sqrt(2) is 2: the root is of the product, in lowest terms, not the product of roots.
    assert pe_reference._OutputScale("square", (square,), 0.0).root(times) == root
    # A transcendental attention factor times a non-zero rational is never rational.
    assert pe_reference._OutputScale("yarn", ((4, 1), (1, 1), (0, 1)), 0.0).root(times) is None


def test_full_turns_at_each_twenty_fourth_of_a_turn_give_the_correctly_rounded_sine_and_cosine() -> None:
    # sin and cos of 2 pi j / 24: rational (0, +-1/2, +-1) at some j, where no series can decide and the
    # kernel must know the number; irrational at the others. Zeros are exact zeros.
    positions = [f"{j}/24" for j in range(24)]
    table = encoding(24, 2, exact=True, full_turns=True, positions=positions)
    for j, (sine, cosine) in enumerate(table):
        with mpmath.workprec(reference.PRECISION):
            angle = 2 * mpmath.pi * j / 24
            true_sine, true_cosine = mpmath.sin(angle), mpmath.cos(angle)
        assert sine == (0.0 if j % 12 == 0 else reference.round_to(true_sine, "float64")), j
        assert cosine == (0.0 if j % 12 == 6 else reference.round_to(true_cosine, "float64")), j
    assert [table[j][0] for j in (2, 10, 14, 22)] == [0.5, 0.5, -0.5, -0.5]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_the_cosine_of_a_tiny_angle_times_an_irrational_scale_is_correctly_rounded(dtype: str) -> None:
    # cos(1e-40) differs from 1 by 5e-81: the value is sqrt(2/3) a hair below, which only the scale decides.
    got = pe_reference.value(0, 1, 2, exact=True, dtype=dtype, positions=["1e-40"], scale="sqrt(2/3)")
    with mpmath.workprec(reference.PRECISION):
        want = mpmath.sqrt(mpmath.mpf(2) / 3) * mpmath.cos(mpmath.mpf("1e-40"))
    assert got == reference.round_to(want, dtype)


@pytest.mark.parametrize("exact", [True, False])
def test_a_row_computed_alone_is_that_row_of_the_whole_table(exact: bool) -> None:
    # The pictures ask for a few rows of a long table one by one: row r alone starts at position
    # start + r step (exact: its recurrence starts there), whole steps or not.
    for start, step in ((5, 3), ("0.5", "-0.25")):
        convention = pe_reference.Convention(start=start, step=step)
        whole = encoding(9, 6, exact=exact, start=start, step=step)
        for first in (1, 4, 8):
            assert next(pe_reference._rows(convention, 9, 6, exact, "float64", first)) == whole[first], first
    assert encoding(9, 6, exact=exact, start=5, step=3)[4] == encoding(1, 6, exact=exact, start=17)[0]


def test_a_table_anchored_again_every_block_is_the_same_table(monkeypatch: pytest.MonkeyPatch) -> None:
    # The recurrence takes a fresh anchor every _ANCHOR_JUMPS blocks of _ANCHOR_INTERVAL rows (2**26 rows,
    # past any table a test can build): anchored again at every block, each anchor is at its block's
    # first row, start + first step, and the rows are those of one anchor jumped on.
    whole = encoding(2600, 4, exact=True, start=3, step=2)
    monkeypatch.setattr(pe_reference, "_ANCHOR_JUMPS", 1)
    assert encoding(2600, 4, exact=True, start=3, step=2) == whole
