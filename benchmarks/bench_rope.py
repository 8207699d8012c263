"""Benchmark exact rotary caches against the fast path, in one run.

    python benchmarks/bench_rope.py [--rounds N]

Target (issue 12): rope(4096, 128, exact=True) within 5x the fast path's
time, for the default cache and for each scaling variant.  The contenders
run in turn, round after round; each keeps its best time.

Also timed: compare_rope of a float32 cache with its positions given as
0, 1, 2, ... against the same check without them.  Given positions that
rise by one step take the recurrence the default positions take; before,
each row was computed alone, about five times slower.
"""

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pe_reference  # noqa: E402

SEQ_LEN, HEAD_DIM = 4096, 128
SCALINGS: Dict[str, Optional[Dict[str, Any]]] = {
    "default": None,
    "yarn": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 1024},
    "llama3": {
        "rope_type": "llama3",
        "factor": 8,
        "low_freq_factor": 1,
        "high_freq_factor": 4,
        "original_max_position_embeddings": 8192,
    },
}


def cache(base: int, scaling: Optional[Dict[str, Any]], exact: bool) -> Callable[[], object]:
    return lambda: pe_reference.rope(SEQ_LEN, HEAD_DIM, base=base, scaling=scaling, exact=exact)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args()
    contenders: Dict[str, Callable[[], object]] = {}
    for name, scaling in SCALINGS.items():
        base = 500000 if name == "llama3" else 10000
        contenders[f"{name} fast"] = cache(base, scaling, False)
        contenders[f"{name} exact"] = cache(base, scaling, True)
    table = pe_reference.rope(SEQ_LEN, HEAD_DIM, dtype="float32")[0]
    given = list(range(SEQ_LEN))
    contenders["check"] = lambda: pe_reference.compare_rope(table, dtype="float32")
    contenders["check, positions given"] = lambda: pe_reference.compare_rope(table, positions=given, dtype="float32")
    best = {name: math.inf for name in contenders}
    for _ in range(args.rounds):
        for name, function in contenders.items():
            start = time.perf_counter()
            function()
            best[name] = min(best[name], time.perf_counter() - start)
    print(f"{sys.implementation.name} {sys.version.split()[0]}; rope({SEQ_LEN}, {HEAD_DIM}), best of {args.rounds}")
    for name in SCALINGS:
        ratio = best[f"{name} exact"] / best[f"{name} fast"]
        verdict = "met" if ratio <= 5 else "MISSED"
        print(f"  {name:<8} exact {ratio:5.2f}x the fast path (target <= 5x: {verdict})")
    ratio = best["check, positions given"] / best["check"]
    print(f"  compare_rope with positions 0, 1, 2, ... given: {ratio:5.2f}x the check without them")


if __name__ == "__main__":
    main()
