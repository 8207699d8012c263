"""Benchmark --check --rope of rotary caches at the lengths models use; print time and peak memory in one run.

    python benchmarks/bench_rope_check.py [--sizes SEQ_LEN HEAD_DIM ...] [--repeats N]

Issue 46's goals, for a Llama-style cos cache (base 500000, half layout) as a float32 .npy file, 131072 x 128
and 131072 x 256 by default (a 64 MB and a 128 MB file), computed as a float32 framework computes it (each
frequency, angle and value rounded to float32): ``python3 -m pe_reference --check FILE.npy --rope cos`` peaks at
most 150 MB above the interpreter's own RSS, and takes at most 1.3 times the table check's time per element.
Each cache is checked

- correct: with ``--base 500000``, in float32 and, its values rounded to bfloat16, with ``--dtype bfloat16``;
- named: without ``--base``, so it fails and the diagnosis names "base 500000 instead of 10000" (verified on
  every element).

The table check is ``--check`` of the paper's table of the same shape, computed in float32 the same way
(correct), and of the table at base 500000 checked without ``--base`` (named); the write is
``ROWS HEAD_DIM --rope cos --dtype float32 --format csv``, the cache written as text (shortest digits, about
20 microseconds a value), timed on its first WRITTEN rows and scaled to the whole cache per element.  Each command runs in
a fresh process that reports its peak RSS (bench_check.py's wrapper); each keeps its best time over the rounds.
"""

import argparse
import math
import struct
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_check import interpreter_peak, run  # noqa: E402

GOAL_TIME = 1.3  # the rotary check's seconds per element, in units of the table check's (the same verdict)
GOAL_MEMORY = 150 << 20  # peak RSS above the interpreter's, bytes
BASE = 500000.0
WRITTEN = 8192  # rows of the cache written as CSV, the time scaled to all rows


def write_npy(path: Path, seq_len: int, width: int, rows: "Iterator[List[float]]") -> None:
    """A little-endian, C-order float32 .npy file of the rows an iterator yields, with the standard library only."""
    text = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({seq_len}, {width}), }}"
    length = len(text) + 1
    length += -(10 + length) % 64
    header = (text + " " * (length - len(text) - 1) + "\n").encode("latin-1")
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + length.to_bytes(2, "little") + header)
        for row in rows:
            values = array("f", row)
            if sys.byteorder != "little":
                values.byteswap()
            out.write(values.tobytes())


def bfloat16(row: "List[float]") -> "List[float]":
    """float32 values rounded to bfloat16 (to nearest, ties to even), as torch's .to(torch.bfloat16) does."""
    bits = struct.unpack(f"<{len(row)}I", struct.pack(f"<{len(row)}f", *row))
    rounded = [((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16 for b in bits]
    return list(struct.unpack(f"<{len(row)}f", struct.pack(f"<{len(row)}I", *rounded)))


def float32_rows(seq_len: int, width: int, base: float, rope: bool, narrow: bool = False) -> "Iterator[List[float]]":
    """A float32 framework's rows: each inverse frequency base**(-2k/width), angle and value rounded to float32.

    rope: HF's cos cache, [cos | cos] of the pairs' angles; else the paper's table, sine and cosine interleaved.
    """
    pairs = width // 2
    frequencies = array("f", [1.0 / array("f", [base ** (2 * k / width)])[0] for k in range(pairs)]).tolist()

    def rows() -> "Iterator[List[float]]":
        for position in range(seq_len):
            angles = array("f", [position * w for w in frequencies]).tolist()
            if rope:
                cosines = array("f", map(math.cos, angles)).tolist()
                row = cosines + cosines
            else:
                row = array("f", [f(angle) for angle in angles for f in (math.sin, math.cos)]).tolist()
            yield bfloat16(row) if narrow else row

    return rows()


def measure(seq_len: int, head_dim: int, repeats: int, directory: str, baseline: int) -> Tuple[float, int]:
    """Each command's best time and largest peak for one shape, printed; return the worst time ratio and peak above."""
    files = {
        "cache": (True, BASE, False),
        "cache-bf16": (True, BASE, True),
        "table": (False, 10000.0, False),
        "table-500000": (False, BASE, False),
    }
    paths = {name: Path(directory, f"{name}.npy") for name in files}
    for name, (rope, base, narrow) in files.items():
        write_npy(paths[name], seq_len, head_dim, float32_rows(seq_len, head_dim, base, rope, narrow))
    commands: Dict[str, Tuple[List[str], str]] = {
        "table check, correct": (["--check", str(paths["table"])], "within tolerance"),
        "table check, named": (["--check", str(paths["table-500000"])], "with base 500000"),
        "rope check, correct": (["--check", str(paths["cache"]), "--rope", "cos", "--base", "500000"], "within"),
        "rope check, named": (["--check", str(paths["cache"]), "--rope", "cos"], "with base 500000 instead of 10000"),
        "rope bf16, correct": (
            ["--check", str(paths["cache-bf16"]), "--rope", "cos", "--base", "500000", "--dtype", "bfloat16"],
            "within tolerance",
        ),
        "rope bf16, named": (
            ["--check", str(paths["cache-bf16"]), "--rope", "cos", "--dtype", "bfloat16"],
            "with base 500000 instead of 10000",
        ),
    }
    best: Dict[str, Tuple[float, int]] = {}
    csv_path = Path(directory, "cache.csv")
    for _ in range(repeats):
        written = min(seq_len, WRITTEN)
        command = ["--rope", "cos", str(written), str(head_dim), "--base", "500000", "--dtype", "float32"]
        elapsed, most = run(command + ["--format", "csv"], csv_path)[:2]
        found = {"write the cache (csv)*": (elapsed * seq_len / written, most)}
        csv_path.unlink()
        for name, (arguments, expected) in commands.items():
            seconds, peak, output = run(arguments, ok_status=(0, 1))
            if expected not in output:
                raise SystemExit(f"{name}: expected {expected!r} in the report:\n{output}")
            found[name] = (seconds, peak)
        for name, (seconds, peak) in found.items():
            old = best.get(name, (math.inf, 0))
            best[name] = (min(old[0], seconds), max(old[1], peak))
    write = best["write the cache (csv)*"][0]
    print(f"  {seq_len} x {head_dim} float32 ({paths['cache'].stat().st_size / 2**20:.0f} MB as .npy):")
    for name, (seconds, peak) in best.items():
        print(
            f"    {name:<22} {seconds:8.2f} s  {seconds / write:5.2f}x the write"
            f"  peak RSS {peak / 2**20:7.1f} MB, {(peak - baseline) / 2**20:7.1f} MB above the interpreter"
        )
    print(f"    * timed on the first {min(seq_len, WRITTEN)} rows, scaled to {seq_len}")
    ratios = []
    for verdict in ("correct", "named"):
        ratio = best[f"rope check, {verdict}"][0] / best[f"table check, {verdict}"][0]
        ratios.append(ratio)
        print(f"    rope check / table check, {verdict}: {ratio:.2f} (the same number of elements)")
    for path in paths.values():
        path.unlink()
    rope_peaks = [peak for name, (_, peak) in best.items() if name.startswith("rope")]
    return max(ratios), max(rope_peaks) - baseline


def main(argv: "Optional[Sequence[str]]" = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--sizes",
        nargs="+",
        type=int,
        default=[131072, 128, 131072, 256],
        metavar="N",
        help="cache shapes, SEQ_LEN HEAD_DIM pairs (default 131072 128 131072 256)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="rounds; each command keeps its best time (default 1)")
    args = parser.parse_args(argv)
    if len(args.sizes) % 2 or min(args.sizes) < 1 or args.repeats < 1 or any(n % 2 for n in args.sizes[1::2]):
        parser.error("--sizes takes SEQ_LEN HEAD_DIM pairs of positive numbers (HEAD_DIM even); --repeats positive")
    baseline = interpreter_peak(args.repeats)
    met = True
    with tempfile.TemporaryDirectory(prefix="bench_rope_check_") as directory:
        for seq_len, head_dim in zip(args.sizes[::2], args.sizes[1::2]):
            ratio, above = measure(seq_len, head_dim, args.repeats, directory, baseline)
            time_met, memory_met = ratio <= GOAL_TIME, above <= GOAL_MEMORY
            met = met and time_met and memory_met
            print(
                f"    target rope check <= {GOAL_TIME:g}x the table check: {'met' if time_met else 'MISSED'}"
                f" ({ratio:.2f}x); <= 150 MB above the interpreter: {'met' if memory_met else 'MISSED'}"
                f" ({above / 2**20:.1f} MB)"
            )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
