"""Measure the errors of real pipelines against the default tolerance of compare().

    python benchmarks/tolerance.py [--size SEQ_LEN D_MODEL]

The default tolerance of an element is min(2**-10, 2**(5-p) * (1 + |angle|))
for a format of p bits.  This script measures, for pipelines people use, the
largest error against the exact values rounded to the format, in units of
2**-p * (1 + |angle|): the 2**5 = 32 units of the tolerance must cover them
with a margin.  It also reports where each format's allowance reaches the cap
2**-10, the position past which an error of 1e-3 could otherwise pass.

Needs numpy (a test-only dependency); torch is used when it is installed.
"""

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy  # noqa: E402

import pe_reference  # noqa: E402

PRECISION = {"float64": 53, "float32": 24}


def angles(seq_len: int, d_model: int) -> Any:
    """The exact-enough angles (float64) of every column, interleaved as the paper lays them out."""
    pairs = numpy.arange(d_model) // 2
    return numpy.arange(seq_len)[:, None] / 10000.0 ** (2.0 * pairs[None, :] / d_model)


def interleave(theta: Any, dtype: Any) -> Any:
    table = numpy.empty((theta.shape[0], 2 * theta.shape[1]), dtype=dtype)
    table[:, 0::2] = numpy.sin(theta)
    table[:, 1::2] = numpy.cos(theta)
    return table


def numpy_log_float64(seq_len: int, d_model: int) -> Any:
    frequencies = numpy.exp(numpy.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    return interleave(numpy.arange(seq_len)[:, None] * frequencies[None, :], numpy.float64)


def numpy_log_float32(seq_len: int, d_model: int) -> Any:
    f32 = numpy.float32
    frequencies = numpy.exp(numpy.arange(0, d_model, 2, dtype=f32) * f32(-(math.log(10000.0) / d_model)))
    return interleave(numpy.arange(seq_len, dtype=f32)[:, None] * frequencies[None, :], f32)


def numpy_pow_float32(seq_len: int, d_model: int) -> Any:
    f32 = numpy.float32
    frequencies = f32(1.0) / numpy.power(f32(10000.0), numpy.arange(0, d_model, 2, dtype=f32) / f32(d_model))
    return interleave(numpy.arange(seq_len, dtype=f32)[:, None] * frequencies[None, :], f32)


def float64_cast_to_float32(seq_len: int, d_model: int) -> Any:
    # HF Marian's way: the table in float64, stored as float32.
    return numpy.asarray(pe_reference.encoding(seq_len, d_model)).astype(numpy.float32)


def fast_path(seq_len: int, d_model: int) -> Any:
    return numpy.asarray(pe_reference.encoding(seq_len, d_model))


def torch_float32(seq_len: int, d_model: int) -> Optional[Any]:
    try:
        import torch
    except ImportError:
        return None
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    frequencies = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(seq_len, d_model)
    table[:, 0::2] = torch.sin(position * frequencies)
    table[:, 1::2] = torch.cos(position * frequencies)
    return table.numpy()


PIPELINES: List[Tuple[str, str, Callable[[int, int], Optional[Any]]]] = [
    ("pe_reference fast path", "float64", fast_path),
    ("numpy float64, exp(-ln(10000) 2i/d)", "float64", numpy_log_float64),
    ("numpy float32, exp(-ln(10000) 2i/d)", "float32", numpy_log_float32),
    ("numpy float32, 1 / 10000**(2i/d)", "float32", numpy_pow_float32),
    ("float64 table stored as float32 (HF Marian)", "float32", float64_cast_to_float32),
    ("torch float32 (the PyTorch tutorial)", "float32", torch_float32),
]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Errors of real pipelines in units of the default tolerance.")
    parser.add_argument("--size", nargs=2, type=int, default=[5000, 512], metavar=("SEQ_LEN", "D_MODEL"))
    args = parser.parse_args(argv)
    seq_len, d_model = args.size
    exact: Dict[str, Any] = {}
    theta = numpy.abs(angles(seq_len, d_model))
    print(f"{seq_len} x {d_model}, paper convention; error / (2**-p * (1 + |angle|)), the default allows 32")
    for name, dtype, build in PIPELINES:
        table = build(seq_len, d_model)
        if table is None:
            print(f"  {name:48} (not installed)")
            continue
        if dtype not in exact:
            exact[dtype] = numpy.asarray(pe_reference.encoding(seq_len, d_model, exact=True, dtype=dtype))
        error = numpy.abs(table.astype(numpy.float64) - exact[dtype])
        units = error / (2.0 ** -PRECISION[dtype] * (1 + theta))
        report = pe_reference.compare(table, dtype=dtype)
        verdict = "passes" if report.ok else "FAILS"
        print(f"  {name:48} {dtype}: max {units.max():5.2f} units, max error {error.max():.3g}; compare {verdict}")
    print("where the allowance 2**(5-p) * (1 + angle) reaches the cap 2**-10:")
    for dtype, precision in (("float64", 53), ("float32", 24), ("bfloat16", 8), ("float16", 11)):
        angle = 2.0 ** (precision - 15) - 1
        print(f"  {dtype:9} " + (f"angle {angle:.6g}" if angle > 0 else "every angle: the cap alone applies"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
