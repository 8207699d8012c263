"""The numbers the pages state in prose, recomputed here without pe_reference.

Each test computes a claim independently (mpmath, numpy, or plain float
arithmetic) and checks that the page states that result, and no longer the
sentence it replaced (issue 15).  The doctests beside each sentence compute
the same numbers with pe_reference; these tests guard against both drifting.
"""

import math
import re
import struct
from typing import List, Tuple

import mpmath
import pytest
from tests import reference
from tests.helpers import ROOT, need


def page(name: str) -> str:
    """A page's text with its lines joined (and quotation marks "> " dropped), so that a phrase split across lines is found."""
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    return " ".join(" ".join(line[2:] if line.startswith("> ") else line for line in lines).split())


# Tutorial 5: which columns of a float32 table carry the large errors.


def test_tutorial_5_names_the_columns_with_the_large_errors() -> None:
    numpy = need("numpy")
    d_model, seq_len = 512, 5000
    # The page's pipeline: float32 exponent, float64 exp rounded to float32, float32 product, float64 sin rounded.
    step = float(numpy.float32(-math.log(10000.0) / d_model))
    twice_pair = (numpy.arange(d_model) // 2 * 2).astype(numpy.float64)
    exponent = (twice_pair * step).astype(numpy.float32)
    w = numpy.exp(exponent.astype(numpy.float64)).astype(numpy.float32)
    angle = (numpy.arange(seq_len, dtype=numpy.float32)[:, None] * w[None, :]).astype(numpy.float64)
    sine = numpy.arange(d_model) % 2 == 0
    got = numpy.where(sine, numpy.sin(angle), numpy.cos(angle)).astype(numpy.float32).astype(numpy.float64)
    # The reference: float64 angles of the real formula, within 1e-12 of the true values here.
    true_angle = numpy.arange(seq_len, dtype=numpy.float64)[:, None] * 10000.0 ** (-twice_pair / d_model)[None, :]
    true_table = numpy.where(sine, numpy.sin(true_angle), numpy.cos(true_angle))
    worst = numpy.abs(got - true_table).max(axis=0)
    middle = worst[2:14]
    last = worst[510:].max()
    # The large errors are in the first columns, the small ones in the last.
    assert middle.min() > 1000 * last
    assert true_angle[-1, -1] < 0.52
    text = page("docs/tutorial/5-precision.md")
    assert "the last columns of a 5000-position table have errors of that size" not in text
    for figure in (worst[0], worst[1], middle.min(), middle.max(), last):
        assert f"{figure:.1e}" in text, f"{figure:.1e}"
    assert 2 + int(middle.argmax()) == 8 and "the worst being column 8" in text
    assert "Rounding the frequency costs as much as rounding the angle" in text


def test_the_fast_path_examples_at_large_positions_use_a_column_that_errs() -> None:
    # Column 0 divides by 10000**0 = 1: the float64 angle is the position itself, exact.
    assert 10**9 / 10000 ** (0 / 512) == 10**9
    column_0 = reference.distance(math.sin(1e9), reference.element(10**9, 0, 512, 10000))
    assert column_0 <= 2.0**-53
    # The fast formula's error in every column at 10**9, against mpmath: largest among the first columns (their
    # angles are the largest), falling quarter by quarter, and column 2's small.
    errors = [
        float(
            reference.distance(
                (math.sin if dim % 2 == 0 else math.cos)(10**9 / 10000 ** (2 * (dim // 2) / 512)),
                reference.element(10**9, dim, 512, 10000),
            )
        )
        for dim in range(512)
    ]
    worst = max(range(512), key=lambda dim: errors[dim])
    quarters = [max(errors[start : start + 128]) for start in range(0, 512, 128)]
    assert worst < 16 and quarters == sorted(quarters, reverse=True) and errors[2] < errors[worst] / 100
    tutorial = page("docs/tutorial/5-precision.md")
    assert f"the worst of all 512 is column {worst}" in tutorial
    for error in (errors[worst], errors[2], errors[3]):
        assert f"{error:.1e}" in tutorial, f"{error:.1e}"
    assert "The error does not grow with the column" in tutorial
    # Columns 2 and 3 share their angle: the sine is off by less because its slope, the cosine, is small there.
    slope = abs(math.cos(10**9 / 10000 ** (2 / 512)))
    assert slope < 0.2 and errors[2] < errors[3] / 4
    assert f"where its slope, the cosine, is {slope:.2f}" in tutorial
    # No page shows the fast path at column 0 as its error at a large position: a
    # comparison there may only say that the two agree to the last bit.
    for name in ("README.md", "docs/tutorial/5-precision.md", "docs/accuracy.md"):
        text = page(name)
        assert not re.search(r"fast, exact = value\(10\*\*[69], 0, 512\)", text), name
        for bound in re.findall(r"abs\(value\(10\*\*[69], 0, 512\) - [^<]*< ([0-9.e-]+)", text):
            assert float(bound) <= 1e-15, (name, bound)


def test_accuracy_page_adds_the_denominator_to_the_half_ulp() -> None:
    # The table's worst element at 10**9: the fast formula against mpmath.
    pos, dim = 10**9 + 9, 4
    angle = pos / 10000 ** (4 / 512)
    error = reference.distance(math.sin(angle), reference.element(pos, dim, 512, 10000))
    half_ulp = 2.0 ** (math.frexp(angle)[1] - 54)
    assert error > 1.5 * half_ulp
    text = page("docs/accuracy.md")
    assert f"{float(error):.2e}" in text and f"{half_ulp:.1e}" in text
    # The sentence no longer bounds the error by the half ulp alone.
    assert "an absolute error of up to half an ulp of the angle, which grows with the position" not in text
    assert "the denominator's relative error, times the angle, adds to the division's" in text


# The longest wavelength, the odd width, the two spacings, the runtimes.


def test_the_longest_wavelength_is_the_last_pairs() -> None:
    # d_model = 4, base 100: pair 1 is the last, wavelength 2 pi 100**(2/4).
    with mpmath.workprec(100):
        longest = 2 * mpmath.pi * mpmath.power(100, mpmath.mpf(2) / 4)
        last_of_512 = 2 * mpmath.pi * mpmath.power(10000, mpmath.mpf(510) / 512)
    assert abs(longest - 62.83) < 0.005
    index = page("docs/index.md")
    assert "changes the longest wavelength, `2*pi*base`" not in index
    assert "`2*pi*base**((d_model-2)/d_model)`" in index and f"{float(longest):.2f}" in index
    # The paper's own phrase, "from 2 pi to 10000 * 2 pi", overstates the last one.
    assert round(float(last_of_512)) == 60611
    assert "from 2 pi to 10000 times 2 pi" not in index
    assert "from 2 pi to 10000 times 2 pi" not in page("docs/tutorial/2-wavelengths.md")


def test_an_odd_width_breaks_the_cosines_not_the_sines() -> None:
    numpy = need("numpy")
    # The PyTorch tutorial's assignments, in numpy, at d_model = 5.
    d_model = 5
    table = numpy.zeros((4, d_model))
    position = numpy.arange(4)[:, None]
    div_term = numpy.exp(numpy.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    table[:, 0::2] = numpy.sin(position * div_term)
    with pytest.raises(ValueError):
        table[:, 1::2] = numpy.cos(position * div_term)
    tutorial = page("docs/tutorial/4-odd-widths-and-conventions.md")
    assert "assigning `d/2 + 1` sines to `d/2` columns" not in tutorial
    assert "but the three cosines do not fit the two columns 1 and 3" in tutorial
    # conventions.md no longer credits the odd rule to code that fails on an odd width.
    conventions = page("docs/conventions.md")
    assert "tutorial and the Annotated Transformer compute this table." not in conventions
    assert "compute this table for an even `d_model`; with an odd one their code fails" in conventions


def test_the_pages_agree_on_how_far_the_two_spacings_differ() -> None:
    d_model, h = 512, 256

    def row_difference(pos: int) -> float:
        worst = mpmath.mpf(0)
        with mpmath.workprec(100):
            for i in range(h):
                paper = pos * mpmath.power(10000, -mpmath.mpf(2 * i) / d_model)
                t2t = pos * mpmath.power(10000, -mpmath.mpf(i) / (h - 1))
                worst = max(worst, abs(mpmath.sin(paper) - mpmath.sin(t2t)), abs(mpmath.cos(paper) - mpmath.cos(t2t)))
        return float(worst)

    at_1, at_3 = round(row_difference(1), 5), round(row_difference(3), 5)
    assert at_1 > 1e-3 and at_3 > 1e-3
    for name in ("docs/checking.md", "docs/tutorial/4-odd-widths-and-conventions.md"):
        assert str(at_3) in page(name), name
    assert str(at_1) in page("docs/checking.md")


def test_the_readme_names_the_cpython_versions_ci_runs() -> None:
    runtimes = (ROOT / ".ci" / "runtimes").read_text(encoding="utf-8")
    minors = re.search(r"for minor in ([0-9. ]+); do", runtimes)
    assert minors is not None
    versions = minors.group(1).split()
    readme = page("README.md")
    assert f"CPython {versions[0]}-{versions[-1]}," in readme
    assert not re.search(r"CPython 3\.8-3\.(?!" + versions[-1].split(".")[1] + r"\b)\d+", readme)


# Tutorial 3: the dot product's rises, and the paper's hypothesis.


def test_tutorial_3_shows_where_the_dot_product_rises() -> None:
    d_model = 64
    # PE(pos) . PE(pos + k) = sum of cos(k w_i): no position in it.
    with mpmath.workprec(100):
        frequencies = [mpmath.power(10000, -mpmath.mpf(2 * i) / d_model) for i in range(d_model // 2)]
        products = [sum(mpmath.cos(k * w) for w in frequencies) for k in range(100)]
    rises = [k for k in range(1, 100) if products[k] > products[k - 1]]
    assert rises[:4] == [6, 11, 12, 17]
    text = page("docs/tutorial/3-relative-positions.md")
    assert "though not steadily" not in text
    assert str(rises[:12]) in text
    assert f"distance 43 gives {float(products[43]):.1f} where distance 40 gave {float(products[40]):.1f}" in text
    # The paper's reason is quoted as its hypothesis, not stated as a fact.
    assert "This is the property the paper gives for the choice: a model can attend by relative position" not in text
    assert "we hypothesized it would allow the model to easily learn to attend by relative positions" in text


# The learner's path: the README first, every page says how to run it, the notation, the pictures.


def test_the_readme_leads_with_the_learners_path() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tutorial = readme.index("](docs/tutorial/1-the-formula.md)")
    # In a newcomer's order: what it is (d_model among it), the two commands, the tutorial, what it prints,
    # checking one's own table (within the first 120 lines), using it in one's project, then the reference.
    order = ["## Two commands", "## Learn the encoding", "## What it prints", "## Check your own table"]
    order += ["## Use it in your own project", "## What else it does", "## Command line"]
    places = [readme.index(heading) for heading in order]
    assert readme.index("`d_model` is the model's width") < places[0] and places == sorted(places)
    assert places[1] < tutorial < places[2]
    assert readme[: places[3]].count("\n") < 120
    pages = sorted(path.name for path in (ROOT / "docs" / "tutorial").glob("*.md"))
    for name in pages:
        assert f"](docs/tutorial/{name})" in readme, name
    assert "value(10**9, 100, 512" in readme


def test_every_page_says_how_to_run_its_examples() -> None:
    for path in sorted((ROOT / "docs").rglob("*.md")):
        name = path.relative_to(ROOT).as_posix()
        assert f"python3 -m doctest {name}" in page(name), name
    assert "python3 -m doctest README.md" in page("README.md")


def test_the_derivation_notation_is_explained_where_it_first_appears() -> None:
    for name in ("README.md", "docs/index.md", "docs/tutorial/1-the-formula.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        first = text.index("pos₁₂")
        assert text.index('reads "position 1, column 2"') <= first + 40, name
        assert "`pos₁₂,₃` is position 12, column 3" in page(name), name


def test_the_captions_say_where_the_cosine_columns_turn_negative() -> None:
    # Column 2i + 1 of the 100 x 128 heatmap first turns negative at the position (pi/2) 10000**(2i/128).
    with mpmath.workprec(100):
        turning = {
            2 * i + 1: int(mpmath.ceil(mpmath.pi / 2 * mpmath.power(10000, mpmath.mpf(2 * i) / 128))) for i in range(64)
        }
    last = max(dim for dim, pos in turning.items() if pos <= 99)
    assert last == 57
    for name in ("README.md", "docs/tutorial/2-wavelengths.md"):
        text = page(name)
        assert f"past column {last}" in text and "beyond position 99" in text, name
        # The waves picture joins whole positions: pair 0's wavelength, 2 pi, is about 6.28 of them.
        assert "about 6.28" in text and "jagged triangles" in text, name
    assert "](../heatmap.png)" in page("docs/tutorial/2-wavelengths.md")
    assert "](../waves.png)" in page("docs/tutorial/2-wavelengths.md")


# Issue 26: the formula's lines linked from page 1, and four sentences made true.


def test_page_1_links_the_lines_that_compute_the_formula() -> None:
    text = (ROOT / "docs/tutorial/1-the-formula.md").read_text(encoding="utf-8")
    found = re.search(r"\]\(\.\./\.\./pe_reference\.py#L(\d+)-L(\d+)\)", text)
    assert found, "page 1 links no lines of pe_reference.py"
    first, last = int(found.group(1)), int(found.group(2))
    lines = (ROOT / "pe_reference.py").read_text(encoding="utf-8").splitlines()[first - 1 : last]
    # From the base's comment to _paper_row's return, with the denominators between: update the link if it moved.
    assert lines[0].startswith("# The base of the paper"), lines[0]
    assert lines[-1] == "    return row", lines[-1]
    code = "\n".join(lines)
    assert "DEFAULT_BASE = 10000.0" in code and "def _denominator(" in code and "def _paper_row(" in code
    assert "math.pow(base, exponent[0] / exponent[1])" in code and "map(math.sin, angles)" in code
    assert sum(1 for line in lines if line.startswith("def ")) == 2


def test_page_2_says_how_far_short_of_10000_times_2_pi_the_longest_wavelength_is() -> None:
    text = page("docs/tutorial/2-wavelengths.md")
    assert "from 2 pi to almost 10000 times 2 pi" not in text
    with mpmath.workprec(60):
        shares = {d: float(mpmath.power(10000, mpmath.mpf(-2) / d)) for d in (512, 64, 16)}
        slowest_of_16 = float(2 * mpmath.pi * mpmath.power(10000, mpmath.mpf(14) / 16))
    assert [round(shares[d], 3) for d in (512, 64, 16)] == [0.965, 0.75, 0.316]
    assert "0.965 at `d_model = 512`, but only 0.32 at `d_model = 16`" in text
    assert f"once every {round(slowest_of_16)} positions" in text


def test_page_3_says_nothing_undoes_the_rotation_and_shows_sines_alone_fail() -> None:
    text = page("docs/tutorial/3-relative-positions.md")
    assert "mix the pairs and undo it" not in text and "where they can undo it" not in text
    assert "nothing undoes it; what is lost is the dependence on the distance alone" in text

    # Scaling a pair's sine and cosine unequally (no mixing) also makes the score depend on where the rows sit.
    def row(pos: int) -> List[Tuple[float, float]]:
        return [(math.sin(pos * 10000 ** (-2 * i / 8)), math.cos(pos * 10000 ** (-2 * i / 8))) for i in range(4)]

    def stretched(m: int, n: int) -> float:
        return sum(s * t + 2 * c * d for (s, c), (t, d) in zip(row(m), row(n)))

    assert len({round(stretched(m, m + 5), 6) for m in (0, 10, 20)}) == 3
    assert "or scale a pair's sine and cosine unequally" in text
    # Sines alone: positions 0 and 22 (w = 1) have nearly equal sines and opposite ones five positions on.
    assert abs(math.sin(0) - math.sin(22)) < 0.01 and math.sin(5) < -0.95 and math.sin(27) > 0.95
    assert math.cos(0) == 1.0 and math.cos(22) < -0.9999
    assert "positions 0 and 22 have sines 0 and -0.009" in text


def test_page_5_says_the_error_passes_at_most_unchanged_and_where_it_is_largest() -> None:
    text = page("docs/tutorial/5-precision.md")
    assert "pass the error on unchanged" not in text and "column 100 by" not in text
    # The sine's slope is at most 1: over many angles and steps, the change is at most the step.
    for k in range(1000):
        angle, step = k * 0.0137, 2.0**-11
        assert abs(math.sin(angle + step) - math.sin(angle)) <= step * (1 + 2.0**-40)
    assert "Sine and cosine pass that error on at most unchanged" in text


# docs/checking.md: the default rule's spacings and thresholds, recomputed from the formats' bits.


def next_up(x: float, fmt: str) -> float:
    """The next number above x > 0 in a format, from its bits (bfloat16: float32's upper half)."""
    if fmt == "bfloat16":
        bits = struct.unpack("<I", struct.pack("<f", x))[0] >> 16
        return float(struct.unpack("<f", struct.pack("<I", (bits + 1) << 16))[0])
    code, unsigned = {"float32": ("f", "I"), "float16": ("e", "H")}[fmt]
    bits = struct.unpack("<" + unsigned, struct.pack("<" + code, x))[0]
    return float(struct.unpack("<" + code, struct.pack("<" + unsigned, bits + 1))[0])


def test_checking_states_the_formats_spacings_and_the_rules_thresholds() -> None:
    text = page("docs/checking.md")
    # float32's spacing: 2**-10 from 8192 up to 16384, 2**-9 from 16384 up to 32768.
    assert next_up(8192.0, "float32") - 8192.0 == next_up(16383.0, "float32") - 16383.0 == 2.0**-10
    assert next_up(16384.0, "float32") - 16384.0 == next_up(32767.0, "float32") - 32767.0 == 2.0**-9
    assert "float32's numbers past 16384 are `2**-10` apart" not in text
    assert "float32's numbers from 8192 to 16384 are `2**-10` apart, and from 16384 to 32768 `2**-9`" in text
    # Just below 1, where the values lie, bfloat16's numbers are 2**-8 apart and float16's 2**-11.
    assert 1.0 - 0.99609375 == 2.0**-8 and next_up(0.99609375, "bfloat16") == 1.0
    assert next_up(1.0 - 2.0**-11, "float16") == 1.0
    assert "whose numbers near 1 are `2**-8` and `2**-11` apart" in text
    # bfloat16's 8 bits hold 256 but not 257 (its neighbours are 256 and 258).
    assert next_up(256.0, "bfloat16") == 258.0 and "bfloat16 cannot even hold position 257" in text

    # u = 2**(5 - q) (1 + |angle|): judged to 2**-10 while u <= 2**-10, coarse while u <= 2**-4.
    def last_angle(q: int, limit: float) -> int:
        # The largest whole angle whose u is within the limit: the next one's is not.
        a = int(limit * 2 ** (q - 5)) - 1
        assert 2.0 ** (5 - q) * (1 + a) <= limit < 2.0 ** (5 - q) * (2 + a)
        return a

    assert (last_angle(24, 2.0**-10), last_angle(24, 2.0**-4), last_angle(53, 2.0**-10)) == (511, 32767, 2**38 - 1)
    assert "angles up to 511 when the table is computed in float32, up to `2**38 - 1` in float64" in text
    assert "(angles 512 to 32767 in float32)" in text and "(angles past 32767 in float32)" in text
    # Judged to 2**-10, the float32 allowance with the storing is at most 2**-10 + 2**-24, below 1e-3.
    assert 2.0**-10 + 2.0**-24 < 1e-3 and "the allowance there is at most `2**-10 + 2**-24`" in text

    # The paper's float32 tables' elements past angle 511 (coarse) and past 32767 (not judged), by their float64
    # angles position * 10000**(-2i/512): a share of each whole table (a sine and a cosine per angle).
    def share(rows: int, low: float, high: float) -> float:
        frequencies = [float(10000.0 ** (-2 * i / 512)) for i in range(256)]
        return sum(
            max(0, min(rows, math.floor(high / w) + 1) - min(rows, math.floor(low / w) + 1)) for w in frequencies
        ) / (rows * 256)

    coarse_4096, coarse, not_judged = share(4096, 511, 32767), share(131072, 511, 32767), share(131072, 32767, 1e12)
    assert f"{100 * coarse_4096:.1f}% of a whole 4096 x 512 table computed in float32" in text
    assert f"{100 * coarse:.1f}% of a 131072 x 512 one, whose last {100 * not_judged:.1f}% are not judged" in text
    # At width 2 (one pair, frequency 1) most of 70000 positions are past angle 32767.
    assert (
        2 * (70000 - 32768) > 70000 and "A float32 table of 70000 positions at width 2 has most of its elements" in text
    )

    # Ulps across zero: the float64 and float16 numbers from cos 2 (the example's exact value) to 0.5.
    def ordinal(x: float, code: str, unsigned: str, sign: int) -> int:
        bits = int(struct.unpack("<" + unsigned, struct.pack("<" + code, x))[0])
        return -(bits - sign) if bits >= sign else bits

    apart = [
        ordinal(0.5, c, u, s) - ordinal(math.cos(2), c, u, s) for c, u, s in (("d", "Q", 1 << 63), ("e", "H", 1 << 15))
    ]
    assert f"{apart[0]:.1e}" == "9.2e+18" and "lie about `9.2e18` float64 numbers" in text
    assert f"in float16 the same two values are {apart[1]:,} apart" in text
    # bfloat16's 8 bits hold every whole number up to 256, not 257.
    assert next_up(255.0, "bfloat16") == 256.0 and "bfloat16 holds whole numbers only up to 256" in text


def test_tutorial_sentences_a_learner_could_not_parse_are_rewritten() -> None:
    gone = {
        "docs/tutorial/3-relative-positions.md": "with successors as far apart, go on without end",
        "docs/tutorial/2-wavelengths.md": "It is the share `10000^(-2/d_model)` of it",
        "docs/tutorial/5-precision.md": "while the format's spacing grows with it",
        "docs/tutorial/4-odd-widths-and-conventions.md": "[5] * 2",
    }
    for name, sentence in gone.items():
        assert sentence not in page(name), name
    assert "Column 0 at the whole positions the picture joins:" not in page("docs/tutorial/2-wavelengths.md")
    # Page 3: positions past 22 whose sines are closer still to 0 have, five positions on, a sine near 0.959 again.
    for n in (355, 104348):
        assert abs(math.sin(n)) < abs(math.sin(22)) and abs(math.sin(n + 5) - 0.959) < 1e-3
    assert "past 22 there are positions whose sines are closer still to 0" in page(
        "docs/tutorial/3-relative-positions.md"
    )


# docs/rope.md: the counts, spacings and thresholds its prose states, recomputed without pe_reference.


def test_rope_states_the_formats_counts_the_bounds_and_the_bands() -> None:
    text = page("docs/rope.md")
    # candle#3520: bfloat16 holds 15962 as 15936; its neighbours are 15936 and 16000, 64 apart.
    assert next_up(15936.0, "bfloat16") == 16000.0 and 15962 - 15936 < 16000 - 15962
    held = float(
        struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", 15962.0))[0] >> 16 << 16))[0]
    )
    assert held == 15936.0  # bfloat16 rounds 15962 (26 above 15936, 38 below 16000) down
    assert (round(math.cos(15962), 3), round(math.cos(15936), 3)) == (-0.908, -0.268)
    assert (
        "bf16 holds 15962 as 15936 (neighbours 15936 and 16000, 64 apart; not 15968); cos(15962) = -0.908, cos(15936) = -0.268"
        in text
    )
    # Megatron-LM#535: positions 0 to 32767 in float16 take 6145 values, 16 apart from 16384 on; 32760 to 32767 round up.
    as_float16 = [struct.unpack("<e", struct.pack("<e", float(p)))[0] for p in range(32768)]
    assert len(set(as_float16)) == 6145 and next_up(16384.0, "float16") - 16384.0 == 16.0
    assert set(as_float16[32760:]) == {32768.0} and as_float16[32759] == 32752.0
    assert (
        "32768 positions hold only 6145 distinct fp16 values (16 apart from 16384 on); 32760 to 32767 all become 32768"
        in text
    )
    # YaRN's correction dimensions, cd(beta) = d ln(L0 / (2 pi beta)) / (2 ln base), for three configurations.
    with mpmath.workprec(80):

        def cd(beta: int, length: int, base: int) -> float:
            return float(128 * mpmath.log(length / (2 * mpmath.pi * beta)) / (2 * mpmath.log(base)))

        dims = [
            cd(beta, length, base)
            for length, base in ((4096, 10000), (8192, 500000), (32768, 1000000))
            for beta in (32, 1)
        ]
    assert [f"{x:.2f}" for x in dims] == ["20.94", "45.03", "18.08", "34.98", "23.60", "39.65"]
    assert (
        "(20.94 and 45.03 above; 18.08 and 34.98 for base 500000, `L0 = 8192`; 23.60 and 39.65 for base 1000000, `L0 = 32768`)"
        in text
    )
    # Llama 3.1's bands: the wavelengths 2 pi 500000**(2k/128) nearest the thresholds 8192 and 2048.
    wavelengths = [2 * math.pi * 500000 ** (2 * k / 128) for k in range(64)]
    near_8192 = min(range(64), key=lambda k: abs(wavelengths[k] - 8192))
    near_2048 = min(range(64), key=lambda k: abs(wavelengths[k] - 2048))
    assert (near_8192, near_2048) == (35, 28)
    above, below = wavelengths[35] / 8192 - 1, 1 - wavelengths[28] / 2048
    assert (
        f"pair 35 ({wavelengths[35]:.2f}, {100 * above:.2f}% above 8192) and pair 28 ({wavelengths[28]:.1f}, {100 * below:.1f}% below 2048)"
        in text
    )
    # Dynamic NTK at d = 4: base' = base (f L / L0 - (f - 1))**(d / (d - 2)), factor 2, L0 = 8, L = 12.
    assert 10000 * (2 * 12 / 8 - (2 - 1)) ** (4 / (4 - 2)) == 40000
    assert "`base' = 10000 * (2 * 12 / 8 - 1)**2 = 40000`" in text
    # The default rule's thresholds: u = 2**-19 (1 + |angle|) reaches 2**-10 past angle 511 and 2**-4 past 32767.
    assert 2.0**-19 * (1 + 511) == 2.0**-10 < 2.0**-19 * (1 + 512) and 2.0**-19 * (1 + 32767) == 2.0**-4
    assert "past angle 511 an element is coarse" in text and "past 32767 it is not" in text
    # The tiny position: tan(x) = x (1 + x**2 / 3 + ...) and sin(x) = x (1 - x**2 / 6 + ...), with x = T w < 2**-30.
    assert (2.0**-30) ** 2 / 3 < 2.0**-61 and (2.0**-30) ** 2 / 6 < 2.0**-62
    assert "to a relative `(T w)**2 / 3 < 2**-61`" in text and "a relative `(T w)**2 / 6 < 2**-62`" in text
