"""Benchmark --check of real-size float32 tables against writing the table; print time and peak memory in one run.

    python benchmarks/bench_check.py [--sizes SEQ_LEN D_MODEL ...] [--repeats N] [--profile]

Issue 24's goals, for a faithful float32 table as a .npy file (20000 x 1024
and 131072 x 1024 by default, a 80 MB and a 512 MB file), each of two: the
fast table rounded to float32 ("check npy"), and the table a float32
framework computes, angles and values rounded to float32 ("check f32 npy"):
``python3 -m pe_reference --check FILE.npy`` takes at most the time of
``python3 -m pe_reference SEQ_LEN D_MODEL --format csv > FILE`` (the fast
table written as CSV), and its peak RSS is at most 150 MB above the
interpreter's own (``python -c "import pe_reference"``).  A CSV of the fast
table (below the 2 GiB input limit) is checked too.

Each command runs in a fresh process under a small wrapper that reports its
peak RSS (VmHWM of /proc/self/status where there is one: resource.getrusage
would count this process's memory, copied before the exec); each keeps its
best time over the rounds, so a noisy neighbour slows every contender
alike.  Every check must exit 0 with a "within tolerance" verdict, or the
benchmark stops.  All files live in a temporary directory that is removed at
the end.

With --profile, the float32 pipeline's .npy check also runs in this process
under cProfile (the top 20 functions by own time are printed).
"""

import argparse
import contextlib
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
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pe_reference  # noqa: E402

GOAL_TIME = 1.0  # --check of the .npy, in units of the CSV write
GOAL_MEMORY = 150 << 20  # peak RSS above the interpreter's, bytes

# Runs pe_reference's command line in this process, then reports the peak RSS on standard error's last line.
WRAPPER = """
import resource, sys
status = 0
if sys.argv[1:]:
    import pe_reference
    status = pe_reference.main(sys.argv[1:])
else:
    import pe_reference
try:
    # This process's own high-water mark: ru_maxrss also counts the parent's memory copied before exec.
    with open("/proc/self/status") as status_file:
        peak = [int(line.split()[1]) * 1024 for line in status_file if line.startswith("VmHWM:")][0]
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
sys.stderr.write("peak %d\\n" % peak)
sys.exit(status)
"""


def environment() -> Dict[str, str]:
    """The environment of the timed commands: the module on the path, bytecode cached as a user's would be."""
    found = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    found["PYTHONPATH"] = str(ROOT)
    return found


def run(
    arguments: List[str], out: "Optional[Path]" = None, ok_status: Tuple[int, ...] = (0,)
) -> Tuple[float, int, str]:
    """Run the command line with arguments: (wall seconds, peak RSS in bytes, standard output unless sent to out).

    An exit status outside ok_status (a check that fails is 1) stops the benchmark.
    """
    command = [sys.executable, "-c", WRAPPER, *arguments]
    start = time.perf_counter()
    if out is not None:
        with open(out, "wb") as handle:
            result = subprocess.run(command, env=environment(), stdout=handle, stderr=subprocess.PIPE, check=False)
    else:
        result = subprocess.run(command, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    errors = result.stderr.decode(errors="replace").splitlines()
    if not errors or not errors[-1].startswith("peak "):
        raise SystemExit(f"{' '.join(arguments)}: no peak reported\n" + "\n".join(errors))
    output = "" if out is not None else result.stdout.decode(errors="replace")
    if result.returncode not in ok_status:
        raise SystemExit(f"{' '.join(arguments)} exited {result.returncode}:\n{output}" + "\n".join(errors))
    return seconds, int(errors[-1].split()[1]), output


def write_npy(path: Path, seq_len: int, d_model: int, pipeline: bool) -> None:
    """A float32 table as a little-endian, C-order .npy file, with the standard library only.

    The fast table rounded to float32; or, with pipeline, the table as a float32 framework computes it:
    each frequency 10000**(-2i/d_model), each angle position * frequency and each value sin or cos of
    that angle, each rounded to float32 (errors of about 2**-24 |angle|, as numpy's and torch's).
    """
    text = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({seq_len}, {d_model}), }}"
    length = len(text) + 1
    length += -(10 + length) % 64
    header = (text + " " * (length - len(text) - 1) + "\n").encode("latin-1")
    pairs = (d_model + 1) // 2
    frequencies = array("f", [10000.0 ** (-2 * i / d_model) for i in range(pairs)]).tolist()
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + length.to_bytes(2, "little") + header)
        for position, row in enumerate(pe_reference.rows(seq_len, d_model)):
            if pipeline:
                angles = array("f", [position * w for w in frequencies]).tolist()
                row = [f(angle) for angle in angles for f in (math.sin, math.cos)][:d_model]
            values = array("f", row)
            if sys.byteorder != "little":
                values.byteswap()
            out.write(values.tobytes())


def profile(path: Path) -> None:
    """Profile main(["--check", path]) in this process: the top 20 functions by own time."""
    print(f"\n--- cProfile of main(['--check', {path.name!r}]) (the float32 pipeline's table), top 20 by own time ---")
    profiler = cProfile.Profile()
    with contextlib.redirect_stdout(io.StringIO()):
        status = profiler.runcall(pe_reference.main, ["--check", str(path)])
    if status != 0:
        raise SystemExit(f"main(['--check', {path.name!r}]) returned {status}")
    report = io.StringIO()
    pstats.Stats(profiler, stream=report).sort_stats("tottime").print_stats(20)
    print(report.getvalue().strip())


def measure(seq_len: int, d_model: int, repeats: int, directory: str, baseline: int) -> Tuple[float, int]:
    """Time and peak RSS of the CSV write and of --check of the .npy files (and the CSV, under 2 GiB); print them.

    Return the slower .npy check's time in units of the write, and the larger peak above the interpreter's.
    """
    csv_path = Path(directory, f"table-{seq_len}x{d_model}.csv")
    npy_paths = {"check npy": Path(directory, "fast.npy"), "check f32 npy": Path(directory, "pipeline.npy")}
    for name, path in npy_paths.items():
        write_npy(path, seq_len, d_model, pipeline=name == "check f32 npy")
    best: Dict[str, Tuple[float, int]] = {}
    for _ in range(repeats):
        found = {"write csv": run([str(seq_len), str(d_model), "--format", "csv"], csv_path)[:2]}
        checks = list(npy_paths.items())
        if csv_path.stat().st_size <= 1 << 31:
            checks.append(("check csv", csv_path))
        for name, path in checks:
            seconds, peak, output = run(["--check", str(path)])
            if "within tolerance" not in output.splitlines()[-1]:
                raise SystemExit(f"--check {path.name} did not pass:\n{output}")
            found[name] = (seconds, peak)
        for name, (seconds, peak) in found.items():
            old = best.get(name, (math.inf, 0))
            best[name] = (min(old[0], seconds), max(old[1], peak))
        csv_path.unlink()
    write = best["write csv"][0]
    print(f"  {seq_len} x {d_model} float32 ({npy_paths['check npy'].stat().st_size / 2**20:.0f} MB as .npy):")
    for name, (seconds, peak) in best.items():
        print(
            f"    {name:<13} {seconds:8.2f} s  {seconds / write:5.2f}x the write"
            f"  peak RSS {peak / 2**20:7.1f} MB, {(peak - baseline) / 2**20:7.1f} MB above the interpreter"
        )
    for path in npy_paths.values():
        path.unlink()
    return max(best[name][0] for name in npy_paths) / write, max(best[name][1] for name in npy_paths) - baseline


def interpreter_peak(repeats: int) -> int:
    """The peak RSS of the interpreter with the module imported, in bytes, printed with the run's heading."""
    run([])  # compiles the module's bytecode once, as a user's first import does: no later run pays for it
    baseline = max(run([])[1] for _ in range(3))
    print(f"{sys.implementation.name} {sys.version.split()[0]}; best of {repeats}; the interpreter with the")
    print(f"module imported peaks at {baseline / 2**20:.1f} MB RSS")
    return baseline


def main(argv: "Optional[Sequence[str]]" = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--sizes",
        nargs="+",
        type=int,
        default=[20000, 1024, 131072, 1024],
        metavar="N",
        help="table shapes, SEQ_LEN D_MODEL pairs (default 20000 1024 131072 1024)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="rounds; each command keeps its best time (default 1)")
    parser.add_argument("--profile", action="store_true", help="also profile the first size's .npy check")
    args = parser.parse_args(argv)
    if len(args.sizes) % 2 or min(args.sizes) < 1 or args.repeats < 1:
        parser.error("--sizes takes SEQ_LEN D_MODEL pairs of positive numbers, and --repeats must be positive")
    sizes = list(zip(args.sizes[::2], args.sizes[1::2]))
    baseline = interpreter_peak(args.repeats)
    met = True
    with tempfile.TemporaryDirectory(prefix="bench_check_") as directory:
        for seq_len, d_model in sizes:
            ratio, above = measure(seq_len, d_model, args.repeats, directory, baseline)
            time_met, memory_met = ratio <= GOAL_TIME, above <= GOAL_MEMORY
            met = met and time_met and memory_met
            print(
                f"    target each --check .npy <= {GOAL_TIME:g}x the write: {'met' if time_met else 'MISSED'}"
                f" ({ratio:.2f}x);"
                f" <= 150 MB above the interpreter: {'met' if memory_met else 'MISSED'} ({above / 2**20:.1f} MB)"
            )
        if args.profile:
            path = Path(directory, "profiled.npy")
            write_npy(path, *sizes[0], pipeline=True)
            profile(path)
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
