"""Rotary position embeddings: exact values, the command line's tables, the diagnosis's rules, review regressions.

The whole-model caches built by the frameworks and the reported bugs rebuilt in torch are checked in the
sections from "compare_rope reads a rotary cache's setup" to the end (marked peers: without torch and
transformers those tests skip, the rest runs).

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

import ast
import json
import math
import random
import re
import struct
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Type, Union

import mpmath
import pytest

import pe_reference
from pe_reference import apply_rope, compare_rope, rope
from tests import reference, rope_reference
from tests import rope_cases as rc
from tests import rope_reference as model
from tests.helpers import need, peer, run_main
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
        # Llama 4 Scout's (Meta's llama-models defaults): equal factors, a step at L0 and no blend.
        (
            "llama3-equal-factors",
            500000,
            {
                "rope_type": "llama3",
                "factor": 16,
                "low_freq_factor": 1,
                "high_freq_factor": 1,
                "original_max_position_embeddings": 8192,
            },
        ),
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
    # Llama 4 Scout: transformers warns that the factors are equal, and computes a step with no blend.
    "llama3-equal-factors": (
        {
            "rope_type": "llama3",
            "factor": 16.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 1.0,
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


def test_a_cache_of_two_rows_is_diagnosed_by_the_setups_tried_one_change_at_a_time() -> None:
    # Too short to read a setup from (the fit needs three rows): the known bases are tried, 500 is not one.
    cos, _ = rope(2, 8, base=500000)
    assert compare_rope(cos).diagnosis == (
        "Diagnosis: the table follows the RoPE cos cache (half layout, base 10000) with base 500000; it reproduces"
        " every element."
    )
    cos, _ = rope(2, 8, base=500)
    diagnosis = compare_rope(cos).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table.")


@pytest.mark.parametrize("base", [500, 160000])
def test_a_cache_of_two_pairs_is_read(base: int) -> None:
    # head_dim 4: the base is read from the two pairs' frequencies alone, no preset base near it.
    cos, _ = rope(64, 4, base=base)
    assert compare_rope(cos).diagnosis == (
        f"Diagnosis: the table follows the RoPE cos cache (half layout, base 10000) with base {base} instead of"
        f" 10000; it reproduces every element. The call that reproduces it: rope(64, 4, base={base})[0] (on the"
        f" command line: --rope cos --base {base})."
    )


def test_a_sin_cache_whose_slow_pairs_are_all_zero_in_its_format_is_read() -> None:
    # Base 1e12 in float16: the slowest pairs' sines round to 0 on every row, so their frequencies read as 0;
    # the base is read from the others.
    _, sin = rope(64, 64, base=10**12, exact=True, dtype="float16")
    assert sum(1 for x in sin[-1] if x == 0.0) >= 8
    report = compare_rope(sin, kind="sin", dtype="float16")
    assert report.diagnosis == (
        "Diagnosis: the table follows the RoPE sin cache (half layout, base 10000) with base 1000000000000 instead of"
        " 10000; it reproduces every element. The call that reproduces it: rope(64, 64, base=1000000000000,"
        " dtype='float16')[1] (on the command line: --rope sin --base 1000000000000 --dtype float16)."
    )


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


def test_large_vectors_rotated_in_float32_pass_their_weighted_allowance() -> None:
    # Vectors of magnitude about 1000 rotated in float32 arithmetic, each product and sum rounded, as a
    # kernel computes them: an error of a few float32 ulps of 1000, far past the unweighted 2**-19 * (1 + angle),
    # within the allowance weighted by |x[a]| + |x[b]|.
    def f32(v: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", v))[0])

    head, seq_len = 8, 64
    cos, sin = rope(seq_len, head, exact=True, dtype="float32")
    x = [[f32(1000.0 + 37.0 * r + 11.0 * c) * (-1) ** c for c in range(head)] for r in range(seq_len)]
    rotated = []
    for r in range(seq_len):
        row = [0.0] * head
        for a in range(head // 2):
            b = a + head // 2
            row[a] = f32(f32(x[r][a] * cos[r][a]) - f32(x[r][b] * sin[r][a]))
            row[b] = f32(f32(x[r][b] * cos[r][b]) + f32(x[r][a] * sin[r][b]))
        rotated.append(row)
    report = compare_rope(rotated, kind="rotated", x=x, dtype="float32")
    assert report.ok, str(report)
    assert report.max_abs_error > 2.0**-19 * 64  # beyond what an unweighted allowance would give any element


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


def test_a_cache_held_by_a_narrower_format_is_told_as_a_table_is() -> None:
    # The same words as compare's, with the dtype to give: one verdict for tables and caches.
    words = (
        "Diagnosis: every value of the table is a float32 number, and float64 was asked: checked as float32"
        " (dtype='float32'), it passes; its values were rounded to float32."
    )
    assert compare_rope(rope(64, 8, dtype="float32")[0]).diagnosis == words
    assert pe_reference.compare(pe_reference.encoding(64, 8, dtype="float32")).diagnosis == words


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


# ---------------------------------------------------------------------------
# compare_rope reads a rotary cache's setup from its values: several differences at once, named with the call
# ---------------------------------------------------------------------------
# Caches are built in float32 (or stored in bfloat16) by the peers' own modules: x-transformers'
# RotaryEmbedding (interleaved, with a base and a linear interpolation factor) and transformers'
# LlamaRotaryEmbedding for each rope_type. Each is checked as a user would check it: with no options
# (compare_rope's defaults: half layout, base 10000, no scaling), or with the config the code meant.
# Each test checks the story told and runs the printed call: its keywords given to compare_rope must
# pass the table against the exact values, so a story is true only if they do.

torch = peer("torch")  # imported on first use: a test without it skips (peers mark)


def printed_rope_call(text: str) -> Tuple[int, int, Dict[str, Any], int, str]:
    """The rope() call a diagnosis prints, read back: (seq_len, head_dim, keywords, which cache, its tail)."""
    start = text.index("The call that reproduces it: rope(") + len("The call that reproduces it: ")
    found = re.match(r"(rope\(.*?\))\[([01])\](\[:[0-9]+\])? \(on the command line", text[start:])
    assert found is not None, text
    call, index, tail = found.group(1), int(found.group(2)), (found.group(3) or "").strip("[]")
    expression = ast.parse(call).body[0]
    assert isinstance(expression, ast.Expr) and isinstance(expression.value, ast.Call), text
    node = expression.value
    seq_len, head_dim = (ast.literal_eval(argument) for argument in node.args)
    # positions=positions: read one by one, named, not written out (the caller knows them).
    keywords = {
        keyword.arg or "": ast.literal_eval(keyword.value) for keyword in node.keywords if keyword.arg != "positions"
    }
    return seq_len, head_dim, keywords, index, tail


def assert_rope_call_reproduces(text: str, table: Any, kind: str) -> None:
    """The printed call's cache is the table: its options pass the table in compare_rope (the exact values).

    A call for a longer cache, of which the table is the first rows ([:n]: dynamic NTK's base computed
    for another length), is run, and its rows must lie within 2**-18 (1 + position) of the table's,
    the error of angles formed in float32 (plus a unit of the format the call names, for a narrow one).
    """
    seq_len, head_dim, keywords, index, tail = printed_rope_call(text)
    assert index == (0 if kind == "cos" else 1), text
    rows, width = table.shape
    assert head_dim == (2 * width if keywords.get("layout") == "pairs" else width), text
    if not tail:
        assert seq_len == rows, text
        report = compare_rope(table, kind=kind, **keywords)
        assert report.ok, (text, str(report))
        return
    assert tail == f":{rows}" and seq_len > rows, text
    made = torch.tensor(rope(seq_len, head_dim, **keywords)[index][:rows], dtype=torch.float64)
    errors = (made - table.to(torch.float64)).abs().amax(dim=1)
    # Stored in a narrow format, a value is also within half its unit, 2**-p of values below 2, of the angle's.
    stored = {"float16": 2.0**-11, "bfloat16": 2.0**-8}.get(keywords.get("dtype", "float32"), 0.0)
    bound = 2.0**-18 * (1 + torch.arange(rows, dtype=torch.float64)) + 2 * stored
    assert bool((errors <= bound).all()), (text, float((errors - bound).max()))


def diagnosis_of(table: Any, kind: str, **options: Any) -> Tuple[str, Set[str]]:
    report = compare_rope(table, kind=kind, **options)
    assert not report.ok and report.diagnosis is not None, str(report)
    return report.diagnosis, set(report.causes)


# name -> (the cache for a kind, checked without options; the phrases the story must hold; its causes)
SEVERAL: Dict[str, Tuple[Any, Tuple[str, ...], Set[str]]] = {
    # x-transformers: interleaved, base 500000 (issue 25: "no known cause" before).
    "x-transformers:interleaved:500000": (
        lambda kind: rc.x_transformers_rotary(kind, 4096, 128, base=500000.0),
        ("in the interleaved layout", "with base 500000 instead of 10000"),
        {"layout", "base"},
    ),
    # rotary-embedding-torch's interpolate_factor=4: interleaved, linear x4 (issue 25: "no known cause" before).
    "rotary-embedding-torch:interleaved:linear-4": (
        lambda kind: rc.rotary_embedding_torch(kind, 4096, 64, interpolate_factor=4.0),
        ("in the interleaved layout", "with linear scaling (factor 4)"),
        {"layout", "scaling"},
    ),
    # x-transformers' interpolation_factor, the same law by another module, at base 500000 too.
    "x-transformers:interleaved:500000:linear-2": (
        lambda kind: rc.x_transformers_rotary(kind, 2048, 128, base=500000.0, interpolation_factor=2.0),
        ("in the interleaved layout", "with base 500000 instead of 10000", "with linear scaling (factor 2)"),
        {"layout", "base", "scaling"},
    ),
    # All three at once, at a length models use.
    "rotary-embedding-torch:interleaved:500000:linear-8:32768": (
        lambda kind: rc.rotary_embedding_torch(kind, 32768, 64, theta=500000.0, interpolate_factor=8.0),
        ("in the interleaved layout", "with base 500000 instead of 10000", "with linear scaling (factor 8)"),
        {"layout", "base", "scaling"},
    ),
    # torchtune's Llama3ScaledRoPE computes transformers' llama3 law: base 500000, factor 8, L0 8192.
    "transformers:llama3": (
        lambda kind: rc.transformers_cache("llama3", kind, 4096).table,
        (
            "with base 500000 instead of 10000",
            "with llama3 scaling (factor 8, low_freq_factor 1, high_freq_factor 4,"
            " original_max_position_embeddings 8192)",
        ),
        {"base", "scaling"},
    ),
    # Llama 4 Scout's equal factors (issue 46: refused with its options, "nothing known explains" without).
    "transformers:llama4-scout": (
        lambda kind: rc.transformers_cache("llama4", kind, 4096).table,
        (
            "with base 500000 instead of 10000",
            "with llama3 scaling (factor 16, low_freq_factor 1, high_freq_factor 1,"
            " original_max_position_embeddings 8192)",
        ),
        {"base", "scaling"},
    ),
    # A YaRN cache whose value at position 0 is its attention factor 0.1 ln 4 + 1 (keras-hub's, transformers').
    "transformers:yarn": (
        lambda kind: rc.transformers_cache("yarn", kind, 4096).table,
        ("with yarn scaling (factor 4, original_max_position_embeddings 4096; its attention factor 1.13863)",),
        {"scaling"},
    ),
    # The same with its attention factor dropped: yarn's frequencies, values not scaled.
    "transformers:yarn:attention-dropped": (
        lambda kind: rc.yarn_attention_factor("missing", kind, 4096).table,
        ("with yarn scaling (factor 4, original_max_position_embeddings 4096, attention_factor 1)",),
        {"scaling"},
    ),
    # One column per pair (torchtune's cache, Meta's freqs_cis): the first half of transformers' llama3 cache.
    "transformers:llama3:pairs": (
        lambda kind: rc.one_column_per_pair("llama3", kind, 4096).table,
        (
            "in the pairs layout (one column per pair: head_dim 128)",
            "with base 500000 instead of 10000",
            "with llama3 scaling (factor 8",
        ),
        {"layout", "base", "scaling"},
    ),
    # Meta's freqs_cis, its real part the cos cache and its imaginary part the sin cache, base 500000.
    "meta:freqs_cis": (
        lambda kind: rc.meta_freqs_cis(4096, 128, 500000.0)[0 if kind == "cos" else 1],
        ("in the pairs layout (one column per pair: head_dim 128)", "with base 500000 instead of 10000"),
        {"layout", "base"},
    ),
    # Stored in bfloat16 (the module's output cast to the input's dtype): read in that format.
    "transformers:llama3:bfloat16": (
        lambda kind: rc.transformers_cache("llama3", kind, 4096, dtype="bfloat16").table,
        ("with base 500000 instead of 10000", "with llama3 scaling (factor 8"),
        {"base", "scaling"},
    ),
}


# Each case in one kind, cos and sin in turn (the sin cache's attention factor is read another way: both for YaRN's).
SEVERAL_KINDS = [(case, ("cos", "sin")[i % 2]) for i, case in enumerate(SEVERAL)] + [("transformers:yarn", "cos")]


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("case, kind", SEVERAL_KINDS)
def test_a_cache_that_differs_in_several_ways_is_read_whole(case: str, kind: str) -> None:
    build, phrases, causes = SEVERAL[case]
    table = build(kind)
    text, found = diagnosis_of(table, kind)
    for phrase in phrases:
        assert phrase in text, (case, kind, text)
    assert found == causes, (case, kind, text)
    assert "it reproduces every element" in text, text
    assert_rope_call_reproduces(text, table, kind)


def dynamic_base(length: int, factor: float = 4.0, original: int = 2048, head_dim: int = 128) -> str:
    """transformers' dynamic NTK base for a length (its formula): base (f L / L0 - (f - 1)) ** (d / (d - 2))."""
    growth = factor * length / original - (factor - 1) if length > original else 1.0
    return f"{10000.0 * growth ** (head_dim / (head_dim - 2)):.6g}"


# Issue 29, family 4: one scaling parameter off by a value, checked with the config the code meant.
OFF_BY_A_VALUE: Dict[str, Tuple[Any, Tuple[str, ...], Set[str]]] = {
    # YaRN's default attention factor applied where the config says attention_factor: 1.0.
    "yarn:attention-factor-where-config-says-1": (
        lambda kind: rc.yarn_attention_where_config_says_one(kind, 4096),
        ("with attention factor 1.13863 (the yarn default) instead of 1",),
        {"attention_factor"},
    ),
    # Dynamic NTK's base computed at factor * L0 = 8192 positions for a 4096-row cache.
    "dynamic:base-at-factor-times-length": (
        lambda kind: rc.dynamic_at_length(kind, 4096, 8192),
        (
            f"with dynamic NTK's base computed for 8192 positions (base {dynamic_base(8192)}),"
            f" not for the table's 4096 (base {dynamic_base(4096)})",
        ),
        {"scaling:length"},
    ),
    # ... or kept from an earlier, longer sequence (16384 positions) for 2048 rows.
    "dynamic:base-kept-from-a-longer-sequence": (
        lambda kind: rc.dynamic_at_length(kind, 2048, 16384),
        (
            f"with dynamic NTK's base computed for 16384 positions (base {dynamic_base(16384)}),"
            " not for the table's 2048 (base 10000)",
        ),
        {"scaling:length"},
    ),
}


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("case, kind", [(case, ("sin", "cos")[i % 2]) for i, case in enumerate(OFF_BY_A_VALUE)])
def test_a_scaling_parameter_off_by_a_value_is_named_with_both_values(case: str, kind: str) -> None:
    build, phrases, causes = OFF_BY_A_VALUE[case]
    cache = build(kind)
    text, found = diagnosis_of(cache.table, **cache.arguments)
    for phrase in phrases:
        assert phrase in text, (case, kind, text)
    assert found == causes, (case, kind, text)
    assert_rope_call_reproduces(text, cache.table, kind)


# LongRoPE's per-pair factors of another length (transformers' own init function): the config's other list on
# every row, named with the config given; read pair by pair without it.
OTHER_LIST: Dict[str, Tuple[int, Any, str, str]] = {
    # short_factor on 8192 rows, past L0 4096 (a cache computed at the module's init, before the switch).
    "short-factor-past-L0": (
        8192,
        None,
        "with its short_factor on all 8192 rows, where long_factor applies (past original_max_position_embeddings 4096)",
        "1 to 1.49219",
    ),
    # long_factor on 2048 rows, up to L0 (a cache computed for the longest sequence, used for a short one).
    "long-factor-up-to-L0": (
        2048,
        8192,
        "with its long_factor on all 2048 rows, where short_factor applies (up to original_max_position_embeddings 4096)",
        "1 to 4.9375",
    ),
}


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("case, kind", [(case, ("cos", "sin")[i % 2]) for i, case in enumerate(OTHER_LIST)])
def test_longrope_factors_of_another_length_are_named_and_read(case: str, kind: str) -> None:
    seq_len, length, phrase, span = OTHER_LIST[case]
    cache = rc.longrope_factors_of_another_length(kind, seq_len, length)
    text, found = diagnosis_of(cache.table, **cache.arguments)
    assert phrase in text and found == {"scaling:" + phrase.split(" ")[2]}, text
    assert_rope_call_reproduces(text, cache.table, kind)
    # Without the config, the factors are read pair by pair, with the attention factor sqrt(1 + ln 4 / ln 4096).
    text, found = diagnosis_of(cache.table, kind=kind, dtype="float32")
    read = f"with longrope's per-pair factors read from the table (64 numbers from {span}; attention factor 1.08012);"
    assert read in text and found == {"scaling"}, text
    assert_rope_call_reproduces(text, cache.table, kind)


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
def test_a_longrope_cache_of_its_own_length_passes() -> None:
    for seq_len, length in ((2048, None), (8192, 8192)):
        cache = rc.longrope_factors_of_another_length("cos", seq_len, length)
        report = compare_rope(cache.table, **cache.arguments)
        assert report.ok and report.diagnosis is None, (seq_len, str(report))


# Issue 29 families 3 and 4 in the narrow formats: transformers' module computes in float32 and returns its
# cache in the input's dtype (a float16 or bfloat16 model's). name -> (the cache, what is given to the check,
# the phrase, the causes).
NARROW: Dict[str, Tuple[Any, Any, str, Set[str]]] = {
    "yarn:attention-factor-where-config-says-1": (
        lambda dtype: rc.transformers_cache("yarn", "cos", 4096, dtype=dtype),
        lambda arguments: dict(arguments, scaling=dict(arguments["scaling"], attention_factor=1.0)),
        "with attention factor 1.13863 (the yarn default) instead of 1",
        {"attention_factor"},
    ),
    "dynamic:base-at-factor-times-length": (
        lambda dtype: rc.dynamic_at_length("sin", 4096, 8192, dtype=dtype),
        lambda arguments: arguments,
        f"with dynamic NTK's base computed for 8192 positions (base {dynamic_base(8192)}),"
        f" not for the table's 4096 (base {dynamic_base(4096)})",
        {"scaling:length"},
    ),
    "packed": (
        lambda dtype: rc.transformers_cache(
            "llama3", "cos", 2048, positions=[r % 1024 for r in range(2048)], dtype=dtype
        ),
        lambda arguments: {key: value for key, value in arguments.items() if key != "positions"},
        "with 2 runs of consecutive positions: rows 0 to 1023 at positions 0 to 1023, rows 1024 to 2047 at positions 0 to 1023",
        {"positions"},
    ),
    "offset": (
        lambda dtype: rc.transformers_cache(
            "default", "sin", 1024, positions=[r + 500 for r in range(1024)], dtype=dtype
        ),
        lambda arguments: {key: value for key, value in arguments.items() if key != "positions"},
        "with rows 0 to 1023 at positions 500 to 1523 (an offset of 500)",
        {"positions"},
    ),
}


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", list(NARROW))
def test_a_mistake_in_a_cache_stored_narrow_is_named(case: str, dtype: str) -> None:
    build, given, phrase, causes = NARROW[case]
    cache = build(dtype)
    assert cache.arguments["dtype"] == dtype and str(cache.table.dtype) == "torch." + dtype
    text, found = diagnosis_of(cache.table, **given(cache.arguments))
    assert phrase in text and found == causes, (case, dtype, text)
    if "positions=positions" not in text:
        assert_rope_call_reproduces(text, cache.table, cache.arguments["kind"])


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("case", ["yarn:attention-factor-where-config-says-1", "packed"])
def test_a_mistake_in_a_cache_is_named_by_check_file(case: str, tmp_path: Any, capsys: Any) -> None:
    """--check FILE --rope KIND on a float16 .npy file, with the config as --rope-scaling where the case gives one."""
    import json

    numpy = need("numpy")
    build, given, phrase, _ = NARROW[case]
    cache = build("float16")
    arguments = given(cache.arguments)
    path = tmp_path / "cache.npy"
    numpy.save(path, cache.table.numpy())
    options = ["--check", str(path), "--rope", arguments["kind"], "--base", str(arguments["base"])]
    if arguments.get("scaling"):
        options += ["--rope-scaling", json.dumps(arguments["scaling"])]
    status, out, err = run_main(capsys, *options)
    assert status == 1 and not err and "float16" in out.splitlines()[0], (out, err)
    assert phrase in out[out.index("Diagnosis: ") :], out


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
def test_the_call_printed_for_a_longer_cache_is_its_first_rows() -> None:
    """The dynamic case's call is rope(L, ...)[i][:n]: with another length than the rows', it is refused here."""
    cache = rc.dynamic_at_length("cos", 4096, 8192)
    text, _ = diagnosis_of(cache.table, **cache.arguments)
    assert "rope(8192, 128, scaling={'rope_type': 'dynamic'" in text and ")[0][:4096]" in text, text
    with pytest.raises(AssertionError):
        assert_rope_call_reproduces(text.replace("rope(8192,", "rope(4096,"), cache.table, "cos")


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("kind", ["cos", "sin"])
def test_a_right_cache_of_each_variant_gets_no_story(kind: str) -> None:
    """The fit is only for failing caches: each variant's own cache, checked with its config, passes with no cause."""
    for rope_type in ("default", "linear", "yarn", "llama3"):
        cache = rc.transformers_cache(rope_type, kind, 2048)
        report = compare_rope(cache.table, **cache.arguments)
        assert report.ok and report.diagnosis is None and tuple(report.causes) == (), (rope_type, str(report))


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_right_cache_stored_narrow_passes_in_its_format(dtype: str) -> None:
    """transformers' module returns its float32 cache in the input's dtype: each variant's passes in that format."""
    for rope_type in ("default", "linear", "yarn", "llama3", "dynamic", "longrope"):
        cache = rc.transformers_cache(rope_type, "cos", 1024, dtype=dtype)
        report = compare_rope(cache.table, **cache.arguments)
        assert report.ok and report.diagnosis is None, (rope_type, dtype, str(report))


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
def test_a_precision_mistake_is_not_read_as_another_setup() -> None:
    """inv_freq rounded to float16 reads as a base near 10000 that no simple setup matches: the step is named."""
    cache = rc.single_step("inv_freq", "float16", "cos")
    report = compare_rope(cache.table, **cache.arguments)
    assert not report.ok and tuple(report.causes) == ("inv_freq:float16",), str(report)


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
def test_a_cache_no_setup_explains_says_so() -> None:
    """Cosines of angles from a geometric law with a kink no variant has: no setup is claimed.

    Every seventh pair twice as fast: per-pair factors of 1/2, which no LongRoPE has (its factors stretch
    wavelengths, none below 1; a kink that halves frequencies is read as LongRoPE's factors 1 and 2).
    """
    h, rows = 32, 1024
    frequencies = [10000.0 ** (-k / h) * (2.0 if k % 7 == 3 else 1.0) for k in range(h)]
    table = [[math.cos(p * w) for w in frequencies + frequencies] for p in range(rows)]
    report = compare_rope(table)
    assert not report.ok and report.diagnosis is not None
    assert "The call that reproduces it" not in report.diagnosis, report.diagnosis


# ---------------------------------------------------------------------------------------------------
# The pairs layout: a half-width cache, one column per pair.
# ---------------------------------------------------------------------------------------------------


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("kind", ["cos", "sin"])
def test_a_half_width_cache_passes_with_layout_pairs(kind: str) -> None:
    """torchtune's and Meta's shape: transformers' own cache cut to one column per pair, checked as such."""
    cache = rc.one_column_per_pair("yarn", kind, 4096)
    assert tuple(cache.table.shape) == (4096, 64)
    report = compare_rope(cache.table, **cache.arguments)
    assert report.ok, str(report)
    assert "RoPE " + kind + " cache (pairs layout" in str(report)


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
def test_a_full_width_cache_checked_as_pairs_is_read_as_what_it_is() -> None:
    table = rope(1024, 64, dtype="float32")[0]
    report = compare_rope(table, layout="pairs", dtype="float32")
    assert not report.ok and report.diagnosis is not None
    assert set(report.causes) == {"layout"} and "in the half layout (head_dim 64)" in report.diagnosis, report.diagnosis


# ---------------------------------------------------------------------------------------------------
# Issue 29, family 3 for caches: rows at other positions than 0, 1, 2, ..., read back row by row.
# ---------------------------------------------------------------------------------------------------

# name -> (the positions transformers' module was given, the kind checked, the phrase the story must hold)
ROWS_AT: Dict[str, Tuple[List[int], str, str]] = {
    # Position ids restarting with each packed document of 1024 tokens.
    "packed": (
        [r % 1024 for r in range(4096)],
        "cos",
        "with 4 runs of consecutive positions: rows 0 to 1023 at positions 0 to 1023,"
        " rows 1024 to 2047 at positions 0 to 1023, rows 2048 to 3071 at positions 0 to 1023, and 1 more run",
    ),
    # An index slip that gives every row one position.
    "broadcast": ([37] * 2048, "sin", "with every row at position 37 (one position given to every row)"),
    # Positions starting at an offset (a cache built for a continuation).
    "offset": (
        [r + 1000 for r in range(2048)],
        "cos",
        "with rows 0 to 2047 at positions 1000 to 3047 (an offset of 1000)",
    ),
}


@pytest.mark.peers("torch", "transformers", "x_transformers", "rotary_embedding_torch")
@pytest.mark.parametrize("case", list(ROWS_AT))
def test_rows_at_other_positions_are_read_back(case: str) -> None:
    positions, kind, phrase = ROWS_AT[case]
    cache = rc.transformers_cache("llama3", kind, len(positions), positions=positions)
    checked = {key: value for key, value in cache.arguments.items() if key != "positions"}  # as a user forgets them
    text, found = diagnosis_of(cache.table, **checked)
    assert phrase in text and found == {"positions"}, text
    assert "positions=positions" in text and "--positions X,X,..." in text, text
    seq_len, head_dim, keywords, index, _ = printed_rope_call(text)
    report = compare_rope(cache.table, kind=kind, positions=positions, **keywords)
    assert report.ok and (seq_len, head_dim) == tuple(cache.table.shape), str(report)


# ---------------------------------------------------------------------------
# RoPE caches checked with compare_rope: the reported precision bugs are caught and explained, transformers' caches pass
# ---------------------------------------------------------------------------
# The caches are built in tests/rope_cases.py: each reported bug rebuilt in torch from its description,
# and transformers' own LlamaRotaryEmbedding and GPT-J code. For a faulty cache the check must fail and
# name, in ``report.causes``, exactly the steps or mistakes that explain it (a cause that changes nothing
# in the table, such as fp16 positions below 2048, is not named). For transformers' float32 caches the
# check must pass, at lengths where a float32 computation can.
#
# Measured (torch 2.13.0+cpu, transformers 5.23.0): transformers' default float32 cache (head dim 128)
# errs against the true value by at most about 2.3 units of 2**-24 * (1 + |angle|) at 131072 positions
# (bases 1e4, 5e5 and 1e6): the float32 rounding of the angle plus inv_freq's 1-ulp errors times the
# position. In absolute terms that passes 2**-10 from about position 12451 (base 5e5) to 17178 (1e4) on,
# which the default rule allows: it judges elements past angle 511 to their own allowance (counted as
# coarse) and leaves those past 32767 unjudged, so the cache passes at every length up to 131072.
#
# Every figure of error below is |table - true value| over the whole table, the true value in float64.


def check(cache: rc.Cache) -> Any:
    """compare_rope's report on a cache, with the arguments that say what it meant to compute."""
    return pe_reference.compare_rope(cache.table, **cache.arguments)


def every(step: int, n: int, *also: int) -> List[int]:
    """Rows 0, step, 2 step, ... below n, the last row, and the rows named."""
    return sorted(set(range(0, n, step)) | {n - 1} | set(also))


def true_table(cache: rc.Cache) -> Any:
    """The true default-RoPE values (no scaling) of a cache's rows, float64, in its layout."""
    arguments = cache.arguments
    held = arguments.get("positions")
    positions = torch.tensor(list(range(cache.table.shape[0])) if held is None else held, dtype=torch.float64)
    head_dim = cache.table.shape[1]
    inv_freq = arguments["base"] ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = positions[:, None] * inv_freq[None, :]
    if arguments["layout"] == "half":
        angles = torch.cat((angles, angles), dim=-1)
    else:
        angles = torch.repeat_interleave(angles, 2, dim=-1)
    return angles.cos() if arguments["kind"] == "cos" else angles.sin()


def worst(cache: rc.Cache) -> Tuple[float, int, int]:
    """(max |table - true|, its position, its column)."""
    error = (cache.table.double() - true_table(cache)).abs()
    flat = int(error.argmax())
    row, column = divmod(flat, error.shape[1])
    held = cache.arguments.get("positions")
    return float(error.max()), row if held is None else held[row], column


# ---------------------------------------------------------------------------------------------------
# The builders reproduce the reported symptoms (no compare_rope needed).
# ---------------------------------------------------------------------------------------------------


@pytest.mark.peers("torch", "transformers")
def test_gpt_neox_1003_reproduces_the_issue() -> None:
    # The issue's float32 cache, to compare with as the issue does.
    inv_freq = rc._inv_freq(32, 10000.0)
    angles32 = torch.outer(torch.arange(2048, dtype=torch.float32), inv_freq)
    assert angles32[1857, 1].item() == pytest.approx(1044.2678, abs=1e-4)
    half = rc.gpt_neox_1003("cos")
    assert half.table.dtype == torch.float16
    difference = (half.table.float() - torch.cat((angles32, angles32), dim=-1).cos()).abs()
    assert difference.max().item() == pytest.approx(0.7819, abs=1e-4)
    # The table maximum is at [2008, 1], not at [1857, 1] (0.715 there).
    assert divmod(int(difference.argmax()), 32) == (2008, 1)
    assert difference[1857, 1].item() == pytest.approx(0.7149, abs=1e-4)
    assert worst(half) == pytest.approx((0.78188, 2008, 1), abs=1e-4)


@pytest.mark.peers("torch", "transformers")
def test_candle_3520_holds_15962_as_15936() -> None:
    assert torch.tensor(15962.0).to(torch.bfloat16).item() == 15936.0
    cache = rc.candle_3520("cos")
    assert cache.table.dtype == torch.bfloat16
    # Row 15962 of pair 0 (frequency 1) is cos(15936), not cos(15962) = -0.908.
    assert cache.table[15962, 0].item() == torch.tensor(math.cos(15936)).to(torch.bfloat16).item() == -0.267578125
    assert cache.table[15990, 0].item() == cache.table[16000, 0].item()  # 15990 is held as 16000
    assert worst(cache)[0] == pytest.approx(2.0, abs=1e-3)


@pytest.mark.peers("torch", "transformers")
def test_tt_metal_54516_inv_freq_error() -> None:
    inv_freq = rc._inv_freq(64, 10000.0)
    assert inv_freq[1].item() == pytest.approx(0.7498942, abs=1e-7)
    assert inv_freq.to(torch.bfloat16)[1].item() == 0.75
    exact = 10000.0 ** (-torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    assert (inv_freq.to(torch.bfloat16).double() - exact).abs().max().item() == pytest.approx(4.37e-4, abs=1e-6)
    assert worst(rc.tt_metal_54516("cos"))[0] == pytest.approx(1.7958, abs=1e-3)


@pytest.mark.peers("torch", "transformers")
def test_megatron_535_merges_the_last_positions() -> None:
    cache = rc.megatron_535("cos")
    table = cache.table.float()
    assert torch.unique(table, dim=0).shape[0] == 6145  # distinct fp16 positions in 0..32767
    assert torch.unique(table[-64:], dim=0).shape[0] == 5
    assert torch.equal(table[32760], table[32767])  # both held as 32768


@pytest.mark.peers("torch", "transformers")
def test_vllm_883_inv_freq_overflows() -> None:
    cache = rc.vllm_883("cos")
    # base ** (2k/d) in fp16: 1e6 is inf, so every pair but the first has frequency 0 (cos 1).
    assert bool((cache.table[:, 1:64] == 1).all())
    assert worst(cache)[0] == pytest.approx(2.0, abs=1e-6)
    fixed = rc.vllm_883("cos", fixed=True)
    assert worst(fixed)[0] == pytest.approx(4.54e-4, abs=1e-6)


@pytest.mark.peers("torch", "transformers")
def test_imp_1325_error_grows_with_the_position() -> None:
    cache = rc.kekzl_imp_1325("cos")
    error, position, column = worst(cache)
    assert error == pytest.approx(7.449e-3, abs=1e-6) and (position, column) == (128675, 0)
    # Small where the angle is small, as the PR reports (3e-6 at position 40 there).
    early = rc.rows_of(cache, range(0, 41))
    assert worst(early)[0] < 3e-6
    assert worst(rc.kekzl_imp_1325("cos", fixed=True))[0] < 3e-8


# ---------------------------------------------------------------------------------------------------
# Faulty caches: the check fails and names what explains them.
# ---------------------------------------------------------------------------------------------------

# name -> (builder of the cache for a kind, the kind checked, the causes that explain it). Each case is
# checked with one kind (the diagnosis costs about 2 s a table); cos and sin alternate across the cases,
# and every case gave the same causes for both kinds when run with both.
FAULTY: Dict[str, Tuple[Callable[[str], rc.Cache], str, Set[str]]] = {
    # Positions 0..2047 are exact in fp16: that step changes nothing, so it is not a cause.
    "gpt-neox#1003": (rc.gpt_neox_1003, "cos", {"inv_freq:float16", "angles:float16"}),
    # All three needed: leaving out the bf16 positions, inv_freq or angles leaves 15%, 16% or 44% of
    # these elements beyond 2**-18 (1 + |angle|) + an ulp of bf16 of the table (up to 1.98 apart).
    "candle#3520": (
        lambda kind: rc.rows_of(rc.candle_3520(kind), every(11, 16384, 15962, 15990)),
        "cos",
        {"positions:bfloat16", "inv_freq:bfloat16", "angles:bfloat16"},
    ),
    "sglang-jax#1472": (
        lambda kind: rc.rows_of(rc.sglang_jax_1472(kind), every(5, 4096)),
        "sin",
        {"inv_freq:bfloat16"},
    ),
    "tt-metal#54516": (lambda kind: rc.rows_of(rc.tt_metal_54516(kind), every(5, 5120)), "cos", {"inv_freq:bfloat16"}),
    # All three needed: leaving out the fp16 positions, inv_freq or angles leaves 22%, 27% or 73% of
    # these elements beyond 2**-18 (1 + |angle|) + an ulp of fp16 of the table (up to 1.98 apart); the
    # positions matter in the rows whose position fp16 does not hold (most rows beyond 2048).
    "megatron#535": (
        lambda kind: rc.rows_of(rc.megatron_535(kind), every(13, 32768, *range(32704, 32768))),
        "cos",
        {"positions:float16", "inv_freq:float16", "angles:float16"},
    ),
    # The inv_freq step computed in fp16: the base 1e6 itself overflows, so w = [1, 0, 0, ...]. No
    # rounding of the true w_k to fp16 gives that (they are all normal fp16 numbers): the cause is
    # the inv_freq step done in fp16 arithmetic, base included.
    "vllm#883": (lambda kind: rc.rows_of(rc.vllm_883(kind), every(5, 4096)), "cos", {"inv_freq:float16"}),
    "layout:half-as-interleaved": (
        lambda kind: rc.rows_of(rc.other_layout("half", kind), every(5, 4096)),
        "cos",
        {"layout"},
    ),
    "layout:interleaved-as-half": (
        lambda kind: rc.rows_of(rc.other_layout("interleaved", kind), every(5, 4096)),
        "sin",
        {"layout"},
    ),
    "yarn:attention-factor-missing": (
        lambda kind: rc.rows_of(rc.yarn_attention_factor("missing", kind), every(5, 4096)),
        "cos",
        {"attention_factor:missing"},
    ),
    "yarn:attention-factor-twice": (
        lambda kind: rc.rows_of(rc.yarn_attention_factor("twice", kind), every(5, 4096)),
        "sin",
        {"attention_factor:twice"},
    ),
    "llama3:scaling-missing": (lambda kind: rc.rows_of(rc.scaling_missing(kind), every(5, 4096)), "cos", {"scaling"}),
    "dynamic:linear-instead": (lambda kind: rc.rows_of(rc.scaling_other(kind), every(5, 4096)), "sin", {"scaling"}),
    "base:5e5-as-1e4": (lambda kind: rc.rows_of(rc.other_base(kind), every(5, 4096)), "sin", {"base"}),
}


def single(step: str, to: str) -> Callable[[str], rc.Cache]:
    return lambda kind: rc.rows_of(rc.single_step(step, to, kind), every(5, 4096))


# Each step rounded on its own, in a float32 default cache (base 1e4, head dim 64, 4096 positions;
# every fifth row checked): fp16 with the cos table, bf16 with the sin table.
for _step in rc.STEPS:
    FAULTY[f"single:{_step}:float16"] = (single(_step, "float16"), "cos", {f"{_step}:float16"})
    FAULTY[f"single:{_step}:bfloat16"] = (single(_step, "bfloat16"), "sin", {f"{_step}:bfloat16"})


@pytest.mark.peers("torch", "transformers")
@pytest.mark.parametrize("case", list(FAULTY))
def test_a_faulty_cache_fails_and_is_explained(case: str) -> None:
    build, kind, causes = FAULTY[case]
    cache = build(kind)
    report = check(cache)
    assert not report.ok, f"{case} {kind}\n{report}"
    assert set(report.causes) == causes, f"{case} {kind}: causes {report.causes}, expected {sorted(causes)}\n{report}"


# ---------------------------------------------------------------------------------------------------
# Caches that should pass.
# ---------------------------------------------------------------------------------------------------

# name -> (builder of the cache for a kind, the kinds checked)
PASSING: Dict[str, Tuple[Callable[[str], rc.Cache], Tuple[str, ...]]] = {
    "transformers:default": (lambda kind: rc.transformers_cache("default", kind, 4096), ("cos", "sin")),
    "transformers:linear": (lambda kind: rc.transformers_cache("linear", kind, 4096), ("cos",)),
    # L0 = 2048: 4096 positions grow the base (base' = 1e4 * 5 ** (128/126)).
    "transformers:dynamic": (lambda kind: rc.transformers_cache("dynamic", kind, 4096), ("sin",)),
    "transformers:yarn": (lambda kind: rc.transformers_cache("yarn", kind, 4096), ("cos",)),
    "transformers:llama3": (lambda kind: rc.transformers_cache("llama3", kind, 4096), ("sin",)),
    "transformers:llama4-scout": (lambda kind: rc.transformers_cache("llama4", kind, 4096), ("cos", "sin")),
    # Positions up to L0 = 4096 use the short factors; beyond, the long ones.
    "transformers:longrope-short": (lambda kind: rc.transformers_cache("longrope", kind, 4096), ("cos",)),
    "transformers:longrope-long": (
        lambda kind: rc.transformers_cache("longrope", kind, positions=every(7, 6144)),
        ("sin",),
    ),
    "transformers:gpt-j": (lambda kind: rc.gptj(kind, 4096), ("cos", "sin")),
    # A float32 cache stored in fp16: within the tolerance everywhere (max error 4.5e-4).
    "vllm#1004-fixed": (lambda kind: rc.vllm_883(kind, fixed=True), ("cos",)),
    # Float32 argument reduction (CUDA fast math): its errors (at most 7.5e-3, at angles past 128000) are
    # about one float32 ulp of the angle, as forming the angle in float32 makes them: transformers' own
    # float32 cache errs as much there. Past 32767, where float32 holds the angle to 2**-9 at best, the
    # default rule does not judge an element; below, the errors are within the rule.
    "imp#1325": (lambda kind: rc.rows_of(rc.kekzl_imp_1325(kind), every(13, 131072, 128675, 130750)), ("cos",)),
    "imp#1325-fixed": (
        lambda kind: rc.rows_of(rc.kekzl_imp_1325(kind, fixed=True), every(13, 131072, 128675, 130750)),
        ("sin",),
    ),
}


@pytest.mark.peers("torch", "transformers")
@pytest.mark.parametrize("case, kind", [(case, kind) for case, (_, kinds) in PASSING.items() for kind in kinds])
def test_a_right_cache_passes(case: str, kind: str) -> None:
    cache = PASSING[case][0](kind)
    report = check(cache)
    assert report.ok, f"{case} {kind}\n{report}"
    assert tuple(report.causes) == (), f"{case} {kind}: {report.causes}"


@pytest.mark.peers("torch", "transformers")
@pytest.mark.parametrize("base", [10000.0, 500000.0, 1e6])
def test_transformers_default_float32_passes_up_to_8192(base: float) -> None:
    """Transformers' default float32 cache (head dim 128) passes at positions below 8192 (every eleventh row checked).

    Its first element beyond 2**-10 is at position 17178 (base 1e4), 12451 (5e5), 15444 (1e6).
    """
    cache = rc.rows_of(rc.transformers_cache("default", "cos", 8192, base=base), every(11, 8192))
    report = check(cache)
    assert report.ok, f"base {base}\n{report}"


@pytest.mark.peers("torch", "transformers")
@pytest.mark.parametrize("base", [10000.0, 500000.0, 1e6])
def test_transformers_default_float32_passes_at_131072(base: float) -> None:
    """At 131072 positions transformers' float32 cache passes, its elements past angle 511 counted as coarse.

    Its errors (the float32 rounding of the angle, and inv_freq's 1-ulp errors times the position) are
    about 2.3 units of 2**-24 * (1 + |angle|) at most: within the rule's 32, at every angle. Rows every
    97th and the last 64 are checked, with their positions.
    """
    rows = every(97, 131072, *range(131008, 131072))
    cache = rc.rows_of(rc.transformers_cache("default", "cos", 131072, base=base), rows)
    report = check(cache)
    assert report.ok, f"base {base}\n{report}"
    assert report.coarse > 0 and report.coarse_from is not None
    assert report.unjudged < report.count / 10


@pytest.mark.peers("torch", "transformers")
def test_transformers_bfloat16_cache_is_not_blamed_on_a_step_it_did_not_take() -> None:
    """Transformers' cache of a bf16 model (float32 computation, one rounding to bf16 at the end), 256 positions.

    Nothing in its making is a mistake: it is the float32 cache rounded once to bfloat16, the
    declared format, and every position below 256 is exact in fp16 and bf16 alike. Where the
    float32 value lies near a bf16 rounding midpoint the result is one bf16 ulp (2**-8 in
    [0.5, 1)) from the correctly rounded value, above the cap 2**-10: measured, 2 elements of
    256 x 128 (max error 0.0039). Whether that passes is the tolerance's business; a diagnosis
    must not explain it by a step that did not happen (positions rounded to fp16, say, which
    changes none of these positions).
    """
    cache = rc.transformers_cache("default", "cos", 256, dtype="bfloat16")
    assert cache.table.dtype == torch.bfloat16
    report = check(cache)
    assert report.ok or tuple(report.causes) == (), f"{report.causes}\n{report}"


@pytest.mark.parametrize("kind", ["cos", "sin"])
def test_a_wrong_cache_of_one_row_gets_a_diagnosis(kind: str) -> None:
    # One position (a decoding step's cache): the diagnosis reads the width from that row.
    cos, sin = rope(1, 8, positions=[5])
    halved = [[x / 2 for x in row] for row in (cos if kind == "cos" else sin)]
    report = compare_rope(halved, kind=kind, positions=[5])
    assert not report.ok and report.diagnosis is not None and report.diagnosis.startswith("Diagnosis: ")
    # Every candidate misses every element: none is named as closer than the others.
    assert report.diagnosis.startswith(
        "Diagnosis: nothing known explains the table: no candidate reproduces any of the elements compared;"
    ), report.diagnosis
    assert "closest" not in report.diagnosis


# ---------------------------------------------------------------------------------------------------
# Several positions a row: axes_dim (Flux, CogVideoX, axial RoPE) and M-RoPE sections (Qwen2-VL, Qwen3-VL)
# ---------------------------------------------------------------------------------------------------

# The sources' rules, written out (docs/rope.md): each pair k of the head as (axis, exponent t), its angle
# the axis's position times base**-t; the cache's columns by the layout.
MultiPair = Tuple[int, Fraction]


def axes_dim_pairs(axes_dim: Sequence[int]) -> List[MultiPair]:
    """Each axis its own frequencies base**(-2j / axes_dim[a]), its pairs after the previous axis's."""
    return [(a, Fraction(2 * j, w)) for a, w in enumerate(axes_dim) for j in range(w // 2)]


def mrope_pairs(section: Sequence[int], interleaved: bool) -> List[MultiPair]:
    """One embedding of head_dim = 2 * sum(section): pair k's exponent 2k / head_dim, its axis by section
    (Qwen2-VL: contiguous sections t, h, w) or, interleaved (Qwen3-VL), axis a for k % n == a < ... ."""
    h, n = sum(section), len(section)
    if interleaved:
        axes = [k % n if k % n and k < n * section[k % n] else 0 for k in range(h)]
    else:
        axes = [a for a, s in enumerate(section) for _ in range(s)]
    return [(axes[k], Fraction(k, h)) for k in range(h)]


def multi_cache(
    pairs: List[MultiPair], row: Sequence[Position], base: int, layout: str, kind: str
) -> List["mpmath.mpf"]:
    values = []
    for axis, t in pairs:
        angle = rope_reference.mpf(rope_reference.exact(row[axis])) * mpmath.power(
            base, -mpmath.mpf(t.numerator) / t.denominator
        )
        values.append(mpmath.cos(angle) if kind == "cos" else mpmath.sin(angle))
    if layout == "half":
        return values + values
    if layout == "pairs":
        return values
    return [v for v in values for _ in (0, 1)]


MULTI_CASES = [
    # (name, keywords of rope(), the pairs, base, layout)
    ("flux-like", dict(axes_dim=(4, 6, 6)), axes_dim_pairs((4, 6, 6)), 10000, "interleaved"),
    ("qwen-vision-like", dict(axes_dim=(8, 8)), axes_dim_pairs((8, 8)), 10000, "half"),
    ("pairs layout", dict(axes_dim=(4, 4)), axes_dim_pairs((4, 4)), 10000, "pairs"),
    (
        "qwen2-vl-like",
        dict(scaling={"rope_type": "mrope", "mrope_section": [2, 3, 3]}),
        mrope_pairs((2, 3, 3), False),
        10000,
        "half",
    ),
    (
        "qwen3-vl-like",
        dict(scaling={"rope_type": "default", "mrope_section": [4, 2, 2], "mrope_interleaved": True}),
        mrope_pairs((4, 2, 2), True),
        10000,
        "half",
    ),
]
MULTI_POSITIONS: List[List[Position]] = [[0, 1, 2], [1, 0, 3], ["1/2", 2, 0], [7, "2.5", 1000], [0.1, 3, 5]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, keywords, pairs, base, layout", MULTI_CASES, ids=[case[0] for case in MULTI_CASES])
def test_multi_axis_caches_are_each_axis_rule_correctly_rounded(
    name: str, keywords: Dict[str, Any], pairs: List[MultiPair], base: int, layout: str, dtype: str
) -> None:
    n = max(axis for axis, _ in pairs) + 1
    positions = [row[:n] for row in MULTI_POSITIONS]
    head_dim = 2 * len(pairs)
    cos, sin = rope(len(positions), head_dim, positions=positions, layout=layout, exact=True, dtype=dtype, **keywords)
    with mpmath.workprec(rope_reference.PRECISION):
        for kind, got in (("cos", cos), ("sin", sin)):
            expected = [
                [reference.round_to(v, dtype) for v in multi_cache(pairs, row, base, layout, kind)] for row in positions
            ]
            assert got == expected, (name, kind)
    # Checked with the same keywords, the exact caches pass; the fast ones too.
    assert compare_rope(cos, positions=positions, layout=layout, dtype=dtype, **keywords).ok
    fast = rope(len(positions), head_dim, positions=positions, layout=layout, dtype=dtype, **keywords)[1]
    assert compare_rope(fast, kind="sin", positions=positions, layout=layout, dtype=dtype, **keywords).ok


@pytest.mark.parametrize("name, keywords, pairs, base, layout", MULTI_CASES[:2] + MULTI_CASES[3:])
def test_multi_axis_rotation_turns_each_pair_by_its_axis_angle(
    name: str, keywords: Dict[str, Any], pairs: List[MultiPair], base: int, layout: str
) -> None:
    n = max(axis for axis, _ in pairs) + 1
    positions = [row[:n] for row in MULTI_POSITIONS]
    h = len(pairs)
    x = [[float((3 * r + 5 * c) % 11 - 5) for c in range(2 * h)] for r in range(len(positions))]
    got = apply_rope(x, positions=positions, layout=layout, exact=True, dtype="float32", **keywords)
    with mpmath.workprec(rope_reference.PRECISION):
        for r, row in enumerate(positions):
            cos, sin = (multi_cache(pairs, row, base, "pairs", kind) for kind in ("cos", "sin"))
            for k in range(h):
                a, b = (k, k + h) if layout == "half" else (2 * k, 2 * k + 1)
                assert got[r][a] == reference.round_to(x[r][a] * cos[k] - x[r][b] * sin[k], "float32"), (name, r, k)
                assert got[r][b] == reference.round_to(x[r][b] * cos[k] + x[r][a] * sin[k], "float32"), (name, r, k)
    assert compare_rope(got, kind="rotated", x=x, positions=positions, layout=layout, dtype="float32", **keywords).ok


def test_each_multi_axis_column_is_judged_at_its_own_axis_position() -> None:
    # Axis 1 at positions 40000 + r: its fast pairs' angles pass 32767, float32's last judged, axis 0's never.
    positions = [[r, 40000 + r] for r in range(8)]
    cos = rope(8, 16, positions=positions, axes_dim=(8, 8), exact=True, dtype="float32")[0]
    report = compare_rope(cos, positions=positions, axes_dim=(8, 8), dtype="float32")
    omegas = [10000.0 ** (-2 * j / 8) for j in range(4)]
    expected = sum(2 for row in positions for axis in (0, 1) for w in omegas if 2**-19 * (1 + row[axis] * w) > 2**-4)
    assert expected == 8 * 2 and report.unjudged == expected and report.ok, str(report)
    # 2**-12 off in axis 0's fastest pair (half layout: column 0) fails; in axis 1's (column 4), not judged.
    for column, failures in ((0, 1), (4, 0)):
        damaged = [row[:] for row in cos]
        damaged[3][column] += 2**-12
        report = compare_rope(damaged, positions=positions, axes_dim=(8, 8), dtype="float32")
        assert report.failures == failures, (column, str(report))
    assert "in the columns of axes 0 (counted from 0); the first is [3][0], axis 0's" in str(
        compare_rope(
            [[x + (2**-12 if (r, c) == (3, 0) else 0.0) for c, x in enumerate(row)] for r, row in enumerate(cos)],
            positions=positions,
            axes_dim=(8, 8),
            dtype="float32",
        ).diagnosis
    )


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: rope(2, 16, positions=[[0, 1], [1, 2]], axes_dim=(8, 6)),
            ValueError,
            "axes_dim must be 2 or more even widths summing to 16, got (8, 6)",
        ),
        (
            lambda: rope(2, 16, positions=[[0, 1], [1, 2]], axes_dim=(7, 9)),
            ValueError,
            "axes_dim must be 2 or more even widths summing to 16, got (7, 9)",
        ),
        (
            lambda: rope(2, 16, positions=[[0, 1], [1, 2]], axes_dim=16),  # type: ignore[arg-type]
            TypeError,
            "axes_dim must be a sequence of integers, got int 16",
        ),
        (
            lambda: rope(2, 16, positions=[[0, 1], [1]], axes_dim=(8, 8)),
            ValueError,
            "positions[1] must be 2 positions, one per axis of axes_dim, got [1]",
        ),
        (
            lambda: rope(2, 16, axes_dim=(8, 8)),
            TypeError,
            "positions must be rows of 2 positions (one per axis) for axes_dim, got NoneType None",
        ),
        (
            lambda: rope(2, 16, positions=[[0, 1, 2]] * 2, scaling={"mrope_section": [2, 3, 2]}),
            ValueError,
            "scaling['mrope_section'] must be 2 or more pair counts summing to 8, got [2, 3, 2]",
        ),
        (
            lambda: rope(2, 16, positions=[[0, 1]] * 2, axes_dim=(8, 8), scaling={"mrope_section": [4, 4]}),
            ValueError,
            "give axes_dim or scaling['mrope_section'], not both, got axes_dim=(8, 8)",
        ),
        (
            lambda: apply_rope([[1.0] * 8] * 3, axes_dim=(4, 4), positions=[(1, 2), (3, 4)]),
            ValueError,
            "positions must have one row per row of x (3), got 2",
        ),
        (
            lambda: apply_rope([[1.0] * 8], axes_dim=(4, 4), positions=[(1, 2), (3, 4)]),
            ValueError,
            "positions must have one row per row of x (1), got 2",
        ),
        (
            lambda: compare_rope([[1.0] * 8] * 3, axes_dim=(4, 4), positions=[(1, 2), (3, 4)]),
            ValueError,
            "positions must have one row per row of the table's rows (3), got 2",
        ),
        (
            lambda: rope(2, 16, scaling={"mrope_interleaved": True}),
            ValueError,
            "scaling['mrope_interleaved'] goes with scaling['mrope_section'], got True",
        ),
        (
            lambda: rope(2, 16, positions=[[0, 1]] * 2, scaling={"mrope_section": [4, 4], "mrope_interleaved": 1}),
            TypeError,
            "scaling['mrope_interleaved'] must be True or False, got int 1",
        ),
    ],
)
def test_a_bad_multi_axis_rope_is_refused_naming_the_parameter_and_the_rule(
    call: Callable[[], object], error: "Type[Exception]", message: str
) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value).startswith(message), str(caught.value)


# Named without keywords: a cache of several positions a row, checked alone, is read as one (its split, base,
# layout and each row's positions), and the call the diagnosis gives makes the cache the source's rule makes.


def float32_cache(
    pairs: List[MultiPair], positions: Sequence[Sequence[float]], base: float, layout: str, kind: str
) -> List[List[float]]:
    """The sources' rule in float64 (Flux's, diffusers' float64 frequencies), each value rounded to float32."""
    wave = math.cos if kind == "cos" else math.sin
    table = []
    for row in positions:
        values = [wave(row[axis] * base ** -float(t)) for axis, t in pairs]
        values = [struct.unpack("f", struct.pack("f", v))[0] for v in values]
        table.append(values + values if layout == "half" else [v for v in values for _ in (0, 1)])
    return table


def grid(*lengths: int, at: Sequence[int] = (0, 0, 0)) -> List[List[int]]:
    """A grid's cells, the last axis fastest, each coordinate plus at[axis]."""
    cells: List[List[int]] = [[]]
    for axis, n in enumerate(lengths):
        cells = [cell + [at[axis] + k] for cell in cells for k in range(n)]
    return cells


NAMED_CASES = [
    # (name, pairs, base, layout, kind, positions, the keywords that make it, words the diagnosis says)
    (
        "flux-like: text tokens at 0, an axis kept at 0",
        axes_dim_pairs((8, 12, 12)),
        10000,
        "interleaved",
        "cos",
        [[0, 0, 0]] * 4 + [[0] + cell for cell in grid(12, 12)],
        dict(axes_dim=(8, 12, 12), layout="interleaved"),
        "axes_dim 8, 12, 12) with a position per axis on each row: 4 rows at (0, 0, 0), then the cells of a 12 x 12"
        " grid at (0, i, j), j fastest; it reproduces every element",
    ),
    (
        "video-like, base 256",
        axes_dim_pairs((8, 12, 12)),
        256,
        "interleaved",
        "sin",
        grid(3, 8, 8),
        dict(axes_dim=(8, 12, 12), base=256, layout="interleaved"),
        "the cells of a 3 x 8 x 8 grid at (t, i, j), j fastest; it reproduces every element",
    ),
    (
        "axial, half layout",
        axes_dim_pairs((16, 16)),
        10000,
        "half",
        "cos",
        grid(16, 16),
        dict(axes_dim=(16, 16)),
        "the cells of a 16 x 16 grid at (i, j)",
    ),
    (
        "hunyuandit-like: half a position a cell, the column first",
        axes_dim_pairs((16, 16)),
        10000,
        "interleaved",
        "sin",
        [[j / 2, i / 2] for i in range(12) for j in range(10)],
        dict(axes_dim=(16, 16), layout="interleaved"),
        "the cells of a 12 x 10 grid at (j / 2, i / 2), j fastest; it reproduces every element",
    ),
    (
        "qwen2-vl-like: text tokens, then an image",
        mrope_pairs((4, 6, 6), False),
        1000000,
        "half",
        "sin",
        [[p, p, p] for p in range(10)] + grid(1, 12, 10, at=(10, 10, 10)),
        dict(scaling={"mrope_section": [4, 6, 6]}, base=1000000),
        "M-RoPE sections 4, 6, 6) with a position per axis on each row: 10 rows at (p, p, p) for p = 0 to 9, then"
        " the cells of a 12 x 10 grid at (10, 10 + i, 10 + j)",
    ),
    (
        "interleaved sections no model uses, the temporal axis turning",
        mrope_pairs((12, 10, 10), True),
        10000,
        "half",
        "sin",
        grid(3, 6, 7),
        dict(scaling={"mrope_section": [12, 10, 10], "mrope_interleaved": True}),
        "M-RoPE sections 12, 10, 10, interleaved) with a position per axis on each row: the cells of a 3 x 6 x 7"
        " grid at (t, i, j), j fastest; it reproduces every element",
    ),
    (
        "qwen3-vl-like: interleaved sections",
        mrope_pairs((6, 5, 5), True),
        10000,
        "half",
        "sin",
        [[p, p, p] for p in range(6)] + grid(2, 10, 10, at=(6, 6, 6)),
        dict(scaling={"mrope_section": [6, 5, 5], "mrope_interleaved": True}),
        "M-RoPE sections 6, 5, 5, interleaved) with a position per axis on each row: 6 rows at (p, p, p) for p = 0"
        " to 5, then the cells of a 2 x 10 x 10 grid at (6 + t, 6 + i, 6 + j)",
    ),
]


@pytest.mark.parametrize(
    "name, pairs, base, layout, kind, positions, keywords, words", NAMED_CASES, ids=[c[0] for c in NAMED_CASES]
)
def test_a_multi_axis_cache_checked_alone_is_named_with_its_split_and_positions(
    name: str,
    pairs: List[MultiPair],
    base: float,
    layout: str,
    kind: str,
    positions: List[List[float]],
    keywords: Dict[str, Any],
    words: str,
) -> None:
    table = float32_cache(pairs, positions, base, layout, kind)
    assert compare_rope(table, kind=kind, positions=positions, dtype="float32", **keywords).ok
    report = compare_rope(table, kind=kind, dtype="float32")
    assert not report.ok and report.causes == ("axes",), str(report)
    assert words in str(report.diagnosis), str(report)
    # The call named makes the cache of the source's keywords and positions, value for value.
    call = re.search(r"The call that reproduces it: (rope\(.*\)\[[01]\])", str(report.diagnosis))
    assert call is not None, str(report)
    made = eval(call.group(1), {"rope": rope})
    assert made == rope(len(positions), len(table[0]), positions=positions, dtype="float32", **keywords)[kind == "sin"]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_narrow_multi_axis_cache_is_named_in_its_format(dtype: str) -> None:
    # Flux's rule rounded to the narrow format: checked as that format, and as float32 (the values said to be
    # that format's, the call making the cache in it).
    positions = [[0, 0, 0]] * 4 + [[0] + cell for cell in grid(12, 12)]
    wide = float32_cache(axes_dim_pairs((8, 12, 12)), positions, 10000, "interleaved", "sin")
    table = [[reference.round_to(x, dtype) for x in row] for row in wide]
    expected = rope(len(positions), 32, positions=positions, dtype=dtype, axes_dim=(8, 12, 12), layout="interleaved")[1]
    for asked, causes, words in (
        (dtype, ("axes",), "on each row: 4 rows"),
        ("float32", ("axes", f"output:{dtype}"), f"on each row, its values rounded to {dtype}: 4 rows"),
    ):
        report = compare_rope(table, kind="sin", dtype=asked)
        assert report.causes == causes and words in str(report.diagnosis), str(report)
        call = re.search(r"The call that reproduces it: (rope\(.*\)\[[01]\])", str(report.diagnosis))
        assert call is not None and eval(call.group(1), {"rope": rope}) == expected, str(report)


def test_the_command_line_named_for_a_grid_from_zero_reproduces_the_cache(
    tmp_path: Path, capsys: "pytest.CaptureFixture[str]"
) -> None:
    cos = float32_cache(axes_dim_pairs((8, 8)), grid(6, 6), 10000, "interleaved", "cos")
    told = str(compare_rope(cos, dtype="float32").diagnosis)
    line = re.search(r"on the command line: ([^)]*)\)", told)
    assert (
        line is not None
        and line.group(1) == "6x6 16 --rope cos --axes-dim 8,8 --rope-layout interleaved --dtype float32"
    )
    path = tmp_path / "cos.json"
    path.write_text(json.dumps(cos))
    status, out, err = run_main(capsys, *line.group(1).split(), "--check", str(path))
    assert status == 0 and "0 of 576 elements outside the tolerance: within tolerance" in out, (out, err)


def test_sections_the_table_does_not_fix_are_said_to_be_a_models() -> None:
    # Qwen3-VL's interleaved sections 24, 20, 20 at base 5e6: in a float32 cos cache its slowest pairs are 1.0 on
    # every row, which the least sections the other pairs allow (28, 18, 18) reproduce too.
    positions = [[p, p, p] for p in range(8)] + grid(1, 16, 16, at=(8, 8, 8))
    cos = float32_cache(mrope_pairs((24, 20, 20), True), positions, 5000000, "half", "cos")
    told = str(compare_rope(cos, dtype="float32").diagnosis)
    assert (
        "M-RoPE sections 24, 20, 20, interleaved" in told
        and "so the sections are not read from the table: these are Qwen3-VL's" in told
    ), told
    # The pairs named: 1.0 on every row (in both halves of the head), and the last one among them.
    named = re.search(r"pairs ([\d ,a-z]+) are 1.0 on every row", told)
    assert named is not None, told
    pairs = [
        k
        for run in re.split(r", | and ", named.group(1))
        for k in range(int(run.split(" to ")[0]), int(run.split(" to ")[-1]) + 1)
    ]
    assert 63 in pairs and all(row[k] == row[k + 64] == 1.0 for row in cos for k in pairs), told


def test_a_damaged_element_of_a_multi_axis_cache_is_named() -> None:
    positions = [[0, 0, 0]] * 4 + [[0] + cell for cell in grid(12, 12)]
    cos = float32_cache(axes_dim_pairs((8, 12, 12)), positions, 10000, "interleaved", "cos")
    cos[40][22] += 2**-10
    report = compare_rope(cos, dtype="float32")
    assert report.causes == ("axes", "damage"), str(report)
    assert "except for 1 element outside the default tolerance: [40][22]" in str(report.diagnosis)


def test_an_element_not_finite_is_never_said_to_be_reproduced() -> None:
    # One NaN in a cache of another layout (one position a row) and in a multi-axis cache: the element is named,
    # never covered by "it reproduces every element".
    flat = rope(64, 8, layout="interleaved")[0]
    cells = [[i, j] for i in range(6) for j in range(6)]
    multi = rope(36, 16, positions=cells, axes_dim=(8, 8), layout="interleaved")[0]
    for table in (flat, multi):
        table[5][3] = math.nan
        told = str(compare_rope(table).diagnosis)
        assert "it reproduces every element" not in told and "[5][3]" in told, told


def test_long_runs_of_text_tokens_and_damaged_rows_do_not_hide_the_grid() -> None:
    # 300 text tokens (past half a turn of the temporal axis's slowest pair at base 1e6: its readings alias),
    # then an image; one element damaged in the text tokens, and one in the image's first row.
    pairs = mrope_pairs((16, 24, 24), False)
    positions = [[p, p, p] for p in range(300)] + grid(1, 8, 8, at=(300, 300, 300))
    cos = float32_cache(pairs, positions, 1000000, "half", "cos")
    cos[7][0] += 0.25
    cos[300][1] += 0.25
    report = compare_rope(cos, dtype="float32")
    assert report.causes == ("axes", "damage"), str(report)
    assert "300 rows at (p, p, p) for p = 0 to 299, then the cells of a 8 x 8 grid at (300, 300 + i, 300 + j)" in str(
        report.diagnosis
    )
    assert "except for 2 elements outside the default tolerance: [7][0], [300][1]" in str(report.diagnosis)


def test_pairs_that_each_keep_their_own_value_are_not_given_one() -> None:
    # An image alone at (6, 6 + i, 6 + j): the temporal axis's pairs each keep cos(6 w), all different.
    positions = grid(1, 8, 8, at=(6, 6, 6))
    cos = float32_cache(mrope_pairs((24, 20, 20), True), positions, 5000000, "half", "cos")
    told = str(compare_rope(cos, dtype="float32").diagnosis)
    assert "are each one value on every row, which shows no axis" in told, told


def test_a_multi_axis_cache_no_split_explains_is_not_named() -> None:
    # Each axis its own base (none of the sources does it): read, the base of one axis does not fit the other's.
    pairs = [(0, Fraction(2 * j, 16)) for j in range(8)] + [(1, Fraction(2 * j, 16)) for j in range(8)]
    table = []
    for i, j in grid(16, 16):
        values = [math.cos(i * 10000.0 ** -float(t)) for _, t in pairs[:8]]
        values += [math.cos(j * 500.0 ** -float(t)) for _, t in pairs[8:]]
        table.append([v for v in values for _ in (0, 1)])
    report = compare_rope(table)
    assert not report.ok and "axes" not in report.causes, str(report)
    assert "nothing known explains the table" in str(report.diagnosis)


# The frameworks' own caches at 4096 positions a model meets (a 64 x 64 latent, a 4 x 32 x 32 video, 64 text
# tokens then a 64 x 63 image): each builder returns (cos, sin, the rows' positions, the keywords that name the
# setup), the caches as float32 arrays of one row per position.

PeerCache = Tuple[Any, Any, List[List[Any]], Dict[str, Any]]


def image_ids(text: int, height: int, width: int, frame: int = 0) -> List[List[int]]:
    """Qwen2-VL's position ids, written out: text tokens 0..text-1 on every axis, then an image's (t, h, w)."""
    ids = [[p, p, p] for p in range(text)]
    return ids + [[text + frame, text + i, text + j] for i in range(height) for j in range(width)]


def flux_cache() -> PeerCache:
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed

    # The pipeline's ids: text tokens zeros, image tokens (0, row, column) of the packed latent.
    ids = [[0, 0, 0]] * 16 + [[0, i, j] for i in range(64) for j in range(64)]
    cos, sin = FluxPosEmbed(theta=10000, axes_dim=[16, 56, 56])(torch.tensor(ids, dtype=torch.float32))
    return cos.numpy(), sin.numpy(), ids, dict(axes_dim=(16, 56, 56), layout="interleaved")


VIDEO_CELLS = [[t, i, j] for t in range(4) for i in range(32) for j in range(32)]


def hunyuan_dit_cache() -> PeerCache:
    from diffusers.models.embeddings import get_2d_rotary_pos_embed
    from diffusers.pipelines.hunyuandit.pipeline_hunyuandit import get_resize_crop_region_for_grid

    # The pipeline at 1024 x 1024: a 64 x 64 grid, its crop on the base grid of 32, so half a position a cell;
    # each token's cache is the column's rotation, then the row's.
    crop = get_resize_crop_region_for_grid((64, 64), 32)
    cos, sin = get_2d_rotary_pos_embed(88, crop, (64, 64), use_real=True)
    cells = [[j / 2, i / 2] for i in range(64) for j in range(64)]
    return cos.numpy(), sin.numpy(), cells, dict(axes_dim=(44, 44), layout="interleaved")


def cogvideox_cache() -> PeerCache:
    from diffusers.models.embeddings import get_3d_rotary_pos_embed

    cos, sin = get_3d_rotary_pos_embed(64, ((0, 0), (32, 32)), (32, 32), 4)
    return cos.numpy(), sin.numpy(), VIDEO_CELLS, dict(axes_dim=(16, 24, 24), layout="interleaved")


def hunyuan_video_cache() -> PeerCache:
    from diffusers.models.transformers.transformer_hunyuan_video import HunyuanVideoRotaryPosEmbed

    embed = HunyuanVideoRotaryPosEmbed(patch_size=1, patch_size_t=1, rope_dim=[16, 56, 56], theta=256.0)
    cos, sin = embed(torch.zeros(1, 16, 4, 32, 32))
    return cos.numpy(), sin.numpy(), VIDEO_CELLS, dict(axes_dim=(16, 56, 56), base=256, layout="interleaved")


def qwen_cache(model: str) -> PeerCache:
    if model == "qwen2_vl":
        from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig as Config
        from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding as Embedding

        parameters: Dict[str, Any] = {"rope_type": "default", "mrope_section": [16, 24, 24], "rope_theta": 1000000.0}
        config = Config(hidden_size=1536, num_attention_heads=12, rope_parameters=parameters)
    else:
        from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig as Config
        from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding as Embedding

        parameters = {
            "rope_type": "default",
            "mrope_section": [24, 20, 20],
            "mrope_interleaved": True,
            "rope_theta": 5e6,
        }
        config = Config(hidden_size=2048, num_attention_heads=16, head_dim=128, rope_parameters=parameters)
    ids = image_ids(64, 64, 63)
    position_ids = torch.tensor(ids).T[:, None, :]  # (3, batch, seq), as the model passes them
    cos, sin = Embedding(config)(torch.zeros(1, 4096, 128), position_ids)
    assert cos.dtype == torch.float32 and tuple(cos.shape) == (1, 4096, 128)
    return cos[0].numpy(), sin[0].numpy(), ids, dict(scaling=config.rope_parameters)


def axial_cache() -> PeerCache:
    from rotary_embedding_torch import RotaryEmbedding

    angles = RotaryEmbedding(dim=32).get_axial_freqs(64, 64)  # (64, 64, 64): angles, not cos
    cells = [[i, j] for i in range(64) for j in range(64)]
    cos, sin = (wave.reshape(4096, 64).numpy() for wave in (angles.cos(), angles.sin()))
    return cos, sin, cells, dict(axes_dim=(32, 32), layout="interleaved")


PEER_CACHES: Dict[str, Tuple[Tuple[str, ...], Callable[[], PeerCache]]] = {
    "FluxPosEmbed": (("torch", "diffusers"), flux_cache),
    "HunyuanDiT get_2d_rotary_pos_embed": (("torch", "diffusers"), hunyuan_dit_cache),
    "CogVideoX get_3d_rotary_pos_embed": (("torch", "diffusers"), cogvideox_cache),
    "HunyuanVideoRotaryPosEmbed": (("torch", "diffusers"), hunyuan_video_cache),
    "Qwen2-VL": (("torch", "transformers"), lambda: qwen_cache("qwen2_vl")),
    "Qwen3-VL": (("torch", "transformers"), lambda: qwen_cache("qwen3_vl")),
    "rotary-embedding-torch get_axial_freqs": (("torch", "rotary_embedding_torch"), axial_cache),
}


def peer_cache(name: str) -> PeerCache:
    return PEER_CACHES[name][1]()


def with_peers(*cases: Tuple[str, ...]) -> List[Any]:
    """Each case (a cache's name first) marked with the peers its builder needs."""
    return [pytest.param(*case, marks=pytest.mark.peers(*PEER_CACHES[case[0]][0])) for case in cases]


@pytest.mark.parametrize("name", with_peers(*((name,) for name in PEER_CACHES)))
def test_a_peer_multi_axis_cache_passes_with_its_keywords(name: str) -> None:
    cos, sin, positions, keywords = peer_cache(name)
    assert str(cos.dtype) == str(sin.dtype) == "float32" and cos.shape[0] in (4096, 4112)
    for kind, cache in (("cos", cos), ("sin", sin)):
        report = compare_rope(cache, kind=kind, positions=positions, **keywords)
        assert report.ok, str(report)


# Checked alone, each is named: its split, base, layout and every row's positions, read from its values; the
# call the diagnosis gives, run, makes the cache of the source's own keywords and positions, value for value.
# The diagnosis reads and checks a cache in 2 to 8 s: both kinds of three sources, cos of the other three.
NAMED_PEERS = [(name, "cos") for name in PEER_CACHES] + [
    (name, "sin") for name in ("FluxPosEmbed", "Qwen2-VL", "Qwen3-VL")
]


@pytest.mark.parametrize("name, kind", with_peers(*NAMED_PEERS))
def test_a_peer_multi_axis_cache_is_named_without_keywords(name: str, kind: str) -> None:
    cos, sin, positions, keywords = peer_cache(name)
    cache = cos if kind == "cos" else sin
    report = compare_rope(cache, kind=kind)
    assert report.causes == ("axes",) and "it reproduces every element" in str(report.diagnosis), str(report)
    call = re.search(r"The call that reproduces it: (rope\(.*\)\[[01]\])", str(report.diagnosis))
    assert call is not None, str(report)
    made = eval(call.group(1), {"rope": rope})
    expected = rope(len(positions), cache.shape[1], positions=positions, dtype="float32", **keywords)
    assert made == expected[kind == "sin"], str(report)


# A model's cache is often held in its weights' format: cast, it is named as well.
NARROW_PEERS = [("FluxPosEmbed", "cos", "bfloat16"), ("Qwen2-VL", "sin", "float16")]


@pytest.mark.parametrize("name, kind, dtype", with_peers(*NARROW_PEERS))
def test_a_peer_multi_axis_cache_cast_to_a_narrow_format_is_named(name: str, kind: str, dtype: str) -> None:
    cos, sin, positions, keywords = peer_cache(name)
    cache = torch.from_numpy(cos if kind == "cos" else sin).to(getattr(torch, dtype))
    report = compare_rope(cache, kind=kind)
    assert report.causes == ("axes",) and "it reproduces every element" in str(report.diagnosis), str(report)
    call = re.search(r"The call that reproduces it: (rope\(.*\)\[[01]\])", str(report.diagnosis))
    assert call is not None, str(report)
    expected = rope(len(positions), cache.shape[1], positions=positions, dtype=dtype, **keywords)
    assert eval(call.group(1), {"rope": rope}) == expected[kind == "sin"], str(report)


@pytest.mark.peers("torch", "diffusers")
def test_flux_pos_embed_is_the_correctly_rounded_cache() -> None:
    cos, sin, ids, keywords = peer_cache("FluxPosEmbed")
    for kind, cache in (("cos", cos), ("sin", sin)):
        report = compare_rope(cache, kind=kind, positions=ids, **keywords)
        assert report.max_abs_error == 0, str(report)  # float64 angles, rounded once to float32
    wrong = compare_rope(cos, positions=ids, axes_dim=(16, 56, 56), layout="half")
    assert not wrong.ok and "in the columns of axes" in str(wrong.diagnosis)


@pytest.mark.peers("torch", "transformers")
def test_qwen2_vl_cache_is_not_one_position_a_row() -> None:
    # The same ids on one axis (text's rule everywhere) is another cache: the check tells them apart.
    cos, _, ids, _ = peer_cache("Qwen2-VL")
    assert not compare_rope(cos, positions=[row[0] for row in ids], base=1000000).ok


# ---------------------------------------------------------------------------------------------------
# What the table is (issue 46): a sin cache checked as cos, a rotary cache checked as a sinusoidal table,
# a partial rotary's frequencies spread over the whole head.
# ---------------------------------------------------------------------------------------------------


def hf_float32_cache(kind: str, seq_len: int, head_dim: int, base: float, rotated_over: int = 0) -> List[List[float]]:
    """A cos or sin cache as a float32 framework computes it (each inverse frequency, angle and value rounded to
    float32), written out from transformers' rule: inv_freq = 1 / base**(2k / n) over n = rotated_over columns
    (the head's width unless given), [f | f] the angles.  The rule re-typed, for the runs without torch."""
    n = rotated_over or head_dim

    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    inverse = [f32(1.0 / f32(f32(base) ** f32(2 * k / n))) for k in range(head_dim // 2)]
    function = math.cos if kind == "cos" else math.sin
    rows = []
    for p in range(seq_len):
        values = [f32(function(f32(p * w))) for w in inverse]
        rows.append(values + values)
    return rows


@pytest.mark.parametrize("asked, kind", [("cos", "sin"), ("sin", "cos")])
def test_a_cache_checked_as_the_other_kind_is_named_with_its_kind(asked: str, kind: str) -> None:
    table = hf_float32_cache(kind, 512, 64, 500000.0)
    report = compare_rope(table, kind=asked, dtype="float32")
    assert not report.ok and report.diagnosis is not None
    assert (
        f"the table follows the RoPE {kind} cache (half layout, base 10000), not the {asked} cache asked for,"
        " with base 500000 instead of 10000; it reproduces every element" in report.diagnosis
    ), report.diagnosis
    assert report.causes == ("kind", "base"), report.causes
    assert compare_rope(table, kind=kind, base=500000, dtype="float32").ok
    index = "[1]" if kind == "sin" else "[0]"
    assert f"rope(512, 64, base=500000, dtype='float32'){index} (on the command line: --rope {kind}" in report.diagnosis


@pytest.mark.peers("torch", "transformers")
def test_transformers_sin_cache_checked_as_cos_is_named_as_a_sin_cache() -> None:
    # Issue 46: "nothing known explains the table ... inv_freq computed in float16 arithmetic, reproduces 0.5%".
    table = rc.transformers_cache("default", "sin", 4096).table
    report = compare_rope(table)
    assert report.causes == ("kind",), str(report)
    assert "the RoPE sin cache (half layout, base 10000), not the cos cache asked" in str(report.diagnosis), str(report)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_a_rotary_cache_checked_as_a_table_is_named_with_the_check_that_fits(layout: str) -> None:
    cos, sin = rope(300, 32, base=500000, layout=layout, dtype="float32")
    for kind, cache in (("cos", cos), ("sin", sin)):
        report = pe_reference.compare(cache, dtype="float32")
        assert not report.ok and report.diagnosis is not None
        options = "" if layout == "half" else ", layout='interleaved'"
        assert report.diagnosis.startswith(
            f"Diagnosis: the table is a rotary {kind} cache in the {layout} layout (its columns repeat), not a"
            f" sinusoidal table: compare_rope(table, kind={kind!r}{options}) checks it"
        ), report.diagnosis
        assert "with base 500000 instead of 10000; it reproduces every element" in report.diagnosis
        assert report.causes == (f"rope:{kind}", "base"), report.causes
    # A sinusoidal table whose columns do not repeat is never called a cache.
    assert "rotary" not in str(pe_reference.compare(pe_reference.encoding(64, 16, base=500), dtype="float64").diagnosis)


@pytest.mark.peers("torch", "transformers")
def test_transformers_cos_cache_checked_without_rope_is_named_as_a_cache(tmp_path: Path, capsys: Any) -> None:
    # Issue 46: `--check cos.npy` without --rope got a precision story at 5.9% and no hint of a rotary cache.
    numpy = need("numpy")
    path = tmp_path / "cos.npy"
    numpy.save(path, rc.transformers_cache("llama3", "cos", 4096).table.numpy())
    status, out, _ = run_main(capsys, "--check", str(path))
    assert status == 1 and "the table is a rotary cos cache in the half layout" in out, out
    assert "--rope cos" in out and "with llama3 scaling (factor 8" in out, out


def test_a_partial_rotary_spread_over_the_head_is_said_as_the_mechanism() -> None:
    # Issue 46: the 64 rotated columns' frequencies spread over head_dim 256, named as "base 56.2341".
    table = hf_float32_cache("cos", 2048, 64, 10000000.0, rotated_over=256)
    report = compare_rope(table, base=10000000, dtype="float32")
    assert (
        "with base 56.2341 = 10000000**(1/4) instead of 10000000: frequencies spread over 256 columns where 64 rotate"
        " (partial_rotary_factor 1/4 applied to the exponent, not to the width); it reproduces every element"
        in str(report.diagnosis)
    ), str(report)
    assert report.causes == ("base",)
    # A base that is no simple power of the one asked is said as the number alone.
    other = compare_rope(hf_float32_cache("cos", 2048, 64, 500000.0), base=10000000, dtype="float32")
    assert "with base 500000 instead of 10000000;" in str(other.diagnosis), str(other)


@pytest.mark.parametrize(
    "factor, words",
    [
        (16, "with factor 16 instead of 4, the factor asked squared (the scaling applied twice)"),
        (8, "with factor 8 instead of 4, 2 times the factor asked"),
        (6, "with factor 6 instead of 4, 1.5 times the factor asked"),
    ],
)
def test_a_factor_read_that_is_a_simple_multiple_is_said_as_one(factor: int, words: str) -> None:
    # Issue 46: a fitted factor that is a simple multiple of the one asked is said in the words of the mechanism.
    cos = rope(4096, 32, scaling={"rope_type": "linear", "factor": factor}, dtype="float32")[0]
    report = compare_rope(cos, scaling={"rope_type": "linear", "factor": 4}, dtype="float32")
    assert f"{words}; it reproduces every element" in str(report.diagnosis), str(report)
    assert report.causes == ("scaling",)
