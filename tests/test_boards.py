"""Runtimes that behave like boards: the x87 unit's double rounding, and the shared MicroPython builds.

The builds are in ../shared/micropython/bin (beside the repository), as CI has them.
"""

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType
from typing import List

import pytest

import pe_reference
from pe_reference import encoding, rope
from tests.helpers import ROOT

BUILDS = ROOT.parent / "shared" / "micropython" / "bin"
#: What a clone without them lacks: CI's shared builds, beside the checkout (there is nothing to install).
BUILDS_NOTE = "the board builds in ../shared/micropython/bin beside the repository, as CI lays them"


@pytest.fixture
def additions_round_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on the x87 unit: the float64 finish is off, every value built from integers."""
    monkeypatch.setitem(pe_reference._RUNTIME, "rounds once", False)


def test_this_interpreter_adds_with_one_rounding() -> None:
    assert pe_reference._addition_rounds_once()


def test_integer_finish_gives_the_float_finishs_bits(additions_round_twice: None) -> None:
    del pe_reference._RUNTIME["rounds once"]
    float_finish = encoding(300, 48, exact=True), rope(300, 32, base=500000, exact=True)
    pe_reference._RUNTIME["rounds once"] = False
    integer_finish = encoding(300, 48, exact=True), rope(300, 32, base=500000, exact=True)
    assert integer_finish == float_finish


def test_small_heap_path_gives_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a board's heap: a collection after each exact row, caches of two entries, across anchor blocks."""
    expected = (
        encoding(2100, 6, exact=True, start=7),
        encoding(40, 64, exact=True, dtype="float32", preset="tensor2tensor"),
        rope(1030, 8, base=500000, exact=True),
        [pe_reference.value(1000 + pos, dim, 512, exact=True) for pos in range(3) for dim in (5, 6, 300)],
    )
    collections: List[int] = []
    monkeypatch.setattr(pe_reference, "_COLLECT_GARBAGE", lambda: collections.append(1))
    monkeypatch.setattr(pe_reference, "_CACHE_LIMIT", 2)
    for cache in ("_CONSTANTS", "_LOGARITHMS", "_LAWS"):
        monkeypatch.setattr(pe_reference, cache, {})
    small_heap = (
        encoding(2100, 6, exact=True, start=7),
        encoding(40, 64, exact=True, dtype="float32", preset="tensor2tensor"),
        rope(1030, 8, base=500000, exact=True),
        [pe_reference.value(1000 + pos, dim, 512, exact=True) for pos in range(3) for dim in (5, 6, 300)],
    )
    assert small_heap == expected
    # At least one collection per row made, and the caches kept within the limit.
    assert len(collections) >= 2100 + 40 + 1030
    assert len(pe_reference._CONSTANTS) <= 3 and len(pe_reference._LOGARITHMS) <= 3


@pytest.mark.parametrize("build_name", ["micropython-x87", "micropython-single32", "micropython-double32"])
def test_board_build_prints_the_stored_digest(tmp_path: Path, build_name: str) -> None:
    """x87: the full digest; single precision: the narrow formats' digest, float64 refused."""
    build = BUILDS / build_name
    if not build.exists():
        pytest.skip(f"needs {BUILDS_NOTE}")
    for name in ("pe_reference.py", "tests/conformance.py"):
        (tmp_path / Path(name).name).write_bytes((ROOT / name).read_bytes())
    process = subprocess.run(
        [str(build), "-X", "heapsize=8M", "conformance.py", str(ROOT / "tests" / "data" / "conformance.digest")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    assert process.returncode == 0 and "digest matches the stored one" in process.stdout, (
        process.stdout + process.stderr
    )
    assert ("single-precision floats" in process.stdout) == (build_name == "micropython-single32")


@pytest.fixture
def single_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(pe_reference._RUNTIME, "single", True)


def test_single_precision_refuses_exact_float64_by_name(single_precision: None) -> None:
    message = "for exact values on this runtime, whose floats are single precision (24 bits), got 'float64'"
    for call in (
        lambda: encoding(2, 4, exact=True),
        lambda: pe_reference.value(1, 0, 4, exact=True),
        lambda: rope(2, 4, exact=True),
        lambda: pe_reference.compare([[0.0, 1.0]]),
        lambda: pe_reference.compare_rope([[1.0, 1.0]]),
    ):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            call()
    # The fast path and the narrow formats still work.
    assert encoding(2, 4)[1][0] == pe_reference.value(1, 0, 4)
    assert pe_reference.compare(encoding(8, 8, exact=True, dtype="float32"), dtype="float32").ok


def _board_heap() -> ModuleType:
    """benchmarks/board_heap.py, the script whose run docs/vendoring.md's heap table is (CI runs it with --check)."""
    spec = importlib.util.spec_from_file_location("board_heap", ROOT / "benchmarks" / "board_heap.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pages_heap_table_is_the_one_board_heap_prints_and_the_advice_follows_it() -> None:
    board_heap = _board_heap()
    page = ROOT / "docs" / "vendoring.md"
    stated = board_heap.page_figures(page)
    # Every cell a figure, and the table written as the run prints it, row for row.
    assert all(kilobytes is not None for column in stated.values() for kilobytes in column), stated
    assert "\n".join(board_heap.table(stated)) in page.read_text(encoding="utf-8")
    # The frozen import fits its 16 KB budget on both float formats.
    assert stated["frozen, double floats"][0] <= 16 and stated["frozen, single floats"][0] <= 16
    # The advice on which copy a board takes follows from the figures: the .mpy where the heap holds its
    # streamed rows (values need no more than the import), else frozen; a 64 x 64 table where its figure fits.
    advice = {}
    for line in page.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 5 and cells[2] == "single":
            advice[cells[0]] = cells
    mpy, frozen = stated["`.mpy`"], stated["frozen, single floats"]
    for board, heap in (("Raspberry Pi Pico (RP2040)", 190), ("Raspberry Pi Pico 2 (RP2350)", 470)):
        copy, fits = advice[board][3], advice[board][4]
        assert copy == ("`.mpy`" if mpy[2] <= heap else "frozen"), (board, copy)
        table_fits = (mpy[3] if copy == "`.mpy`" else frozen[3]) <= heap
        assert ("a 64 x 64 table included" in fits) == table_fits, (board, fits)
    assert frozen[2] <= 64 < frozen[3] and "not a 64 x 64 table" in advice["micro:bit v2"][4]
    assert frozen[2] <= 100 < frozen[3] <= 150 and "frozen" == advice["ESP32 without PSRAM"][3]
