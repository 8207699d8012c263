"""Benchmark grids: time and peak memory as the grid grows, in one run.

    python benchmarks/bench_grids.py

A grid's table is each axis's 1-D table, computed once, placed in every cell's row: rows() streams
it holding the axes' tables and one row, so its memory grows with the axes' lengths, not with the
cells; encoding() holds the whole table.  Each measure runs in a child process of its own (its peak
resident memory is the child's), exact float32 values of SD3's preset at d_model 1536, from a 16 x 16
grid to SD3.5's 384 x 384; and the 1-D table of as many values, for the time per value.

Then compare(): SD3's table as a user brings it, a float32 numpy array (made by numpy from the
formula, loaded from a .npy file), checked with its preset (grid= and preset=) and named without
them, from 16 x 16 to 192 x 192: seconds, and peak memory beyond numpy's and the array's.

Last, compare_rope() of multi-axis rotary caches, float32 arrays loaded from .npy: Flux's (axes_dim 16,
56, 56, positions (0, row, column)) and Qwen2-VL's (mrope_section 16, 24, 24, base 1e6, positions (0, row,
column)), head_dim 128, from a 32 x 32 grid (1024 rows) to 128 x 128 (16384): checked with their keywords,
and named without them (the diagnosis reads the split, base and positions, then checks every element).

    python benchmarks/bench_grids.py rotary    (the rotary caches only)
"""

import subprocess
import sys
from pathlib import Path
from typing import Tuple

ROOT = Path(__file__).resolve().parent.parent
D_MODEL = 1536

CHILD = """
import resource, sys, time
sys.path.insert(0, {root!r})
import pe_reference
start = time.perf_counter()
{work}
seconds = time.perf_counter() - start
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def measure(work: str) -> Tuple[float, int]:
    """Seconds and peak resident kilobytes of work, in a new interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=str(ROOT), work=work)], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    baseline = measure("pass")[1]
    print(f"{sys.implementation.name} {sys.version.split()[0]}; preset sd3, d_model {D_MODEL}, exact float32")
    print("  grid         values   rows() s   s/1M values   rows() MB   axes' values   encoding() s   encoding() MB")
    rates = []
    for size in (16, 64, 96, 192, 384):
        stream = (
            f"for _ in pe_reference.rows(({size}, {size}), {D_MODEL}, preset='sd3', exact=True, dtype='float32'): pass"
        )
        seconds, peak = measure(stream)
        if size <= 96:
            held, held_peak = measure(
                f"t = pe_reference.encoding(({size}, {size}), {D_MODEL}, preset='sd3', exact=True, dtype='float32')"
            )
            held_text = f"{held:14.2f}   {(held_peak - baseline) / 1024:13.1f}"
        else:
            held_text = f"{'-':>14}   {'-':>13}"
        values = size * size * D_MODEL
        print(
            f"  {size:>3}x{size:<3} {values:>12,} {seconds:10.2f} {seconds / values * 1e6:13.3f}"
            f" {(peak - baseline) / 1024:11.1f} {2 * size * D_MODEL // 2:14,}   {held_text}"
        )
        rates.append(seconds / values * 1e6)
    # The 1-D table of as many values as the 64 x 64 grid, streamed: what computing each axis once saves.
    one_d, _ = measure(f"for _ in pe_reference.rows({64 * 64}, {D_MODEL}, exact=True, dtype='float32'): pass")
    print(f"  the 1-D table of 4096 x {D_MODEL} values, exact float32, streamed: {one_d:.2f} s")
    print(
        f"  from 16x16 to {size}x{size} ({size * size // 256}x the cells): {min(rates):.3f} to {max(rates):.3f} s per"
        " million values, and rows() holds the axes' tables, not the cells"
    )


# SD3's table in numpy float32, positions k * 64 / n: x's sines and cosines, then y's (docs/conventions.md),
# saved to a .npy file that the measured child loads: its memory is then the array's own.
ARRAY = """
import numpy
n, d = {size}, {d_model}
omega = 1.0 / 10000.0 ** (numpy.arange(d // 4, dtype=numpy.float64) / (d // 4))
k = numpy.arange(n, dtype=numpy.float64) * 64 / n
y, x = numpy.meshgrid(k, k, indexing="ij")
parts = [f(a.reshape(-1)[:, None] * omega).astype(numpy.float32) for a in (x, y) for f in (numpy.sin, numpy.cos)]
numpy.save({path!r}, numpy.concatenate(parts, axis=1))
"""


def checks() -> None:
    """compare() of SD3's float32 array: with its preset, and without (the diagnosis names the grid)."""
    import tempfile

    print(f"compare() of SD3's table, a float32 numpy array loaded from .npy, d_model {D_MODEL}")
    print("  grid         values   with preset s   s/1M values   MB   named without s   MB   array MB")
    rates = []
    with tempfile.TemporaryDirectory() as folder:
        for size in (16, 64, 96, 192):
            path = str(Path(folder) / f"sd3-{size}.npy")
            measure(ARRAY.format(size=size, d_model=D_MODEL, path=path))
            load = f"import numpy\ntable = numpy.load({path!r})\n"
            baseline = measure(load)[1]  # numpy and the array
            values = size * size * D_MODEL
            seconds, peak = measure(
                load
                + f"start = time.perf_counter()\nassert pe_reference.compare(table, grid=({size}, {size}), preset='sd3').ok"
            )
            checked = f"{seconds:15.2f} {seconds / values * 1e6:13.3f} {(peak - baseline) / 1024:5.0f}"
            if size <= 96:
                named, named_peak = measure(
                    load + "start = time.perf_counter()\nassert pe_reference.compare(table).causes == ('grid',)"
                )
                named_text = f"{named:17.2f} {(named_peak - baseline) / 1024:5.0f}"
            else:
                named_text = f"{'-':>17} {'-':>5}"
            print(f"  {size:>3}x{size:<3} {values:>12,} {checked} {named_text} {values * 4 / 2**20:10.0f}")
            rates.append(seconds / values * 1e6)
    print(f"  with the preset: {min(rates):.3f} to {max(rates):.3f} s per million values")


# A multi-axis cache in float32, made by rope() (fast path) and saved to .npy.
ROPE = """
import numpy
cells = [[0, i, j] for i in range({side}) for j in range({side})]
cos = pe_reference.rope(len(cells), 128, positions=cells, dtype="float32", {keywords})[0]
numpy.save({path!r}, numpy.array(cos, dtype=numpy.float32))
"""
ROPE_SETUPS = {
    "Flux, axes_dim 16, 56, 56": "axes_dim=(16, 56, 56), layout='interleaved'",
    "Qwen2-VL, mrope_section 16, 24, 24": "scaling={'mrope_section': [16, 24, 24]}, base=1000000",
}


def rotary() -> None:
    """compare_rope() of multi-axis caches: seconds and peak memory as the grid grows."""
    import tempfile

    print("compare_rope() of multi-axis float32 caches, head_dim 128, loaded from .npy")
    print(
        "  setup                                  rows    s    s/1M values   MB beyond the array   named without s   MB"
    )
    with tempfile.TemporaryDirectory() as folder:
        for name, keywords in ROPE_SETUPS.items():
            for side in (32, 64, 128):
                path = str(Path(folder) / f"rope-{side}.npy")
                measure(ROPE.format(side=side, keywords=keywords, path=path))
                load = f"import numpy\ntable = numpy.load({path!r})\n"
                baseline = measure(load)[1]
                check = (
                    f"cells = [[0, i, j] for i in range({side}) for j in range({side})]\n"
                    "start = time.perf_counter()\n"
                    f"assert pe_reference.compare_rope(table, positions=cells, {keywords}).ok"
                )
                seconds, peak = measure(load + check)
                named, named_peak = measure(
                    load + "start = time.perf_counter()\nassert pe_reference.compare_rope(table).causes == ('axes',)"
                )
                values = side * side * 128
                print(
                    f"  {name:<36} {side * side:>6} {seconds:6.2f} {seconds / values * 1e6:12.3f}"
                    f" {(peak - baseline) / 1024:8.0f} {named:20.2f} {(named_peak - baseline) / 1024:5.0f}"
                )


if __name__ == "__main__":
    if sys.argv[1:] != ["rotary"]:
        main()
        checks()
    rotary()
