"""The diagnosis of compare(), on damaged and mistaken tables.

The sections up to 6 build each table from a framework's own formula (numpy
or torch peer code, not pe_reference's encoding), except where a test says
so: the isolated-element test and the 1e-3 test start from pe_reference's
exact values, which are the reference by definition.  Sections 7 and 8 put
a known fault into the exact table by hand, or build a known mistake from
the formula, without the peers.  A test asserts that the report fails (or
passes) and that the diagnosis names the explanation.
"""

import math
import random
import struct
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

import pe_reference
from pe_reference import Report, compare, encoding
from tests import reference
from tests.helpers import assert_call_reproduces, need, peer, run_main

numpy: Any = peer("numpy")  # imported where a test uses it: the others run without the peers
torch: Any = peer("torch")


def paper_torch_float32(seq_len: int, d_model: int) -> Any:
    """tests.peer_tables' table, imported once a test asks for it (that module imports torch)."""
    need("torch")
    from tests.peer_tables import paper_torch_float32 as made

    return made(seq_len, d_model)


DTYPES = ["float64", "float32", "float16", "bfloat16"]


def diagnosis_of(table: object, **keywords: Any) -> str:
    """The diagnosis of a table that must not pass."""
    report = compare(table, **keywords)
    assert not report.ok, str(report)
    assert report.diagnosis is not None and report.diagnosis.startswith("Diagnosis: "), str(report)
    return report.diagnosis


def round_to(x: float, dtype: str) -> float:
    """x stored in dtype (round to nearest even), as a Python float."""
    return float(torch.tensor([x], dtype=getattr(torch, dtype)).item())


def next_up(x: float, dtype: str) -> float:
    """The next number of dtype above x (x held by dtype)."""
    kind = getattr(torch, dtype)
    here = torch.tensor([x], dtype=kind)
    return float(torch.nextafter(here, torch.tensor([math.inf], dtype=kind)).item())


# ---------------------------------------------------------------------------
# Peers: tables as the frameworks build them
# ---------------------------------------------------------------------------


def paper_numpy(seq_len: int, d_model: int, start: int = 0, base: float = 10000.0) -> Any:
    """The paper's interleaved table in numpy float64: pos * exp(2i * -(ln(base)/d))."""
    position = numpy.arange(start, start + seq_len, dtype=numpy.float64)[:, None]
    frequency = numpy.exp(numpy.arange(0, d_model, 2) * -(math.log(base) / d_model))
    table = numpy.zeros((seq_len, d_model))
    table[:, 0::2] = numpy.sin(position * frequency)
    table[:, 1::2] = numpy.cos(position * frequency[: d_model // 2])
    return table


def paper_numpy_float32(seq_len: int, d_model: int) -> Any:
    """The same formula with every step in float32."""
    position = numpy.arange(seq_len, dtype=numpy.float32)[:, None]
    frequency = numpy.exp(
        numpy.arange(0, d_model, 2, dtype=numpy.float32) * numpy.float32(-math.log(10000.0) / d_model)
    )
    table = numpy.zeros((seq_len, d_model), dtype=numpy.float32)
    table[:, 0::2] = numpy.sin(position * frequency)
    table[:, 1::2] = numpy.cos(position * frequency)
    return table


def m2m100_torch(num_embeddings: int, d_model: int, padding_idx: int = 1) -> Any:
    """fairseq's / HF M2M100's SinusoidalPositionalEmbedding.get_embedding, in torch float32."""
    half_dim = d_model // 2
    step = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.int64).float() * -step)
    emb = torch.arange(num_embeddings, dtype=torch.int64).float().unsqueeze(1) * emb.unsqueeze(0)
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
    if d_model % 2 == 1:
        emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
    emb[padding_idx, :] = 0
    return emb


def tensor2tensor_numpy(seq_len: int, d_model: int) -> Any:
    """tensor2tensor's get_timing_signal_1d in numpy float64: [sin | cos], increment ln(base)/(h-1)."""
    half = d_model // 2
    increment = math.log(10000.0) / max(half - 1, 1)
    inverse = numpy.exp(numpy.arange(half) * -increment)
    scaled = numpy.arange(seq_len)[:, None] * inverse[None, :]
    table = numpy.concatenate([numpy.sin(scaled), numpy.cos(scaled)], axis=1)
    return numpy.pad(table, [[0, 0], [0, d_model % 2]])


def tensor2tensor_torch(seq_len: int, d_model: int) -> Any:
    half = d_model // 2
    increment = math.log(10000.0) / max(half - 1, 1)
    inverse = torch.exp(torch.arange(half, dtype=torch.float32) * -increment)
    scaled = torch.arange(seq_len, dtype=torch.float32)[:, None] * inverse[None, :]
    return torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=1)


def guided_diffusion_torch(seq_len: int, d_model: int) -> Any:
    """guided-diffusion's timestep_embedding: [cos | sin], exp(-ln(10000) * arange(half) / half)."""
    half = d_model // 2
    frequencies = torch.exp(-math.log(10000.0) * torch.arange(start=0, end=half, dtype=torch.float32) / half)
    arguments = torch.arange(seq_len, dtype=torch.float32)[:, None] * frequencies[None]
    table = torch.cat([torch.cos(arguments), torch.sin(arguments)], dim=-1)
    if d_model % 2:
        table = torch.cat([table, torch.zeros_like(table[:, :1])], dim=-1)
    return table


def tf_tutorial_numpy(seq_len: int, d_model: int) -> Any:
    """The TensorFlow tutorial's positional_encoding: [sin | cos], paper spacing."""
    depth = d_model / 2
    depths = numpy.arange(depth)[None, :] / depth
    angle_rates = 1 / (10000**depths)
    angle_rads = numpy.arange(seq_len)[:, None] * angle_rates
    return numpy.concatenate([numpy.sin(angle_rads), numpy.cos(angle_rads)], axis=-1).astype(numpy.float32)


def marian_numpy(n_pos: int, dim: int) -> Any:
    """HF Marian's _init_weight: sines of even j then cosines of odd j, width dim (odd or even)."""
    position_enc = numpy.array(
        [[pos / numpy.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)]
    )
    out = numpy.zeros((n_pos, dim), dtype=numpy.float32)
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out[:, 0:sentinel] = numpy.sin(position_enc[:, 0::2])
    out[:, sentinel:] = numpy.cos(position_enc[:, 1::2])
    return out


def rounded_step_torch(seq_len: int, d_model: int, step: str) -> Any:
    """A rotary-style float32 pipeline for the paper's interleaved table, with one step rounded.

    angles: the angle table cast to float16 before sin/cos (EleutherAI/gpt-neox #1003);
    frequencies: inv_freq cast to bfloat16 (tenstorrent/tt-metal #54516);
    positions: arange made in bfloat16 (HF transformers #28685, DeepSpeed zero.Init);
    output: the table cast to bfloat16 and back.
    """
    position = torch.arange(seq_len, dtype=torch.bfloat16 if step == "positions" else torch.float32).float()
    inv_freq = 1.0 / (10000 ** (torch.arange(0, d_model, 2, dtype=torch.int64).float() / d_model))
    if step == "frequencies":
        inv_freq = inv_freq.to(torch.bfloat16).float()
    angles = torch.outer(position, inv_freq)
    if step == "angles":
        angles = angles.to(torch.float16).float()
    table = torch.zeros(seq_len, d_model)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    if step == "output":
        table = table.to(torch.bfloat16).float()
    return table


# ---------------------------------------------------------------------------
# 1. Isolated element changes
# ---------------------------------------------------------------------------


def test_isolated_element_changes_are_found_at_their_place() -> None:
    rng = random.Random(2026)
    trials, found = 1200, 0
    missed: List[Tuple[int, int, str, int, int, float, float, str]] = []
    began = time.perf_counter()
    for _ in range(trials):
        seq_len, d_model = rng.randint(2, 40), rng.randint(2, 32)
        dtype = rng.choice(["float64", "float32"])
        table = encoding(seq_len, d_model, exact=True, dtype=dtype)
        r, c = rng.randrange(seq_len), rng.randrange(d_model)
        old = table[r][c]
        while True:
            if rng.random() < 0.5:
                amount = rng.uniform(0.01, 0.1) * rng.choice([-1, 1])
                new = round_to(old + amount, dtype)
            else:
                new = round_to(rng.uniform(-1.5, 1.5), dtype)
            if abs(new - old) >= 0.01 and -1.5 <= new <= 1.5:
                break
        table[r][c] = new
        report = compare(table, dtype=dtype)
        assert not report.ok
        if report.diagnosis is not None and f"except for 1 element: [{r}][{c}] is {new!r}" in report.diagnosis:
            found += 1
        else:
            missed.append((seq_len, d_model, dtype, r, c, old, new, str(report.diagnosis)))
    elapsed = time.perf_counter() - began
    print(f"\n{found} of {trials} isolated changes found ({100 * found / trials:.2f}%) in {elapsed:.1f} s")
    for case in missed[:10]:
        print("missed:", case)
    assert found >= 0.99 * trials, missed[:10]


@pytest.mark.parametrize("c", [20, 11])
@pytest.mark.parametrize("r", [77, 513, 2049, 3000, 4095])
def test_a_mistakes_story_finds_an_element_just_beyond_its_allowance_on_any_row(r: int, c: int) -> None:
    # The column-exponent mistake computed in float64 and stored in float32, as its candidate computes it: its
    # errors are 0 but for the element moved.  Its allowance in float32 is the rule's t = 2**-18 (1 + p w), capped
    # at the larger of 2**-10 and the default rule's 2**-19 (1 + p w): column 20 is below the cap on these rows
    # (p w < 255), column 11 past it from row 1243 on.  Moved just beyond it, the element is damage; just
    # within, it is not.
    seq_len, d_model = 4096, 128
    w = 1.0 / numpy.power(10000.0, 2 * numpy.arange(d_model) / d_model)
    angles = numpy.arange(seq_len, dtype=numpy.float64)[:, None] * w[None, :]
    exact = numpy.where(numpy.arange(d_model) % 2 == 0, numpy.sin(angles), numpy.cos(angles))
    growth = 1.0 + r * w[c]
    allowance = min(2.0**-18 * growth, max(2.0**-10, 2.0**-19 * growth))
    for share, damaged in ((1.015, True), (0.985, False)):
        table = exact.astype(numpy.float32)
        table[r, c] = numpy.float32(exact[r, c] + share * allowance)
        error = abs(float(table[r, c]) - float(exact[r, c].astype(numpy.float32)))
        assert abs(error / allowance - share) < 0.005  # float32 holds the moved value closely enough
        text = diagnosis_of(table)
        assert "a known mistake: every column's own index j in the exponent" in text, text
        assert (f"except for 1 element: [{r}][{c}] is" in text) == damaged, text


# ---------------------------------------------------------------------------
# 2. Moved and zeroed rows
# ---------------------------------------------------------------------------

# (make a table of n rows of the convention, the keywords compare() checks it with)
ROW_TABLES: Dict[str, Tuple[Callable[[int], Any], Dict[str, Any]]] = {
    "paper-torch": (lambda n: paper_torch_float32(n, 16), {"dtype": "float32"}),
    # Rows 2.. of M2M100's table: positions 2.., fairseq's convention.
    "m2m100-torch": (lambda n: m2m100_torch(n + 2, 16)[2:], {"preset": "fairseq", "dtype": "float32"}),
}


@pytest.mark.parametrize("name", sorted(ROW_TABLES))
def test_undamaged_row_tables_pass(name: str) -> None:
    make, keywords = ROW_TABLES[name]
    report = compare(make(30), **keywords)
    assert report.ok, str(report)


@pytest.mark.parametrize("name", sorted(ROW_TABLES))
@pytest.mark.parametrize("seq_len, row", [(30, 5), (30, 0), (30, 28), (300, 150)])
def test_swapped_rows(name: str, seq_len: int, row: int) -> None:
    make, keywords = ROW_TABLES[name]
    table = make(seq_len).clone()
    table[[row, row + 1]] = table[[row + 1, row]]
    text = diagnosis_of(table, **keywords)
    assert text.endswith(f"convention except for rows {row} and {row + 1}, swapped."), text


@pytest.mark.parametrize("name", sorted(ROW_TABLES))
@pytest.mark.parametrize("seq_len, row", [(20, 7), (30, 1), (300, 150)])
def test_a_deleted_row(name: str, seq_len: int, row: int) -> None:
    make, keywords = ROW_TABLES[name]
    full = make(seq_len + 1)
    table = torch.cat([full[:row], full[row + 1 :]])
    assert table.shape[0] == seq_len
    text = diagnosis_of(table, **keywords)
    expected = f"convention except for rows {row} to {seq_len - 1}, each one position later (as if a row were missing before them)."
    assert text.endswith(expected), text


@pytest.mark.parametrize("name", sorted(ROW_TABLES))
@pytest.mark.parametrize("seq_len, row", [(20, 6), (30, 0), (300, 150)])
def test_a_duplicated_row(name: str, seq_len: int, row: int) -> None:
    make, keywords = ROW_TABLES[name]
    full = make(seq_len)
    table = torch.cat([full[: row + 1], full[row : row + 1], full[row + 1 : seq_len - 1]])
    assert table.shape[0] == seq_len
    text = diagnosis_of(table, **keywords)
    expected = (
        f"convention except for rows {row + 1} to {seq_len - 1}, each one position earlier"
        " (as if a row were repeated before them)."
    )
    assert text.endswith(expected), text


@pytest.mark.parametrize("num_embeddings, d_model", [(40, 16), (128, 64), (30, 9)])
def test_m2m100_table_with_its_padding_row(num_embeddings: int, d_model: int) -> None:
    table = m2m100_torch(num_embeddings, d_model)
    text = diagnosis_of(table, preset="fairseq", dtype="float32")
    # Whisper's table is the same for an even d_model only (it refuses an odd one).
    family = (
        "(preset tensor2tensor, the same as whisper, diffusers and pyg)"
        if d_model % 2 == 0
        else "(preset tensor2tensor, the same as diffusers)"
    )
    assert f"the table follows tensor2tensor's convention {family}" in text, text
    assert "except for row 1, all zeros (as the row of a padding index is)." in text, text
    assert_call_reproduces(text, table)
    # The rows of real positions, 2.., are fairseq's table.
    report = compare(table[2:], preset="fairseq", dtype="float32")
    assert report.ok, str(report)


# ---------------------------------------------------------------------------
# 3. Conventions named
# ---------------------------------------------------------------------------

CONVENTIONS = [
    ("tensor2tensor-numpy", lambda: tensor2tensor_numpy(50, 16), "tensor2tensor", "float64"),
    ("tensor2tensor-numpy-odd", lambda: tensor2tensor_numpy(50, 15), "tensor2tensor", "float64"),
    ("tensor2tensor-torch", lambda: tensor2tensor_torch(64, 32), "tensor2tensor", "float32"),
    ("guided-diffusion-torch", lambda: guided_diffusion_torch(64, 32), "guided-diffusion", "float32"),
    ("guided-diffusion-torch-odd", lambda: guided_diffusion_torch(50, 17), "guided-diffusion", "float32"),
    ("tf-tutorial-numpy", lambda: tf_tutorial_numpy(64, 32), "tf-tutorial", "float32"),
    ("marian-numpy-even", lambda: marian_numpy(64, 32), "tf-tutorial", "float32"),
]


@pytest.mark.parametrize("d_model", [9, 33])
def test_marian_odd_width_is_named(d_model: int) -> None:
    table = marian_numpy(40, d_model)
    text = diagnosis_of(table, dtype="float32")
    assert "the table follows HF Marian's and Pegasus's convention (preset marian):" in text, text
    assert compare(table, dtype="float32", preset="marian").ok
    assert compare(table, dtype="float32", layout="sin-cos", odd="sine").ok
    assert compare(table, dtype="float32", preset="tf-tutorial", odd="sine").ok


def test_positions_from_3() -> None:
    table = paper_numpy(40, 16, start=3)
    text = diagnosis_of(table)
    assert (
        "(preset paper, the same as xlm, keras-hub and tatp22): sin and cos interleaved per pair,"
        " with positions from 3 instead of 0; it reproduces every element. The call that reproduces it:"
        " encoding(40, 16, start=3) (on the command line: --start 3)."
    ) in text, text
    assert_call_reproduces(text, table)


@pytest.mark.parametrize("d_model", [4, 6, 16])
@pytest.mark.parametrize("angle_scale, start", [(1.5, 0), (1.5, 3), (3, 0)])
def test_an_angle_scale_past_1_is_read_at_every_width(d_model: int, angle_scale: float, start: int) -> None:
    # Pair 0 turns more than 1 radian a row: at d_model 4 it is one of the two pairs the fit's slope is read from.
    table = encoding(64, d_model, angle_scale=angle_scale, start=start)
    call = f"encoding(64, {d_model}, angle_scale={angle_scale}" + (f", start={start})" if start else ")")
    text = diagnosis_of(table)
    assert "it reproduces every element" in text and f"The call that reproduces it: {call}" in text, text
    assert_call_reproduces(text, table)


def test_base_1000() -> None:
    table = paper_numpy(40, 16, base=1000.0)
    text = diagnosis_of(table)
    assert "sin and cos interleaved per pair, with base 1000 instead of 10000; it reproduces every element." in text, (
        text
    )
    assert_call_reproduces(text, table)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_are_named(dtype: str) -> None:
    assert diagnosis_of(numpy.zeros((30, 16)), dtype=dtype) == "Diagnosis: every element of the table is 0."


@pytest.mark.parametrize("shape", [(30, 16), (16, 30), (64, 8)])
def test_a_transposed_table(shape: Tuple[int, int]) -> None:
    seq_len, d_model = shape
    table = paper_numpy(d_model, seq_len).T  # d_model positions of seq_len columns, transposed
    assert table.shape == shape
    text = diagnosis_of(table)
    assert "the table follows the transposed table: rows are dimensions, columns positions" in text, text


# ---------------------------------------------------------------------------
# 4. Precision mistakes, one step rounded
# ---------------------------------------------------------------------------

STEPS = [
    ("angles", 200, "the table follows the paper convention with its angles rounded to float16;"),
    ("frequencies", 200, "the table follows the paper convention with its frequencies rounded to bfloat16;"),
    (
        "positions",
        600,
        "the table follows the paper convention with its positions rounded to bfloat16"
        " (it holds whole numbers exactly only up to 256);",
    ),
    # Computed in float32 and stored in bfloat16: a bfloat16 table, which passes as one.
    (
        "output",
        200,
        "every value of the table is a bfloat16 number, and float32 was asked: checked as bfloat16"
        " (dtype='bfloat16'), it passes; its values were rounded to bfloat16.",
    ),
]


@pytest.mark.parametrize("step, seq_len, expected", STEPS, ids=[case[0] for case in STEPS])
@pytest.mark.parametrize("d_model", [64, 128])
def test_a_rounded_step_is_named(step: str, seq_len: int, expected: str, d_model: int) -> None:
    table = rounded_step_torch(seq_len, d_model, step)
    assert compare(rounded_step_torch(seq_len, d_model, "none"), dtype="float32").ok
    text = diagnosis_of(table, dtype="float32")
    assert expected in text, text


# ---------------------------------------------------------------------------
# 5. Faithful tables pass
# ---------------------------------------------------------------------------


def test_numpy_float64_formula_passes() -> None:
    report = compare(paper_numpy(2000, 128))
    assert report.ok, str(report)
    assert report.diagnosis is None


@pytest.mark.parametrize("seq_len, d_model", [(2000, 64), (2048, 16)])
def test_numpy_float32_pipeline_passes_as_float32(seq_len: int, d_model: int) -> None:
    report = compare(paper_numpy_float32(seq_len, d_model), dtype="float32")
    assert report.ok, str(report)


def test_strict_tolerance_on_a_faithful_float32_table_says_so() -> None:
    table = paper_numpy_float32(300, 32)
    report = compare(table, dtype="float32", atol=0)
    assert not report.ok
    assert report.diagnosis is not None
    assert report.diagnosis.startswith(
        "Diagnosis: every element is within the default tolerance of the paper convention"
    ), report.diagnosis


# ---------------------------------------------------------------------------
# 6. Never passes by default
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 2), (200, 64), (2000, 16)])
def test_zeros_never_pass(dtype: str, shape: Tuple[int, int]) -> None:
    report = compare(numpy.zeros(shape), dtype=dtype)
    assert not report.ok
    assert report.diagnosis == "Diagnosis: every element of the table is 0."


def test_a_wrong_convention_in_bfloat16_does_not_pass() -> None:
    table = tensor2tensor_torch(512, 64).to(torch.bfloat16)
    report = compare(table.float(), dtype="bfloat16")
    assert not report.ok
    text = str(report.diagnosis)
    assert "(preset tensor2tensor, the same as whisper, diffusers and pyg)" in text, text


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_missing_row_never_passes(dtype: str) -> None:
    full = paper_numpy(65, 32)
    table = numpy.delete(full, 40, axis=0)
    text = diagnosis_of(table, dtype=dtype)
    assert "rows 40 to 63, each one position later (as if a row were missing before them)" in text, text


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sign", [1, -1])
def test_an_element_off_by_1e_3_never_passes(dtype: str, sign: int) -> None:
    # Where the element is not coarse (angles up to 511 in a format computed in float32), and beyond the
    # format's own step at the value (2**-p |value|: a bfloat16 value near 1 is 2**-8 from its neighbours).
    seq_len, d_model = 1000 if dtype == "float64" else 512, 16
    precision = {"float64": 53, "float32": 24, "bfloat16": 8, "float16": 11}[dtype]
    base = encoding(seq_len, d_model, exact=True, dtype=dtype)
    rng = random.Random(1000 + DTYPES.index(dtype))
    places = [(0, 0), (0, 1), (1, 0), (seq_len - 1, 0), (seq_len - 1, d_model - 1), (seq_len // 2, d_model // 2)]
    places += [(rng.randrange(seq_len), rng.randrange(d_model)) for _ in range(10)]
    for r, c in places:
        old = base[r][c]
        new = round_to(old + sign * 1e-3, dtype)
        true = float(reference.element(r, c, d_model, 10000))  # the error is measured from the true value
        while abs(new - true) < 1e-3 + 2.0**-precision * abs(new):
            new = next_up(new, dtype) if sign > 0 else -next_up(-new, dtype)
        assert abs(new - old) >= 1e-3
        table = [list(row) for row in base]
        table[r][c] = new
        report = compare(table, dtype=dtype)
        assert report.coarse == 0 and not report.ok, (r, c, str(report))
        assert report.diagnosis is not None and f"1 element: [{r}][{c}] is {new!r}" in report.diagnosis, (
            report.diagnosis
        )


# The framework presets' own tables are checked in tests/test_conventions.py, built by the frameworks' code.
FRAMEWORKS = CONVENTIONS


@pytest.mark.parametrize("name, make, preset, dtype", FRAMEWORKS, ids=[case[0] for case in FRAMEWORKS])
def test_each_framework_table_passes_with_its_preset_and_is_named_without(
    name: str, make: Callable[[], Any], preset: str, dtype: str
) -> None:
    table = make()
    report = compare(table, dtype=dtype, preset=preset)
    assert report.ok, str(report)
    # Each table is given its own dtype: the report says the data said so.
    origin = "the tensor's dtype" if str(table.dtype).startswith("torch.") else "the array's dtype"
    assert f"exact {dtype} values ({origin}) of the {preset} convention" in str(report), str(report)
    text = diagnosis_of(table, dtype=dtype)
    assert text.startswith("Diagnosis: the table follows "), text
    # Named by its preset, or by the family of presets that make the same table.
    family = text[text.index("(preset ") : text.index("):")]
    assert preset in family, text
    assert "; it reproduces every element. The call that reproduces it: encoding(" in text, text
    assert_call_reproduces(text, table)


# ---------------------------------------------------------------------------
# 7. Local damage, and the candidates tried: known faults put in by hand, known mistakes built from the formula
# ---------------------------------------------------------------------------


EXCEPT = "Diagnosis: the table follows the paper convention except for "


@pytest.mark.parametrize("offset", [k for k in range(-8, 9) if k])
def test_a_row_holding_the_values_of_a_row_up_to_8_away_is_named(offset: int) -> None:
    table = encoding(20, 8, exact=True)
    table[9] = list(table[9 + offset])
    assert compare(table).diagnosis == EXCEPT + f"row 9, which holds row {9 + offset}'s values."


def test_a_column_wrong_in_three_quarters_of_the_rows_is_a_wrong_column() -> None:
    table = encoding(8, 16, exact=True)
    for r in range(2, 8):  # 6 of 8 rows: exactly three quarters
        table[r][5] = 0.25
    assert compare(table).diagnosis == EXCEPT + "column 5, which matches no column."


def test_damage_is_local_only_while_it_covers_at_most_a_quarter_of_the_cells() -> None:
    wrong = [0.3, -0.3, 0.2, 0.7, 0.3, -0.3, 0.2, 0.7]
    table = encoding(12, 8, exact=True)
    table[1] = list(wrong)  # 8 of 96 cells
    assert compare(table).diagnosis == EXCEPT + "row 1, which matches no nearby position."
    table = encoding(3, 8, exact=True)
    table[1] = list(wrong)  # 8 of 24 cells: a third of the table is not local damage
    diagnosis = compare(table).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table")


@pytest.mark.parametrize(
    "preset, words",
    [
        ("mlx", "MLX's SinusoidalPositionalEncoding convention (preset mlx)"),
        ("transformer-xl", "Transformer-XL's convention (preset transformer-xl)"),
    ],
)
def test_a_preset_without_an_odd_rule_is_a_candidate_at_an_even_width(preset: str, words: str) -> None:
    # No other preset makes these tables, so only the preset itself, a candidate at even widths, names them.
    diagnosis = compare(encoding(6, 8, preset=preset)).diagnosis
    assert (
        diagnosis
        == f"Diagnosis: the table follows {words}: "
        + {
            "mlx": "frequencies from 1 to 1e-4, all sines then all cosines, values times sqrt(2/d)",
            "transformer-xl": "all sines then all cosines, positions descending to 0",
        }[preset]
        + "; it reproduces every element. The call that reproduces it:"
        + f" encoding(6, 8, preset={preset!r}) (on the command line: --preset {preset})."
    )


def test_a_presets_table_with_another_base_is_described_as_that_preset_with_the_base() -> None:
    diagnosis = compare(encoding(6, 8, preset="tensor2tensor", base=500), base=500).diagnosis
    assert diagnosis is not None
    assert diagnosis.startswith("Diagnosis: the table follows tensor2tensor's convention (preset tensor2tensor")
    assert diagnosis.endswith(
        "frequencies spaced by i/(h-1), with base 500 instead of 10000; it reproduces every element. The call that"
        " reproduces it:"
        " encoding(6, 8, preset='tensor2tensor', base=500) (on the command line: --preset tensor2tensor --base 500)."
    )


def test_several_local_faults_are_joined_by_semicolons_and_a_last_and() -> None:
    table = encoding(20, 8, exact=True)
    table[3][5] = 0.5  # column 5 is the cosine of pair 2: cos(3 / 10000**(4/8)) = cos(0.03)
    table[7] = [0.0] * 8
    table[12] = [0.0] * 8
    padding = "all zeros (as the row of a padding index is)"
    assert compare(table).diagnosis == EXCEPT + (
        f"1 element: [3][5] is 0.5, expected {math.cos(0.03):.6g}; row 7, {padding}; and row 12, {padding}."
    )


@pytest.mark.parametrize("d_model, local", [(16, 2), (32, 4)])
def test_wrong_columns_are_local_damage_up_to_an_eighth_of_d_model_or_two(d_model: int, local: int) -> None:
    columns = [1, 5, 9, 13, 17][: local + 1]
    table = encoding(8, d_model, exact=True)
    for c in columns[:local]:
        for row in table:
            row[c] = 0.25
    named = [f"column {c}, which matches no column" for c in columns[:local]]
    assert compare(table).diagnosis == EXCEPT + "; ".join(named[:-1]) + "; and " + named[-1] + "."
    for row in table:
        row[columns[local]] = 0.25  # one more column than d_model allows
    diagnosis = compare(table).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table")


def test_damage_is_local_only_while_it_touches_at_most_a_quarter_of_the_rows() -> None:
    # 12 rows: at most 3 damaged rows are local damage, however few cells each holds.
    faults = [(1, 0, math.sin(1)), (4, 2, math.sin(0.4)), (7, 4, math.sin(0.07)), (10, 6, math.sin(0.01))]
    table = encoding(12, 8, exact=True)
    for r, c, _ in faults[:3]:
        table[r][c] = 0.5
    named = ", ".join(f"[{r}][{c}] is 0.5, expected {value:.6g}" for r, c, value in faults[:3])
    assert compare(table).diagnosis == EXCEPT + "3 elements: " + named + "."
    r, c, _ = faults[3]
    table[r][c] = 0.5
    diagnosis = compare(table).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table")


@pytest.mark.parametrize("d_model", [5, 9])
def test_an_odd_width_table_is_tried_with_each_odd_rule(d_model: int) -> None:
    # The odd rules differ only at an odd width; 9 is odd and a multiple of 3.
    diagnosis = compare(encoding(6, d_model, odd="zero")).diagnosis
    assert diagnosis == (
        "Diagnosis: the table follows the paper's convention (preset paper, the same as xlm and keras-hub): sin and"
        " cos interleaved per pair, with an odd d_model's rule 'zero' instead of 'sine'; it reproduces every element. The"
        f" call that reproduces it: encoding(6, {d_model}, odd='zero') (on the command line: --odd zero)."
    )


@pytest.mark.parametrize("d_model", [9, 15])
@pytest.mark.parametrize(
    "odd, call, options",
    [
        ("zero", "base=5000, odd='zero'", "--base 5000 --odd zero"),
        ("round-up", "preset='tatp22', base=5000", "--preset tatp22 --base 5000"),
    ],
)
def test_an_odd_width_divisible_by_3_is_read_with_each_odd_rule(
    d_model: int, odd: str, call: str, options: str
) -> None:
    # Base 5000 is read from the values (no preset near it has it), so the fit itself must try each odd rule at
    # every odd width, 9 and 15 included.
    diagnosis = compare(encoding(64, d_model, odd=odd, base=5000)).diagnosis
    assert diagnosis is not None and "it reproduces every element" in diagnosis
    assert diagnosis.endswith(f"encoding(64, {d_model}, {call}) (on the command line: {options}).")


def paper_element(position: int, dim: int, d_model: int) -> float:
    angle = position / 10000 ** (2 * (dim // 2) / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def test_a_cosine_first_interleave_at_an_odd_width_keeps_its_last_sine() -> None:
    # [cos, sin] per pair, and the last column, a pair without a cosine, is its sine.
    d_model = 9
    table = [
        [paper_element(p, dim + 1 if dim % 2 == 0 else dim - 1, d_model) for dim in range(d_model - 1)]
        + [paper_element(p, d_model - 1, d_model)]
        for p in range(6)
    ]
    assert compare(table).diagnosis == (
        "Diagnosis: the table follows an interleave with the cosine first, [cos, sin] per pair;"
        " it reproduces every element."
    )


@pytest.mark.parametrize("seq_len, d_model", [(7, 4), (8, 5)])
def test_a_transposed_table_is_named_whatever_the_parity_of_its_rows(seq_len: int, d_model: int) -> None:
    # The table given has seq_len rows; transposed, they are the d_model = seq_len columns of d_model positions.
    table = [[paper_element(p, dim, seq_len) for p in range(d_model)] for dim in range(seq_len)]
    assert compare(table).diagnosis == (
        "Diagnosis: the table follows the transposed table: rows are dimensions, columns positions;"
        " it reproduces every element."
    )


def test_of_two_stories_that_explain_the_table_the_simpler_is_told() -> None:
    # fairseq's frequencies, 10000**(-i/(h-1)), are also the paper's spacing with base 10000**(h/(h-1)): the
    # same table, which the fit reads both ways; the story with the preset's round base is told.
    text = compare(encoding(300, 32, preset="fairseq")).diagnosis or ""
    assert "(preset fairseq, the same as m2m100)" in text and "; it reproduces every element." in text, text
    assert "instead of" not in text, text


def test_an_angle_at_a_rounding_midpoint_is_reproduced_rounded_either_way() -> None:
    # Angles rounded to bfloat16 half up, where the candidate rounds ties to even: on every row (not a
    # sample), the elements whose angle lay on a midpoint are the story's too, not damage.
    def bfloat16(x: float) -> float:
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        return float(struct.unpack("<d", struct.pack("<Q", (bits + (1 << 44)) & ~((1 << 45) - 1)))[0])

    table = [
        [(math.sin if j % 2 == 0 else math.cos)(bfloat16(p / 10000 ** (2 * (j // 2) / 16))) for j in range(16)]
        for p in range(300)
    ]
    text = compare(table).diagnosis or ""
    assert "its angles rounded to bfloat16; it reproduces every element." in text, text


# ---------------------------------------------------------------------------
# 8. Report.causes: what the diagnosis names, as keys a program reads
# ---------------------------------------------------------------------------


def paper_row(position: float, d_model: int, base: float = 10000.0) -> List[float]:
    """The paper's row at a position in float64, by the formula."""
    row = []
    for i in range(d_model // 2):
        angle = position / base ** (2 * i / d_model)
        row += [math.sin(angle), math.cos(angle)]
    return row


def half_row(position: float, d_model: int) -> List[float]:
    """The same angles as paper_row, all sines then all cosines."""
    row = paper_row(position, d_model)
    return row[0::2] + row[1::2]


def float16(x: float) -> float:
    held: float = struct.unpack("<e", struct.pack("<e", x))[0]
    return held


# (name, the table, the causes: the fields a call sets otherwise, a mistake's steps, damage)
CAUSES = [
    ("base", [paper_row(p, 16, 500000.0) for p in range(64)], ("base",)),
    ("values halved", [[x / 2 for x in paper_row(p, 16)] for p in range(64)], ("scale",)),
    ("layout and scale", [[x / 4 for x in half_row(p, 16)] for p in range(64)], ("layout", "scale")),
    ("positions from 3", [paper_row(p + 3, 16) for p in range(64)], ("start",)),
    ("positions in float16", [paper_row(float16(p), 16) for p in range(3000)], ("positions:float16",)),
    ("a zeroed row", [[0.0] * 16 if p == 40 else paper_row(p, 16) for p in range(300)], ("damage",)),
    ("zeros", [[0.0] * 8 for _ in range(4)], ("zeros",)),
    ("transposed", [list(column) for column in zip(*[paper_row(p, 12) for p in range(8)])], ("transposed",)),
    ("stored in float16", [[float16(x) for x in paper_row(p, 16)] for p in range(64)], ("output:float16",)),
    (
        "a NaN",
        [[math.nan if (p, c) == (7, 3) else x for c, x in enumerate(paper_row(p, 16))] for p in range(30)],
        ("not_finite",),
    ),
]


@pytest.mark.parametrize("table, causes", [case[1:] for case in CAUSES], ids=[case[0] for case in CAUSES])
def test_report_causes_name_what_the_diagnosis_says(table: List[List[float]], causes: Tuple[str, ...]) -> None:
    report = compare(table)
    assert not report.ok and report.causes == causes, f"{report.causes}\n{report}"


def test_a_table_nothing_explains_has_no_causes() -> None:
    table = [[math.sin(1.7 * p + c * c) for c in range(8)] for p in range(20)]
    report = compare(table)
    assert report.diagnosis is not None and "nothing known explains the table" in report.diagnosis, str(report)
    assert report.causes == ()
    assert compare(encoding(8, 8)).causes == ()  # a table that passes


@pytest.mark.parametrize(
    "d_model, asked, other",
    [(5, {"preset": "tensor2tensor"}, None), (6, {}, (5, 1)), (6, {"odd": "error"}, None)],
    ids=["another convention", "another convention and damage", "odd rule"],
)
def test_an_element_not_finite_is_named_once_beside_the_convention_that_explains_the_rest(
    d_model: int, asked: Dict[str, object], other: Optional[Tuple[int, int]]
) -> None:
    # The NaN is named first; the candidate that explains the other elements neither names it again as its
    # damage nor says it reproduces every element, and its call computes the table without the NaN.
    made = "paper" if d_model % 2 else "tensor2tensor"
    table = encoding(16, d_model, preset=made)
    table[3][2] = math.nan
    if other is not None:
        table[other[0]][other[1]] = 0.5
    text = str(compare(table, **asked).diagnosis)  # type: ignore[arg-type]
    assert text.count("[3][2]") == 1 and "is nan" in text, text
    assert "every element" not in text and "The call that computes it without the damage" in text, text
    if other is None:
        assert "it reproduces every other element" in text, text
    else:
        assert "except for 1 element: [5][1] is 0.5" in text, text


def test_a_candidates_allowance_is_at_least_one_unit_of_a_narrow_format() -> None:
    """bfloat16: a value computed in float32 and then rounded lands a unit (2**-7 at 1) from the exact one's rounding.

    So a candidate's allowance, capped at 2**-10 otherwise, is capped at 2**(1 - p) times the scale where that is more.
    """
    from pe_reference import _row_allowance

    assert _row_allowance([1.0, 0.01], 1000.0, 8, 1.0, 2.0**-19) == [2.0**-7, 2.0**-7]
    assert _row_allowance([1.0, 0.01], 1000.0, 8, 0.5, 2.0**-19) == [2.0**-8, 2.0**-8]
    # float16's unit at 1, 2**-10, is the cap itself; float32's is below it (the cap, or the default rule's own).
    assert _row_allowance([0.01], 1000.0, 11, 1.0, 2.0**-19) == [2.0**-10]
    assert _row_allowance([0.3], 1000.0, 24, 1.0, 2.0**-19) == [2.0**-10]
    assert _row_allowance([1.0], 1000.0, 24, 1.0, 2.0**-19) == [2.0**-19 * 1001.0]


def test_a_table_angle_whose_other_rounding_is_past_float16_is_judged_without_it() -> None:
    # The table's twin of the rotary rule: angles from 65512 round to 65504 in float16, and their other
    # neighbour is infinite. Before, the whole row's other rounding raised ValueError (math domain error).
    def half(angle: float) -> float:
        return pe_reference._round_float(angle, "float16")

    table = []
    for p in range(65512, 65520):  # the paper's d_model 64, sin and cos interleaved; pair 0 turns by 1 radian
        angles = [half(p * 10000.0 ** (-2 * i / 64)) for i in range(32)]
        table.append([f(angle) for angle in angles for f in (math.sin, math.cos)])
    table[3][40] = 5.0
    report = compare(table, start=65512)
    assert report.causes == ("angles:float16", "damage"), str(report)
    assert "except for 1 element: [3][40] is 5.0" in str(report.diagnosis), str(report)


# ---------------------------------------------------------------------------
# The diagnosis reads a table's convention from its values, says what it read, and prints the call
# ---------------------------------------------------------------------------
# Tables are built by torch in float32, as frameworks build them: by the
# frameworks' own modules where they install (x-transformers), else by the
# formula written out with torch below.  Each test checks the story told and
# runs the printed call (tests.helpers.assert_call_reproduces), so a story is
# true only if the call's table passes compare().


def failing(table: Any, **keywords: Any) -> Report:
    """The report of a table that must fail, with a diagnosis."""
    report = compare(table, **keywords)
    assert not report.ok and report.diagnosis is not None, str(report)
    return report


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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
@pytest.mark.parametrize(
    "case",
    [pytest.param(i, marks=pytest.mark.long) if i in LONG_FIELDS else i for i in range(len(FITTED))],
    ids=[str(i) for i in range(len(FITTED))],
)
def test_each_field_is_read_from_a_table_of_32768_rows(case: int) -> None:
    test_each_field_is_read_from_the_table(*FITTED[case], 32768, 64)


@pytest.mark.peers("numpy", "torch")
def test_a_base_no_simple_number_is_near_is_reported_as_read() -> None:
    table = torch_table(2048, 64, base=12345.678)
    text = diagnosis_of(table)
    base = float(text.split("with base ")[1].split(" instead")[0])
    assert abs(base / 12345.678 - 1) < 1e-5, text


# ---------------------------------------------------------------------------
# Stored narrow: a float32 table kept in float16 or bfloat16 passes in its format
# ---------------------------------------------------------------------------


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
def test_frequencies_and_angles_in_float16_are_not_called_an_output_in_float16() -> None:
    table = tutorial(2000, 64, frequencies=torch.float16, angles=torch.float16)
    held = table.half().float()
    assert not torch.equal(held, table)  # the values are not float16 numbers: the output is float32
    report = failing(table.numpy())
    text = str(report.diagnosis)
    assert "with its frequencies and angles rounded to float16; it reproduces every element." in text, text
    assert "output" not in text and "positions" not in text, text
    assert report.causes == ("frequencies:float16", "angles:float16")


@pytest.mark.peers("numpy", "torch")
@pytest.mark.parametrize("seq_len", [4001, 16384])
def test_positions_in_float16_are_named_though_every_hundredth_row_is_exact(seq_len: int) -> None:
    # Megatron-LM #535: positions cast to float16; rows 0, 100, 200, ... are float16 numbers.
    table = tutorial(seq_len, 64, positions=torch.float16)
    report = failing(table.numpy())
    text = str(report.diagnosis)
    assert "with its positions rounded to float16 (it holds whole numbers exactly only up to 2048)" in text, text
    assert report.causes == ("positions:float16",)


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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
@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
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


@pytest.mark.peers("numpy", "torch")
def test_values_the_fit_cannot_read_give_a_diagnosis_not_an_exception() -> None:
    table = encoding(8, 4, preset="tensor2tensor")
    table[1][0] = math.nan  # on a row the fit reads
    assert "1 element is not a finite number: [1][0] is nan" in diagnosis_of(table)
    assert diagnosis_of([[x * 1e200 for x in row] for row in encoding(8, 4)]).startswith("Diagnosis: ")


@pytest.mark.peers("numpy", "torch")
def test_angles_in_float16_are_named_in_a_table_stored_in_float16() -> None:
    angles = tutorial(300, 8, angles=torch.float16)
    text = diagnosis_of(angles.half().float().tolist())
    assert text == (
        "Diagnosis: every value of the table is a float16 number (float64 was asked); checked as float16, the table"
        " follows the paper convention with its angles rounded to float16; it reproduces every element."
    )


def test_wrong_columns_are_local_damage_only_while_fewer_than_half_of_the_columns() -> None:
    # d_model 4 allows two wrong columns (max(2, d_model // 8)), if they are fewer than half of the four.
    table = encoding(8, 4, exact=True)
    for row in table:
        row[1] = 0.25
    assert compare(table).diagnosis == EXCEPT + "column 1, which matches no column."
    for row in table:
        row[3] = 0.25
    diagnosis = compare(table).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table"), diagnosis


def test_in_a_table_of_fewer_than_eight_rows_one_damaged_row_is_local_and_two_are_not() -> None:
    # A quarter of the rows, and at least one: 4 rows allow one row with damage nothing explains.
    table = encoding(4, 8, exact=True)
    table[1][2] = 0.5
    assert (
        compare(table).diagnosis == EXCEPT + f"1 element: [1][2] is 0.5, expected {math.sin(0.1):.6g}."
    )  # sin(1 / 10000**(2/8))
    table[3][4] = 0.5
    diagnosis = compare(table).diagnosis
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table"), diagnosis


@pytest.mark.parametrize("preset, layout", [("paper", "interleaved"), ("tf-tutorial", "sin-cos")])
def test_cosines_at_the_odd_column_index_are_named_in_either_layout(preset: str, layout: str) -> None:
    # The mistake written out from its description: pair i's cosine takes base**((2i + 1)/d), the index
    # its column would have in the interleaved table, wherever the layout puts that column.
    d_model = 16
    sines = [[math.sin(p / 10000 ** (2 * i / d_model)) for i in range(d_model // 2)] for p in range(64)]
    cosines = [[math.cos(p / 10000 ** ((2 * i + 1) / d_model)) for i in range(d_model // 2)] for p in range(64)]
    if layout == "interleaved":
        table = [[x for pair in zip(s, c) for x in pair] for s, c in zip(sines, cosines)]
    else:
        table = [s + c for s, c in zip(sines, cosines)]
    text = diagnosis_of(table, preset=preset)
    assert "cosine columns that use the odd column index in the exponent" in text, text


def test_the_angle_scale_is_read_over_the_step_the_check_was_given() -> None:
    # Positions 0, 2, 4, ... (step 2) turning 3 radians a unit: pair 0 grows 6 a row, the angle scale is 3.
    table = encoding(64, 16, step=2, angle_scale=3)
    text = diagnosis_of(table, step=2)
    assert "angle_scale=3" in text, text
    assert_call_reproduces(text, table, step=2)


def test_local_damage_lists_at_most_eight_isolated_elements() -> None:
    # docs/checking.md: isolated wrong elements are listed, up to eight; a ninth is more than local damage.
    table = encoding(64, 16, exact=True)
    for k in range(9):
        table[4 + 6 * k][k] = 0.5
        text = str(compare(table).diagnosis)
        if k < 8:
            assert text.startswith(EXCEPT + f"{k + 1} element"), (k, text)
        else:
            assert "9 elements in 9 rows are outside the default tolerance: more than local damage." in text, text


def test_zeroed_rows_are_local_damage_up_to_a_quarter_of_the_rows() -> None:
    # 12 rows: three rows of zeros (padding indices) are local damage, a fourth is not.
    table = encoding(12, 8, exact=True)
    for r in (2, 5, 9):
        table[r] = [0.0] * 8
    zeros = "all zeros (as the row of a padding index is)"
    assert compare(table).diagnosis == EXCEPT + f"row 2, {zeros}; row 5, {zeros}; and row 9, {zeros}."
    table[11] = [0.0] * 8
    assert not str(compare(table).diagnosis).startswith(EXCEPT)
