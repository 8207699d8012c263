"""Rotary position embeddings: exact values, the command line's tables, the diagnosis's rules, review regressions.

The whole-model caches built by the frameworks are tests/test_rope_cases.py's and tests/test_rope_fit.py's
(they need torch and transformers to import).

The first part checks RoPE's exact mode against tests/rope_reference.py (mpmath), bit for bit; and that
model against HF's own code.  The model is the real-number definition of each scaling variant (docs/rope.md, "The scaling variants"), written
from transformers' modeling_rope_utils.py, not from pe_reference.  Here:
- rope(..., exact=True) and apply_rope(..., exact=True) give the model's values rounded once, in all four formats;
- rope's fast path (float64 math) is within 2**-44 * (1 + |angle|) * max(1, A) of the model (why: see
  test_the_fast_path_is_close);
- the two layouts put pair c % h (half) and c // 2 (interleaved) in column c;
- the model's frequencies agree with HF's float32 inv_freq to 4 float32 ulps, its attention factors to 1e-12,
  its L > L0 decisions with HF's dynamic_rope_update, and its rotation with Llama's and GPT-J's code.
"""

import json
import math
import random
import struct
from fractions import Fraction
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import mpmath
import pytest

import pe_reference
from pe_reference import apply_rope, compare_rope, rope
from tests import reference, rope_reference
from tests import rope_reference as model
from tests.helpers import need, run_main
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


# yarn whose two mscales are equal (1 and 1.0): its attention factor is exactly 1.
EQUAL_MSCALES: Dict[str, object] = {
    "rope_type": "yarn",
    "factor": 40,
    "original_max_position_embeddings": 4096,
    "mscale": 1,
    "mscale_all_dim": 1.0,
    "beta_fast": 0,
}


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
        ("yarn-equal-mscales", 10000, EQUAL_MSCALES),
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
    assert Rope(64, 10000, EQUAL_MSCALES).attention_factor() == 1  # mscale over mscale_all_dim, 1 and 1.0
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


# ---------------------------------------------------------------------------
# The command line's rotary tables: --rope cos|sin|rotated, printed and checked
# ---------------------------------------------------------------------------


YARN_TEXT = '{"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 16}'


def csv_rows(text: str) -> List[List[float]]:
    return [[float(x) for x in line.split(",")] for line in text.splitlines()]


def write_csv(path: Path, table: List[List[float]]) -> None:
    path.write_text("".join(",".join(repr(x) for x in row) + "\n" for row in table))


@pytest.mark.parametrize("kind", ["cos", "sin"])
def test_printed_cache_is_the_functions_cache(capsys: "pytest.CaptureFixture[str]", kind: str) -> None:
    status, out, err = run_main(
        capsys, "5", "8", "--rope", kind, "--format", "csv", "--rope-scaling", YARN_TEXT, "--exact"
    )
    assert (status, err) == (0, "")
    cos, sin = rope(5, 8, scaling=json.loads(YARN_TEXT), exact=True)
    assert csv_rows(out) == (cos if kind == "cos" else sin)


def test_hex_is_each_values_bits(capsys: "pytest.CaptureFixture[str]") -> None:
    status, out, _ = run_main(capsys, "3", "4", "--rope", "sin", "--format", "hex", "--exact", "--dtype", "float32")
    assert status == 0
    expected = rope(3, 4, exact=True, dtype="float32")[1]
    bits = [[int(cell, 16) for cell in line.split(",")] for line in out.splitlines()]
    assert bits == [[struct.unpack("<I", struct.pack("<f", x))[0] for x in row] for row in expected]


def test_interleaved_header_names_each_columns_pair(capsys: "pytest.CaptureFixture[str]") -> None:
    status, out, _ = run_main(
        capsys, "1", "6", "--rope", "cos", "--rope-layout", "interleaved", "--format", "csv", "--header"
    )
    assert status == 0
    assert out.splitlines()[0] == "cos_0,cos_0,cos_1,cos_1,cos_2,cos_2"


def test_pairs_layout_prints_and_checks_one_column_per_pair(
    capsys: "pytest.CaptureFixture[str]", tmp_path: Path
) -> None:
    # D_MODEL is the head's width; a pairs cache has one column per pair, D_MODEL / 2 of them.
    status, out, _ = run_main(
        capsys, "4", "8", "--rope", "sin", "--rope-layout", "pairs", "--format", "csv", "--header", "--exact"
    )
    assert status == 0
    assert out.splitlines()[0] == "sin_0,sin_1,sin_2,sin_3"
    assert csv_rows("\n".join(out.splitlines()[1:])) == rope(4, 8, layout="pairs", exact=True)[1]
    table = tmp_path / "pairs.csv"
    write_csv(table, rope(40, 8, layout="pairs")[0])
    for shape in ([], ["40", "8"]):  # the head's width taken from the file's 4 columns, or given
        status, out, _ = run_main(capsys, *shape, "--check", str(table), "--rope", "cos", "--rope-layout", "pairs")
        assert status == 0 and out.startswith("40 x 4 table") and out.rstrip().endswith("within tolerance"), out
    status, out, _ = run_main(capsys, "40", "6", "--check", str(table), "--rope", "cos", "--rope-layout", "pairs")
    assert status == 1 and out.strip() == "shape mismatch: the table has 40 x 4 values, expected 40 x 3"
    # Checked without the layout, the diagnosis reads it and prints the call.
    status, out, _ = run_main(capsys, "--check", str(table), "--rope", "cos")
    assert status == 1 and "in the pairs layout (one column per pair: head_dim 8)" in out
    assert "--rope-layout pairs" in out


def test_golden_vectors_hold_all_four_formats(capsys: "pytest.CaptureFixture[str]") -> None:
    status, out, _ = run_main(
        capsys, "3", "4", "--rope", "cos", "--format", "vectors", "--positions", "0,0.5,1e4", "--base", "500000"
    )
    assert status == 0
    document = json.loads(out)
    assert document["schema"] == "pe_reference.rope-vectors/1"
    assert document["parameters"]["positions"] == ["0", "0.5", "10000"]
    cos = rope(3, 4, base=500000, positions=[0, 0.5, 10000], exact=True, dtype="float16")[0]
    assert [[int(b, 16) for b in row] for row in document["bits"]["float16"]] == [
        [struct.unpack("<H", struct.pack("<e", x))[0] for x in row] for row in cos
    ]


def test_check_passes_a_right_cache_and_fails_a_wrong_one(capsys: "pytest.CaptureFixture[str]", tmp_path: Path) -> None:
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    write_csv(good, rope(40, 8, base=500000)[0])
    write_csv(bad, rope(40, 8, base=10000)[0])
    status, out, _ = run_main(capsys, "--check", str(good), "--rope", "cos", "--base", "500000")
    assert status == 0 and out.rstrip().endswith("within tolerance")
    status, out, _ = run_main(capsys, "--check", str(bad), "--rope", "cos", "--base", "500000")
    assert status == 1 and "MISMATCH" in out and "with base 10000" in out


def test_rotated_vectors_printed_and_checked(capsys: "pytest.CaptureFixture[str]", tmp_path: Path) -> None:
    vectors = [[1.0, -2.0, 0.5, 3.0], [0.25, 1.0, -1.0, 2.0], [4.0, 0.0, 0.0, -4.0]]
    source = tmp_path / "x.csv"
    write_csv(source, vectors)
    status, out, _ = run_main(capsys, "--rope", "rotated", "--input", str(source), "--format", "csv", "--exact")
    assert status == 0
    assert csv_rows(out) == apply_rope(vectors, exact=True)
    rotated = tmp_path / "rotated.csv"
    write_csv(rotated, apply_rope(vectors))
    status, out, _ = run_main(capsys, "--check", str(rotated), "--rope", "rotated", "--input", str(source))
    assert status == 0, out
    write_csv(rotated, apply_rope(vectors, layout="interleaved"))
    status, out, _ = run_main(capsys, "--check", str(rotated), "--rope", "rotated", "--input", str(source))
    assert status == 1 and "interleaved layout" in out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["4", "4", "--rope", "cos", "--start", "2"], "--rope takes --base and --positions, not --start"),
        (["4", "4", "--rope", "cos", "--rope-scaling", "[1]"], "--rope-scaling must be a JSON object"),
        (["4", "4", "--rope", "sin", "--input", "x.csv"], "--input goes with --rope rotated"),
        (["4", "4", "--rope", "cos", "--explain"], "--rope takes no --explain"),
        (["4", "4", "--rope-scaling", YARN_TEXT], "--rope-scaling goes with --rope"),
        (
            [
                "4",
                "6",
                "--rope",
                "cos",
                "--rope-scaling",
                '{"rope_type": "longrope", "original_max_position_embeddings": 8}',
            ],
            "needs 'short_factor'",
        ),
    ],
)
def test_usage_errors_are_one_line_and_status_2(
    capsys: "pytest.CaptureFixture[str]", arguments: List[str], message: str
) -> None:
    status, out, err = run_main(capsys, *arguments)
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err


def test_check_shape_mismatch_is_status_1(capsys: "pytest.CaptureFixture[str]", tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    write_csv(table, rope(3, 4)[0])
    status, out, _ = run_main(capsys, "5", "4", "--check", str(table), "--rope", "cos")
    assert status == 1 and "shape mismatch" in out


def test_fast_cache_agrees_with_exact_to_float64_rounding() -> None:
    # The fast path computes p * w_k and cos in float64: within a few ulps of the angle's size.
    scaling = {
        "rope_type": "llama3",
        "factor": 8,
        "low_freq_factor": 1,
        "high_freq_factor": 4,
        "original_max_position_embeddings": 64,
    }
    fast = rope(300, 16, base=500000, scaling=scaling)
    exact = rope(300, 16, base=500000, scaling=scaling, exact=True)
    for table_fast, table_exact in zip(fast, exact):
        for r, (row_fast, row_exact) in enumerate(zip(table_fast, table_exact)):
            for a, b in zip(row_fast, row_exact):
                assert abs(a - b) <= 2.0**-50 * (1 + r), (r, a, b)
    assert any(a != b for row_f, row_e in zip(fast[0], exact[0]) for a, b in zip(row_f, row_e))
    assert math.isfinite(fast[0][-1][0])


# ---------------------------------------------------------------------------
# The rotary diagnosis: bases tried with a scaling kept, mistakes, setups read from the cache
# ---------------------------------------------------------------------------


YARN: Dict[str, object] = json.loads(YARN_TEXT)  # the command line's scaling, as rope() takes it
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
    request = pe_reference._RopeRequest(setup, kind, vectors, None)
    candidate = pe_reference._rope_candidate("", (), len(row), request, [at], {}, 1.0, dtype)
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
        assert (
            pe_reference._exact_value(
                (position, 1), kind, (0, 4), law, pe_reference._OutputScale("square", ((1, 1),), 1.0), "float64"
            )
            == expected
        )


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


# ---------------------------------------------------------------------------
# Regressions from the review of the rotary code: each failed before its fix
# ---------------------------------------------------------------------------


def test_rotated_check_refuses_vectors_that_are_not_finite_or_overflow() -> None:
    with pytest.raises(ValueError, match=r"x\[0\]\[0\] must be finite, got inf"):
        compare_rope([[1.0, 2.0]], kind="rotated", x=[[math.inf, 0.0]], positions=[1])
    # |x[a]| + |x[b]| past float64 made the tolerance infinite, and any table passed.
    with pytest.raises(ValueError, match="finite for each pair"):
        compare_rope([[1.0, 2.0]], kind="rotated", x=[[1e308, 1e308]], positions=[1])
    with pytest.raises(ValueError, match="finite for each pair"):
        apply_rope([[1e308, -1e308]])


def test_a_constant_table_is_not_blamed_on_its_format() -> None:
    report = compare_rope([[0.5] * 8] * 64)
    assert not report.ok and report.causes == ()


def test_a_narrow_table_with_another_mistake_names_both() -> None:
    table = rope(64, 8, base=500000, dtype="bfloat16")[0]
    report = compare_rope(table, dtype="float32")
    assert set(report.causes) == {"base", "output:bfloat16"}
    assert compare_rope(rope(64, 8, dtype="float32")[0]).causes == ("output:float32",)


def test_angles_float32_is_named_only_for_a_pairs_own_error() -> None:
    # Rows of ones rotated, but pair 0 left unrotated: errors near 2, not a float32 angle's.
    positions = list(range(60000, 60064))
    x = [[1.0] * 128 for _ in positions]
    table = apply_rope(x, positions=positions)
    for row, vector in zip(table, x):
        row[0], row[64] = vector[0], vector[64]
    report = compare_rope(table, kind="rotated", x=x, positions=positions)
    assert not report.ok and "angles:float32" not in report.causes


def test_zeros_at_large_positions_are_not_a_float32_angle() -> None:
    positions = [2**22 + r for r in range(16)]
    report = compare_rope([[0.0, 0.0]] * 16, positions=positions)
    assert not report.ok and report.causes == ()


@pytest.mark.parametrize(
    "base, length",
    [(3, 4096), (10000, 4), ("1.5", 4096)],
)
def test_yarn_untruncated_with_bounds_clamped_out_of_order(base: object, length: int) -> None:
    scaling = {"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": length, "truncate": False}
    positions = [0, 1, 37, 1000]
    cos, sin = rope(len(positions), 16, base=base, scaling=scaling, positions=positions, exact=True)
    model = rope_reference.Rope(16, base, scaling)  # type: ignore[arg-type]
    expected_cos, expected_sin = model.table(positions)
    assert cos == [[rounded(v, "float64") for v in row] for row in expected_cos]
    assert sin == [[rounded(v, "float64") for v in row] for row in expected_sin]


def test_yarn_untruncated_fast_path_with_a_base_float64_rounds_to_one() -> None:
    scaling = {"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": 4096, "truncate": False}
    base = "1.0000000000000000000000000001"
    fast = rope(2, 16, base=base, scaling=scaling)[0]
    exact = rope(2, 16, base=base, scaling=scaling, exact=True)[0]
    assert all(abs(a - b) < 1e-12 for a, b in zip(fast[1], exact[1]))


def test_huge_attention_factor_at_a_tiny_angle_is_rounded_right() -> None:
    # A just above a float64 midpoint M; A cos(theta) lies below M by A theta**2 / 2, which the
    # tiny-angle cosine ignored: it returned M's upper neighbour.
    midpoint = 2**200 + 2**147
    factor = Fraction(3 * 2**20 * midpoint + 1, 3 * 2**20)
    scaling = {
        "rope_type": "yarn",
        "factor": 4,
        "original_max_position_embeddings": 64,
        "attention_factor": f"{factor.numerator}/{factor.denominator}",
    }
    cos = rope(1, 2, positions=[2.0**-105], scaling=scaling, exact=True)[0]
    assert cos[0][0] == 2.0**200


def test_golden_vectors_write_infinity_as_its_bits(capsys: "pytest.CaptureFixture[str]", tmp_path: object) -> None:
    assert pe_reference._bit_pattern(math.inf, "float16") == 0x7C00
    assert pe_reference._bit_pattern(-math.inf, "float32") == 0xFF800000
    assert pe_reference._bit_pattern(math.inf, "bfloat16") == 0x7F80


@pytest.mark.parametrize(
    "scaling",
    ['{"rope_type": "linear", "factor": true}', '{"rope_type": ["linear"]}', '{"factor": {"a": 1}}'],
)
def test_cli_scaling_of_a_wrong_type_is_a_usage_error(capsys: "pytest.CaptureFixture[str]", scaling: str) -> None:
    status, out, err = run_main(capsys, "2", "4", "--rope", "cos", "--rope-scaling", scaling)
    assert status == 2 and out == "" and len(err.splitlines()) == 1, err


def test_cli_shape_mismatch_names_both_shapes(capsys: "pytest.CaptureFixture[str]", tmp_path: "object") -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "x.csv").write_text("1,2\n3,4\n")
    (folder / "t.csv").write_text("1,2,3,4\n5,6,7,8\n")
    status, out, _ = run_main(
        capsys, "--rope", "rotated", "--input", str(folder / "x.csv"), "--check", str(folder / "t.csv")
    )
    assert status == 1 and "the table has 2 x 4 values, expected 2 x 2" in out


def test_rotated_header_names_columns(capsys: "pytest.CaptureFixture[str]", tmp_path: "object") -> None:
    from pathlib import Path

    source = Path(str(tmp_path)) / "x.csv"
    source.write_text("1,2,3,4\n")
    status, out, _ = run_main(capsys, "--rope", "rotated", "--input", str(source), "--format", "csv", "--header")
    assert status == 0 and out.splitlines()[0] == "x_0,x_1,x_2,x_3"
    assert json.loads("[" + out.splitlines()[1] + "]") == apply_rope([[1.0, 2.0, 3.0, 4.0]])[0]
