"""RoPE's exact mode against tests/rope_reference.py (mpmath), bit for bit; and that model against HF's own code.

The model is the real-number definition of each scaling variant (docs: /work/notes/rope_api.md), written
from transformers' modeling_rope_utils.py, not from pe_reference.  Here:
- rope(..., exact=True) and apply_rope(..., exact=True) give the model's values rounded once, in all four formats;
- rope's fast path (float64 math) is within 2**-44 * (1 + |angle|) * max(1, A) of the model (why: see
  test_the_fast_path_is_close);
- the two layouts put pair c % h (half) and c // 2 (interleaved) in column c;
- the model's frequencies agree with HF's float32 inv_freq to 4 float32 ulps, its attention factors to 1e-12,
  its L > L0 decisions with HF's dynamic_rope_update, and its rotation with Llama's and GPT-J's code.
"""

import math
import random
import struct
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import mpmath
import pytest

from pe_reference import apply_rope, rope
from tests import reference
from tests import rope_reference as model
from tests.helpers import need
from tests.rope_reference import Rope, Value, column_pair, exact, rounded

DTYPES = list(reference.FORMATS)
Scaling = Optional[Dict[str, Any]]
Position = Union[int, float, str, Fraction]


def bits64(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def same(got: float, want: float) -> bool:
    """The same float; a zero matches either zero (the real value 0 has no sign)."""
    if want == 0:
        return got == 0
    return bits64(got) == bits64(want)


# ----- the cases ----------------------------------------------------------------------------------------------


def short_factors(h: int) -> List[float]:
    return [1.0 + 0.05 * k for k in range(h)]  # binary floats (0.05 is not 1/20): taken as the floats they are


def long_factors(h: int) -> List[Union[float, str]]:
    return [1.25 + 0.75 * k if k % 3 else f"{1 + k}.3" for k in range(h)]  # floats and decimal strings


def variant(name: str, head_dim: int) -> Scaling:
    """One scaling dict per variant, its numbers written in the forms the API takes (int, float, str, Fraction)."""
    h = head_dim // 2
    return {
        "default": None,
        "linear": {"rope_type": "linear", "factor": 2.5},
        "dynamic": {"rope_type": "dynamic", "factor": 4, "max_position_embeddings": 4096},
        "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
        "llama3": {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1,
            "high_freq_factor": "4",
            "original_max_position_embeddings": 8192,
        },
        # Phi-3 style: no factor, so factor = 131072 / 4096 = 32 and A = sqrt(1 + ln 32 / ln 4096) = sqrt(17/12).
        "longrope": {
            "rope_type": "longrope",
            "short_factor": short_factors(h),
            "long_factor": long_factors(h),
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 131072,
        },
    }[name]


VARIANTS = ["default", "linear", "dynamic", "yarn", "llama3", "longrope"]
BASES: List[Union[int, float, str]] = [10000, 500000.0, "1e6"]
TOP = 2**20


def sampled_positions(seed: int, top: int = TOP) -> List[Position]:
    """A few dozen positions in [0, top): the ends, real-valued ones and a sample."""
    generator = random.Random(seed)
    fixed: List[Position] = [0, 1, 2, 0.5, 1e-3, "1e-3", Fraction(22, 7), 1234.75, top - 1]
    if top > 2**16:
        fixed += [2**16 - 0.5, 2**19 + 0.25]
    ints = sorted(generator.randrange(top) for _ in range(9))
    reals: List[Position] = [generator.uniform(0, top - 1) for _ in range(4)]  # binary floats with fraction bits
    return fixed + ints + reals


class Case:
    def __init__(
        self,
        name: str,
        head_dim: int,
        base: Optional[Union[int, float, str]],
        scaling: Scaling,
        positions: List[Position],
        layout: str,
    ) -> None:
        self.name, self.head_dim, self.base, self.scaling = name, head_dim, base, scaling
        self.positions, self.layout = positions, layout

    def options(self) -> Dict[str, Any]:
        options: Dict[str, Any] = {"layout": self.layout, "scaling": self.scaling}
        if self.base is not None:
            options["base"] = self.base
        return options

    def __repr__(self) -> str:
        return f"{self.name}-d{self.head_dim}-base{self.base}-{self.layout}"


def table_cases() -> List[Case]:
    cases = []
    for v, name in enumerate(VARIANTS):
        for i, head_dim in enumerate((64, 128)):
            for j, base in enumerate(BASES):
                seed = 100 * v + 10 * i + j
                layout = ("half", "interleaved")[(v + i + j) % 2]
                cases.append(Case(name, head_dim, base, variant(name, head_dim), sampled_positions(seed), layout))
    h = 32
    # Around L0: L = L0 keeps the original frequencies, L = L0 + 1/2 (> L0) switches.
    for name, L0 in (("dynamic", 4096), ("longrope", 4096)):
        for last in (L0 - 1, L0 - 0.5):
            positions = sampled_positions(7, top=L0 - 1)[:-4] + [last]
            cases.append(Case(f"{name}-L{last + 1}", 64, 10000, variant(name, 64), positions, "half"))
    extra: List[Tuple[str, Optional[Union[int, float, str]], Dict[str, Any]]] = [
        (
            "yarn-mscale-betas",
            500000.0,
            {
                "rope_type": "yarn",
                "factor": "16",
                "original_max_position_embeddings": 8192,
                "mscale": 0.707,
                "mscale_all_dim": 1,
                "beta_fast": 16,
                "beta_slow": "2",
            },
        ),
        (
            "yarn-untruncated",
            10000,
            {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096, "truncate": False},
        ),
        (
            "yarn-equal-mscales",
            10000,
            {
                "rope_type": "yarn",
                "factor": 40,
                "original_max_position_embeddings": 4096,
                "mscale": 1,
                "mscale_all_dim": 1.0,
                "beta_fast": 0,
            },
        ),
        (
            "yarn-given-factor-type-key",
            10000,
            {
                "type": "yarn",
                "factor": Fraction(8),
                "original_max_position_embeddings": 2048,
                "attention_factor": "0.9",
            },
        ),
        (
            "longrope-given",
            1e6,
            {
                "rope_type": "longrope",
                "short_factor": short_factors(h),
                "long_factor": long_factors(h),
                "original_max_position_embeddings": 4096,
                "factor": 4,
                "attention_factor": 1.25,
            },
        ),
        ("linear-third", 10000, {"rope_type": "linear", "factor": "1/3"}),
        ("rope-theta-only", None, {"rope_type": "default", "rope_theta": 500000}),
        (
            "rope-theta-and-base",
            500000,
            {
                "rope_type": "llama3",
                "rope_theta": "5e5",
                "factor": 8,
                "low_freq_factor": 1,
                "high_freq_factor": 4,
                "original_max_position_embeddings": 8192,
            },
        ),
    ]
    for k, (name, given_base, scaling) in enumerate(extra):
        cases.append(Case(name, 64, given_base, scaling, sampled_positions(1000 + k), ("half", "interleaved")[k % 2]))
    return cases


CASES = table_cases()


def model_for(case: Case) -> Rope:
    return Rope(case.head_dim, case.base, case.scaling)


TABLES: Dict[str, Tuple[List[List[Value]], List[List[Value]]]] = {}


def model_table(case: Case) -> Tuple[List[List[Value]], List[List[Value]]]:
    """The model's (cos, sin) for a case, computed once for the exact and the fast-path tests."""
    if repr(case) not in TABLES:
        TABLES[repr(case)] = model_for(case).table(case.positions, case.layout)
    return TABLES[repr(case)]


# ----- the rounding helper and the model, checked -------------------------------------------------------------


def test_rounded_is_reference_round_to() -> None:
    r = Rope(64, 10000, variant("yarn", 64))
    values: List[Value] = []
    for p in (1, 3, 1234.75, TOP - 1, 1e-3, Fraction(1, 10**9)):
        for c, s in r.cos_sin(p):
            values += [c, s]
    with mpmath.workprec(reference.PRECISION):
        values += [mpmath.ldexp(mpmath.mpf(1) / 3, e) for e in range(-160, 17, 3)]  # subnormals of every format
    assert len(values) > 400
    for v in values:
        for dtype in DTYPES:
            assert bits64(rounded(v, dtype)) == bits64(reference.round_to(v, dtype)), (v, dtype)
    # Exact values, ties among them: both go to the even neighbour.
    for x in (
        Fraction(1),
        Fraction(1) + Fraction(1, 2**8),
        Fraction(1) + Fraction(3, 2**8),
        Fraction(-5, 2**26),
        Fraction(1, 3),
    ):
        for dtype in DTYPES:
            with mpmath.workprec(reference.PRECISION):
                assert bits64(rounded(x, dtype)) == bits64(
                    reference.round_to(model.mpf(x), dtype, exact=x.denominator & (x.denominator - 1) == 0)
                )
    assert rounded(Fraction(1) + Fraction(1, 2**8), "bfloat16") == 1.0
    assert rounded(Fraction(1) + Fraction(3, 2**8), "bfloat16") == 1.0 + 2**-6
    assert rounded(Fraction(65520), "float16") == math.inf and rounded(Fraction(65519), "float16") == 65504.0


def test_the_model_is_stable_at_higher_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same values at 1200 bits: agreement to 2**-590 relative says 600 bits are enough (and no step loses them).
    cases = [c for c in CASES if c.head_dim == 64][::4]
    for case in cases:
        positions = case.positions[::4]
        L = max(exact(p) for p in positions) + 1
        low = [model_for(case).cos_sin(p, L) for p in positions]
        monkeypatch.setattr(model, "PRECISION", 1200)
        high = [model_for(case).cos_sin(p, L) for p in positions]
        monkeypatch.setattr(model, "PRECISION", 600)
        with mpmath.workprec(1300):
            for row_low, row_high in zip(low, high):
                for pair_low, pair_high in zip(row_low, row_high):
                    for a, b in zip(pair_low, pair_high):
                        a, b = (model.mpf(v) if isinstance(v, Fraction) else v for v in (a, b))
                        assert abs(a - b) <= abs(b) * mpmath.ldexp(1, -590), case


def test_the_model_default_is_tests_reference() -> None:
    # Pair k of RoPE's default is tests/reference.py's sinusoidal pair k: frequency and both values.
    r = Rope(128, 500000.0)
    with mpmath.workprec(reference.PRECISION):
        for k, w in enumerate(r.frequencies()):
            assert abs(w - reference.frequency(k, 128, 500000.0)) <= w * mpmath.ldexp(1, -590)
    for p in (3, 98765):
        for k, (c, s) in enumerate(r.cos_sin(p)):
            assert rounded(c, "float64") == reference.round_to(
                reference.element(p, 2 * k + 1, 128, 500000.0), "float64"
            )
            assert rounded(s, "float64") == reference.round_to(reference.element(p, 2 * k, 128, 500000.0), "float64")


def test_the_model_takes_each_variant_real_decision() -> None:
    # Checks on the model's branches that do not need transformers.
    d64 = Rope(64, 10000, variant("dynamic", 64))
    assert d64.frequencies(Fraction(4096)) == Rope(64, 10000).frequencies()  # L = L0: unchanged
    assert d64.frequencies(Fraction(8193, 2))[1] < Rope(64, 10000).frequencies()[1]  # L0 + 1/2: a larger base
    yarn = Rope(128, 10000, variant("yarn", 128))
    assert yarn.yarn_range() == (Fraction(20), Fraction(46))  # raw 20.94 / 45.03 (issue12_facts.md)
    assert (
        Rope(
            64, 10000, {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096, "truncate": False}
        ).yarn_range()[0]
        != 10
    )
    longrope = Rope(64, 10000, variant("longrope", 64))
    with mpmath.workprec(reference.PRECISION):
        plain = Rope(64, 10000).frequencies()
        assert abs(longrope.attention_factor() - mpmath.sqrt(mpmath.mpf(17) / 12)) < mpmath.ldexp(1, -590)
        short, long = longrope.frequencies(Fraction(4096)), longrope.frequencies(Fraction(8193, 2))
        for k in (1, 2, 5):  # w / ext_k, ext the short set at L = L0, the long set past it
            assert abs(short[k] * model.mpf(exact(short_factors(32)[k])) - plain[k]) < plain[k] * mpmath.ldexp(1, -590)
            assert abs(long[k] * model.mpf(exact(long_factors(32)[k])) - plain[k]) < plain[k] * mpmath.ldexp(1, -590)
    assert (
        Rope(
            64,
            10000,
            {
                "rope_type": "yarn",
                "factor": 40,
                "original_max_position_embeddings": 4096,
                "mscale": 1,
                "mscale_all_dim": 1.0,
            },
        ).attention_factor()
        == 1
    )
    with pytest.raises(ValueError):
        Rope(64, 10000, {"rope_type": "linear", "factor": 2, "colour": 1})


# ----- rope(exact=True): every value, every format --------------------------------------------------------------


def mismatches(
    got: Sequence[Sequence[float]],
    want: Sequence[Sequence[Value]],
    dtype: str,
    positions: Sequence[Position],
    what: str,
) -> List[str]:
    found = []
    assert len(got) == len(want), (what, len(got), len(want))
    for r, (row, truth) in enumerate(zip(got, want)):
        assert len(row) == len(truth), (what, r)
        for c, (g, t) in enumerate(zip(row, truth)):
            w = rounded(t, dtype)
            if not same(g, w):
                found.append(
                    f"{what} row {r} (position {positions[r]!r}) column {c}: got {g!r} ({bits64(g):016x}), "
                    f"want {w!r} ({bits64(w):016x})"
                )
    return found


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_rope_exact_is_the_model_rounded_once(case: Case) -> None:
    cos_true, sin_true = model_table(case)
    found: List[str] = []
    for dtype in DTYPES:
        cos, sin = rope(
            len(case.positions), case.head_dim, positions=case.positions, exact=True, dtype=dtype, **case.options()
        )
        found += mismatches(cos, cos_true, dtype, case.positions, f"{dtype} cos")
        found += mismatches(sin, sin_true, dtype, case.positions, f"{dtype} sin")
    assert not found, f"{len(found)} mismatches; first: " + "\n".join(found[:8])


@pytest.mark.parametrize(
    "positions",
    [
        [Fraction(7 + 2 * r, 2) for r in range(1100)],  # a rising progression with a denominator, past an anchor
        list(range(40, 1140)),  # one run from an offset
        list(range(0, 3300, 3)),
        list(range(600)) + [9, 4, 5] + list(range(500)) + [Fraction(1, 3)],  # packed runs, rows between
        [Fraction(r, 2) for r in range(1100)],  # halves from 0: denominators 1 and 2 in turn, in lowest terms
    ],
    ids=["halves", "offset", "step-3", "packed", "halves-from-0"],
)
def test_positions_given_as_a_progression_are_the_model_rounded_once(positions: List[Position]) -> None:
    # Given positions that rise by one step take the recurrence of positions 0, 1, 2, ..., anchored every
    # 1024 rows, from the first position of each run (not each row computed alone): the values must be the same.
    scaling = {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 512}
    cos_true, sin_true = Rope(16, 10000, scaling).table(positions, "half")
    for dtype in ("float64", "bfloat16"):
        cos, sin = rope(len(positions), 16, scaling=scaling, positions=positions, exact=True, dtype=dtype)
        found = mismatches(cos, cos_true, dtype, positions, f"{dtype} cos")
        found += mismatches(sin, sin_true, dtype, positions, f"{dtype} sin")
        assert not found, f"{len(found)} mismatches; first: " + "\n".join(found[:8])


def test_seq_len_rows_are_positions_0_to_n() -> None:
    # Without positions the rows are 0 .. seq_len-1 and L = seq_len: with L0 = 64, 70 rows change dynamic's base.
    scaling = {"rope_type": "dynamic", "factor": 4, "max_position_embeddings": 64}
    cos_true, sin_true = Rope(64, 10000, scaling).table(list(range(70)), "half")
    cos, sin = rope(70, 64, scaling=scaling, exact=True, dtype="float32")
    assert not mismatches(cos, cos_true, "float32", list(range(70)), "cos")
    assert not mismatches(sin, sin_true, "float32", list(range(70)), "sin")
    assert cos[69] != rope(70, 64, exact=True, dtype="float32")[0][69]  # and the base did change


# ----- apply_rope(exact=True) ---------------------------------------------------------------------------------


def x_rows(seed: int, r: Rope, positions: Sequence[Position], layout: str) -> List[List[float]]:
    """Rows of x from a seeded generator: zeros, plain, wide-ranging and half-zero pairs, and rows whose pairs
    make x_a cos t - x_b sin t (or x_b cos t + x_a sin t) cancel to about 2**-53 of its terms."""
    generator = random.Random(seed)
    d, h = r.d, r.h
    L = max(exact(p) for p in positions) + 1
    rows: List[List[float]] = []
    for i, p in enumerate(positions):
        kind = i % 6
        row = [generator.gauss(0, 1) for _ in range(d)]
        if kind == 0:
            row = [0.0] * d
        elif kind == 1:
            row = [
                generator.choice([-1, 1]) * math.ldexp(generator.random(), generator.randrange(-20, 9))
                for _ in range(d)
            ]
            for c in generator.sample(range(d), d // 4):
                row[c] = 0.0
        elif kind == 2:
            row = [float(generator.randrange(-255, 256)) / 64 for _ in range(d)]  # bfloat16 numbers
        elif kind in (3, 4) and exact(p) != 0:
            with mpmath.workprec(700):
                ws = r.frequencies(L)
                for j in range(h):
                    a, b = (j, j + h) if layout == "half" else (2 * j, 2 * j + 1)
                    tangent = mpmath.tan(model.mpf(exact(p)) * ws[j])
                    if kind == 3:  # x_a / x_b ~ tan t: out[a] cancels
                        row[a] = float(mpmath.mpf(row[b]) * tangent)
                    else:  # x_b / x_a ~ -tan t: out[b] cancels
                        row[b] = float(-mpmath.mpf(row[a]) * tangent)
        elif kind == 5:  # one zero in each pair
            for j in range(h):
                row[generator.choice([j, j + h] if layout == "half" else [2 * j, 2 * j + 1])] = 0.0
        rows.append(row)
    return rows


APPLY_CASES = [
    (name, head_dim, BASES[(v + i) % 3], layout)
    for v, name in enumerate(VARIANTS)
    for i, head_dim in enumerate((64, 128))
    for layout in ("half", "interleaved")
]


@pytest.mark.parametrize(
    "name, head_dim, base, layout", APPLY_CASES, ids=[f"{n}-d{d}-{b}-{lay}" for n, d, b, lay in APPLY_CASES]
)
def test_apply_rope_exact_is_the_model_rounded_once(
    name: str, head_dim: int, base: Union[int, float, str], layout: str
) -> None:
    scaling = variant(name, head_dim)
    r = Rope(head_dim, base, scaling)
    positions: List[Position] = [0, 1, 3, 0.5, 1e-3, 1234.75, TOP - 1, 77777, Fraction(22, 7), 2**19 + 0.25, 65536, 9]
    x = x_rows(20260 + VARIANTS.index(name) * 10 + head_dim // 64 + (layout == "half") * 5, r, positions, layout)
    L = max(exact(p) for p in positions) + 1
    want = [r.rotate(row, p, layout, L) for row, p in zip(x, positions)]
    found: List[str] = []
    for dtype in DTYPES:
        got = apply_rope(x, positions=positions, base=base, layout=layout, scaling=scaling, exact=True, dtype=dtype)
        found += mismatches(got, want, dtype, positions, dtype)
    assert not found, f"{len(found)} mismatches; first: " + "\n".join(found[:8])


def test_the_cancelling_rows_do_cancel() -> None:
    # Guards x_rows: without it the cancellation rows could silently stop cancelling.
    r = Rope(64, 10000)
    positions: List[Position] = [0, 1, 2, 3, 4, 5]
    x = x_rows(5, r, positions, "half")
    out = r.rotate(x[3], 3, "half", 6)
    with mpmath.workprec(700):
        smallest = min(
            abs(model.mpf(v) if isinstance(v, Fraction) else v) / max(abs(x[3][j]), abs(x[3][j + 32]))
            for j, v in enumerate(out[:32])
        )
    assert smallest < mpmath.ldexp(1, -50)


def test_apply_rope_default_positions() -> None:
    x = x_rows(8, Rope(128, 10000), list(range(9)), "half")
    want = [Rope(128, 10000).rotate(row, p, "half", 9) for p, row in enumerate(x)]
    assert not mismatches(apply_rope(x, exact=True, dtype="float32"), want, "float32", list(range(9)), "float32")


# ----- layouts ------------------------------------------------------------------------------------------------


def test_layouts_put_pairs_in_their_columns() -> None:
    scaling = variant("yarn", 16)
    positions: List[Position] = [0, 1, 5, 1000.5]
    half = rope(4, 16, positions=positions, layout="half", scaling=scaling, exact=True)
    inter = rope(4, 16, positions=positions, layout="interleaved", scaling=scaling, exact=True)
    one = rope(4, 16, positions=positions, layout="pairs", scaling=scaling, exact=True)
    pairs = [Rope(16, 10000, scaling).cos_sin(p, Fraction(2003, 2)) for p in positions]
    for table_half, table_inter, table_one, which in ((half[0], inter[0], one[0], 0), (half[1], inter[1], one[1], 1)):
        for r, row in enumerate(pairs):
            for c in range(16):
                assert same(table_half[r][c], rounded(row[c % 8][which], "float64")), (r, c)
                assert same(table_inter[r][c], rounded(row[c // 2][which], "float64")), (r, c)
            # pairs: a half-width cache (torchtune's, Meta's freqs_cis), column k holding pair k once.
            assert len(table_one[r]) == 8
            for k in range(8):
                assert same(table_one[r][k], rounded(row[k][which], "float64")), (r, k)
    # The two layouts differ (so a swap fails): column 1 is pair 1 in half, pair 0 interleaved.
    assert half[0][2][1] != inter[0][2][1]
    # apply_rope: interleaved is half on the permuted columns.
    x = x_rows(9, Rope(16, 10000, scaling), positions, "half")
    order = [c for j in range(8) for c in (j, j + 8)]  # interleaved column 2j <- half column j, 2j+1 <- j+8
    got_half = apply_rope(x, positions=positions, scaling=scaling, exact=True)
    got_inter = apply_rope(
        [[row[c] for c in order] for row in x], positions=positions, layout="interleaved", scaling=scaling, exact=True
    )
    assert got_inter == [[row[c] for c in order] for row in got_half]


# ----- the fast path ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.name in VARIANTS][::2] + [c for c in CASES if c.name not in VARIANTS], ids=repr
)
def test_the_fast_path_is_close(case: Case) -> None:
    """exact=False: plain float64 math, within 2**-44 * (1 + |angle|) * max(1, A) of the model.

    Plain float64 math forms w_k with a few roundings (a pow, a division, the variant's products; dynamic's base'
    through a pow whose error is multiplied by ln(base') <= 30 in base'**t), so the angle p*w_k is off by at
    most about 2**-47 |angle| relative, and cos/sin add about 2**-53 (A a few more ulps).  Measured with a
    direct float64 transcription of each definition on these cases: at most 2**-50.8 (1 + |angle|).  2**-44
    leaves a margin of 8 over the plausible worst; a frequency held in float32 (2**-24) fails it by far."""
    r = model_for(case)
    L = max(exact(p) for p in case.positions) + 1
    cos, sin = rope(len(case.positions), case.head_dim, positions=case.positions, **case.options())
    cos_true, sin_true = model_table(case)
    scale = max(1.0, float(r.attention_factor()))
    worst = 0.0
    with mpmath.workprec(200):
        ws = r.frequencies(L)
        for row_index, p in enumerate(case.positions):
            for c in range(case.head_dim):
                angle = float(abs(model.mpf(exact(p)) * ws[column_pair(c, case.head_dim, case.layout)]))
                bound = 2.0**-44 * (1 + angle) * scale
                for got, true in (
                    (cos[row_index][c], cos_true[row_index][c]),
                    (sin[row_index][c], sin_true[row_index][c]),
                ):
                    error = abs(got - float(true))
                    assert error <= bound, (case, p, c, got, float(true), error / (1 + angle))
                    worst = max(worst, error / (1 + angle) / scale)
    assert worst > 0  # the fast path is float64 math, not the exact values


# ----- the model against transformers' own code ---------------------------------------------------------------


def hf_config(head_dim: int, parameters: Dict[str, Any], max_position_embeddings: int) -> Any:
    need("torch")
    transformers = need("transformers")
    return transformers.LlamaConfig(
        hidden_size=4 * head_dim,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=dict(parameters),
    )


def hf_inv_freq(config: Any, seq_len: Optional[int] = None) -> Tuple[List[float], float]:
    """(inv_freq, attention_factor) from transformers: the Llama default function, else ROPE_INIT_FUNCTIONS."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    kind = config.rope_parameters["rope_type"]
    if kind == "default":
        inv_freq, factor = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        inv_freq, factor = ROPE_INIT_FUNCTIONS[kind](config, device=None, seq_len=seq_len)
    assert str(inv_freq.dtype) == "torch.float32"
    return [float(v) for v in inv_freq.tolist()], float(factor)


def f32_ulps(x: float, true: "mpmath.mpf") -> float:
    """|x - true| in float32 last places of true."""
    exponent = int(mpmath.floor(mpmath.log(abs(true), 2)))
    return float(abs(mpmath.mpf(x) - true) / mpmath.ldexp(1, max(exponent, -126) - 23))


# HF's inv_freq is computed in float32: base ** (arange / dim), 1 / that, the variant's products; measured
# here at most 3.45 ulps (llama3's smoothing, whose s comes from a float32 wavelength).  4 ulps, and for yarn
# more where its float32 ramp's error is magnified (ramp_tolerance).
HF_ULPS = 4.0


def ramp_tolerance(r: Rope, k: int) -> float:
    """HF's yarn ramp (k - low) / (high - low) is a float32 quotient of float32-rounded ends: about 2 float32
    ulps off.  w_k = w ((1 - ramp) + ramp / f) multiplies a relative error of ramp by
    ramp (1 - 1/f) / ((1 - ramp) + ramp / f), large where ramp is near 1 and f is large (measured: 13.3 ulps
    for pair 45 of d=128, base 1e4, f=16, untruncated ramp 0.998)."""
    if r.kind != "yarn":
        return HF_ULPS
    low, high = r.yarn_range()
    factor = r.factor_or_ratio(None)
    ramp = min(max((k - low) / (high - low), Fraction(0)), Fraction(1))
    return HF_ULPS + 2 * float(ramp * (1 - 1 / factor) / ((1 - ramp) + ramp / factor))


# name -> (HF rope_parameters, max_position_embeddings, seq_len passed, what the model adds or reads)
HF_CASES: Dict[str, Tuple[Dict[str, Any], int, Optional[int], Dict[str, Any]]] = {
    "default": ({"rope_type": "default"}, 4096, None, {}),
    "linear": ({"rope_type": "linear", "factor": 2.5}, 4096, None, {}),
    "dynamic-past-L0": ({"rope_type": "dynamic", "factor": 4.0}, 4096, 20000, {"max_position_embeddings": 4096}),
    "dynamic-at-L0": ({"rope_type": "dynamic", "factor": 4.0}, 4096, 4096, {"max_position_embeddings": 4096}),
    "yarn": ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}, 16384, None, {}),
    "yarn-options": (
        {
            "rope_type": "yarn",
            "factor": 16.0,
            "original_max_position_embeddings": 8192,
            "mscale": 0.707,
            "mscale_all_dim": 1.0,
            "truncate": False,
            "beta_fast": 16.0,
            "beta_slow": 2.0,
        },
        131072,
        None,
        {},
    ),
    "yarn-attention-factor": (
        {
            "rope_type": "yarn",
            "factor": 8.0,
            "original_max_position_embeddings": 2048,
            "attention_factor": 0.9,
            "beta_fast": 0,
        },
        16384,
        None,
        {},
    ),
    "yarn-no-factor": (
        {"rope_type": "yarn", "factor": None, "original_max_position_embeddings": 4096},
        32768,
        None,
        {"max_position_embeddings": 32768},
    ),
    "llama3": (
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        131072,
        None,
        {},
    ),
    "longrope-short": (
        {"rope_type": "longrope", "original_max_position_embeddings": 4096},
        131072,
        None,
        {"max_position_embeddings": 131072},
    ),
    "longrope-long": (
        {"rope_type": "longrope", "original_max_position_embeddings": 4096},
        131072,
        4097,
        {"max_position_embeddings": 131072},
    ),
    "longrope-factor": (
        {"rope_type": "longrope", "original_max_position_embeddings": 4096, "factor": 4.0},
        4096,
        4097,
        {},
    ),
}


def hf_longrope_lists(head_dim: int) -> Dict[str, List[float]]:
    # float32 numbers, so torch.tensor(..., float32) holds them exactly.
    h = head_dim // 2
    return {"short_factor": [1 + k / 64 for k in range(h)], "long_factor": [1.5 + k * 0.75 for k in range(h)]}


@pytest.mark.parametrize("name", list(HF_CASES))
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("base", [10000.0, 500000.0, 1000000.0])
def test_the_model_is_transformers_rope(name: str, head_dim: int, base: float) -> None:
    parameters, max_position_embeddings, seq_len, extra = HF_CASES[name]
    parameters = dict(parameters, rope_theta=base)
    if name.startswith("longrope"):
        parameters.update(hf_longrope_lists(head_dim))
    config = hf_config(head_dim, parameters, max_position_embeddings)
    inv_freq, factor = hf_inv_freq(config, seq_len)
    scaling = {k: v for k, v in parameters.items() if v is not None}
    scaling.update(extra)
    r = Rope(head_dim, None, scaling)
    L = Fraction(seq_len) if seq_len is not None else None
    with mpmath.workprec(model.PRECISION):
        ws = r.frequencies(L)
        assert len(inv_freq) == len(ws) == head_dim // 2
        for k, (x, w) in enumerate(zip(inv_freq, ws)):
            assert f32_ulps(x, w) <= ramp_tolerance(r, k), (name, k, x, float(w), f32_ulps(x, w))
        A = r.attention_factor()
        assert abs(float(A) - factor) <= 1e-12, (name, float(A), factor)


def test_the_hf_check_can_fail() -> None:
    # The same comparison catches a wrong variant: yarn's pairs past its ramp are off by the factor 4.
    config = hf_config(
        128,
        {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 4096},
        16384,
    )
    inv_freq, _ = hf_inv_freq(config)
    with mpmath.workprec(model.PRECISION):
        wrong = Rope(128, 10000, {"rope_type": "linear", "factor": 4}).frequencies()
        assert max(f32_ulps(x, w) for x, w in zip(inv_freq, wrong)) > 1e6


@pytest.mark.parametrize("kind", ["dynamic", "longrope"])
def test_the_model_switches_where_transformers_forward_does(kind: str) -> None:
    """HF's dynamic_rope_update: L = max(position_ids) + 1; new frequencies only when L > L0 (strictly)."""
    torch = need("torch")
    config = hf_config(
        64,
        dict(
            {"rope_type": kind, "rope_theta": 10000.0, "factor": 4.0},
            **({"original_max_position_embeddings": 4096} if kind == "longrope" else {}),
            **(hf_longrope_lists(64) if kind == "longrope" else {}),
        ),
        4096,
    )
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    scaling = dict(config.rope_parameters)
    scaling.pop("partial_rotary_factor", None)
    if kind == "dynamic":
        scaling["max_position_embeddings"] = 4096
    r = Rope(64, None, scaling)
    for length in (4096, 4097, 6000, 4096):
        rotary = LlamaRotaryEmbedding(config)  # fresh: dynamic's cache depends on call history
        rotary(torch.zeros(1, 1, 64), torch.arange(length)[None])
        with mpmath.workprec(model.PRECISION):
            ws = r.frequencies(Fraction(length))
            assert max(f32_ulps(float(x), w) for x, w in zip(rotary.inv_freq.tolist(), ws)) <= HF_ULPS, length
            other = r.frequencies(Fraction(length + 1 if length == 4096 else 4096))
            assert max(f32_ulps(float(x), w) for x, w in zip(rotary.inv_freq.tolist(), other)) > 100, length


def test_the_model_half_layout_is_llamas_table_and_rotation() -> None:
    torch = need("torch")
    config = hf_config(
        64, {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 4096}, 16384
    )
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    r = Rope(64, 10000, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096})
    positions = list(range(12))
    cos_hf, sin_hf = LlamaRotaryEmbedding(config)(torch.zeros(1, 1, 64), torch.arange(12)[None])
    cos_true, sin_true = r.table(positions, "half")
    for table_hf, table_true in ((cos_hf[0].tolist(), cos_true), (sin_hf[0].tolist(), sin_true)):
        for row_hf, row_true in zip(table_hf, table_true):
            assert max(abs(a - float(b)) for a, b in zip(row_hf, row_true)) < 2e-6
    # Rotation: HF's apply_rotary_pos_emb in float64 on the model's cos/sin is the model's rotate.
    x = x_rows(3, r, positions, "half")
    cos64 = torch.tensor([[float(v) for v in row] for row in cos_true], dtype=torch.float64)[None]
    sin64 = torch.tensor([[float(v) for v in row] for row in sin_true], dtype=torch.float64)[None]
    q = torch.tensor(x, dtype=torch.float64)[None, None]
    rotated, _ = apply_rotary_pos_emb(q, q, cos64, sin64)
    for p, (row_hf, row) in enumerate(zip(rotated[0, 0].tolist(), x)):
        want = r.rotate(row, p, "half", 12)
        assert max(abs(a - float(b)) for a, b in zip(row_hf, want)) <= 1e-12 * (1 + max(abs(v) for v in row))


def test_the_model_interleaved_layout_is_gptjs() -> None:
    torch = need("torch")
    need("transformers")
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb, create_sinusoidal_positions

    r = Rope(32, 10000)
    positions = list(range(10))
    sincos = create_sinusoidal_positions(10, 32)  # [sin | cos] per position, h columns each, float32
    cos_true, sin_true = r.table(positions, "interleaved")
    for p in positions:
        for c in range(32):
            assert abs(float(sincos[p, 16 + c // 2]) - float(cos_true[p][c])) < 1e-6
            assert abs(float(sincos[p, c // 2]) - float(sin_true[p][c])) < 1e-6
    x = x_rows(4, r, positions, "interleaved")
    per_pair = [r.cos_sin(p, 10) for p in positions]
    sin64 = torch.tensor([[float(s) for _, s in row] for row in per_pair], dtype=torch.float64)[None]
    cos64 = torch.tensor([[float(c) for c, _ in row] for row in per_pair], dtype=torch.float64)[None]
    rotated = apply_rotary_pos_emb(torch.tensor(x, dtype=torch.float64)[None, :, None, :], sin64, cos64)
    for p, row in enumerate(x):
        want = r.rotate(row, p, "interleaved", 10)
        assert max(abs(a - float(b)) for a, b in zip(rotated[0, p, 0].tolist(), want)) <= 1e-12 * (
            1 + max(abs(v) for v in row)
        )
