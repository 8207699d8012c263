"""The default verdict on real pipelines at the lengths models use: the table that justifies the rule.

    python benchmarks/tolerance.py [--lengths N ...] [--width D] [--rows R]

compare()'s default rule, in a format of p bits computed in one of q (float32 for
bfloat16 and float16): an element passes when

    |value - exact| <= 2**(5-q) * (1 + |angle|) * A + 2**-p * |value|

it is coarse (judged all the same, counted) past u = 2**(5-q) * (1 + |angle|) = 2**-10,
and not judged past u = 2**-4.  For each length, this script builds the tables
people use with the frameworks' own code (tests/framework_tables.py: transformers,
torch, numpy as tensor2tensor, fairseq and guided-diffusion compute), float32
as they give it, some stored as bfloat16 or float16, and transformers' Llama
rotary cache; it prints each one's largest error in units of
2**-q * (1 + |angle|) (the rule allows 32), its coarse and unjudged shares, and
the verdict.  Then it checks wrong tables (zeros, a wrong convention, rows
shifted, swapped or missing, an error of 1e-3 in an element that is not
coarse) in every format: each must fail.

The rows checked are every (length // R)-th and the last 64 (the largest
angles), with their positions: the rule is per element, so that is the
verdict of those rows of the whole table.  Needs the peers
(pip install -e ".[test,peers]").
"""

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy  # noqa: E402
import torch  # noqa: E402

import pe_reference  # noqa: E402
from tests import framework_tables as frameworks  # noqa: E402
from tests.peer_tables import paper_torch_float32  # noqa: E402

PRECISION = {"float64": 53, "float32": 24, "bfloat16": 8, "float16": 11}


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


def interleave(theta: Any, dtype: Any) -> Any:
    table = numpy.empty((theta.shape[0], 2 * theta.shape[1]), dtype=dtype)
    table[:, 0::2] = numpy.sin(theta)
    table[:, 1::2] = numpy.cos(theta)
    return table


def fast_path(seq_len: int, d_model: int) -> Any:
    return numpy.asarray(pe_reference.encoding(seq_len, d_model))


def stored(build: Callable[[int, int], Any], dtype: str) -> Callable[[int, int], Any]:
    """A float32 table cast to a narrow format, as pe.half() or .to(torch.bfloat16) does."""
    return lambda n, d: torch.as_tensor(build(n, d)).to(getattr(torch, dtype))


# name, build(seq_len, d_model) -> rows 0..seq_len-1, the preset it computes, its first position.
Pipeline = Tuple[str, Callable[[int, int], Any], str, int]

PIPELINES: List[Pipeline] = [
    ("numpy float64, exp(-ln(10000) 2i/d)", numpy_log_float64, "paper", 0),
    ("pe_reference fast path (float64)", fast_path, "paper", 0),
    ("numpy float32, exp(-ln(10000) 2i/d)", numpy_log_float32, "paper", 0),
    ("numpy float32, 1 / 10000**(2i/d)", numpy_pow_float32, "paper", 0),
    ("PyTorch tutorial (torch float32)", lambda n, d: paper_torch_float32(n, d).numpy(), "paper", 0),
    ("tensor2tensor get_timing_signal_1d", frameworks.tensor2tensor, "tensor2tensor", 0),
    ("fairseq get_embedding", frameworks.fairseq, "fairseq", 2),
    (
        "guided-diffusion timestep_embedding",
        lambda n, d: frameworks.guided_diffusion(range(n), d),
        "guided-diffusion",
        0,
    ),
    ("transformers Marian", frameworks.marian, "marian", 0),
    ("transformers Whisper sinusoids", frameworks.whisper, "whisper", 0),
    ("transformers M2M100", frameworks.m2m100, "fairseq", 2),
    ("PyTorch tutorial stored as bfloat16", stored(lambda n, d: paper_torch_float32(n, d), "bfloat16"), "paper", 0),
    ("PyTorch tutorial stored as float16", stored(lambda n, d: paper_torch_float32(n, d), "float16"), "paper", 0),
]


def checked_rows(length: int, spread: int) -> List[int]:
    """Every (length // spread)-th row and the last 64."""
    return sorted(set(range(0, length, max(1, length // spread))) | set(range(max(0, length - 64), length)))


def format_of(table: Any) -> str:
    name = str(table.dtype)
    return name[6:] if name.startswith("torch.") else name


def units(table: Any, rows: List[int], positions: List[int], preset: str, dtype: str) -> float:
    """The largest error against the exact value, in units of 2**-q * (1 + |angle|)."""
    d_model = table.shape[1]
    exact = numpy.asarray(pe_reference.encoding(len(rows), d_model, preset=preset, positions=positions, exact=True))
    convention = pe_reference.PRESETS[preset]
    frequencies = numpy.asarray(pe_reference._column_frequencies(convention, d_model))
    angles = numpy.abs(numpy.asarray(positions, dtype=float)[:, None] * frequencies[None, :])
    values = numpy.asarray(torch.as_tensor(table).float().numpy() if dtype in ("bfloat16", "float16") else table)
    # The storing's share, 2**-p |value|, aside: what is left is the computation's.
    error = numpy.abs(values.astype(numpy.float64) - exact) - 2.0 ** -PRECISION[dtype] * numpy.abs(values)
    q = max(PRECISION[dtype], 24)
    return float((numpy.maximum(error, 0) / (2.0**-q * (1 + angles))).max())


def verdict(report: Any) -> str:
    return "passes" if report.ok else ("CANNOT BE CHECKED" if report.failures == 0 else "FAILS")


def share(count: int, total: int) -> str:
    return f"{100.0 * count / total:5.1f}%"


def faithful(length: int, width: int, spread: int) -> bool:
    """Print each pipeline's line at this length; True when every one passes."""
    rows = checked_rows(length, spread)
    good = True
    for name, build, preset, first in PIPELINES:
        table = build(length, width)
        dtype = format_of(table)
        subset = table[rows]
        positions = [r + first for r in rows]
        report = pe_reference.compare(subset, preset=preset, positions=positions)
        measured = units(subset, rows, positions, preset, dtype)
        good = good and report.ok
        print(
            f"  {length:>6}  {name:38} {dtype:8} {measured:6.2f} {share(report.coarse, report.count)}"
            f" {share(report.unjudged, report.count)}  {verdict(report)}",
            flush=True,
        )
    return good


def llama(length: int, spread: int) -> bool:
    """transformers' LlamaRotaryEmbedding, head dim 128, base 500000: float32, and stored as bfloat16."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rows = checked_rows(length, spread)
    config = LlamaConfig(
        hidden_size=512,
        num_attention_heads=4,
        head_dim=128,
        rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
    )
    module = LlamaRotaryEmbedding(config)
    good = True
    for dtype in ("float32", "bfloat16"):
        with torch.no_grad():
            cos, _ = module(torch.zeros(1, len(rows), 128, dtype=getattr(torch, dtype)), torch.tensor(rows)[None, :])
        report = pe_reference.compare_rope(cos[0], base=500000, positions=rows)
        exact, _ = pe_reference.rope(len(rows), 128, base=500000, positions=rows, exact=True)
        inverse = 500000.0 ** (-numpy.arange(0, 128, 2) / 128)
        angles = numpy.abs(numpy.asarray(rows, dtype=float)[:, None] * numpy.concatenate([inverse, inverse])[None, :])
        values = cos[0].float().numpy().astype(numpy.float64)
        error = numpy.abs(values - numpy.asarray(exact)) - 2.0 ** -PRECISION[dtype] * numpy.abs(values)
        measured = float((numpy.maximum(error, 0) / (2.0**-24 * (1 + angles))).max())
        good = good and report.ok
        print(
            f"  {length:>6}  {'transformers Llama rotary cos, 128, 5e5':38} {dtype:8} {measured:6.2f}"
            f" {share(report.coarse, report.count)} {share(report.unjudged, report.count)}  {verdict(report)}",
            flush=True,
        )
    return good


def wrong(length: int, width: int, spread: int) -> bool:
    """Print the verdict on each wrong table at this length, in every format; True when every one fails."""
    rows = checked_rows(length, spread)
    # The right tables: numpy's float64 formula for float64, the PyTorch tutorial's float32 for the others.
    rights = {
        "float64": torch.as_tensor(numpy_log_float64(length, width)),
        "float32": paper_torch_float32(length, width),
    }
    good = True
    # An element that is not coarse: the last checked row, the first column whose angle is at most 511.
    last = rows[-1]
    frequencies = pe_reference._column_frequencies(pe_reference.PRESETS["paper"], width)
    column = next(c for c, w in enumerate(frequencies) if last * w <= 511)
    true = pe_reference.value(last, column, width, exact=True)
    cases: Dict[str, Callable[[Any], Tuple[Any, List[int]]]] = {
        "zeros": lambda t: (torch.zeros(len(rows), width, dtype=t.dtype), rows),
        "tensor2tensor's table as the paper's": lambda t: (
            torch.as_tensor(frameworks.tensor2tensor(length, width)[rows]).to(t.dtype),
            rows,
        ),
        "every row one position later": lambda t: (t[[min(r + 1, length - 1) for r in rows]], rows),
        "two rows swapped": lambda t: (t[rows[:-2] + [rows[-1], rows[-2]]], rows),
        "a row missing": lambda t: (t[[r + 1 if r >= rows[len(rows) // 2] else r for r in rows[:-1]]], rows[:-1]),
        "1e-3 off in an element not coarse": lambda t: (off_by(t[rows], len(rows) - 1, column, true), rows),
    }
    for dtype in ("float64", "float32", "bfloat16", "float16"):
        table = rights.get(dtype, rights["float32"]).to(getattr(torch, dtype))
        for name, make in cases.items():
            values, positions = make(table)
            report = pe_reference.compare(values, positions=positions)
            good = good and not report.ok
            print(f"  {length:>6}  {name:38} {dtype:8} {verdict(report)}", flush=True)
    return good


def off_by(table: Any, r: int, c: int, value: float) -> Any:
    """The table with [r][c] at least 1e-3 plus the format's step there from the true value."""
    changed = table.clone()
    dtype = format_of(table)
    target = value - (1e-3 + 2.0 ** -PRECISION[dtype] * abs(value) + 2.0**-20) * (1 if value > 0 else -1)
    moved = torch.tensor(target, dtype=torch.float64).to(table.dtype)
    while abs(float(moved) - value) < 1e-3 + 2.0 ** -PRECISION[dtype] * abs(float(moved)):
        moved = torch.nextafter(moved, torch.tensor(-math.copysign(1, value), dtype=table.dtype))
    changed[r, c] = moved
    return changed


def whole_table_shares(length: int, width: int) -> Tuple[float, float]:
    """The percentages of coarse and unjudged elements of a whole length x width table computed in float32."""
    positions = numpy.arange(length, dtype=numpy.float64)
    coarse = unjudged = 0
    for i in range(width // 2):
        u = 2.0**-19 * (1 + positions * 10000.0 ** (-2 * i / width))
        coarse += 2 * int(((u > 2.0**-10) & (u <= 2.0**-4)).sum())
        unjudged += 2 * int((u > 2.0**-4).sum())
    return 100.0 * coarse / (length * width), 100.0 * unjudged / (length * width)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="The default verdict on real pipelines and wrong tables.")
    parser.add_argument("--lengths", nargs="+", type=int, default=[1024, 4096, 32768, 131072])
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--rows", type=int, default=512, help="rows spread over each length, besides the last 64")
    args = parser.parse_args(argv)
    print("Faithful pipelines: the largest error in units of 2**-q * (1 + |angle|) (the rule allows 32),")
    print("the shares of coarse and unjudged elements, and the verdict; every one must pass.")
    print(f"  {'length':>6}  {'pipeline':38} {'format':8} {'units':>6} {'coarse':>6} {'unjudged':>6}  verdict")
    passing = all([faithful(n, args.width, args.rows) and llama(n, args.rows) for n in args.lengths])
    print(
        "Wrong tables (from numpy's float64 table or the PyTorch tutorial's, checked as the paper's): each must fail."
    )
    failing = all([wrong(n, args.width, args.rows) for n in args.lengths])
    print("Where the classes start: coarse past angle 2**(q-15) - 1, not judged past 2**(q-9) - 1.")
    print(f"Over whole tables of the paper's convention, width {args.width}, computed in float32 (from the angles):")
    for length in args.lengths:
        coarse, unjudged = whole_table_shares(length, args.width)
        print(f"  {length:>6} x {args.width}: {coarse:5.1f}% coarse, {unjudged:5.1f}% not judged")
    for dtype in ("float64", "float32", "bfloat16", "float16"):
        q = max(PRECISION[dtype], 24)
        print(
            f"  {dtype:9} computed in {'float64' if q == 53 else 'float32'}: {2 ** (q - 15) - 1} and {2 ** (q - 9) - 1}"
        )
    print("every faithful pipeline passes" if passing else "A FAITHFUL PIPELINE FAILS")
    print("every wrong table fails" if failing else "A WRONG TABLE PASSES")
    return 0 if passing and failing else 1


if __name__ == "__main__":
    raise SystemExit(main())
