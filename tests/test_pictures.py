"""--plot and --waves: PNG images decoded by a real decoder (Pillow), and their failures."""

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest
from PIL import Image

import pe_reference
from pe_reference import encoding
from tests.helpers import ROOT, run_main, subprocess_environment

RED, WHITE, BLUE = (178, 24, 43), (247, 247, 247), (33, 102, 172)


def run(*args: str) -> Tuple[int, str, str]:
    environment = subprocess_environment()
    process = subprocess.run(
        [sys.executable, "-m", "pe_reference", *args], capture_output=True, text=True, env=environment
    )
    return process.returncode, process.stdout, process.stderr


def decode(path: Path) -> Any:
    with Image.open(path) as image:
        image.verify()
    image = Image.open(path)
    assert image.format == "PNG" and image.mode == "RGB"
    return image.convert("RGB")


def test_heatmap_size_and_cell_colours(tmp_path: Path) -> None:
    path = tmp_path / "heat.png"
    assert run("4", "4", "--plot", str(path)) == (0, "", "")
    image = decode(path)
    # 4 x 4 cells of 192 x 128 pixels, margins of 90, 130 (sides), 60 and 70.
    assert image.size == (90 + 768 + 130, 60 + 512 + 70)
    table = encoding(4, 4)
    for pos in range(4):
        for dim in range(4):
            r, g, b = image.getpixel((90 + dim * 192 + 96, 60 + pos * 128 + 64))
            value = table[pos][dim]
            if value > 0.99:
                assert (r, g, b) == RED
            elif value > 0.1:
                assert r > b, (pos, dim, value)
            elif value < -0.1:
                assert b > r, (pos, dim, value)
            elif value == 0.0:
                assert (r, g, b) == WHITE
    # The margins are pure white (the colour map's zero is a grey white): the corners, the top margin's middle.
    for point in ((0, 0), (image.size[0] - 1, image.size[1] - 1), (image.size[0] // 2, 5)):
        assert image.getpixel(point) == (255, 255, 255), point


def test_heatmap_cells_are_framed_by_a_line_outside_them_and_ticked_from_outside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 4 x 4 cells of 192 x 128 pixels from (90, 60): every pixel of a cell is the cell's colour, the frame
    # is the one-pixel line just outside them, and each tick stands outside the frame.
    path = tmp_path / "heat.png"
    assert run_main(capsys, "4", "4", "--plot", str(path))[0] == 0
    image = decode(path)
    axis = (40, 40, 40)
    left, top, width, height = 90, 60, 768, 512
    for y in range(top, top + height):
        row = [image.getpixel((x, y)) for x in range(left, left + width)]
        assert row == [row[c * 192 + 96] for c in range(4) for _ in range(192)], y
        assert axis not in row and image.getpixel((left - 1, y)) == image.getpixel((left + width, y)) == axis
    for x in range(left - 1, left + width + 1):
        assert image.getpixel((x, top - 1)) == image.getpixel((x, top + height)) == axis, x
    for pos in range(4):  # position ticks: 6 pixels left of the cells
        assert [image.getpixel((x, top + pos * 128 + 64)) for x in range(left - 6, left)] == [axis] * 6
    for dim in range(4):  # dimension ticks: 6 pixels below them
        assert [image.getpixel((left + dim * 192 + 96, y)) for y in range(top + height, top + height + 6)] == [axis] * 6


def test_heatmap_has_a_colour_bar_and_labels(tmp_path: Path) -> None:
    path = tmp_path / "heat.png"
    assert run("50", "64", "--plot", str(path))[0] == 0
    image = decode(path)
    width, height = image.size
    bar_x = width - 130 + 30 + 12
    assert image.getpixel((bar_x, 60)) == RED  # 1 at the top
    assert image.getpixel((bar_x, 60 + (height - 130) - 1)) == BLUE  # -1 at the bottom
    # Some dark text in the title line, nothing else there.
    title = [image.getpixel((x, y)) for x in range(90, 400) for y in range(18, 32)]
    assert any(pixel == (40, 40, 40) for pixel in title)


@pytest.mark.at_size
def test_large_tables_are_sampled(tmp_path: Path) -> None:
    path = tmp_path / "big.png"
    assert run("5000", "1024", "--plot", str(path), "--exact")[0] == 0
    image = decode(path)
    assert image.size == (90 + 768 + 130, 60 + 512 + 70)


def test_waves(tmp_path: Path) -> None:
    path = tmp_path / "waves.png"
    assert run("100", "16", "--waves", str(path)) == (0, "", "")
    image = decode(path)
    assert image.size == (190 + 800 + 30, 60 + 8 * 70 + 70)
    # Strip 1 is cos over the positions: at position 0 it is 1, at the top of its strip, in blue.
    middle, amplitude = 60 + 70 + 35, 35 - 9
    assert image.getpixel((190, middle - amplitude)) == BLUE
    # Strip 0 is sin: at position 0 it is 0, on the strip's middle line, in red.
    assert image.getpixel((190, 60 + 35)) == RED


def test_the_waves_say_their_width_and_mark_1_and_minus_1_on_each_strip(monkeypatch: pytest.MonkeyPatch) -> None:
    texts: List[Tuple[int, int, str]] = []
    original = pe_reference._Canvas.text

    def record(self: Any, x: int, y: int, text: str, *rest: Any) -> int:
        texts.append((x, y, text))
        return original(self, x, y, text, *rest)

    monkeypatch.setattr(pe_reference._Canvas, "text", record)
    image = Image.open(io.BytesIO(pe_reference._waves(pe_reference._Request(100, 12)))).convert("RGB")
    assert texts[0][2] == "D_MODEL = 12: THE FIRST 8 DIMENSIONS OVER 100 POSITIONS"
    for dim in range(8):
        middle, amplitude = 60 + 70 * dim + 35, 35 - 9
        # Each mark's text sits at the height of the value it names, beside a tick drawn there, left of the plot.
        for mark, y in (("1", middle - amplitude), ("-1", middle + amplitude)):
            (x, top, _), *_ = [found for found in texts if found[2] == mark and found[1] == y - 3]
            assert x + len(mark) * 6 - 1 <= 190 - 10
            # (the tick's last pixel may be under a curve starting at that value)
            assert all(image.getpixel((190 - 6 + k, y)) == (40, 40, 40) for k in range(5))
    # A cosine at position 0 is 1: its strip's curve starts at the height of its 1 mark.
    assert image.getpixel((190, 60 + 70 + 35 - (35 - 9))) == BLUE


def test_waves_of_a_narrow_table(tmp_path: Path) -> None:
    path = tmp_path / "waves.png"
    assert run("10", "3", "--waves", str(path))[0] == 0
    assert decode(path).size == (190 + 800 + 30, 60 + 3 * 70 + 70)


@pytest.mark.parametrize("option", ["--plot", "--waves"])
def test_a_picture_prints_the_table_only_when_a_format_is_asked(
    tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # In this process, so that the mutation script's coverage run credits it (a subprocess is not).
    assert run_main(capsys, "3", "4", option, str(tmp_path / "a.png")) == (0, "", "")
    status, out, _ = run_main(capsys, "3", "4", option, str(tmp_path / "b.png"), "--format", "csv")
    assert status == 0 and len(out.splitlines()) == 3
    assert sorted(os.listdir(tmp_path)) == ["a.png", "b.png"]


@pytest.mark.parametrize("option", ["--plot", "--waves"])
def test_unwritable_path_exits_2_and_leaves_nothing(tmp_path: Path, option: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for target in (tmp_path / "missing" / "p.png", blocker / "p.png"):
        status, out, err = run("4", "4", option, str(target))
        assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith(f"python3 -m pe_reference: error: cannot write {target}: ")
        assert not target.exists()
    assert sorted(os.listdir(tmp_path)) == ["a-file"]


def test_a_failed_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "heat.png"

    def failing_replace(source: str, destination: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    status = pe_reference.main(["4", "4", "--plot", str(target)])
    assert status == 2
    assert os.listdir(tmp_path) == []


def test_picture_usage_errors(tmp_path: Path) -> None:
    picture = str(tmp_path / "x.png")
    for args in (["0", "4", "--plot", picture], ["4", "4", "--explain", "--waves", picture]):
        status, out, err = run(*args)
        assert status == 2 and "need a table of at least one position, and no --explain" in err
    assert os.listdir(tmp_path) == []


def test_committed_pictures_are_what_the_readme_command_makes(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # --exact: the same bits, and so the same pixels, on every platform.
    for name, args in (
        ("heatmap.png", ["100", "128", "--exact", "--plot"]),
        ("waves.png", ["100", "16", "--exact", "--waves"]),
    ):
        command = "python3 -m pe_reference " + " ".join(args) + f" docs/{name}"
        assert command in readme and f"](docs/{name})" in readme
        made = tmp_path / name
        assert run(*args, str(made))[0] == 0
        assert decode(made).tobytes() == decode(ROOT / "docs" / name).tobytes()


@pytest.mark.parametrize("draw", ["_heatmap", "_waves"])
def test_picture_axes_show_positions_not_rows(monkeypatch: pytest.MonkeyPatch, draw: str) -> None:
    texts: List[str] = []
    original = pe_reference._Canvas.text

    def record(self: Any, x: int, y: int, text: str, *rest: Any) -> int:
        texts.append(text)
        return original(self, x, y, text, *rest)

    monkeypatch.setattr(pe_reference._Canvas, "text", record)
    # Rows 0..99 of fairseq's table are positions 2..101: the ticks at rows 0, 20, 40 say 2, 22, 42.
    getattr(pe_reference, draw)(pe_reference._Request(100, 8, convention=pe_reference.PRESETS["fairseq"]))
    assert {"2", "22", "42"} <= set(texts) and not {"20", "40"} & set(texts), texts


# ---------------------------------------------------------------------------
# The waves' sampling, and colours outside -1 to 1
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seq_len", [2000, 801, 100, 2])
def test_the_waves_sample_one_row_per_pixel_column_from_the_first_row_to_the_last(
    monkeypatch: pytest.MonkeyPatch, seq_len: int
) -> None:
    asked: List[List[int]] = []
    original = pe_reference._Request.sampled_rows

    def record(self: Any, indices: List[int]) -> Iterator[List[float]]:
        asked.append(list(indices))
        return original(self, indices)

    monkeypatch.setattr(pe_reference._Request, "sampled_rows", record)
    assert pe_reference._waves(pe_reference._Request(seq_len, 2)).startswith(b"\x89PNG\r\n\x1a\n")
    (indices,) = asked
    # The plot is 800 pixels wide: every row when there are fewer, else 800 rows spread evenly.
    assert indices[0] == 0 and indices[-1] == seq_len - 1
    assert indices == sorted(set(indices))
    if seq_len <= 800:
        assert indices == list(range(seq_len))
    else:
        assert len(indices) == 800
        spacing = (seq_len - 1) / 799
        steps = {indices[i + 1] - indices[i] for i in range(len(indices) - 1)}
        assert steps <= {int(spacing), int(spacing) + 1}


def test_a_colour_outside_minus_1_to_1_is_the_colour_of_the_nearer_end() -> None:
    # Pictures of a scaled table hold values past 1: they take the end colours, not colours of their own.
    for far in (1.5, 2.0, 1e300):
        assert pe_reference._colour(far) == pe_reference._colour(1.0)
        assert pe_reference._colour(-far) == pe_reference._colour(-1.0)
    assert pe_reference._colour(-1.0) != pe_reference._colour(-0.9)


def test_the_colour_map_passes_through_its_five_stops_and_is_straight_between_them() -> None:
    # ColorBrewer's RdBu stops at -1, -0.5, 0, 0.5 and 1 (the README's heatmap), and between two stops each
    # channel moves linearly: at a quarter, a quarter of the way, rounded to the nearest integer.
    stops = {
        -1.0: (33, 102, 172),
        -0.5: (146, 197, 222),
        0.0: (247, 247, 247),
        0.5: (244, 165, 130),
        1.0: (178, 24, 43),
    }
    for x, colour in stops.items():
        assert pe_reference._colour(x) == colour
    for (x0, c0), (x1, c1) in zip(list(stops.items()), list(stops.items())[1:]):
        for t in (0.25, 0.5, 0.75):
            expected = tuple(int(a + (b - a) * t + 0.5) for a, b in zip(c0, c1))
            assert pe_reference._colour(x0 + (x1 - x0) * t) == expected, (x0, t)


# (start, end, the points between them, both included): horizontal, vertical, diagonal, each way.
LINES = [
    ((5, 10), (20, 10), [(x, 10) for x in range(5, 21)]),
    ((12, 25), (12, 4), [(12, y) for y in range(25, 3, -1)]),
    ((20, 3), (8, 15), [(20 - k, 3 + k) for k in range(13)]),
]


@pytest.mark.parametrize("start, end, points", LINES)
def test_a_line_of_thickness_3_paints_the_3_by_3_square_centred_on_each_of_its_points(
    start: Tuple[int, int], end: Tuple[int, int], points: List[Tuple[int, int]]
) -> None:
    canvas = pe_reference._Canvas(30, 30)
    canvas.line(*start, *end, (0, 0, 0), thickness=3)
    painted = {(i % 30, i // 30) for i in range(900) if canvas.pixels[3 * i] == 0}
    assert painted == {(x + a, y + b) for x, y in points for a in (-1, 0, 1) for b in (-1, 0, 1)}


def test_a_grids_tiles_vary_along_their_own_axis(tmp_path: Path) -> None:
    # A 6 x 10 grid, MAE's columns, d_model 16: a tile for each of sin_y0..3 (top band), sin_x0..3 (bottom),
    # cells of 128 // 10 = 12 pixels, tiles 40 apart from x = 60, bands from y = 60, 132 + 20 apart.
    path = tmp_path / "grid.png"
    assert run("6x10", "16", "--preset", "mae", "--exact", "--plot", str(path)) == (0, "", "")
    image = decode(path)
    table = encoding((6, 10), 16, preset="mae", exact=True)
    names = ["sin_x0", "sin_x1", "sin_x2", "sin_x3", "cos_x0", "cos_x1", "cos_x2", "cos_x3"]
    names += [name.replace("x", "y") for name in names]
    for band, letter in enumerate("yx"):
        for place in range(4):
            column = names.index(f"sin_{letter}{place}")
            x0, y0 = 60 + place * (120 + 40), 60 + band * (72 + 40 + 20)
            for i in range(6):
                for j in range(10):
                    colour = image.getpixel((x0 + j * 12 + 6, y0 + i * 12 + 6))
                    value = table[i * 10 + j][column]
                    if value > 0.1:
                        assert colour[0] > colour[2], (letter, place, i, j, value)
                    elif value < -0.1:
                        assert colour[2] > colour[0], (letter, place, i, j, value)
                    # y's columns change down the tile only, x's across it only.
                    same = (i, 0) if letter == "y" else (0, j)
                    assert colour == image.getpixel((x0 + same[1] * 12 + 6, y0 + same[0] * 12 + 6))


def test_the_committed_grid_picture_is_what_the_tutorials_command_makes(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "tutorial" / "4-odd-widths-and-conventions.md").read_text(encoding="utf-8")
    args = ["16x16", "64", "--preset", "mae", "--exact", "--plot"]
    assert "python3 -m pe_reference " + " ".join(args) + " docs/grid.png" in page and "](../grid.png)" in page
    made = tmp_path / "grid.png"
    assert run(*args, str(made))[0] == 0
    assert decode(made).tobytes() == decode(ROOT / "docs" / "grid.png").tobytes()
