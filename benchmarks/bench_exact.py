"""Benchmark exact mode against the fast path, in one run.

    python benchmarks/bench_exact.py [--rounds N]

Targets (issue 3): encoding(5000, 512, exact=True) at 1,000,000 values per
second or more on CPython 3.11, and within 5x the fast path's time.  The
contenders run in turn, round after round; each keeps its best time.
"""

import argparse
import functools
import math
import sys
import time
from pathlib import Path
from typing import Callable, Dict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pe_reference  # noqa: E402

SEQ_LEN, D_MODEL = 5000, 512


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--dtypes", action="store_true", help="also time the other formats")
    args = parser.parse_args()
    contenders: Dict[str, Callable[[], object]] = {
        "fast": lambda: pe_reference.encoding(SEQ_LEN, D_MODEL),
        "exact float64": lambda: pe_reference.encoding(SEQ_LEN, D_MODEL, exact=True),
    }
    if args.dtypes:
        for dtype in ("float32", "bfloat16", "float16"):
            contenders[f"exact {dtype}"] = functools.partial(
                pe_reference.encoding, SEQ_LEN, D_MODEL, exact=True, dtype=dtype
            )
    best = {name: math.inf for name in contenders}
    for _ in range(args.rounds):
        for name, function in contenders.items():
            start = time.perf_counter()
            function()
            best[name] = min(best[name], time.perf_counter() - start)
    count = SEQ_LEN * D_MODEL
    print(f"{sys.implementation.name} {sys.version.split()[0]}; encoding({SEQ_LEN}, {D_MODEL}), best of {args.rounds}")
    for name, seconds in best.items():
        print(f"  {name:<15} {count / seconds:12,.0f} values/s  {seconds / best['fast']:6.2f}x the fast path")
    rate = count / best["exact float64"]
    ratio = best["exact float64"] / best["fast"]
    print(
        f"  target >= 1,000,000 values/s: {'met' if rate >= 1e6 else 'MISSED'}; target <= 5x: {'met' if ratio <= 5 else 'MISSED'} ({ratio:.2f}x)"
    )


if __name__ == "__main__":
    main()
