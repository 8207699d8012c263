"""Write tests/data/hard_cases.json: hard inputs for exact mode, answered by mpmath.

    python tests/data/make_hard_cases.py

The inputs are found where rounding is hard: elements whose rounding
pe_reference's table kernel or first Ziv pass could not decide (recorded by
instrumenting it), angles close to multiples of pi/2, huge positions,
subnormal results and the double-rounding elements.  Every answer comes from
the independent reference (tests/reference.py, mpmath at 600 bits), never
from pe_reference.
"""

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple, Union

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pe_reference  # noqa: E402
from tests import reference  # noqa: E402
from tests.test_exact import DOUBLE_ROUNDING_CASES, near_multiples_of_half_pi  # noqa: E402

Case = Tuple[int, int, int, Union[int, float], str, str]


def undecided_cases() -> List[Case]:
    """Elements that needed the Ziv loop, or more than its first pass."""
    found: List[Case] = []
    exact_value = pe_reference._exact_value
    round_fixed = pe_reference._round_fixed
    state: Dict[str, Any] = {}

    def recording_round(v: int, F: int, error: int, dtype: str) -> "Optional[float]":
        result = round_fixed(v, F, error, dtype)
        if result is None and "key" in state:
            state["retried"] = True
        return result

    def recording_value(
        position: Tuple[int, int], kind: int, exponent: Tuple[int, int], frequencies: Any, scale: Any, dtype: str
    ) -> float:
        state["key"] = (position, kind, exponent)
        state["retried"] = False
        result = exact_value(position, kind, exponent, frequencies, scale, dtype)
        if position[0] > 0 and kind != pe_reference._ZERO:
            # The paper's convention: exponent (2i, d_model), column 2i + kind.
            pair, d_model = exponent[0] // 2, exponent[1]
            kind_name = "ziv-retry" if state["retried"] else "table-undecided"
            found.append((position[0] // position[1], 2 * pair + kind, d_model, state["base"], dtype, kind_name))
        del state["key"]
        return result

    pe_reference._exact_value = recording_value
    pe_reference._round_fixed = recording_round
    try:
        for seq_len, d_model, base in [(5000, 512, 10000.0), (3000, 256, 500000.0), (2000, 128, 12345.678)]:
            for dtype in reference.FORMATS:
                state["base"] = base
                pe_reference.encoding(seq_len, d_model, base=base, exact=True, dtype=dtype)
    finally:
        pe_reference._exact_value = exact_value
        pe_reference._round_fixed = round_fixed
    return found


def closest_to_a_tie(per_dtype: int = 20) -> List[Case]:
    """The table elements closest to a rounding boundary of float32, bfloat16 and float16.

    Every value of those tables passes through _round_fixed with 105 fraction
    bits; the hook measures how far each lies from the nearest midpoint, in
    last places, and keeps the closest.
    """
    round_fixed = pe_reference._round_fixed
    state: Dict[str, Any] = {"best": []}

    def measuring_round(v: int, F: int, error: int, dtype: str) -> "Optional[float]":
        precision, emin, _ = reference.FORMATS[dtype]
        a = abs(v)
        if a:
            top = a.bit_length() - 1 - F
            shift = (max(top, emin) - precision + 1) + F
            if shift > 1:
                rest = a & ((1 << shift) - 1)
                distance = abs(rest - (1 << (shift - 1))) / (1 << shift)
                state["best"].append((distance, state["row"], len(state["seen"]) % state["width"]))
                state["seen"].append(None)
        return round_fixed(v, F, error, dtype)

    found: List[Case] = []
    pe_reference._round_fixed = measuring_round
    try:
        for dtype in ("float32", "bfloat16", "float16"):
            for seq_len, d_model, base in [(2000, 512, 10000.0), (2000, 256, 500000.0)]:
                state.update(best=[], seen=[], width=d_model, row=0)
                for pos, _ in enumerate(pe_reference.rows(seq_len, d_model, base=base, exact=True, dtype=dtype)):
                    state["row"] = pos + 1  # values are rounded before the row is yielded
                    state["best"] = sorted(state["best"])[:per_dtype]
                for _, pos, dim in state["best"]:
                    found.append((pos, dim, d_model, base, dtype, "close-to-a-tie"))
    finally:
        pe_reference._round_fixed = round_fixed
    return found


def adversarial_cases() -> List[Case]:
    cases: List[Case] = []
    for dtype in reference.FORMATS:
        for pair, d_model, base in [
            (0, 4, 10000.0),
            (1, 4, 10000.0),
            (3, 64, 500000.0),
            (5, 512, 12345.678),
            (100, 512, 10000.0),
        ]:
            w = reference.frequency(pair, d_model, base)
            for pos in near_multiples_of_half_pi(w, 10**15, 6):
                cases.append((pos, 2 * pair, d_model, base, dtype, "near-multiple-of-half-pi"))
                cases.append((pos, 2 * pair + 1, d_model, base, dtype, "near-multiple-of-half-pi"))
        for pos in (10**9, 10**18, 2**100 + 7, 10**50):
            cases.append((pos, 0, 4, 10000.0, dtype, "huge-position"))
            cases.append((pos, 511, 512, 10000.0, dtype, "huge-position"))
        for pos in (1, 5, 11):
            cases.append((pos, 2, 4, 2.0**40, dtype, "subnormal-in-float16"))
    for pos, dim in DOUBLE_ROUNDING_CASES:
        cases.append((pos, dim, 512, 10000.0, "bfloat16", "double-rounding"))
    return cases


def main() -> None:
    seen: Set[Tuple[int, int, int, Union[int, float], str]] = set()
    out: List[Dict[str, Any]] = []
    for pos, dim, d_model, base, dtype, kind in undecided_cases() + closest_to_a_tie() + adversarial_cases():
        key = (pos, dim, d_model, base, dtype)
        if key in seen:
            continue
        seen.add(key)
        answer = reference.expected(pos, dim, d_model, base, dtype)
        out.append(
            {
                "pos": pos,
                "dim": dim,
                "d_model": d_model,
                "base": base if isinstance(base, int) else float(base).hex(),
                "dtype": dtype,
                "bits": f"{reference.bits(answer, dtype):x}",
                "kind": kind,
            }
        )
    document = {
        "about": "Hard inputs for exact mode; bits: the IEEE pattern of the correctly rounded value "
        "in dtype, from mpmath at 600 bits (tests/data/make_hard_cases.py).",
        "cases": out,
    }
    path = Path(__file__).with_name("hard_cases.json")
    path.write_text(json.dumps(document, indent=1) + "\n")
    kinds: Dict[str, int] = {}
    for case in out:
        kinds[case["kind"]] = kinds.get(case["kind"], 0) + 1
    print(f"{len(out)} cases written to {path}: {kinds}")


if __name__ == "__main__":
    main()
