"""Reliability: properties of every mode and convention (hypothesis), fuzzed parsers and
arguments, and the output's behaviour when the reader, the disk or the user stops it.

The fuzz tests run a bounded number of inputs by default; the long run is

    HYPOTHESIS_PROFILE=long python -m pytest tests/test_reliability.py -k fuzz --hypothesis-show-statistics
"""

import contextlib
import io
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import mpmath
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import pe_reference
from pe_reference import compare, encoding, rows, value
from tests import reference
from tests.helpers import parse, subprocess_environment

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=25000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DTYPES = ["float64", "float32", "bfloat16", "float16"]
# The presets as docs/checking.md states them: (layout, spacing, start, odd).
PRESETS: Dict[str, Tuple[str, str, int, str]] = {
    "paper": ("interleaved", "paper", 0, "sine"),
    "tensor2tensor": ("sin-cos", "tensor2tensor", 0, "zero"),
    "fairseq": ("sin-cos", "tensor2tensor", 2, "zero"),
    "tf-tutorial": ("sin-cos", "paper", 0, "error"),
    "guided-diffusion": ("cos-sin", "paper", 0, "zero"),
    "xlm": ("interleaved", "paper", 0, "sine"),
    "keras-hub": ("interleaved", "paper", 0, "sine"),
    "marian": ("sin-cos", "paper", 0, "sine"),
    "gpt-j": ("sin-cos", "paper", 0, "error"),
    "whisper": ("sin-cos", "tensor2tensor", 0, "error"),
    "m2m100": ("sin-cos", "tensor2tensor", 2, "zero"),
}

conventions = st.fixed_dictionaries(
    {},
    optional={
        "layout": st.sampled_from(["interleaved", "sin-cos", "cos-sin"]),
        "spacing": st.sampled_from(["paper", "tensor2tensor"]),
        "start": st.integers(0, 10**6),
        "odd": st.sampled_from(["sine", "zero"]),
        "preset": st.sampled_from(list(PRESETS)),
    },
)
bases = st.sampled_from([10000.0, 10000, 500000.0, 12345.678, 100.0, 2.5, 0.5])


def fits(keywords: Dict[str, Any], d_model: int) -> bool:
    """False for the one refused combination: an odd width in a convention with no odd rule."""
    odd = keywords.get("odd") or PRESETS[keywords.get("preset", "paper")][3]
    return not (odd == "error" and d_model % 2)


# Properties ---------------------------------------------------------------------------------


@given(
    seq_len=st.integers(1, 12),
    d_model=st.integers(1, 24),
    keywords=conventions,
    base=bases,
    exact=st.booleans(),
    dtype=st.sampled_from(DTYPES),
    data=st.data(),
)
def test_value_equals_the_table_element(
    seq_len: int, d_model: int, keywords: Dict[str, Any], base: float, exact: bool, dtype: str, data: Any
) -> None:
    assume(fits(keywords, d_model))
    table = encoding(seq_len, d_model, base=base, exact=exact, dtype=dtype, **keywords)
    pos = data.draw(st.integers(0, seq_len - 1))
    dim = data.draw(st.integers(0, d_model - 1))
    got = value(pos, dim, d_model, base=base, exact=exact, dtype=dtype, **keywords)
    assert struct.pack("<d", got) == struct.pack("<d", table[pos][dim])
    assert list(rows(seq_len, d_model, base=base, exact=exact, dtype=dtype, **keywords)) == table


@given(
    pos=st.one_of(st.integers(1, 5000), st.integers(1, 10**9), st.integers(10**9, 10**15)),
    d_model=st.integers(1, 8192),
    base=bases,
    dtype=st.sampled_from(DTYPES),
    data=st.data(),
)
def test_exact_values_are_the_nearest(pos: int, d_model: int, base: float, dtype: str, data: Any) -> None:
    dim = data.draw(st.integers(0, d_model - 1))
    got = value(pos, dim, d_model, base=base, exact=True, dtype=dtype)
    true = reference.element(pos, dim, d_model, base)
    below, above = reference.neighbours(got, dtype)
    with mpmath.workprec(reference.PRECISION):
        distance = abs(mpmath.mpf(got) - true)
        assert distance < abs(mpmath.mpf(below) - true)
        assert distance < abs(mpmath.mpf(above) - true)


@given(
    pos=st.integers(0, 10**9),
    d_model=st.integers(1, 2048),
    base=st.sampled_from([10000.0, 500000.0, 12345.678, 100.0, 2.5, 10**6]),
    keywords=conventions,
    data=st.data(),
)
def test_fast_path_within_its_bound(pos: int, d_model: int, base: float, keywords: Dict[str, Any], data: Any) -> None:
    # docs/accuracy.md: abs(fast - exact) <= 2**-48 (1 + angle) + 2**-50, bases up to 10**6.
    assume(fits(keywords, d_model))
    dim = data.draw(st.integers(0, d_model - 1))
    fast = value(pos, dim, d_model, base=base, **keywords)
    exact = value(pos, dim, d_model, base=base, exact=True, **keywords)
    convention = pe_reference._convention("value", d_model, None, dict(keywords))
    kind, pair = convention._column(dim, d_model)
    a, b = convention._exponents(d_model)[pair] if kind != 2 else (0, 1)
    angle = pe_reference._to_float(convention._position(pos, None)) / base ** (a / b)
    assert abs(fast - exact) <= 2.0**-48 * (1 + angle) + 2.0**-50


@given(
    pos=st.integers(0, 10**12),
    d_model=st.integers(2, 512),
    base=bases,
    exact=st.booleans(),
    dtype=st.sampled_from(["float64", "float32"]),
    data=st.data(),
)
def test_each_pair_is_on_the_unit_circle(
    pos: int, d_model: int, base: float, exact: bool, dtype: str, data: Any
) -> None:
    # Both columns of a pair come from one angle: sin^2 + cos^2 = 1 within the format's rounding,
    # 2**-50 for float64 and 2**-21 for float32 (two values each within an ulp, and the arithmetic).
    pair = data.draw(st.integers(0, d_model // 2 - 1))
    s = value(pos, 2 * pair, d_model, base=base, exact=exact, dtype=dtype)
    c = value(pos, 2 * pair + 1, d_model, base=base, exact=exact, dtype=dtype)
    assert abs(s * s + c * c - 1.0) <= (2.0**-50 if dtype == "float64" else 2.0**-21)


@given(
    seq_len=st.integers(1, 30),
    d_model=st.integers(1, 16),
    dtype=st.sampled_from(DTYPES),
    change=st.floats(1e-3, 1.0),
    down=st.booleans(),
    data=st.data(),
)
def test_compare_finds_the_one_perturbed_element(
    seq_len: int, d_model: int, dtype: str, change: float, down: bool, data: Any
) -> None:
    table = encoding(seq_len, d_model, exact=True, dtype=dtype)
    r, c = data.draw(st.integers(0, seq_len - 1)), data.draw(st.integers(0, d_model - 1))
    original = table[r][c]
    table[r][c] += -change if down else change
    # compare() rounds what it reads to dtype: a change that rounds away is no change.
    assume(reference.round_to(mpmath.mpf(table[r][c]), dtype, exact=True) != original)
    # atol=0: the default tolerance of a narrow format may be as large as the change.
    report = compare(table, dtype=dtype, atol=0)
    assert report.failures == 1
    assert report.worst is not None and report.worst[:2] == (r, c)


@given(
    preset=st.sampled_from(list(PRESETS)), seq_len=st.integers(1, 10), d_model=st.integers(1, 20), exact=st.booleans()
)
def test_presets_equal_their_explicit_choices(preset: str, seq_len: int, d_model: int, exact: bool) -> None:
    layout, spacing, start, odd = PRESETS[preset]
    assume(not (odd == "error" and d_model % 2))
    named = encoding(seq_len, d_model, preset=preset, exact=exact)
    explicit = encoding(seq_len, d_model, layout=layout, spacing=spacing, start=start, odd=odd, exact=exact)
    assert named == explicit


# Fuzzing the parsers ---------------------------------------------------------------------


def parse_or_refuse(data: bytes, source: str) -> Optional[List[List[float]]]:
    """Parse; the only error allowed is the documented one. Memory stays bounded."""
    tracemalloc.start()
    try:
        table: List[List[float]] = list(parse(data, "fuzz", source))
    except pe_reference._Unreadable as error:
        message = str(error)
        assert message.startswith("fuzz") and "\n" not in message, message
        return None
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # Inputs are a few KiB: a declared shape must never make it allocate for its size.
        assert peak < 64 * len(data) + (4 << 20), peak
    assert table and all(len(row) == len(table[0]) > 0 for row in table)
    assert all(isinstance(x, float) for row in table for x in row)
    return table


number_text = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["nan", "inf", "-", ".", "1e", "1_0", "0x10", "", " ", "1e999", "+.5", "5.", "true", '"1"']),
)


@given(
    st.lists(st.lists(number_text, max_size=6), max_size=6),
    st.sampled_from([",", ";", ", ", "\t"]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_fuzz_csv(cells: List[List[str]], separator: str, newline: str) -> None:
    text = newline.join(separator.join(row) for row in cells)
    parse_or_refuse(text.encode(), "fuzz.csv")


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers(-(10**400), 10**400) | st.text(max_size=4),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=30,
)


@given(json_values, st.integers(0, 40), st.binary(max_size=8))
def test_fuzz_json(document: Any, cut: int, junk: bytes) -> None:
    text = json.dumps(document).encode()
    parse_or_refuse(text, "fuzz.json")
    parse_or_refuse(text[: len(text) - cut] + junk, "fuzz.json")


npy_headers = st.fixed_dictionaries(
    {
        "descr": st.sampled_from(["<f8", ">f8", "<f4", ">f4", "<f2", ">f2", "=f8", "|O", "<i8", "<c16", "f8", "<f16"]),
        "fortran_order": st.sampled_from([True, False, 0, 1, None]),
        "shape": st.one_of(
            st.tuples(st.integers(-2, 6), st.integers(-2, 6)),
            st.tuples(st.integers(0, 10**15), st.integers(0, 10**15)),
            st.tuples(st.integers(0, 5)),
            st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
        ),
    }
)


@given(npy_headers, st.integers(1, 3), st.binary(max_size=400), st.booleans())
def test_fuzz_npy(header: Dict[str, Any], version: int, data: bytes, mangle: bool) -> None:
    text = repr(header).encode("latin-1")
    if mangle:
        text = text.replace(b"'", b'"', 1)[::-1] if data[:1] == b"\x00" else text[: len(text) // 2]
    length = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    parse_or_refuse(b"\x93NUMPY" + bytes([version, 0]) + length + text + data, "fuzz.npy")


@given(st.binary(max_size=600))
def test_fuzz_any_bytes(data: bytes) -> None:
    for source in ("fuzz", "fuzz.npy", "fuzz.json", "fuzz.csv"):
        parse_or_refuse(data, source)
    parse_or_refuse(b"\x93NUMPY" + data, "fuzz")


# Fuzzing the arguments -------------------------------------------------------------------

TOKENS = [
    "0",
    "1",
    "3",
    "4",
    "7",
    "-1",
    "x",
    "1e3",
    "4.0",
    "٤",
    "--base",
    "nan",
    "-2.5",
    "1e-300",
    "64",
    "--format",
    "table",
    "csv",
    "json",
    "hex",
    "vectors",
    "xml",
    "--digits",
    "18",
    "--header",
    "--explain",
    "--exact",
    "--dtype",
    "float16",
    "bfloat16",
    "float8",
    "--preset",
    "fairseq",
    "tf-tutorial",
    "bert",
    "--layout",
    "cos-sin",
    "--spacing",
    "tensor2tensor",
    "--start",
    "--odd",
    "zero",
    "error",
    "--check",
    "CHECK",
    "--atol",
    "--ulps",
    "--plot",
    "--waves",
    "PICTURE",
    "--version",
    "--bogus",
    "-",
    "--",
    "",
]


class LimitedOutput(io.StringIO):
    """A standard output whose reader leaves after 1 MiB, as | head would: then a broken pipe."""

    def write(self, text: str) -> int:
        if self.tell() + len(text) > 1 << 20:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


@given(st.lists(st.sampled_from(TOKENS), max_size=9))
def test_fuzz_arguments(tokens: List[str]) -> None:
    folder = Path(os.environ.get("PYTEST_FUZZ_FOLDER", "/tmp"))
    arguments = [
        str(folder / "t.json") if token == "CHECK" else str(folder / "p.png") if token == "PICTURE" else token
        for token in tokens
    ]
    # Every number among the tokens is small (64 at most), and the output stops at 1 MiB.
    out, err = LimitedOutput(), io.StringIO()
    stdin, here = sys.stdin, os.getcwd()
    # --plot and --waves take any token as a file name ("--plot 4" writes ./4): run in a
    # folder of its own, so nothing lands in the directory pytest was started from.
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        sys.stdin = io.TextIOWrapper(io.BytesIO(b"[[0.0, 1.0]]"))  # for --check -
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = pe_reference.main(arguments)
                except SystemExit as exit:
                    status = exit.code if isinstance(exit.code, int) else 0
        finally:
            sys.stdin = stdin
            os.chdir(here)
    assert status in (0, 1, 2), (arguments, status)
    if status == 2:
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue(), (arguments, err.getvalue())
        assert out.getvalue() == "" or "--check" in arguments, (arguments, out.getvalue()[:200])


@pytest.mark.parametrize(
    "extra", [[], ["--exact"], ["--format", "vectors"], ["--preset", "fairseq", "--exact", "--dtype", "float16"]]
)
def test_huge_first_position(capsys: pytest.CaptureFixture[str], extra: List[str]) -> None:
    # A first position far beyond float64's integers, on a small table.
    status = pe_reference.main(["3", "4", "--start", "99999999999999999999", *extra])
    out, err = capsys.readouterr()
    if "--exact" in extra or "vectors" in extra:
        assert status == 0 and err == ""
    else:
        assert status == 0 and len(out.splitlines()) == 4


@pytest.fixture(autouse=True)
def fuzz_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t.json").write_text(json.dumps(encoding(3, 4)))
    monkeypatch.setenv("PYTEST_FUZZ_FOLDER", str(tmp_path))


# Output robustness -------------------------------------------------------------------------


def closed_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("arguments", [["4", "4"], ["4", "4", "--format", "csv"], ["--check", "-"]])
def test_closed_stdout(arguments: List[str]) -> None:
    environment = subprocess_environment()
    process = subprocess.run(
        [sys.executable, "-m", "pe_reference", *arguments],
        input=b"[[0.0, 1.0]]",
        stderr=subprocess.PIPE,
        preexec_fn=closed_stdout,
        env=environment,
    )
    assert process.returncode in (1, 2)
    assert process.stderr.count(b"\n") == 1 and b"standard output is closed" in process.stderr


@pytest.mark.parametrize(
    "arguments", [["100000000", "512", "--exact", "--format", "csv"], ["60000", "2000", "--exact"]]
)
def test_ctrl_c_is_one_line_and_130(arguments: List[str]) -> None:
    import time

    environment = subprocess_environment()
    process = subprocess.Popen(
        [sys.executable, "-m", "pe_reference", *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment,
    )
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130
    assert process.stderr is not None
    assert process.stderr.read() == b"python -m pe_reference: interrupted\n"
    process.stderr.close()


def test_large_tables_fail_at_once_and_stream_instead() -> None:
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"^seq_len \* d_model must be at most 67108864 .* stream it with rows\(\)"):
        encoding(10**7, 10**5)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20
    assert len(next(rows(10**7, 10**5))) == 10**5
    assert len(encoding(1, 1 << 16)[0]) == 1 << 16
