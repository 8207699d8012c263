"""Grids: 2-D and 3-D tables, a 1-D table per axis, exact against mpmath and against the frameworks' own."""

import ast
import math
import re
import struct
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple, Type

import mpmath
import pytest

import pe_reference
from pe_reference import compare, encoding, rows
from tests import reference
from tests.helpers import peer

numpy = peer("numpy")
torch = peer("torch")

DTYPES = ["float64", "float32", "bfloat16", "float16"]

# --- The reference: each source's formula, written from its code's description (tests/../docs), in mpmath ---

Mp = Any
Cell = Tuple[int, ...]


def ladder(count: int, base: Mp, per: Mp) -> List[Mp]:
    """base**(-m / per) for m < count, at 600 bits."""
    return [mpmath.power(base, -mpmath.mpf(m) / per) for m in range(count)]


def blocks(position: Mp, omegas: List[Mp]) -> Tuple[List[Mp], List[Mp]]:
    return [mpmath.sin(position * w) for w in omegas], [mpmath.cos(position * w) for w in omegas]


def interleaved(position: Mp, omegas: List[Mp]) -> List[Mp]:
    sines, cosines = blocks(position, omegas)
    return [x for pair in zip(sines, cosines) for x in pair]


def mae_like(y: Mp, x: Mp, d: int) -> List[Mp]:
    # x's sines, x's cosines, y's sines, y's cosines; omega_m = 10000**(-m / (d / 4)).
    omegas = ladder(d // 4, mpmath.mpf(10000), mpmath.mpf(d // 4))
    sx, cx = blocks(x, omegas)
    sy, cy = blocks(y, omegas)
    return sx + cx + sy + cy


def mae(cell: Cell, shape: Cell, d: int) -> List[Mp]:
    return mae_like(mpmath.mpf(cell[0]), mpmath.mpf(cell[1]), d)


def diffusers_2d(base_size: int) -> Callable[[Cell, Cell, int], List[Mp]]:
    # Positions k * base_size / n, each axis by its own length.
    def table(cell: Cell, shape: Cell, d: int) -> List[Mp]:
        y, x = (mpmath.mpf(k) * base_size / n for k, n in zip(cell, shape))
        return mae_like(y, x, d)

    return table


def timm_sincos2d(cell: Cell, shape: Cell, d: int) -> List[Mp]:
    # y's and x's sines, then y's and x's cosines.
    omegas = ladder(d // 4, mpmath.mpf(10000), mpmath.mpf(d // 4))
    sy, cy = blocks(mpmath.mpf(cell[0]), omegas)
    sx, cx = blocks(mpmath.mpf(cell[1]), omegas)
    return sy + sx + cy + cx


def rt_detr(cell: Cell, shape: Cell, d: int) -> List[Mp]:
    omegas = ladder(d // 4, mpmath.mpf(10000), mpmath.mpf(d // 4))
    sy, cy = blocks(mpmath.mpf(cell[0]), omegas)
    sx, cx = blocks(mpmath.mpf(cell[1]), omegas)
    return sy + cy + sx + cx


def detr(offset: str) -> Callable[[Cell, Cell, int], List[Mp]]:
    # Per axis F = d / 2 features: feature k is sin (k even) or cos of p / 10000**(2 floor(k/2) / F), with
    # p = (k_axis + offset) / (n + 1e-6) * 2 pi; y's features, then x's.
    def table(cell: Cell, shape: Cell, d: int) -> List[Mp]:
        features = d // 2
        out = []
        for k_axis, n in zip(cell, shape):
            p = (k_axis + mpmath.mpf(offset)) / (n + mpmath.mpf("1e-6")) * 2 * mpmath.pi
            for k in range(features):
                angle = p / mpmath.power(10000, mpmath.mpf(2 * (k // 2)) / features)
                out.append(mpmath.sin(angle) if k % 2 == 0 else mpmath.cos(angle))
        return out

    return table


def tatp22(cell: Cell, shape: Cell, d: int) -> List[Mp]:
    # Each axis c = ceil(d / (2 * axes)) * 2 columns, sin and cos interleaved, omega_m = 10000**(-2m / c);
    # the axes in the shape's order, cut to d.
    c = math.ceil(d / (2 * len(shape))) * 2
    omegas = ladder(c // 2, mpmath.mpf(10000), mpmath.mpf(c) / 2)
    out = [x for k in cell for x in interleaved(mpmath.mpf(k), omegas)]
    return out[:d]


def diffusers_3d(spatial: str) -> Callable[[Cell, Cell, int], List[Mp]]:
    # t takes d / 4 columns, x and y 3d / 8 each, each its sines then its cosines, omega_m = 10000**(-m / F)
    # with F half the axis's width; spatial positions k / spatial, temporal t.
    def table(cell: Cell, shape: Cell, d: int) -> List[Mp]:
        t = mpmath.mpf(cell[0])
        y, x = (mpmath.mpf(k) / mpmath.mpf(spatial) for k in cell[1:])
        out: List[Mp] = []
        for position, width in ((t, d // 4), (x, 3 * d // 8), (y, 3 * d // 8)):
            sines, cosines = blocks(position, ladder(width // 2, mpmath.mpf(10000), mpmath.mpf(width // 2)))
            out += sines + cosines
        return out

    return table


# preset: (its formula, the widths and shapes tried)
REFERENCES: Dict[str, Tuple[Callable[[Cell, Cell, int], List[Mp]], int, Cell]] = {
    "mae": (mae, 16, (3, 5)),
    "diffusers-2d": (diffusers_2d(16), 16, (3, 5)),
    "sd3": (diffusers_2d(64), 16, (3, 5)),
    "timm-sincos2d": (timm_sincos2d, 16, (3, 5)),
    "rt-detr": (rt_detr, 16, (3, 5)),
    "detr": (detr("1"), 16, (3, 5)),
    "deformable-detr": (detr("0.5"), 16, (3, 5)),
    "tatp22-2d": (tatp22, 14, (3, 5)),
    "tatp22-3d": (tatp22, 10, (2, 3, 4)),
    "diffusers-3d": (diffusers_3d("1"), 32, (2, 3, 4)),
    "cogvideox": (diffusers_3d("1.875"), 32, (2, 3, 4)),
}


def cells(shape: Cell) -> List[Cell]:
    """Every cell, the last axis fastest."""
    out: List[Cell] = [()]
    for n in shape:
        out = [cell + (k,) for cell in out for k in range(n)]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("preset", sorted(REFERENCES))
def test_exact_grid_values_are_the_sources_formulas_correctly_rounded(preset: str, dtype: str) -> None:
    formula, d_model, shape = REFERENCES[preset]
    with mpmath.workprec(reference.PRECISION):
        expected = [[reference.round_to(v, dtype) for v in formula(cell, shape, d_model)] for cell in cells(shape)]
    assert encoding(shape, d_model, preset=preset, exact=True, dtype=dtype) == expected


@pytest.mark.parametrize("preset", sorted(REFERENCES))
def test_the_fast_grid_is_within_a_few_ulps_of_the_exact_one(preset: str) -> None:
    _, d_model, shape = REFERENCES[preset]
    fast = encoding(shape, d_model, preset=preset)
    exact = encoding(shape, d_model, preset=preset, exact=True)
    assert len(fast) == len(exact) == math.prod(shape)
    assert max(abs(a - b) for r, s in zip(fast, exact) for a, b in zip(r, s)) < 1e-14


def test_rows_streams_the_same_grid_with_its_prefix() -> None:
    table = encoding((4, 6), 8, preset="rt-detr", prefix=1)
    assert table[0] == [0.0] * 8 and table[1:] == encoding((4, 6), 8, preset="rt-detr")
    assert list(rows((4, 6), 8, preset="rt-detr", prefix=1)) == table


def test_a_1d_preset_per_axis_and_the_grids_fields_as_keywords() -> None:
    # The paper's convention on each axis, the shape's order, an equal split: row (i, j) is the paper's row
    # i of width d/2, then its row j.
    paper = encoding(5, 8)
    table = encoding((3, 5), 16)
    assert table[1 * 5 + 4] == paper[1] + paper[4]
    # The keywords change the preset's grid: MAE's with the axes in the shape's order is RT-DETR's.
    assert encoding((3, 5), 16, preset="mae", axis_order="yx") == encoding((3, 5), 16, preset="rt-detr")
    # timm's interleave_sin_cos=True is its axes arrangement: RT-DETR's table.
    assert encoding((3, 5), 16, preset="timm-sincos2d", arrangement="axes") == encoding((3, 5), 16, preset="rt-detr")
    # position_scale per axis, in the shape's order.
    scaled = encoding((3, 5), 8, preset="mae", position_scale=(2, "1/2"), exact=True)
    halves = encoding(10, 4, preset="tf-tutorial", step="1/2", exact=True)
    doubles = encoding(3, 4, preset="tf-tutorial", step=2, exact=True)
    assert scaled[2 * 5 + 3] == halves[3] + doubles[2]


def test_split_and_position_scale_follow_the_shapes_order_and_axis_order_the_columns() -> None:
    # Shape (2, 3): y then x.  split 1:2 gives y 4 columns and x 8; axis_order xy puts x's 8 first.
    table = encoding((2, 3), 12, layout="sin-cos", split="1:2", axis_order="xy", position_scale=(3, "1/2"), exact=True)
    ys = encoding(2, 4, layout="sin-cos", step=3, exact=True)
    xs = encoding(3, 8, layout="sin-cos", step="1/2", exact=True)
    assert table[1 * 3 + 2] == xs[2] + ys[1]


def test_normalized_positions_are_over_the_length_plus_epsilon() -> None:
    # DETR's positions (k + 1) / (n + 1e-6) turns: the last row's is just under a whole turn.
    table = encoding((4, 4), 8, preset="detr", exact=True)
    assert table[0][0] == reference.round_to(mpmath.sin(2 * mpmath.pi / (4 + mpmath.mpf("1e-6"))), "float64")
    assert (
        encoding((4, 4), 8, preset="detr", normalize=False, exact=True)[5][:4]
        == encoding(3, 4, exact=True, full_turns=True)[2]
    )


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: encoding((4,), 8),
            TypeError,
            "seq_len must be an integer or a grid's shape of 2 or 3 integers, got tuple (4,)",
        ),
        (
            lambda: encoding((2, 2, 2, 2), 8),
            TypeError,
            "seq_len must be an integer or a grid's shape of 2 or 3 integers",
        ),
        (lambda: encoding((4, -1), 8), ValueError, "seq_len must be at least 0, got -1"),
        (
            lambda: encoding((4, 4), 8, preset="tatp22-3d"),
            ValueError,
            "seq_len must be a shape of 3 axes in the tatp22-3d grid, got (4, 4)",
        ),
        (
            lambda: encoding((4, 4), 6, preset="mae"),
            ValueError,
            "d_model must split into even widths in this grid, got 6 (widths 3, 3)",
        ),
        (lambda: encoding((4, 4), 9), ValueError, "d_model must be a multiple of 2 to split among the axes, got 9"),
        (
            lambda: encoding((4, 4), 8, axis_order="xz"),
            ValueError,
            "axis_order must order the letters yx of the shape's axes, got 'xz'",
        ),
        (lambda: encoding((4, 4), 8, axis_order=1), TypeError, "axis_order must be a str, got int 1"),
        (
            lambda: encoding((4, 4), 8, split="1:0"),
            ValueError,
            "split must be equal, round-up or 2 positive weights such as 2:3:3, got '1:0'",
        ),
        (
            lambda: encoding((4, 4), 8, arrangement="functions"),
            ValueError,
            "arrangement must be axes for an interleaved layout, got 'functions'",
        ),
        (lambda: encoding((4, 4), 8, epsilon=-1), ValueError, "epsilon must be at least 0, got -1"),
        (
            lambda: encoding((4, 4), 8, position_scale=(1, 2, 3)),
            ValueError,
            "position_scale must be one number or 2, got (1, 2, 3)",
        ),
        (
            lambda: encoding((4, 4), 8, position_scale=0),
            ValueError,
            "position_scale must be finite and greater than 0, got 0",
        ),
        (lambda: encoding((4, 4), 8, prefix=-1), ValueError, "prefix must be at least 0, got -1"),
        (
            lambda: encoding((4, 4), 8, positions=[1, 2]),
            ValueError,
            "positions must not be given for a grid, whose cells have theirs (give start, step and position_scale), got [1, 2]",
        ),
        (lambda: encoding((4, 4), 8, scales=2), TypeError, "encoding() got an unexpected keyword argument 'scales'"),
    ],
)
def test_a_bad_grid_is_refused_naming_the_parameter_and_the_rule(
    call: Callable[[], object], error: Type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value).startswith(message), str(caught.value)


def documented_grids() -> Dict[str, Dict[str, Any]]:
    """docs/conventions.md's table of grid presets: name -> its keywords, as the page writes them."""
    found = {}
    page = (Path(__file__).resolve().parent.parent / "docs" / "conventions.md").read_text(encoding="utf-8")
    for line in page.splitlines():
        match = re.fullmatch(r"\| `([a-z0-9-]+)` \| .* \| `(dict\(.*\))` \|", line.strip())
        if match:
            call = ast.parse(match.group(2), mode="eval").body
            assert isinstance(call, ast.Call)
            found[match.group(1)] = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    return found


def test_each_grid_preset_is_documented_as_the_keywords_that_make_it() -> None:
    documented = documented_grids()
    assert list(documented) == [row[0] for row in pe_reference._GRID_PRESETS]
    for name, axes in ((row[0], row[2]) for row in pe_reference._GRID_PRESETS):
        shape = (2, 3) if axes == 2 else (2, 3, 2)
        d_model = 32 if axes == 3 else 12
        assert encoding(shape, d_model, preset=name, exact=True) == encoding(
            shape, d_model, exact=True, **documented[name]
        ), name


def test_the_stub_names_the_grid_presets_and_fields() -> None:
    stub = ast.parse(
        (Path(__file__).resolve().parent.parent / "stubs" / "pe_reference-stubs" / "__init__.pyi").read_text()
    )
    literal = next(
        node.value
        for node in stub.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == "_GridPreset"
    )
    assert isinstance(literal, ast.Subscript)
    names = getattr(literal.slice, "value", literal.slice)  # Python 3.8 wraps it in an ast.Index
    assert isinstance(names, ast.Tuple)
    assert [e.value for e in names.elts if isinstance(e, ast.Constant)] == [
        row[0] for row in pe_reference._GRID_PRESETS
    ]
    fields = next(node for node in stub.body if isinstance(node, ast.ClassDef) and node.name == "_GridFields")
    keys = [n.target.id for n in fields.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    assert keys == ["preset"] + [row[0] for row in pe_reference._GRID_FIELDS]


# --- Checking a grid: compare() with a grid's preset, and a grid named without one ---


def float32_table(preset: str, shape: Cell) -> List[List[float]]:
    """The source's formula (REFERENCES), in mpmath, each value rounded to float32: a table no code under test made."""
    formula, d_model, _ = REFERENCES[preset]
    with mpmath.workprec(reference.PRECISION):
        return [[reference.round_to(v, "float32") for v in formula(cell, shape, d_model)] for cell in cells(shape)]


def reproduced_by_the_call(report: pe_reference.Report) -> List[List[float]]:
    """The table the diagnosis's call computes, the call evaluated as written."""
    assert report.diagnosis is not None
    found = re.search(r"The call that reproduces it: (encoding\(.*?\)) \(on the command line", report.diagnosis)
    assert found is not None, report.diagnosis
    table: List[List[float]] = eval(found.group(1), {"encoding": encoding})
    return table


@pytest.mark.parametrize("preset", sorted(REFERENCES))
def test_each_grid_presets_table_passes_with_its_preset_and_is_named_without_it(preset: str) -> None:
    shape: Cell = (6, 10) if len(REFERENCES[preset][2]) == 2 else (3, 4, 5)
    table = float32_table(preset, shape)
    checked = compare(table, grid=shape, preset=preset, dtype="float32")
    assert checked.ok and checked.subject.endswith(f"on a grid of {' x '.join(map(str, shape))} cells"), str(checked)
    named = compare(table, dtype="float32")
    assert not named.ok and named.causes == ("grid",), str(named)
    assert f"grid of {' x '.join(map(str, shape))} cells" in str(named.diagnosis)
    again = reproduced_by_the_call(named)
    assert max(abs(a - b) for r, s in zip(again, table) for a, b in zip(r, s)) <= 2**-20, str(named)


def test_a_grid_checked_with_another_preset_is_told_the_one_it_follows() -> None:
    table = float32_table("mae", (6, 10))
    report = compare(table, grid=(6, 10), preset="rt-detr", dtype="float32")
    assert not report.ok and report.causes == ("grid",), str(report)
    assert "in the mae convention" in str(report.diagnosis)
    # A shape of as many cells with other axes: the rows' own shape is found.
    report = compare(table, grid=(10, 6), preset="mae", dtype="float32")
    assert report.causes == ("grid",) and "grid of 6 x 10 cells" in str(report.diagnosis), str(report)


def test_a_class_tokens_row_of_zeros_is_the_prefix() -> None:
    table = [[0.0] * 16] + float32_table("mae", (6, 6))
    assert compare(table, preset="mae", prefix=1, dtype="float32").ok  # the square after the prefix
    named = compare(table, dtype="float32")
    assert "after 1 row of zeros" in str(named.diagnosis) and "prefix=1" in str(named.diagnosis), str(named)
    assert reproduced_by_the_call(named)[0] == [0.0] * 16


def test_local_damage_in_a_grid_is_named_by_cell_and_column() -> None:
    table = float32_table("mae", (6, 10))
    table[23][5] = 0.5  # cell (2, 3), x's cosine of pair 1 (MAE: x's sines, then x's cosines)
    report = compare(table, grid=(6, 10), preset="mae", dtype="float32")
    assert report.failures == 1 and report.causes == ("damage",), str(report)
    assert "except for [23][5] (cos_x1 of cell (2, 3)) is 0.5, expected " in str(report.diagnosis), str(report)
    named = compare(table, dtype="float32")
    assert named.causes == ("grid", "damage") and "except for 1 element outside" in str(named.diagnosis), str(named)
    # As every story with damage ends: the call computes the table without it (it does not reproduce it).
    assert "The call that computes it without the damage: encoding((6, 10), 16, preset='mae'" in str(named.diagnosis)


@pytest.mark.parametrize("r, c", [(0, 0), (1, 5), (10, 3), (2, 1)])
def test_a_damaged_element_in_the_first_cells_does_not_hide_the_grid(r: int, c: int) -> None:
    # The shape and the position scale are read from the first cells of each axis: one bad element there
    # (the first cell, x = 1, the next row's first, x = 2) is outvoted.
    table = float32_table("mae", (6, 10))
    table[r][c] = 0.25
    named = compare(table, dtype="float32")
    assert named.causes == ("grid", "damage") and f"[{r}][{c}]" in str(named.diagnosis), str(named)
    assert "grid of 6 x 10 cells" in str(named.diagnosis)


def test_damage_beyond_local_names_its_axes_and_no_preset() -> None:
    table = float32_table("mae", (6, 10))
    for row in table[::2]:
        row[9] += 0.25  # y's sine of pair 1, every other row
    report = compare(table, grid=(6, 10), preset="mae", dtype="float32")
    assert report.failures == 30 and report.causes == (), str(report)
    assert "30 elements in 30 rows are outside the default tolerance, in the columns of axis y" in str(report.diagnosis)
    assert "none of the grid presets tried explains the table" in str(report.diagnosis)


def test_a_failure_of_the_tolerance_asked_alone_names_no_other_preset() -> None:
    # One element a float32 place off: within the default rule, outside ulps=0; the grid asked explains it.
    table = float32_table("mae", (6, 10))
    bits = struct.unpack("<I", struct.pack("<f", table[7][3]))[0]
    table[7][3] = struct.unpack("<f", struct.pack("<I", bits + 1))[0]
    report = compare(table, grid=(6, 10), preset="mae", dtype="float32", ulps=0)
    assert report.failures == 1 and report.causes == (), str(report)
    assert str(report.diagnosis).startswith("Diagnosis: every element is within the default tolerance of the mae")


@pytest.mark.parametrize(
    "keywords, dtype",
    [
        (dict(preset="mae", position_scale="2/3"), "float32"),  # diffusers' interpolation_scale 3 at base 16 / 8
        (dict(preset="sd3"), "bfloat16"),
        (dict(preset="detr"), "bfloat16"),
        (dict(preset="diffusers-2d", position_scale="16/3"), "float16"),
    ],
)
def test_a_grids_position_scale_is_read_to_its_formats_precision(keywords: Dict[str, Any], dtype: str) -> None:
    table = encoding((8, 8), 32, exact=True, dtype=dtype, **keywords)
    named = compare(table, dtype=dtype)
    assert named.causes == ("grid",), str(named)
    again = reproduced_by_the_call(named)
    assert compare(again, grid=(8, 8), dtype=dtype, **keywords).ok, str(named)


def test_each_column_is_judged_at_its_own_axis_position() -> None:
    # x's positions 1024 k and y's k: x's fast columns pass angle 32767 (float32's last judged) from x = 32 on,
    # y's never.  The count of elements not judged, from the rule's words: 2**-19 (1 + angle) > 2**-4.
    shape, d_model = (4, 64), 16
    table = encoding(shape, d_model, preset="mae", position_scale=(1, 1024), exact=True, dtype="float32")
    report = compare(table, grid=shape, preset="mae", position_scale=(1, 1024), dtype="float32")
    omegas = [10000.0 ** (-m / (d_model // 4)) for m in range(d_model // 4)]
    expected = sum(
        2  # a sine and a cosine
        for y, x in cells(shape)
        for position in (1024.0 * x, float(y))
        for omega in omegas
        if 2**-19 * (1 + position * omega) > 2**-4
    )
    assert expected == 2 * 32 * 4 and report.unjudged == expected and report.ok, str(report)
    # 2**-12 off in cell (1, 40): in y's sine of pair 0 (angle 1) it fails, in x's (angle 40960) it is not judged.
    r = 1 * 64 + 40
    for column, failures in ((8, 1), (0, 0)):  # MAE's columns: x's 8, then y's 8
        damaged = [row[:] for row in table]
        damaged[r][column] += 2**-12
        report = compare(damaged, grid=shape, preset="mae", position_scale=(1, 1024), dtype="float32")
        assert report.failures == failures, (column, str(report))


def test_a_sequence_is_not_taken_for_a_grid() -> None:
    # 256 rows make a 16 x 16 square, but a sequence's rows move every column at once.
    table = [[x + 0.01 for x in row] for row in encoding(256, 16)]
    assert compare(table).causes == ()


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: compare(encoding(250, 8), preset="mae"),
            ValueError,
            "grid must be given unless the table's rows after the prefix make a square 2-D grid, got 250 rows",
        ),
        (
            lambda: compare(encoding(64, 12), preset="tatp22-3d"),
            ValueError,
            "grid must be given unless the table's rows after the prefix make a square 2-D grid, got 64 rows and a grid of 3 axes",
        ),
        (lambda: compare(encoding(16, 8), grid=16), TypeError, "grid must be a tuple of 2 or 3 integers, got int 16"),  # type: ignore[arg-type]
        (
            lambda: compare(encoding(16, 8), grid=(2, 2, 2, 2)),
            TypeError,
            "grid must be a tuple of 2 or 3 integers, got tuple (2, 2, 2, 2)",
        ),
        (
            lambda: compare(encoding(16, 8), grid=(4, 5), preset="mae"),
            ValueError,
            "actual must have 20 rows for the 4 x 5 grid (a row per cell, after 0 prefix rows), got 16",
        ),
        (lambda: compare(encoding(16, 8), grid=(4, -4)), ValueError, "grid[1] must be at least 0, got -4"),
        (lambda: compare(encoding(16, 8), grid=(4.0, 4)), TypeError, "grid[0] must be an integer, got float 4.0"),  # type: ignore[arg-type]
        (
            lambda: compare(encoding(16, 6), grid=(4, 4), preset="mae"),
            ValueError,
            "the table's width must split into even widths in this grid, got 6 (widths 3, 3)",
        ),
    ],
)
def test_a_bad_grid_to_check_is_refused_naming_the_parameter_and_the_rule(
    call: Callable[[], object], error: Type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value).startswith(message), str(caught.value)


# --- The frameworks' own float32 tables at the sizes models use ---


def assert_close_to_exact(
    table: Any, shape: Sequence[int], d_model: int, preset: str, turns: float, **fields: Any
) -> None:
    """The framework's float32 table within its own rounding of the exact one: a float32 angle of at most
    ``turns`` radians is off by 2**-23 of itself at most per rounded step, a value by 2**-24."""
    exact = numpy.array(
        encoding(shape, d_model, preset=preset, exact=True, dtype="float32", **fields), dtype=numpy.float64
    )
    got = numpy.asarray(table, dtype=numpy.float64).reshape(exact.shape)
    worst = float(numpy.abs(got - exact).max())
    assert worst <= 4 * 2**-23 * (1 + turns), (preset, worst)
    # The table as the framework made it, float32, rows of cells: checked with the preset, and named without it
    # by a call that computes it.
    flat = numpy.asarray(table).reshape(exact.shape)
    assert flat.dtype == numpy.float32
    checked = compare(flat, grid=tuple(shape), preset=preset, **fields)
    assert checked.ok, str(checked)
    named = compare(flat)
    assert named.causes == ("grid",), str(named)
    again = numpy.array(reproduced_by_the_call(named), dtype=numpy.float64)
    assert float(numpy.abs(again - got).max()) <= 4 * 2**-23 * (1 + turns), str(named)


@pytest.mark.peers("numpy", "torch", "diffusers")
@pytest.mark.parametrize(
    "shape, d_model, base_size", [((64, 64), 1152, 32), ((96, 96), 1536, 64), ((24, 40), 1152, 32), ((14, 14), 768, 14)]
)
def test_diffusers_2d_table_with_its_base_size(shape: Tuple[int, int], d_model: int, base_size: int) -> None:
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    # PixArt-alpha 1024 (base_size 64, interpolation_scale 2: 32), SD3 (pos_embed_max_size 96, base_size 64),
    # a grid of another shape (each axis over its own length), and DiT's (base_size the grid: positions k,
    # MAE's table).
    table = get_2d_sincos_pos_embed(d_model, shape, base_size=base_size, interpolation_scale=1.0).float().numpy()
    assert table.dtype == numpy.float32 and table.shape == (shape[0] * shape[1], d_model)
    assert_close_to_exact(table, shape, d_model, "diffusers-2d", base_size, position_scale=base_size)
    if base_size == shape[0] == shape[1]:
        assert_close_to_exact(table, shape, d_model, "mae", base_size)


@pytest.mark.peers("numpy", "torch", "diffusers")
def test_sd3_patch_embed_buffer() -> None:
    from diffusers.models.embeddings import PatchEmbed

    embed = PatchEmbed(height=128, width=128, patch_size=2, in_channels=16, embed_dim=1536, pos_embed_max_size=96)
    table = embed.pos_embed.detach().numpy()[0]
    assert table.dtype == numpy.float32 and table.shape == (96 * 96, 1536)
    assert_close_to_exact(table, (96, 96), 1536, "sd3", 64)


@pytest.mark.peers("numpy", "torch", "transformers")
@pytest.mark.parametrize("shape", [(16, 16), (64, 64), (24, 40)])
def test_rt_detr_tables(shape: Tuple[int, int]) -> None:
    from transformers.models.rt_detr.modeling_rt_detr import build_2d_sinusoidal_position_embedding

    table = build_2d_sinusoidal_position_embedding(*shape, embed_dim=256, cls_token=True).numpy()
    assert table.dtype == numpy.float32 and table.shape == (shape[0] * shape[1] + 1, 256)
    assert_close_to_exact(table, shape, 256, "rt-detr", max(shape), prefix=1)


@pytest.mark.peers("numpy", "torch", "transformers")
def test_vit_mae_position_embeddings() -> None:
    from transformers import ViTMAEConfig, ViTMAEModel

    # ViT-MAE base: a 14 x 14 grid of 768, a class token's zero row first, the original MAE's x-first layout.
    # transformers 5.23's ViTMAEModel(config) leaves the table zero (its initialize_weights returns at once,
    # the patch projection being initialized first): the embeddings' own initialize_weights is run again.
    embeddings = ViTMAEModel(ViTMAEConfig(num_hidden_layers=1, intermediate_size=64)).embeddings
    embeddings.patch_embeddings.projection._is_hf_initialized = False
    embeddings.initialize_weights()
    table = embeddings.position_embeddings.detach().numpy()[0]
    assert table.dtype == numpy.float32 and table.shape == (1 + 14 * 14, 768)
    assert_close_to_exact(table, (14, 14), 768, "mae", 14, prefix=1)


@pytest.mark.peers("numpy", "torch", "transformers")
@pytest.mark.parametrize("name, preset", [("detr", "detr"), ("deformable_detr", "deformable-detr")])
@pytest.mark.parametrize("shape", [(16, 16), (64, 64), (24, 40)])
def test_detr_sine_tables(name: str, preset: str, shape: Tuple[int, int]) -> None:
    import importlib

    module = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
    cls = next(getattr(module, n) for n in dir(module) if n.endswith("SinePositionEmbedding"))
    embed = cls(128, normalize=True)
    out = embed(shape=(1, 3, *shape), device="cpu", dtype=torch.float32)
    table = out[0].permute(1, 2, 0).reshape(shape[0] * shape[1], 256).numpy()
    assert table.dtype == numpy.float32
    assert_close_to_exact(table, shape, 256, preset, 2 * math.pi)


@pytest.mark.peers("numpy", "torch", "positional_encodings")
@pytest.mark.parametrize(
    "shape, d_model", [((64, 64), 130), ((16, 16), 128), ((24, 40), 128), ((8, 16, 16), 96), ((8, 16, 16), 100)]
)
def test_tatp22_tables(shape: Tuple[int, ...], d_model: int) -> None:
    from positional_encodings.torch_encodings import PositionalEncoding2D, PositionalEncoding3D

    made = (PositionalEncoding2D if len(shape) == 2 else PositionalEncoding3D)(d_model)
    table = made(torch.zeros((1, *shape, d_model), dtype=torch.float32))[0].reshape(-1, d_model).numpy()
    assert table.dtype == numpy.float32
    assert_close_to_exact(table, shape, d_model, f"tatp22-{len(shape)}d", max(shape))


@pytest.mark.peers("numpy", "torch", "diffusers")
@pytest.mark.parametrize(
    "shape, d_model, spatial", [((8, 16, 16), 1920, 1.875), ((13, 30, 45), 480, 1.875), ((8, 16, 16), 64, 1.0)]
)
def test_diffusers_3d_tables(shape: Tuple[int, int, int], d_model: int, spatial: float) -> None:
    from diffusers.models.embeddings import get_3d_sincos_pos_embed

    t, h, w = shape
    table = get_3d_sincos_pos_embed(d_model, (w, h), t, spatial_interpolation_scale=spatial).float().numpy()
    assert table.dtype == numpy.float32 and table.shape == (t, h * w, d_model)
    preset = "cogvideox" if spatial != 1.0 else "diffusers-3d"
    assert_close_to_exact(table, shape, d_model, preset, max(shape))


@pytest.mark.peers("numpy", "torch")
@pytest.mark.parametrize("size", [16, 64])
def test_timm_sincos2d_table(size: int) -> None:
    # timm pulls torchvision, which does not install beside the CPU torch (README): its
    # build_sincos2d_pos_embed re-typed, in float32 as it computes: bands 1 / T**(arange(F) / F), the
    # grid's 'ij' coordinates times the bands, then [sin y, sin x, cos y, cos x].
    dim = 256
    bands = 1.0 / (10000.0 ** (torch.arange(dim // 4, dtype=torch.float32) / (dim // 4)))
    grid = torch.stack(torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")).flatten(1).transpose(0, 1)
    pos = grid[:, :, None].to(torch.float32) * bands
    table = torch.stack([torch.sin(pos), torch.cos(pos)], dim=1).flatten(1).numpy()
    assert_close_to_exact(table, (size, size), dim, "timm-sincos2d", size)
