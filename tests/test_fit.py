"""The diagnosis reads a table's convention from its values, says what it read, and prints the call.

Tables are built by torch in float32, as frameworks build them: by the
frameworks' own modules where they install (x-transformers), else by the
formula written out with torch below.  Each test checks the story told and
runs the printed call (tests.helpers.assert_call_reproduces), so a story is
true only if the call's table passes compare().
"""

import math
from typing import Any, Dict, List, Tuple

import pytest

from pe_reference import Report, compare, encoding
from tests.helpers import assert_call_reproduces, need, run_main

numpy: Any = need("numpy")
torch: Any = need("torch")


def failing(table: Any, **keywords: Any) -> Report:
    """The report of a table that must fail, with a diagnosis."""
    report = compare(table, **keywords)
    assert not report.ok and report.diagnosis is not None, str(report)
    return report


def diagnosis_of(table: Any, **keywords: Any) -> str:
    return str(failing(table, **keywords).diagnosis)


def torch_table(
    seq_len: int,
    d_model: int,
    layout: str = "interleaved",
    spacing: str = "paper",
    base: float = 10000.0,
    start: int = 0,
    angle_scale: float = 1.0,
    scale: float = 1.0,
    descending: bool = False,
) -> Any:
    """A sinusoidal table computed in float32 with torch, every step as frameworks write it."""
    positions = torch.arange(start, start + seq_len, dtype=torch.float32)
    if descending:
        positions = positions.flip(0)
    h = d_model // 2
    if spacing == "paper":
        exponents = torch.arange(0, d_model, 2, dtype=torch.float32) / d_model
    else:
        exponents = torch.arange(h, dtype=torch.float32) / (h - 1)
    frequencies = angle_scale * base**-exponents
    angles = positions[:, None] * frequencies[None, :]
    sines, cosines = torch.sin(angles), torch.cos(angles)
    if layout == "interleaved":
        table = torch.stack([sines, cosines], dim=-1).reshape(seq_len, d_model)
    elif layout == "sin-cos":
        table = torch.cat([sines, cosines], dim=-1)
    else:
        table = torch.cat([cosines, sines], dim=-1)
    return (table * scale).numpy()


def tutorial(seq_len: int, d_model: int, positions: Any = None, frequencies: Any = None, angles: Any = None) -> Any:
    """The PyTorch tutorial's PositionalEncoding table, with the formats given for some steps (float32 otherwise)."""
    position = torch.arange(seq_len, dtype=positions or torch.float32)[:, None]
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    if frequencies is not None:
        div_term = div_term.to(frequencies)
    angle = position * div_term
    if angles is not None:
        angle = angle.to(angles)
    table = torch.zeros(seq_len, d_model)
    table[:, 0::2] = torch.sin(angle.float())
    table[:, 1::2] = torch.cos(angle.float())
    return table


# ---------------------------------------------------------------------------
# The cases: a factor on the values, the module's own scaled table
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seq_len, d_model", [(2048, 64), (8192, 96), (32768, 64)])
def test_x_transformers_scaled_sinusoidal_embedding_is_read_with_its_scale(seq_len: int, d_model: int) -> None:
    x_transformers = need("x_transformers")
    module = x_transformers.x_transformers.ScaledSinusoidalEmbedding(d_model)
    table = module(torch.zeros(1, seq_len, d_model)).detach().numpy()
    for keywords in ({}, {"preset": "tf-tutorial"}):
        text = diagnosis_of(table, **keywords)
        assert "the TensorFlow tutorial's convention (preset tf-tutorial, the same as marian and gpt-j)" in text
        assert "with values times sqrt(1/d) instead of 1; it reproduces every element." in text, text
        assert "--preset tf-tutorial --scale 'sqrt(1/d)' --dtype float32" in text, text
        assert_call_reproduces(text, table)


def test_the_modules_own_scaled_table_is_read() -> None:
    table = encoding(64, 16, scale="sqrt(1/d)")
    text = diagnosis_of(table)
    assert text == (
        "Diagnosis: the table follows the paper's convention (preset paper, the same as xlm, keras-hub and tatp22):"
        " sin and cos interleaved per pair, with values times sqrt(1/d) instead of 1; it reproduces every element."
        " The call that reproduces it: encoding(64, 16, scale='sqrt(1/d)') (on the command line: --scale 'sqrt(1/d)')."
    )
    assert_call_reproduces(text, table)


# ---------------------------------------------------------------------------
# Every field read: layouts, spacings, bases, positions, scales, at lengths models use
# ---------------------------------------------------------------------------

# (fields of torch_table, words the diagnosis must hold)
FITTED: List[Tuple[Dict[str, Any], str]] = [
    ({"layout": "sin-cos", "base": 500000.0}, "with base 500000 instead of 10000"),
    ({"layout": "cos-sin", "start": 7}, "all cosines then all sines, with positions from 7 instead of 0"),
    ({"spacing": "tensor2tensor", "layout": "sin-cos", "angle_scale": 3.0}, "with angles times 3 instead of 1"),
    ({"scale": 0.5}, "with values times 0.5 instead of 1"),
    ({"layout": "sin-cos", "descending": True}, "(preset transformer-xl)"),
    ({"spacing": "tensor2tensor", "layout": "sin-cos", "start": 2}, "(preset fairseq"),
    ({"base": 20000.0, "start": 1, "scale": 2.0}, "with base 20000 instead of 10000, positions from 1 instead of 0"),
    ({"base": 12345.678}, "with base 12345.6"),
]


# Every field set at 64 and 2048 rows; at 32768 rows, those that change the positions' or the angles' reading
# (base, descending, fairseq's start): the rest there with --long, as CI's time is kept under 15 minutes.
LONG_FIELDS = (1, 2, 3, 6, 7)


@pytest.mark.parametrize("fields, words", FITTED, ids=[str(i) for i in range(len(FITTED))])
@pytest.mark.parametrize("seq_len, d_model", [(64, 16), (2048, 128)])
def test_each_field_is_read_from_the_table(fields: Dict[str, Any], words: str, seq_len: int, d_model: int) -> None:
    table = torch_table(seq_len, d_model, **fields)
    report = failing(table)
    text = str(report.diagnosis)
    assert text.startswith("Diagnosis: the table follows ") and words in text, text
    assert "it reproduces every element. The call that reproduces it: encoding(" in text, text
    assert_call_reproduces(text, table)
    # torch_table's keywords are encoding()'s fields: the causes are those set otherwise than the paper's.
    assert sorted(report.causes) == sorted(fields), report.causes


@pytest.mark.parametrize(
    "case",
    [pytest.param(i, marks=pytest.mark.long) if i in LONG_FIELDS else i for i in range(len(FITTED))],
    ids=[str(i) for i in range(len(FITTED))],
)
def test_each_field_is_read_from_a_table_of_32768_rows(case: int) -> None:
    test_each_field_is_read_from_the_table(*FITTED[case], 32768, 64)


def test_a_base_no_simple_number_is_near_is_reported_as_read() -> None:
    table = torch_table(2048, 64, base=12345.678)
    text = diagnosis_of(table)
    base = float(text.split("with base ")[1].split(" instead")[0])
    assert abs(base / 12345.678 - 1) < 1e-5, text


# ---------------------------------------------------------------------------
# Stored narrow: a float32 table kept in float16 or bfloat16 passes in its format
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seq_len, d_model", [(4096, 512), (32768, 64)])
@pytest.mark.parametrize("narrow", ["float16", "bfloat16"])
def test_a_float32_table_stored_narrow_passes_in_its_format(seq_len: int, d_model: int, narrow: str) -> None:
    stored = tutorial(seq_len, d_model).to(getattr(torch, narrow))
    assert compare(stored).ok  # the tensor's own dtype
    report = compare(stored.float().tolist())  # as Python lists: float64 is asked
    assert not report.ok and report.diagnosis == (
        f"Diagnosis: every value of the table is a {narrow} number, and float64 was asked: checked as {narrow}"
        f" (dtype={narrow!r}), it passes; its values were rounded to {narrow}."
    )


def test_a_float32_table_stored_narrow_passes_by_check_file(tmp_path: Any, capsys: Any) -> None:
    """A float16 .npy file is checked in its dtype and passes; bfloat16 values (which .npy cannot hold) in a float32
    file fail as float32, with the diagnosis that they pass as bfloat16."""
    path = tmp_path / "table.npy"
    numpy.save(path, tutorial(4096, 256).half().numpy())
    status, out, err = run_main(capsys, "--check", str(path))
    assert status == 0 and not err and "float16" in out.splitlines()[0], out
    assert out.rstrip().endswith("0 of 1048576 elements outside the tolerance: within tolerance"), out
    numpy.save(path, tutorial(4096, 256).to(torch.bfloat16).float().numpy())
    status, out, err = run_main(capsys, "--check", str(path))
    assert status == 1 and not err, out
    assert out.rstrip().endswith(
        "Diagnosis: every value of the table is a bfloat16 number, and float32 was asked: checked as bfloat16"
        " (dtype='bfloat16'), it passes; its values were rounded to bfloat16."
    ), out


# ---------------------------------------------------------------------------
# Precision stories show their fingerprint
# ---------------------------------------------------------------------------


def test_frequencies_and_angles_in_float16_are_not_called_an_output_in_float16() -> None:
    table = tutorial(2000, 64, frequencies=torch.float16, angles=torch.float16)
    held = table.half().float()
    assert not torch.equal(held, table)  # the values are not float16 numbers: the output is float32
    report = failing(table.numpy())
    text = str(report.diagnosis)
    assert "with its frequencies and angles rounded to float16; it reproduces every element." in text, text
    assert "output" not in text and "positions" not in text, text
    assert report.causes == ("frequencies:float16", "angles:float16")


@pytest.mark.parametrize("seq_len", [4001, 16384])
def test_positions_in_float16_are_named_though_every_hundredth_row_is_exact(seq_len: int) -> None:
    # Megatron-LM #535: positions cast to float16; rows 0, 100, 200, ... are float16 numbers.
    table = tutorial(seq_len, 64, positions=torch.float16)
    report = failing(table.numpy())
    text = str(report.diagnosis)
    assert "with its positions rounded to float16 (it holds whole numbers exactly only up to 2048)" in text, text
    assert report.causes == ("positions:float16",)


def test_rows_zeroed_outside_the_sample_are_named_in_a_table_given_as_lists() -> None:
    table = tutorial(24000, 64)
    assert compare(table.numpy()).ok
    table[101:104] = 0
    report = failing(table.tolist())
    assert report.causes == ("output:float32", "damage")
    text = str(report.diagnosis)
    assert text.startswith(
        "Diagnosis: every value of the table is a float32 number (float64 was asked); checked as float32, the table"
        " follows the paper convention except for row 101, all zeros"
    ), text
    assert "row 102, all zeros" in text and "row 103, all zeros" in text, text


def test_a_plain_float32_table_is_not_called_float16() -> None:
    table = tutorial(24000, 64)
    assert compare(table.numpy()).ok
    text = diagnosis_of(table.tolist())
    assert "float16" not in text, text


# ---------------------------------------------------------------------------
# The mistakes users report (issue 29's families 1 to 3), named without options
# ---------------------------------------------------------------------------


def numpy_table(angles: Any) -> Any:
    """The interleaved float32 table of these angles, one column of them per pair, as the reports write it."""
    seq_len, pairs = angles.shape
    table = numpy.zeros((seq_len, 2 * pairs), dtype=numpy.float32)
    table[:, 0::2] = numpy.sin(angles)
    table[:, 1::2] = numpy.cos(angles)
    return table


def div_term(d_model: int) -> Any:
    return numpy.exp(numpy.arange(0, d_model, 2, dtype=numpy.float32) * numpy.float32(-math.log(10000.0) / d_model))


# The 16384-row cases with --long: CI's time is kept under 15 minutes.
@pytest.mark.parametrize("seq_len, d_model", [(2048, 256), pytest.param(16384, 512, marks=pytest.mark.long)])
def test_an_exponent_of_the_column_not_the_pair_is_named(seq_len: int, d_model: int) -> None:
    # pe[pos, j] = sin or cos of pos / 10000**(2*j/d) for column j: the most reported mistake.
    positions = numpy.arange(seq_len, dtype=numpy.float32)[:, None]
    columns = numpy.arange(d_model, dtype=numpy.float32)[None, :]
    angles = positions / numpy.power(numpy.float32(10000.0), 2 * columns / d_model)
    table = numpy.where(columns % 2 == 0, numpy.sin(angles), numpy.cos(angles)).astype(numpy.float32)
    text = diagnosis_of(table)
    assert (
        "a known mistake: every column's own index j in the exponent, base**(-2j/d), instead of the pair's 2i" in text
    )
    assert "it reproduces every element" in text, text


@pytest.mark.parametrize("computed", ["float32", "float64"])
@pytest.mark.parametrize("seq_len, d_model", [(2048, 256), (4096, 512)])
def test_inverted_frequencies_are_named_and_what_cannot_be_judged_is_said(
    seq_len: int, d_model: int, computed: str
) -> None:
    # Computed in float32 as the reports do, or in float64 (the frequencies as the mistake's own, 1 / 10000**(-2i/d))
    # and stored in float32: every row then within the least allowance any element has, even where not judged.
    frequencies = numpy.array([1.0 / math.pow(10000.0, -(2 * (c // 2) / d_model)) for c in range(d_model)])
    if computed == "float32":
        table = numpy_table(numpy.arange(seq_len, dtype=numpy.float32)[:, None] / div_term(d_model)[None, :])
    else:
        table = numpy_table(numpy.arange(seq_len, dtype=numpy.float64)[:, None] * frequencies[None, 0::2])
    text = diagnosis_of(table)
    assert "a known mistake: the frequencies inverted, the angle pos * base**(2i/d)" in text, text
    # Most angles pass what float32 holds to 2**-4: the story says how many elements it judged, those whose
    # growth 1 + pos * w keeps the default rule's 2**-19 (1 + |angle|) within 2**-4, for the inverted frequency
    # w = 1 / 10000**(-2i/d) of each column's pair i.
    judged = text.split("it judges ")[1].split(" of their ")[0]
    growths = 1.0 + numpy.arange(seq_len, dtype=numpy.float64)[:, None] * frequencies[None, :]
    assert int(judged) == int(numpy.count_nonzero(2.0**-19 * growths <= 2.0**-4)), text


@pytest.mark.parametrize("seq_len, d_model", [(2048, 256), pytest.param(16384, 256, marks=pytest.mark.long)])
def test_positions_that_are_no_progression_are_read_row_by_row(seq_len: int, d_model: int) -> None:
    # One position broadcast to every row (an index slip), and positions that restart with each packed sequence.
    same = numpy_table(numpy.full((seq_len, 1), 5.0, dtype=numpy.float32) * div_term(d_model)[None, :])
    text = diagnosis_of(same)
    assert "with every row at position 5 (one position given to every row); it reproduces every element." in text
    assert_call_reproduces(text, same, positions=[5] * seq_len)
    restarting = numpy.arange(seq_len) % 512
    packed = numpy_table(restarting.astype(numpy.float32)[:, None] * div_term(d_model)[None, :])
    text = diagnosis_of(packed)
    runs = seq_len // 512
    assert (
        f"with {runs} runs of consecutive positions: rows 0 to 511 at positions 0 to 511, rows 512 to 1023 at"
        " positions 0 to 511" in text
    ), text
    assert_call_reproduces(text, packed, positions=list(restarting))


# Each family stored narrow: computed in float32 by numpy as the reports write it, then cast to float16 or
# bfloat16 by torch (pe.half(), a bfloat16 model's buffer). name -> (the float32 table, the story's phrase, the
# positions the printed call names, None for a mistake that has no call).
def exponent_of_the_column(seq_len: int, d_model: int) -> Any:
    positions = numpy.arange(seq_len, dtype=numpy.float32)[:, None]
    columns = numpy.arange(d_model, dtype=numpy.float32)[None, :]
    angles = positions / numpy.power(numpy.float32(10000.0), 2 * columns / d_model)
    return numpy.where(columns % 2 == 0, numpy.sin(angles), numpy.cos(angles)).astype(numpy.float32)


def at_positions(positions: Any, d_model: int) -> Any:
    return numpy_table(numpy.asarray(positions, dtype=numpy.float32)[:, None] * div_term(d_model)[None, :])


REPORTED: Dict[str, Tuple[Any, str, Any]] = {
    "exponent of the column": (
        exponent_of_the_column,
        "a known mistake: every column's own index j in the exponent, base**(-2j/d), instead of the pair's 2i",
        None,
    ),
    "frequencies inverted": (
        lambda n, d: numpy_table(numpy.arange(n, dtype=numpy.float32)[:, None] / div_term(d)[None, :]),
        "a known mistake: the frequencies inverted, the angle pos * base**(2i/d)",
        None,
    ),
    "one position on every row": (
        lambda n, d: at_positions([5] * n, d),
        "with every row at position 5 (one position given to every row); it reproduces every element.",
        lambda n: [5] * n,
    ),
    "packed sequences": (
        lambda n, d: at_positions([r % 512 for r in range(n)], d),
        "runs of consecutive positions: rows 0 to 511 at positions 0 to 511, rows 512 to 1023 at positions 0 to 511",
        lambda n: [r % 512 for r in range(n)],
    ),
    "an offset": (
        lambda n, d: at_positions([r + 1000 for r in range(n)], d),
        "with positions from 1000 instead of 0; it reproduces every element.",
        lambda n: None,
    ),
}


@pytest.mark.parametrize("narrow, seq_len, d_model", [("float16", 4096, 128), ("bfloat16", 1024, 384)])
@pytest.mark.parametrize("case", list(REPORTED))
def test_a_reported_mistake_stored_narrow_is_named(case: str, narrow: str, seq_len: int, d_model: int) -> None:
    build, phrase, positions = REPORTED[case]
    table = torch.from_numpy(build(seq_len, d_model)).to(getattr(torch, narrow))
    text = diagnosis_of(table)  # no options: the format is the tensor's
    assert phrase in text and "it reproduces every element" in text, text
    if positions is not None:
        assert f"dtype={narrow!r}" in text, text
        assert_call_reproduces(text, table, positions=positions(seq_len))


@pytest.mark.parametrize("case", list(REPORTED))
def test_a_reported_mistake_is_named_by_check_file(case: str, tmp_path: Any, capsys: Any) -> None:
    """--check FILE: float16 in the .npy file's own dtype; bfloat16, which .npy cannot hold, as float32 values."""
    build, phrase, _ = REPORTED[case]
    narrow = "bfloat16" if list(REPORTED).index(case) % 2 else "float16"
    stored = torch.from_numpy(build(2048, 256)).to(getattr(torch, narrow))
    path = tmp_path / "table.npy"
    numpy.save(path, stored.float().numpy() if narrow == "bfloat16" else stored.numpy())
    status, out, err = run_main(capsys, "--check", str(path))
    assert status == 1 and not err, (out, err)
    diagnosis = out[out.index("Diagnosis: ") :]
    assert phrase in diagnosis, diagnosis
    if narrow == "bfloat16":
        assert diagnosis.startswith(
            "Diagnosis: every value of the table is a bfloat16 number (float32 was asked); checked as bfloat16, the table"
        ), diagnosis


# ---------------------------------------------------------------------------
# Half precision: a reading is as precise as the values, and the presets come first
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, fields",
    [((8, 16), {"preset": "fairseq"}), ((64, 64), {"preset": "tensor2tensor"}), ((512, 128), {"scale": "sqrt(3)"})],
)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_an_exact_half_precision_table_is_told_without_numbers_read_from_its_noise(
    shape: Tuple[int, int], fields: Dict[str, Any], dtype: str
) -> None:
    table = encoding(*shape, exact=True, dtype=dtype, **fields)
    text = diagnosis_of(table, dtype=dtype)
    assert "; it reproduces every element. The call that reproduces it: " in text, text
    assert "except for" not in text and "." not in text.split("base ")[-1].split(" ")[0], text
    assert_call_reproduces(text, table)


def test_values_the_fit_cannot_read_give_a_diagnosis_not_an_exception() -> None:
    table = encoding(8, 4, preset="tensor2tensor")
    table[1][0] = math.nan  # on a row the fit reads
    assert "1 element is not a finite number: [1][0] is nan" in diagnosis_of(table)
    assert diagnosis_of([[x * 1e200 for x in row] for row in encoding(8, 4)]).startswith("Diagnosis: ")


def test_angles_in_float16_are_named_in_a_table_stored_in_float16() -> None:
    angles = tutorial(300, 8, angles=torch.float16)
    text = diagnosis_of(angles.half().float().tolist())
    assert text == (
        "Diagnosis: every value of the table is a float16 number (float64 was asked); checked as float16, the table"
        " follows the paper convention with its angles rounded to float16; it reproduces every element."
    )
