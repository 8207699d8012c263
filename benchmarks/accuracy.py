"""Measure how far the fast path (and float32 pipelines) are from the exact values.

    python benchmarks/accuracy.py

Prints the figures of docs/accuracy.md.  The reference is exact mode, which
tests/test_exact.py checks against mpmath.  "ulp" counts representable
numbers of the format between two values; a correctly rounded value is 0 ulp
from the exact one.
"""

import math
import sys
from pathlib import Path
from typing import Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pe_reference  # noqa: E402


def ordinal(x: float, dtype: str) -> int:
    """Position of x among the format's numbers, so that ulp distance is a difference."""
    bits = pe_reference._bit_pattern(x, dtype)
    width = {"float64": 64, "float32": 32, "bfloat16": 16, "float16": 16}[dtype]
    sign = 1 << (width - 1)
    return -(bits - sign) if bits & sign else bits


def compare(got: Sequence[Sequence[float]], exact: Sequence[Sequence[float]], dtype: str) -> Dict[str, float]:
    count = same = beyond_one = 0
    worst_ulp = 0
    worst_abs = 0.0
    for got_row, exact_row in zip(got, exact):
        for g, e in zip(got_row, exact_row):
            ulps = abs(ordinal(g, dtype) - ordinal(e, dtype))
            count += 1
            same += ulps == 0
            beyond_one += ulps > 1
            worst_ulp = max(worst_ulp, ulps)
            worst_abs = max(worst_abs, abs(g - e))
    return {
        "values": count,
        "not correctly rounded": count - same,
        "correctly rounded": same / count,
        "off by more than 1 ulp": beyond_one / count,
        "max ulp": worst_ulp,
        "max abs error": worst_abs,
    }


def percent(share: float) -> str:
    # Enough digits that a share near 0 or 100% does not read as exactly that.
    return f"{100 * share:.1f}%" if 0.001 < share < 0.999 or share in (0.0, 1.0) else f"{100 * share:.4f}%"


def report(title: str, figures: Dict[str, float]) -> None:
    print(
        f"| {title} | {figures['values']:,} | {figures['not correctly rounded']:,} | {percent(figures['correctly rounded'])} "
        f"| {percent(figures['off by more than 1 ulp'])} | {figures['max ulp']:,} | {figures['max abs error']:.2e} |"
    )


def rows_at(first: int, count: int, d_model: int, exact: bool, dtype: str = "float64") -> List[List[float]]:
    return [
        [pe_reference.value(pos, dim, d_model, exact=exact, dtype=dtype) for dim in range(d_model)]
        for pos in range(first, first + count)
    ]


def numpy_pipeline(seq_len: int, d_model: int, dtype: str) -> List[List[float]]:
    """The usual implementation (PyTorch tutorial style, exp form), in numpy, in float32 or float64."""
    import numpy

    kind = getattr(numpy, dtype)
    position = numpy.arange(seq_len, dtype=kind)[:, None]
    frequency = numpy.exp(numpy.arange(0, d_model, 2, dtype=kind) * kind(-math.log(10000.0) / d_model))
    table = numpy.zeros((seq_len, d_model), dtype=kind)
    table[:, 0::2] = numpy.sin(position * frequency)
    table[:, 1::2] = numpy.cos(position * frequency)
    result: List[List[float]] = table.astype(numpy.float64).tolist()
    return result


def main() -> None:
    print(f"{sys.implementation.name} {sys.version.split()[0]}, {sys.platform}; base 10000, d_model 512")
    print()
    print(
        "| table | values | not correctly rounded | correctly rounded | off by more than 1 ulp | max ulp | max abs error |"
    )
    print("|---|---|---|---|---|---|---|")
    exact64 = pe_reference.encoding(5000, 512, exact=True)
    report("fast path, float64, positions 0-4999", compare(pe_reference.encoding(5000, 512), exact64, "float64"))
    try:
        report(
            "numpy float64 pipeline (exp form), positions 0-4999",
            compare(numpy_pipeline(5000, 512, "float64"), exact64, "float64"),
        )
    except ImportError:
        pass
    for first in (10**6, 10**9):
        exact = rows_at(first, 20, 512, True)
        report(
            f"fast path, float64, positions {first:.0e}+0-19", compare(rows_at(first, 20, 512, False), exact, "float64")
        )
    exact32 = pe_reference.encoding(5000, 512, exact=True, dtype="float32")
    report(
        "fast path rounded to float32, positions 0-4999",
        compare(pe_reference.encoding(5000, 512, dtype="float32"), exact32, "float32"),
    )
    try:
        pipeline = numpy_pipeline(5000, 512, "float32")
    except ImportError:
        print("(numpy is not installed: no float32 pipeline figures)")
    else:
        report("numpy float32 pipeline, positions 0-4999", compare(pipeline, exact32, "float32"))
        for seq_len in (512, 2048):
            report(
                f"numpy float32 pipeline, positions 0-{seq_len - 1}",
                compare(pipeline[:seq_len], exact32[:seq_len], "float32"),
            )


if __name__ == "__main__":
    main()
