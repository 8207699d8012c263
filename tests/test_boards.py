"""Runtimes that behave like boards: the x87 unit's double rounding, and the shared MicroPython builds.

The builds are in ../shared/micropython/bin (beside the repository), as CI has them.
"""

import subprocess
from pathlib import Path
from typing import Iterator

import pytest

import pe_reference
from pe_reference import encoding, rope

ROOT = Path(__file__).resolve().parent.parent
BUILDS = ROOT.parent / "shared" / "micropython" / "bin"


@pytest.fixture
def additions_round_twice() -> Iterator[None]:
    """As on the x87 unit: the float64 finish is off, every value built from integers."""
    saved = list(pe_reference._ROUNDS_ONCE)
    pe_reference._ROUNDS_ONCE[:] = [False]
    try:
        yield
    finally:
        pe_reference._ROUNDS_ONCE[:] = saved


def test_this_interpreter_adds_with_one_rounding() -> None:
    assert pe_reference._addition_rounds_once()


def test_integer_finish_gives_the_float_finishs_bits(additions_round_twice: None) -> None:
    pe_reference._ROUNDS_ONCE[:] = []
    float_finish = encoding(300, 48, exact=True), rope(300, 32, base=500000, exact=True)
    pe_reference._ROUNDS_ONCE[:] = [False]
    integer_finish = encoding(300, 48, exact=True), rope(300, 32, base=500000, exact=True)
    assert integer_finish == float_finish


def test_x87_build_prints_the_stored_digest(tmp_path: Path) -> None:
    build = BUILDS / "micropython-x87"
    if not build.exists():
        pytest.fail(f"{build} is missing: the shared MicroPython builds belong beside the repository")
    for name in ("pe_reference.py", "tests/conformance.py"):
        (tmp_path / Path(name).name).write_bytes((ROOT / name).read_bytes())
    process = subprocess.run(
        [str(build), "-X", "heapsize=8M", "conformance.py", str(ROOT / "tests" / "data" / "conformance.digest")],
        capture_output=True, text=True, cwd=tmp_path, timeout=900,
    )
    assert "digest matches the stored one" in process.stdout, process.stdout + process.stderr
