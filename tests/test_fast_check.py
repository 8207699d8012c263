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
    ) -> Iterator[Tuple[List[float], List[float], None]]:
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


def test_elements_at_the_tolerances_edge_get_the_exact_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pair 0 of a float32 table (frequency 1, angle = position), positions 8192 to 32767 (judged, coarse):
    # each element set to the float32 number nearest the edge of its tolerance, kept when it lies within
    # 2**-48 (1 + angle) of the edge, closer than the float64 values' own error (about 2**-52 angle) can tell.
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
    settled = counted(monkeypatch, "_exact_value")
    report = compare(table, dtype="float32")
    assert report.failures == outside
    assert settled[0] > 0  # the nearest went to the exact kernel
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
