"""Conformance: exact mode gives the same bits on every runtime.

    python tests/conformance.py [EXPECTED_DIGEST_FILE]

Runs unchanged on CPython, PyPy, Pyodide and MicroPython (which is why it
uses no typing, hashlib or time.perf_counter).  It computes a fixed set of
exact tables and values and prints a digest of their bit patterns (FNV-1a,
64 bits, over each value's float64 bytes); with a file, it compares the
digest with the one stored there and exits 1 on a difference.  It also
checks that the fast path stays within its documented bound of the exact
values, and prints rough speeds.
"""

import struct
import sys
import time

import pe_reference as pe

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing at run time: MicroPython has none
    from typing import Any, Dict, List

DTYPES = ("float64", "float32", "bfloat16", "float16")
NARROW = DTYPES[1:]
# A runtime with single-precision floats (MicroPython on most boards) holds only the narrow formats.
SINGLE = pe._single_precision()
# The fast path's documented bounds (docs/accuracy.md): |fast - exact| <= SLOPE (1 + angle) + FLOOR, against
# exact float64 values with double floats, and against exact float32 ones with single floats.
BOUND_SLOPE = 2.0**-21 if SINGLE else 2.0**-48
BOUND_FLOOR = 2.0**-22 if SINGLE else 2.0**-50
REFERENCE = "float32" if SINGLE else "float64"


def clock() -> float:
    counter = getattr(time, "perf_counter", None)
    if counter is not None:
        return float(counter())
    return float(time.time())


class Digest:
    def __init__(self) -> None:
        self.value = 0xCBF29CE484222325
        self.count = 0

    def add(self, x: float) -> None:
        for byte in struct.pack("<d", x):
            self.value = ((self.value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        self.count += 1

    def hex(self) -> str:
        return "%016x" % self.value


def exact_cases(digest: Digest, formats: "Any" = DTYPES) -> None:
    """The exact values in the given formats (all four, or the narrow ones a single-precision runtime holds)."""
    for dtype in formats:
        for row in pe.encoding(24, 48, exact=True, dtype=dtype):
            for x in row:
                digest.add(x)
    if "float64" in formats:
        # Across the recurrence's anchor at row 1024.
        for row in pe.encoding(1030, 3, exact=True):
            for x in row:
                digest.add(x)
        for row in pe.encoding(9, 7, base=500000.0, exact=True, preset="tensor2tensor"):
            for x in row:
                digest.add(x)
    for row in pe.encoding(9, 9, base="12345.678", exact=True, dtype="float16", preset="guided-diffusion"):
        for x in row:
            digest.add(x)
    # The fields of issue 11: real, negative, descending and given positions; shifts, rational bases,
    # scaled and full-turn angles, and output scales (strings: MicroPython has no fractions module).
    # Every float written here is exact in single precision too: a board's parser reads 0.3 as
    # another number, so such inputs are decimal strings.
    fields: "List[Dict[str, Any]]" = [
        {"preset": "diffusers", "positions": ["999.5", "0.3", -17, "1/3", "1e-4"], "shift": "0.5", "angle_scale": 2},
        {"preset": "transformer-xl", "start": "-2.5", "step": "1/3"},
        {"preset": "mlx", "positions": [0, "1/8", "1/6", "0.25", 7.5], "full_turns": True},
        {"preset": "tatp22", "start": -1000, "scale": "sqrt(3)", "base": "1/3"},
    ]
    for keywords in fields:
        for dtype in [d for d in ("float64", "float32", "bfloat16") if d in formats]:
            for row in pe.encoding(5, 7 if keywords["preset"] == "tatp22" else 8, exact=True, dtype=dtype, **keywords):
                for x in row:
                    digest.add(x)
    for row in pe.encoding(6, 10, base=2, exact=True, dtype="bfloat16", preset="fairseq"):
        for x in row:
            digest.add(x)
    for pos in (999999937, 10**9, 2**40 + 1):
        for dim in (0, 1, 255, 510, 511):
            for dtype in formats:
                digest.add(pe.value(pos, dim, 512, exact=True, dtype=dtype))
    # Rotary caches (issue 12): every scaling variant, a transcendental attention factor (yarn),
    # llama3's blended pairs, dynamic NTK's grown base, and rotated vectors.
    scalings: "List[Any]" = [
        None,
        {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 64},
        {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 64, "truncate": False, "beta_fast": 8},
        {
            "rope_type": "llama3",
            "factor": 8,
            "low_freq_factor": 1,
            "high_freq_factor": 4,
            "original_max_position_embeddings": 64,
        },
        {"rope_type": "dynamic", "factor": 2, "max_position_embeddings": 40},
        {
            "rope_type": "longrope",
            "short_factor": [1, "1.5", 2, 3, 4, 5],
            "long_factor": [1, 2, 4, 8, 16, 32],
            "original_max_position_embeddings": 16,
            "factor": 4,
        },
    ]
    for scaling in scalings:
        for dtype in formats:
            positions = [0, 1, 7, "0.5", 1000, 65535, 1048575]
            cos, sin = pe.rope(7, 12, base=500000, scaling=scaling, positions=positions, exact=True, dtype=dtype)
            for row in cos + sin:
                for x in row:
                    digest.add(x)
    vectors = [[1.0, -2.0, 0.5, 0.0], [3.0, 4.0, -0.25, 2.0**-100], [0.0, 0.0, 1.0, 1.0]]
    for dtype in formats:
        for row in pe.apply_rope(vectors, positions=[0, 1, 100000], layout="interleaved", exact=True, dtype=dtype):
            for x in row:
                digest.add(x)
    # Grids (issue 27): every grid preset's table of a small grid, normalized, scaled and cut ones among them.
    for name, _, axes, _, _ in pe._GRID_PRESETS:
        for dtype in formats:
            shape = (3, 4) if axes == 2 else (2, 3, 2)
            for row in pe.encoding(shape, 16 if axes == 2 else 32, preset=name, exact=True, dtype=dtype):
                for x in row:
                    digest.add(x)
    # Several positions a row: axes_dim (Flux's kind), M-RoPE sections and Qwen3-VL's interleaved ones.
    cells = [[0, 1, 2], [3, "1/2", 70000], [1000, 0, 5]]
    splits: "List[Dict[str, Any]]" = [
        {"axes_dim": (4, 6, 6), "layout": "interleaved"},
        {"scaling": {"mrope_section": [2, 3, 3]}, "base": 1000000},
        {"scaling": {"mrope_section": [4, 2, 2], "mrope_interleaved": True}},
    ]
    turned = [[float(c % 5) - 2.0 for c in range(16)] for _ in cells]
    for dtype in formats:
        for split in splits:
            cos, sin = pe.rope(3, 16, positions=cells, exact=True, dtype=dtype, **split)
            for row in cos + sin + pe.apply_rope(turned, positions=cells, exact=True, dtype=dtype, **split):
                for x in row:
                    digest.add(x)


def fast_path_check() -> float:
    """The worst |fast - exact| as a share of the bound; at most 1 passes."""
    seq_len, d_model = 300, 64
    worst = 0.0
    # Row by row, so that a board's heap holds two rows rather than two tables.
    for pos, (fast, exact) in enumerate(
        zip(pe.rows(seq_len, d_model), pe.rows(seq_len, d_model, exact=True, dtype=REFERENCE))
    ):
        for dim in range(d_model):
            angle = pos / 10000.0 ** ((2 * (dim // 2)) / d_model)
            share = abs(fast[dim] - exact[dim]) / (BOUND_SLOPE * (1.0 + angle) + BOUND_FLOOR)
            worst = share if share > worst else worst
    for pos in (10**6, 10**9):
        for dim in (0, 1, 100, 511):
            angle = pos / 10000.0 ** ((2 * (dim // 2)) / 512)
            error = abs(pe.value(pos, dim, 512) - pe.value(pos, dim, 512, exact=True, dtype=REFERENCE))
            share = error / (BOUND_SLOPE * (1.0 + angle) + BOUND_FLOOR)
            worst = share if share > worst else worst
    return worst


def library_checks() -> "List[str]":
    """The library's behaviour on this runtime: structural facts, not stored answers."""
    failures = []

    def expect(condition: bool, what: str) -> None:
        if not condition:
            failures.append(what)

    table = pe.encoding(6, 7)
    expect(list(pe.rows(6, 7)) == table, "rows equals encoding")
    expect(list(pe.rows((2, 3), 8, preset="mae")) == pe.encoding((2, 3), 8, preset="mae"), "a grid's rows")
    expect(pe.value(5, 6, 7) == table[5][6], "value equals encoding")
    expect(table[0] == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0], "position 0 is exact")
    if SINGLE:
        try:
            pe.value(1, 0, 4, exact=True)
            failures.append("exact float64 is refused with single-precision floats")
        except ValueError as error:
            expect("single precision" in str(error), "the single-precision ValueError")
    else:
        expect(
            pe.value(1, 0, 4, exact=True) == pe.value(1, 0, 4, exact=True, dtype="float64"),
            "float64 is the default dtype",
        )
    expect("sin(1 / 100) = sin(0.01)" in pe.derivation(1, 2, 4), "the derivation's denominator is 100")
    expect(pe.encoding(2, 4, preset="fairseq") == pe.encoding(4, 4, preset="tensor2tensor")[2:], "fairseq starts at 2")
    expect(pe.encoding(3, 5, preset="tensor2tensor", exact=True, dtype=REFERENCE)[2][4] == 0.0, "a zero column")
    expect(
        pe.compare(pe.encoding(8, 8, exact=True, dtype=REFERENCE), dtype=REFERENCE).ok,
        "compare accepts the exact table",
    )
    expect(
        not pe.compare(pe.encoding(8, 8, preset="guided-diffusion"), dtype=REFERENCE).ok,
        "compare refuses another convention",
    )
    expect(pe.compare_rope(pe.rope(8, 8, exact=True, dtype=REFERENCE)[0], dtype=REFERENCE).ok, "compare_rope accepts")
    grid = pe.encoding((3, 4), 8, preset="mae", exact=True, dtype=REFERENCE)
    expect(pe.compare(grid, grid=(3, 4), preset="mae", dtype=REFERENCE).ok, "compare accepts a grid's exact table")
    cells = [[i, j] for i in range(6) for j in range(6)]
    cos = pe.rope(36, 16, positions=cells, axes_dim=(8, 8), layout="interleaved", exact=True, dtype=REFERENCE)[0]
    checked = pe.compare_rope(cos, positions=cells, axes_dim=(8, 8), layout="interleaved", dtype=REFERENCE)
    expect(checked.ok, "compare_rope accepts a multi-axis cache")
    # The rotary diagnosis holds its candidates' rows at once: more than a 384 KB heap holds (a board's own
    # heap; CI runs these checks on 8 MB ones and on every other runtime).
    gc = __import__("gc")
    heap = getattr(gc, "mem_free", lambda: 1 << 30)() + getattr(gc, "mem_alloc", lambda: 0)()
    if heap >= 1 << 20:
        expect(pe.compare_rope(cos, dtype=REFERENCE).causes == ("axes",), "a multi-axis cache checked alone is named")
    for dtype in NARROW if SINGLE else DTYPES:
        row = pe.encoding(2, 6, exact=True, dtype=dtype)[1]
        expect(all(-1.0 <= x <= 1.0 for x in row), "values in [-1, 1] in " + dtype)
    try:
        pe.encoding(2, 0)
        failures.append("d_model 0 is refused")
    except ValueError as error:
        expect(str(error) == "d_model must be at least 1, got 0", "the ValueError message")
    try:
        pe.value(1.0, 0, 4)  # type: ignore[arg-type]
        failures.append("a float position is refused")
    except TypeError as error:
        expect(str(error) == "pos must be an integer, got float 1.0", "the TypeError message")
    return failures


def speed(exact: bool) -> float:
    """Values per second for a small table, streamed (a board's heap need not hold it), the best of three runs."""
    seq_len, d_model = (200, 128) if exact else (400, 128)
    best = 0.0
    ticks_us = getattr(time, "ticks_us", None)  # MicroPython: integer ticks (a single float can't hold the time)
    for _ in range(3):
        if ticks_us is not None:
            start_ticks = ticks_us()
            for _row in pe.rows(seq_len, d_model, exact=exact, dtype=REFERENCE):
                pass
            elapsed = getattr(time, "ticks_diff")(ticks_us(), start_ticks) / 1e6
        else:
            start = clock()
            for _row in pe.rows(seq_len, d_model, exact=exact, dtype=REFERENCE):
                pass
            elapsed = clock() - start
        if elapsed > 0:
            best = max(best, seq_len * d_model / elapsed)
    return best


def runtime() -> str:
    implementation = sys.implementation
    version = ".".join(str(part) for part in tuple(implementation.version)[:3])
    platform = getattr(sys, "platform", "?")
    return "%s %s (Python %s, %s)" % (implementation.name, version, sys.version.split()[0].rstrip(";"), platform)


def main() -> int:
    digest, narrow = Digest(), Digest()
    if not SINGLE:
        exact_cases(digest)
    exact_cases(narrow, NARROW)
    worst = fast_path_check()
    failures = library_checks()
    print("runtime: " + runtime() + (", single-precision floats" if SINGLE else ""))
    print("library: " + ("ok" if not failures else "FAILED: " + "; ".join(failures)))
    if SINGLE:
        print("exact: float64 refused (single-precision floats)")
    else:
        print("exact: %d values, digest %s" % (digest.count, digest.hex()))
    print("narrow formats: %d values, digest %s" % (narrow.count, narrow.hex()))
    print("fast path: worst error %.3f of the documented bound: %s" % (worst, "ok" if worst <= 1.0 else "OUTSIDE"))
    print("speed: fast %.0f values/s, exact %.0f values/s" % (speed(False), speed(True)))
    status = 0 if worst <= 1.0 and not failures else 1
    # MicroPython in WebAssembly has no sys.argv: its runner passes ARGUMENTS.
    arguments = getattr(sys, "argv", None) or globals().get("ARGUMENTS", [])
    if len(arguments) > 1:
        with open(arguments[1]) as handle:
            expected = handle.read().split()
        # The file holds the full digest, then the narrow formats' one.
        same = expected[1] == narrow.hex() and (SINGLE or expected[0] == digest.hex())
        print("digest %s the stored one" % ("matches" if same else "DIFFERS FROM"))
        status = status if same else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
