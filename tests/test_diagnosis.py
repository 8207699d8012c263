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
from typing import Any, Callable, Dict, List, Tuple

import pytest

import pe_reference
from pe_reference import compare, encoding
from tests import reference
from tests.helpers import assert_call_reproduces, need, peer

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


# The framework presets' own tables are checked in tests/test_frameworks.py, built by the frameworks' code.
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
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table.")


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
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table.")


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
    assert diagnosis is not None and diagnosis.startswith("Diagnosis: nothing known explains the table.")


@pytest.mark.parametrize("d_model", [5, 9])
def test_an_odd_width_table_is_tried_with_each_odd_rule(d_model: int) -> None:
    # The odd rules differ only at an odd width; 9 is odd and a multiple of 3.
    diagnosis = compare(encoding(6, d_model, odd="zero")).diagnosis
    assert diagnosis == (
        "Diagnosis: the table follows the paper's convention (preset paper, the same as xlm and keras-hub): sin and"
        " cos interleaved per pair, with an odd d_model's rule 'zero' instead of 'sine'; it reproduces every element. The"
        f" call that reproduces it: encoding(6, {d_model}, odd='zero') (on the command line: --odd zero)."
    )


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
