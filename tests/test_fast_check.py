"""The check's fast references: float64 rows with a bound, and the same verdict as the exact rows.

compare() of a table in a narrow format makes its references as the fast path
does (sin and cos of float64 angles) and settles near the tolerance's edge, or
near a midpoint of the format, with the exact kernel.  Each test builds a table
whose elements sit at such an edge, finds the truth from the exact float64
values itself, and checks the report against it and against the exact rows'
report (the fast references turned off).
"""

import math
import struct
import sys
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

import pe_reference
from pe_reference import Report, compare, encoding


def exact_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn the fast references off: every row from the exact kernel, as before they existed."""
    original = pe_reference._references

    def references(
        exact_rows: Callable[[str], Iterator[List[float]]],
        dtype: str,
        exact_row: Callable[[int], List[float]],
        fast: object,
    ) -> Iterator[Tuple[List[float], Callable[[], List[float]], None]]:
        return original(exact_rows, dtype, exact_row, None)  # type: ignore[return-value]

    monkeypatch.setattr(pe_reference, "_references", references)


def counted(monkeypatch: pytest.MonkeyPatch, name: str) -> List[int]:
    """Count the calls of one of the module's functions: [calls]."""
    calls = [0]
    original = getattr(pe_reference, name)

    def wrapper(*arguments: object) -> object:
        calls[0] += 1
        return original(*arguments)

    monkeypatch.setattr(pe_reference, name, wrapper)
    return calls


def decided_rows(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """Count the rows whose verdicts _Comparison._decided gives from the float64 row alone, and of those measured
    the rows it shows cannot reach the largest errors: [rows, short rows]."""
    rows = [0, 0]
    original = pe_reference._Comparison._decided

    def wrapper(self: Any, *arguments: Any) -> Any:
        decided, judged, short = original(self, *arguments)
        rows[0] += decided is not None
        rows[1] += self.measure and short
        return decided, judged, short

    monkeypatch.setattr(pe_reference._Comparison, "_decided", wrapper)
    return rows


def summary(report: Report) -> Tuple[object, ...]:
    return (
        str(report),
        report.ok,
        report.failures,
        report.max_abs_error,
        report.max_ulp_error,
        report.worst,
        report.coarse,
        report.unjudged,
    )


def float32(x: float) -> float:
    result: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return result


def float32_next(x: float, places: int) -> float:
    """The number of float32 ``places`` away from a positive float32 number x."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    result: float = struct.unpack("<f", struct.pack("<I", bits + places))[0]
    return result


@pytest.mark.parametrize("flipped", [False, True], ids=["passing", "a sign flipped first"])
def test_elements_at_the_tolerances_edge_get_the_exact_verdict(monkeypatch: pytest.MonkeyPatch, flipped: bool) -> None:
    # Pair 0 of a float32 table (frequency 1, angle = position), positions 8192 to 32767 (judged, coarse):
    # each element set to the float32 number nearest the edge of its tolerance, kept when it lies within
    # 2**-48 (1 + angle) of the edge, closer than the float64 values' own error (about 2**-52 angle) can tell.
    # With cos 0 negated first, the largest errors are reached at once, and the rows are tallied from their
    # float64 rows where those decide them (_Comparison._decided), the verdicts alone too.
    n = 32768
    exact = encoding(n, 2, exact=True)  # the float64 roundings the rule judges against
    table = encoding(n, 2, exact=True, dtype="float32")
    unit, storing = 2.0**-19, 2.0**-24  # the rule in float32: 2**-19 (1 + |angle|) + 2**-24 |value|
    outside = inside = 0
    for r in range(8192, n):
        growing = unit * float(r)
        for c in (0, 1):
            e = exact[r][c]
            for sign in (1.0, -1.0):
                v = float32(e + sign * (unit + growing + storing * abs(e)))
                found = [
                    x
                    for x in (float32_next(abs(v), k) * (1.0 if v > 0 else -1.0) for k in (-1, 0, 1))
                    if abs(abs(x - e) - ((unit + growing) + storing * abs(x))) < 2.0**-48 * (1 + r)
                ]
                if found and table[r][c] == float32(e):
                    table[r][c] = found[0]
                    if abs(found[0] - e) <= (unit + growing) + storing * abs(found[0]):
                        inside += 1
                    else:
                        outside += 1
    assert inside > 100 and outside > 100, (inside, outside)
    if flipped:
        table[0][1] = -1.0
        outside += 1
    settled = counted(monkeypatch, "_exact_value")
    decided = decided_rows(monkeypatch)
    report = compare(table, dtype="float32")
    assert report.failures == outside
    assert settled[0] > 0  # the nearest went to the exact kernel
    if flipped:  # most of compare()'s own rows, which cannot reach cos 0's error, are not measured either
        assert decided[0] > n // 2 and decided[1] > n // 2, decided
    decided[0] = 0
    source = pe_reference._source(table)
    source.rounding = "float32"
    verdicts = pe_reference._tally(source, pe_reference.Convention(), "float32", None, None, measure=False)
    assert verdicts.failures == outside
    assert decided[0] > n // 2  # the verdicts alone: most rows
    monkeypatch.undo()
    exact_only(monkeypatch)
    assert summary(compare(table, dtype="float32")) == summary(report)


def test_elements_whose_exact_value_is_near_a_midpoint_of_float32_get_its_exact_rounding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Elements whose float64 value lies within 2**-48 (1 + angle) of a midpoint between two float32 numbers:
    # their float32 rounding cannot be told from a float64 value within that bound.  Each is set to the number
    # on the midpoint's other side, one place from the exact rounding; with atol=0 exactly those fail.
    n = 65536
    exact = encoding(n, 2, exact=True)
    rounded = encoding(n, 2, exact=True, dtype="float32")
    table = [row[:] for row in rounded]
    moved = 0
    for r in range(n):
        for c in (0, 1):
            e, x = exact[r][c], rounded[r][c]
            if e == x or x == 0.0:
                continue
            # The neighbour of x on e's side, and the midpoint between them (a float64 number).
            toward = 1 if (e > x) == (x > 0) else -1
            other = math.copysign(float32_next(abs(x), toward), x)
            if abs(e - (x + other) / 2) < 2.0**-48 * (1 + r):
                table[r][c] = other
                moved += 1
    assert moved > 20, moved
    settled = counted(monkeypatch, "_exact_value")
    report = compare(table, dtype="float32", atol=0)
    assert report.failures == moved and report.max_ulp_error == 1
    assert settled[0] > 0  # the nearest went to the exact kernel
    default = compare(table, dtype="float32")
    assert default.ok and default.max_ulp_error == 1
    monkeypatch.undo()
    exact_only(monkeypatch)
    assert summary(compare(table, dtype="float32", atol=0)) == summary(report)
    assert summary(compare(table, dtype="float32")) == summary(default)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_a_table_computed_in_float32_gets_the_exact_rows_verdict(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    # A float32 pipeline's table (angle and value rounded to float32), one element in 64 off by 2**-9:
    # fast and exact references give the same report, in every rule.
    n, d_model = 3000, 64
    frequencies = [float32(10000.0 ** (-(2 * (c // 2)) / d_model)) for c in range(d_model)]
    table = [
        [float32((math.sin if c % 2 == 0 else math.cos)(float32(r * w))) for c, w in enumerate(frequencies)]
        for r in range(n)
    ]
    for k in range(0, n * d_model, 64):
        table[k // d_model][k % d_model] += 2.0**-9
    fast = [summary(compare(table, dtype=dtype, **rule)) for rule in ({}, {"atol": 1e-6}, {"ulps": 2})]
    assert not fast[0][1]
    rows = counted(monkeypatch, "_fixed_rows")
    exact_only(monkeypatch)
    assert [summary(compare(table, dtype=dtype, **rule)) for rule in ({}, {"atol": 1e-6}, {"ulps": 2})] == fast
    assert rows[0] >= 3


@pytest.mark.parametrize("error", [lambda x: 2.0**-40, lambda x: x * 2.0**-35])
def test_a_runtime_whose_sine_is_off_gets_the_exact_rows(
    monkeypatch: pytest.MonkeyPatch, error: Callable[[float], float]
) -> None:
    # The fast references take sin and cos within 2 units of 2**-53; the runtime's are tried first, once.  A sine
    # off by 2**-40, or by a relative 2**-35 (small beside the bound at a large angle, not at a small one), fails.
    table = encoding(100000, 2, exact=True, dtype="float32")
    truth = summary(compare(table, dtype="float32", atol=0))
    assert truth[2] == 0
    sine = math.sin
    monkeypatch.setattr(math, "sin", lambda x: sine(x) + error(x))  # the module pe_reference uses
    monkeypatch.delitem(pe_reference._RUNTIME, "sine", raising=False)
    rows = counted(monkeypatch, "_fixed_rows")
    assert summary(compare(table, dtype="float32", atol=0)) == truth
    assert rows[0] > 0 and pe_reference._RUNTIME["sine"] is False


def test_a_runtime_without_the_operator_module_gets_the_same_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    # MicroPython has no operator module: the arithmetic of whole rows falls back to lambdas, the exact rows are
    # used, and every report is the same.
    table = [[float(x) for x in row] for row in encoding(500, 16)]
    for k in range(0, 500 * 16, 7):
        table[k // 16][k % 16] += 2.0 ** -(8 + k % 16)
    rules: Tuple[Dict[str, Any], ...] = ({}, {"atol": 1e-4}, {"ulps": 3})
    reports = [summary(compare(table, dtype=dtype, **rule)) for dtype in ("float32", "float16") for rule in rules]
    monkeypatch.setitem(sys.modules, "operator", None)  # import operator raises ImportError
    rows = counted(monkeypatch, "_fixed_rows")
    assert [
        summary(compare(table, dtype=dtype, **rule)) for dtype in ("float32", "float16") for rule in rules
    ] == reports
    assert rows[0] > 0


CONVENTIONS = [
    {"preset": name} for name in ("paper", "tensor2tensor", "fairseq", "guided-diffusion", "marian", "tatp22")
] + [
    {"scale": "sqrt(512)"},
    {"scale": "sqrt(1/d)"},
    {"full_turns": True, "base": 100},
    {"positions": [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]},
    {"descending": True},
    {"start": "1/3", "step": "2/7"},
    {"odd": "round-up", "layout": "cos-sin"},
]


@pytest.mark.parametrize("fields", CONVENTIONS, ids=lambda fields: ",".join(f"{k}={v}" for k, v in fields.items()))
@pytest.mark.parametrize("d_model", [1, 7, 16])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_every_convention_gets_the_same_report_from_fast_and_exact_references(
    monkeypatch: pytest.MonkeyPatch, fields: Dict[str, Any], d_model: int, dtype: str
) -> None:
    # The fast table in dtype, with a few elements moved by growing amounts: some pass, some fail.
    seq_len = 12 if "positions" in fields else 120
    table = [[float(x) for x in row] for row in encoding(seq_len, d_model, **fields)]
    for k in range(0, seq_len * d_model, 5):
        table[k // d_model][k % d_model] += 2.0 ** -(8 + k % 16)
    kernel = counted(monkeypatch, "_exact_rows")
    reports = [summary(compare(table, dtype=dtype, **rule, **fields)) for rule in ({}, {"atol": 1e-4}, {"ulps": 3})]
    assert kernel[0] == 0  # the fast references made every row
    exact_only(monkeypatch)
    assert [
        summary(compare(table, dtype=dtype, **rule, **fields)) for rule in ({}, {"atol": 1e-4}, {"ulps": 3})
    ] == reports


@pytest.mark.parametrize("fields", [{}, {"scale": "sqrt(1/d)"}, {"preset": "tensor2tensor"}], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_a_failing_table_gets_the_same_report_from_rows_decided_by_the_float64_row(
    monkeypatch: pytest.MonkeyPatch, fields: Dict[str, Any], dtype: str
) -> None:
    # Once a sign has flipped (the largest distance in places past 2**p), a row whose errors from the float64 row
    # are clear of their tolerance by its bound, and that cannot reach the largest errors, is tallied without its
    # rounding to dtype.  Elements moved by amounts on both sides of the tolerance, of both signs, in every row:
    # the verdicts, the largest errors, the worst element and the damage found are those of the exact rows.
    seq_len, d_model = 300, 16
    table = [[float(x) for x in row] for row in encoding(seq_len, d_model, **fields)]
    table[0][1] = -table[0][1]  # cos 0 negated in the first row
    for k in range(d_model, seq_len * d_model, 3):
        table[k // d_model][k % d_model] += (-1) ** k * 2.0 ** -(4 + k % 23)
    table[200][5] = -table[200][5] * 1.5  # a larger distance in places, later

    def reports() -> List[Tuple[object, ...]]:
        rules: Tuple[Dict[str, Any], ...] = ({}, {"atol": 1e-4})
        found = [summary(compare(table, dtype=dtype, **rule, **fields)) for rule in rules]
        asked = pe_reference._convention("compare", d_model, None, dict(fields), refuse_odd=False)
        source = pe_reference._source(table)
        source.rounding = dtype
        verdicts = pe_reference._tally(source, asked, dtype, None, None, measure=False)
        return found + [(verdicts.failures, verdicts.damaged_rows, verdicts.damaged)]

    decided = decided_rows(monkeypatch)
    fast = reports()
    assert decided[0] > seq_len // 2 and decided[1] > 0, decided  # rows decided, some not measured
    exact_only(monkeypatch)
    assert reports() == fast


def test_a_value_past_the_format_is_measured_as_an_infinite_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Values times 65600 in float16: some exact values round to infinity, and a table that saturates them at
    # 65504 is infinitely far from them.  No row can be taken as short of the largest errors by a finite margin.
    table = [[max(-65504.0, min(65504.0, x)) for x in row] for row in encoding(40, 2, scale=65600, start=1)]
    table[0][1] = -table[0][1]

    def report() -> Tuple[object, ...]:
        return summary(compare(table, dtype="float16", scale=65600, start=1))

    fast = report()
    assert fast[3] == math.inf  # the largest error
    exact_only(monkeypatch)
    assert report() == fast


def captured_rows(monkeypatch: pytest.MonkeyPatch) -> List[Tuple[Any, int, List[float], Any, List[float], List[float]]]:
    """Record each row compare() tallies with the fast references: (comparison, r, row, float64 row, exact row in dtype, bound)."""
    rows: List[Tuple[Any, int, List[float], Any, List[float], List[float]]] = []
    original = pe_reference._Comparison.add

    def add(self: Any, r: int, row: List[float], exact: Any, expect: Any, bad: bool, bound: Any, settle: Any) -> None:
        if bound is not None and not bad:
            rows.append((self, r, row, exact, expect(), bound))
        original(self, r, row, exact, expect, bad, bound, settle)

    monkeypatch.setattr(pe_reference._Comparison, "add", add)
    return rows


def places(values: List[float], dtype: str) -> List[int]:
    return list(pe_reference._ordered(values, dtype, True))


FAILING: List[Tuple[Dict[str, Any], float]] = [  # (fields the table is made with, its factor): checked as the paper's
    ({"preset": "tensor2tensor"}, 1.0),
    ({"scale": "sqrt(1/d)"}, 1.0),
    ({"base": 500000}, -1.0),
    ({}, 0.5),
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_rows_decided_by_the_float64_row_keep_to_the_rule(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    # The three facts _Comparison._decided rests on, on each row of failing tables (other layouts, scales,
    # bases, signs): an error at most the pass line passes the rule by 2 B, one beyond the fail line fails it
    # by 2 B; no error from the exact rounding is more than the error from the float64 row + _reach's margin,
    # nor further from 0 in places than its place; and _beyond_places says so whenever an element is further
    # in places from its exact rounding than the largest distance so far (at 64 columns, more than the 16
    # elements whose signs may differ it measures one by one).
    rows = captured_rows(monkeypatch)
    for d_model in (16, 64):
        for fields, factor in FAILING:
            table = [[factor * float(x) for x in row] for row in encoding(96, d_model, **fields)]
            compare(table, dtype=dtype)
    assert len(rows) >= 8 * 96  # the diagnosis tallies others
    told = 0
    for comparison, r, row, exact, expected, bound in rows:
        allowance = comparison.allowance
        largest = max(abs(x) for x in row)
        tolerances = allowance.row(r, row)
        for bounds in (bound, [b * 2.0**30 for b in bound]):  # the bound given, and one the margins cannot hide
            lines = allowance.lines(r, bounds, row, largest)
            assert lines is not None
            for c, (passing, failing, tolerance, b) in enumerate(zip(*lines, tolerances, bounds)):
                assert passing <= tolerance - 2 * b and failing >= tolerance + 2 * b, (r, c)
        margin, top = comparison._reach(bound)
        judged = max(abs(x - f) for x, f in zip(row, exact))
        assert max(abs(x - e) for x, e in zip(row, expected)) <= judged + margin
        assert max(map(abs, places(expected, dtype))) <= top
        distance = max(abs(a - b) for a, b in zip(places(row, dtype), places(expected, dtype)))
        if distance > 1 << allowance.precision:
            comparison.max_ulps = distance - 1
            assert comparison._beyond_places(row, exact, bound, largest), r
            told += 1
    assert told > 100


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("count", [4, 40])  # measured one by one, and bounded together
def test_an_exact_value_that_may_round_to_the_next_number_is_taken_as_it(
    monkeypatch: pytest.MonkeyPatch, dtype: str, count: int
) -> None:
    # A float64 row f is within B of the exact values: where f lies just below a midpoint of dtype and f + B
    # beyond it, the exact value may round to the number above, one place further from an element of the other
    # sign.  _beyond_places must count that place, whether it measures the elements one by one or together.
    rows = captured_rows(monkeypatch)
    compare(encoding(8, 64), dtype=dtype)
    comparison, _, _, _, _, bound = rows[-1]  # a comparison, and the bound of one of its rows
    step = 2.0**-24 if dtype == "float32" else 2.0**-11  # one unit of dtype at 0.5
    lows = [0.5 + c * step for c in range(count)]
    row = [-low for low in lows] + [0.25] * (64 - count)  # the table: signs opposite to the exact values'
    exact = [low + step / 2 - b / 2 for low, b in zip(lows, bound)] + [0.25] * (64 - count)
    assert all(pe_reference._round_row([f], dtype) == [low] for f, low in zip(exact, lows))  # f rounds down
    assert all(f + b > low + step / 2 for f, b, low in zip(exact, bound, lows))  # f + B rounds up
    distances = [a + b for a, b in zip(places(lows, dtype), places(lows, dtype))]
    comparison.max_ulps = max(distances)  # reached if the exact value rounds as f does; beyond if it rounds up
    assert comparison._beyond_places(row, exact, bound, lows[-1])
