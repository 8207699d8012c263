"""Benchmark --check against writing the table it checks; print ratios measured in one run.

    python benchmarks/bench_check.py [--size SEQ_LEN D_MODEL] [--repeats N] [--profile]

Target: ``python -m pe_reference --check FILE`` on a correct 5000 x 512 table
takes at most 2x the time of ``python -m pe_reference 5000 512 --exact
--format csv > FILE``, for a CSV file and for a .npy file alike.

The CSV is written by the command line itself, standard output to a file;
the .npy file (float64, little-endian, C order, NPY format 1.0) is made
here, with the standard library only, from the values of that CSV.  Then
the three commands -- the write, --check of the CSV, --check of the .npy --
run in turn, round after round, each a fresh process, and each keeps its
best time, so a noisy neighbour slows every contender alike.  Every check
must exit 0 with a "within tolerance" verdict, or the benchmark stops.
All files live in a temporary directory that is removed at the end.

With --profile, each check also runs in this process under cProfile (the
top 20 functions by own time are printed), and the three phases of a check
are timed without the profiler: reading the file, computing the exact
reference alone, and compare() (which is the reference plus the comparison
loop).
"""

import argparse
import cProfile
import io
import math
import os
import pstats
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Dict, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pe_reference  # noqa: E402

GOAL = 2.0


def environment() -> Dict[str, str]:
    """The environment of the timed commands: the module on the path, bytecode cached as a user's would be."""
    found = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    found["PYTHONPATH"] = str(ROOT)
    return found


def write_csv(path: Path, seq_len: int, d_model: int) -> float:
    """Write the exact table as CSV with the command line; return the wall time."""
    command = [sys.executable, "-m", "pe_reference", str(seq_len), str(d_model), "--exact", "--format", "csv"]
    with open(path, "wb") as out:
        start = time.perf_counter()
        subprocess.run(command, env=environment(), stdout=out, check=True)
        return time.perf_counter() - start


def check(path: Path) -> float:
    """Run --check on path; return the wall time, after making sure the verdict is a pass."""
    command = [sys.executable, "-m", "pe_reference", "--check", str(path)]
    start = time.perf_counter()
    result = subprocess.run(command, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    output = result.stdout.decode(errors="replace")
    if result.returncode != 0 or "within tolerance" not in output:
        raise SystemExit(
            f"--check {path.name} exited {result.returncode}:\n{output}{result.stderr.decode(errors='replace')}"
        )
    return seconds


def read_csv(path: Path, seq_len: int, d_model: int) -> "array[float]":
    """The CSV's values, row after row, checked for shape."""
    values: "array[float]" = array("d")
    rows = 0
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            row = [float(field) for field in line.split(",")]
            if len(row) != d_model:
                raise SystemExit(f"{path.name}: line {rows + 1} has {len(row)} values, expected {d_model}")
            values.extend(row)
            rows += 1
    if rows != seq_len:
        raise SystemExit(f"{path.name}: {rows} lines, expected {seq_len}")
    return values


def npy_header(seq_len: int, d_model: int) -> bytes:
    """Magic, version 1.0, header length and the header dict, space-padded and ended by a newline.

    The format asks for the data to start at a multiple of 64 bytes (16 in
    early releases; 64 satisfies both).
    """
    text = f"{{'descr': '<f8', 'fortran_order': False, 'shape': ({seq_len}, {d_model}), }}"
    prefix = 10  # \x93NUMPY, two version bytes, a little-endian uint16 header length
    length = len(text) + 1  # the newline
    length += -(prefix + length) % 64
    header = (text + " " * (length - len(text) - 1) + "\n").encode("latin-1")
    if length > 0xFFFF:
        raise ValueError("a version 1.0 header holds at most 65535 bytes")
    return b"\x93NUMPY\x01\x00" + length.to_bytes(2, "little") + header


def write_npy(path: Path, values: "array[float]", seq_len: int, d_model: int) -> None:
    """Write the values as a float64, little-endian, C-order .npy file."""
    data = array("d", values)
    if sys.byteorder != "little":
        data.byteswap()
    with open(path, "wb") as out:
        out.write(npy_header(seq_len, d_model))
        out.write(data.tobytes())


def profile(path: Path, seq_len: int, d_model: int, write: float) -> None:
    """Profile main(["--check", path]) in this process; then time its phases without the profiler.

    write is the best time of the CSV write, the unit of the goal.
    """
    print(f"\n--- cProfile of main(['--check', {path.name!r}]), top 20 by own time ---")
    profiler = cProfile.Profile()
    status = profiler.runcall(pe_reference.main, ["--check", str(path)])
    if status != 0:
        raise SystemExit(f"main(['--check', {path.name!r}]) returned {status}")
    report = io.StringIO()
    pstats.Stats(profiler, stream=report).sort_stats("tottime").print_stats(20)
    print(report.getvalue().strip())

    # Phases, each run once without the profiler.  _read_table is private:
    # skipped if a rewrite renames it.
    read_table = getattr(pe_reference, "_read_table", None)
    if read_table is None:
        print("phases: pe_reference._read_table is gone; phases not timed")
        return
    start = time.perf_counter()
    table = read_table(str(path))
    read = time.perf_counter() - start
    start = time.perf_counter()
    pe_reference.encoding(seq_len, d_model, exact=True)
    reference = time.perf_counter() - start
    start = time.perf_counter()
    pe_reference.compare(table)
    compared = time.perf_counter() - start
    total = read + compared
    loop = max(compared - reference, 0.0)
    print(f"phases of --check {path.name}, in process, without the profiler (share of the check):")
    phases = {
        "read and parse the file": read,
        "exact reference alone (encoding(exact=True))": reference,
        "compare() less the reference (the loop)": loop,
    }
    for name, seconds in phases.items():
        print(f"  {name:<46} {seconds / total:6.1%}  {seconds / write:5.2f}x the write")


def main(argv: "Optional[Sequence[str]]" = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--size",
        nargs=2,
        type=int,
        default=[5000, 512],
        metavar=("SEQ_LEN", "D_MODEL"),
        help="table shape (default 5000 512)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds; each command keeps its best time (default 3)")
    parser.add_argument("--profile", action="store_true", help="also profile each check in this process")
    args = parser.parse_args(argv)
    seq_len, d_model = args.size
    if seq_len < 1 or d_model < 1 or args.repeats < 1:
        parser.error("the size and --repeats must be positive")

    print(f"{sys.implementation.name} {sys.version.split()[0]}; {seq_len} x {d_model}, best of {args.repeats}")
    with tempfile.TemporaryDirectory(prefix="bench_check_") as directory:
        csv_path = Path(directory, "table.csv")
        npy_path = Path(directory, "table.npy")
        write_csv(csv_path, seq_len, d_model)  # untimed: also compiles the bytecode, as a user's second run finds it
        write_npy(npy_path, read_csv(csv_path, seq_len, d_model), seq_len, d_model)
        written = csv_path.read_bytes()
        best: Dict[str, float] = {"write csv": math.inf, "check csv": math.inf, "check npy": math.inf}
        for _ in range(args.repeats):
            best["write csv"] = min(best["write csv"], write_csv(csv_path, seq_len, d_model))
            best["check csv"] = min(best["check csv"], check(csv_path))
            best["check npy"] = min(best["check npy"], check(npy_path))
        if csv_path.read_bytes() != written:
            raise SystemExit("the CSV differs from one write to the next")

        for name, seconds in best.items():
            print(f"  {name:<10} {seconds / best['write csv']:6.2f}x the write")
        for name in ("check csv", "check npy"):
            ratio = best[name] / best["write csv"]
            print(f"  target {name} <= {GOAL:g}x write: {'met' if ratio <= GOAL else 'MISSED'} ({ratio:.2f}x)")

        if args.profile:
            for path in (csv_path, npy_path):
                profile(path, seq_len, d_model, best["write csv"])


if __name__ == "__main__":
    main()
