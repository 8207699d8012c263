"""compare_rope reads a rotary cache's setup from its values: several differences at once, named with the call.

Caches are built in float32 (or stored in bfloat16) by the peers' own modules: x-transformers'
RotaryEmbedding (interleaved, with a base and a linear interpolation factor) and transformers'
LlamaRotaryEmbedding for each rope_type. Each is checked as a user would check it: with no options
(compare_rope's defaults: half layout, base 10000, no scaling), or with the config the code meant.
Each test checks the story told and runs the printed call: its keywords given to compare_rope must
pass the table against the exact values, so a story is true only if they do.
"""

import ast
import math
import re
from typing import Any, Dict, List, Set, Tuple

import pytest

from tests.helpers import need, run_main

torch: Any = need("torch")
need("transformers")
need("x_transformers")
need("rotary_embedding_torch")

from pe_reference import compare_rope, rope  # noqa: E402
from tests import rope_cases as rc  # noqa: E402  (after the skips)


def printed_rope_call(text: str) -> Tuple[int, int, Dict[str, Any], int, str]:
    """The rope() call a diagnosis prints, read back: (seq_len, head_dim, keywords, which cache, its tail)."""
    start = text.index("The call that reproduces it: rope(") + len("The call that reproduces it: ")
    found = re.match(r"(rope\(.*?\))\[([01])\](\[:[0-9]+\])? \(on the command line", text[start:])
    assert found is not None, text
    call, index, tail = found.group(1), int(found.group(2)), (found.group(3) or "").strip("[]")
    expression = ast.parse(call).body[0]
    assert isinstance(expression, ast.Expr) and isinstance(expression.value, ast.Call), text
    node = expression.value
    seq_len, head_dim = (ast.literal_eval(argument) for argument in node.args)
    # positions=positions: read one by one, named, not written out (the caller knows them).
    keywords = {
        keyword.arg or "": ast.literal_eval(keyword.value) for keyword in node.keywords if keyword.arg != "positions"
    }
    return seq_len, head_dim, keywords, index, tail


def assert_rope_call_reproduces(text: str, table: Any, kind: str) -> None:
    """The printed call's cache is the table: its options pass the table in compare_rope (the exact values).

    A call for a longer cache, of which the table is the first rows ([:n]: dynamic NTK's base computed
    for another length), is run, and its rows must lie within 2**-18 (1 + position) of the table's,
    the error of angles formed in float32 (plus a unit of the format the call names, for a narrow one).
    """
    seq_len, head_dim, keywords, index, tail = printed_rope_call(text)
    assert index == (0 if kind == "cos" else 1), text
    rows, width = table.shape
    assert head_dim == (2 * width if keywords.get("layout") == "pairs" else width), text
    if not tail:
        assert seq_len == rows, text
        report = compare_rope(table, kind=kind, **keywords)
        assert report.ok, (text, str(report))
        return
    assert tail == f":{rows}" and seq_len > rows, text
    made = torch.tensor(rope(seq_len, head_dim, **keywords)[index][:rows], dtype=torch.float64)
    errors = (made - table.to(torch.float64)).abs().amax(dim=1)
    # Stored in a narrow format, a value is also within half its unit, 2**-p of values below 2, of the angle's.
    stored = {"float16": 2.0**-11, "bfloat16": 2.0**-8}.get(keywords.get("dtype", "float32"), 0.0)
    bound = 2.0**-18 * (1 + torch.arange(rows, dtype=torch.float64)) + 2 * stored
    assert bool((errors <= bound).all()), (text, float((errors - bound).max()))


def diagnosis_of(table: Any, kind: str, **options: Any) -> Tuple[str, Set[str]]:
    report = compare_rope(table, kind=kind, **options)
    assert not report.ok and report.diagnosis is not None, str(report)
    return report.diagnosis, set(report.causes)


# name -> (the cache for a kind, checked without options; the phrases the story must hold; its causes)
SEVERAL: Dict[str, Tuple[Any, Tuple[str, ...], Set[str]]] = {
    # x-transformers: interleaved, base 500000 (issue 25: "no known cause" before).
    "x-transformers:interleaved:500000": (
        lambda kind: rc.x_transformers_rotary(kind, 4096, 128, base=500000.0),
        ("in the interleaved layout", "with base 500000 instead of 10000"),
        {"layout", "base"},
    ),
    # rotary-embedding-torch's interpolate_factor=4: interleaved, linear x4 (issue 25: "no known cause" before).
    "rotary-embedding-torch:interleaved:linear-4": (
        lambda kind: rc.rotary_embedding_torch(kind, 4096, 64, interpolate_factor=4.0),
        ("in the interleaved layout", "with linear scaling (factor 4)"),
        {"layout", "scaling"},
    ),
    # x-transformers' interpolation_factor, the same law by another module, at base 500000 too.
    "x-transformers:interleaved:500000:linear-2": (
        lambda kind: rc.x_transformers_rotary(kind, 2048, 128, base=500000.0, interpolation_factor=2.0),
        ("in the interleaved layout", "with base 500000 instead of 10000", "with linear scaling (factor 2)"),
        {"layout", "base", "scaling"},
    ),
    # All three at once, at a length models use.
    "rotary-embedding-torch:interleaved:500000:linear-8:32768": (
        lambda kind: rc.rotary_embedding_torch(kind, 32768, 64, theta=500000.0, interpolate_factor=8.0),
        ("in the interleaved layout", "with base 500000 instead of 10000", "with linear scaling (factor 8)"),
        {"layout", "base", "scaling"},
    ),
    # torchtune's Llama3ScaledRoPE computes transformers' llama3 law: base 500000, factor 8, L0 8192.
    "transformers:llama3": (
        lambda kind: rc.transformers_cache("llama3", kind, 4096).table,
        (
            "with base 500000 instead of 10000",
            "with llama3 scaling (factor 8, low_freq_factor 1, high_freq_factor 4,"
            " original_max_position_embeddings 8192)",
        ),
        {"base", "scaling"},
    ),
    # A YaRN cache whose value at position 0 is its attention factor 0.1 ln 4 + 1 (keras-hub's, transformers').
    "transformers:yarn": (
        lambda kind: rc.transformers_cache("yarn", kind, 4096).table,
        ("with yarn scaling (factor 4, original_max_position_embeddings 4096; its attention factor 1.13863)",),
        {"scaling"},
    ),
    # The same with its attention factor dropped: yarn's frequencies, values not scaled.
    "transformers:yarn:attention-dropped": (
        lambda kind: rc.yarn_attention_factor("missing", kind, 4096).table,
        ("with yarn scaling (factor 4, original_max_position_embeddings 4096, attention_factor 1)",),
        {"scaling"},
    ),
    # One column per pair (torchtune's cache, Meta's freqs_cis): the first half of transformers' llama3 cache.
    "transformers:llama3:pairs": (
        lambda kind: rc.one_column_per_pair("llama3", kind, 4096).table,
        (
            "in the pairs layout (one column per pair: head_dim 128)",
            "with base 500000 instead of 10000",
            "with llama3 scaling (factor 8",
        ),
        {"layout", "base", "scaling"},
    ),
    # Meta's freqs_cis, its real part the cos cache and its imaginary part the sin cache, base 500000.
    "meta:freqs_cis": (
        lambda kind: rc.meta_freqs_cis(4096, 128, 500000.0)[0 if kind == "cos" else 1],
        ("in the pairs layout (one column per pair: head_dim 128)", "with base 500000 instead of 10000"),
        {"layout", "base"},
    ),
    # Stored in bfloat16 (the module's output cast to the input's dtype): read in that format.
    "transformers:llama3:bfloat16": (
        lambda kind: rc.transformers_cache("llama3", kind, 4096, dtype="bfloat16").table,
        ("with base 500000 instead of 10000", "with llama3 scaling (factor 8"),
        {"base", "scaling"},
    ),
}


# Each case in one kind, cos and sin in turn (the sin cache's attention factor is read another way: both for YaRN's).
SEVERAL_KINDS = [(case, ("cos", "sin")[i % 2]) for i, case in enumerate(SEVERAL)] + [("transformers:yarn", "cos")]


@pytest.mark.parametrize("case, kind", SEVERAL_KINDS)
def test_a_cache_that_differs_in_several_ways_is_read_whole(case: str, kind: str) -> None:
    build, phrases, causes = SEVERAL[case]
    table = build(kind)
    text, found = diagnosis_of(table, kind)
    for phrase in phrases:
        assert phrase in text, (case, kind, text)
    assert found == causes, (case, kind, text)
    assert "it reproduces every element" in text, text
    assert_rope_call_reproduces(text, table, kind)


def dynamic_base(length: int, factor: float = 4.0, original: int = 2048, head_dim: int = 128) -> str:
    """transformers' dynamic NTK base for a length (its formula): base (f L / L0 - (f - 1)) ** (d / (d - 2))."""
    growth = factor * length / original - (factor - 1) if length > original else 1.0
    return f"{10000.0 * growth ** (head_dim / (head_dim - 2)):.6g}"


# Issue 29, family 4: one scaling parameter off by a value, checked with the config the code meant.
OFF_BY_A_VALUE: Dict[str, Tuple[Any, Tuple[str, ...], Set[str]]] = {
    # YaRN's default attention factor applied where the config says attention_factor: 1.0.
    "yarn:attention-factor-where-config-says-1": (
        lambda kind: rc.yarn_attention_where_config_says_one(kind, 4096),
        ("with attention factor 1.13863 (the yarn default) instead of 1",),
        {"attention_factor"},
    ),
    # Dynamic NTK's base computed at factor * L0 = 8192 positions for a 4096-row cache.
    "dynamic:base-at-factor-times-length": (
        lambda kind: rc.dynamic_at_length(kind, 4096, 8192),
        (
            f"with dynamic NTK's base computed for 8192 positions (base {dynamic_base(8192)}),"
            f" not for the table's 4096 (base {dynamic_base(4096)})",
        ),
        {"scaling:length"},
    ),
    # ... or kept from an earlier, longer sequence (16384 positions) for 2048 rows.
    "dynamic:base-kept-from-a-longer-sequence": (
        lambda kind: rc.dynamic_at_length(kind, 2048, 16384),
        (
            f"with dynamic NTK's base computed for 16384 positions (base {dynamic_base(16384)}),"
            " not for the table's 2048 (base 10000)",
        ),
        {"scaling:length"},
    ),
}


@pytest.mark.parametrize("case, kind", [(case, ("sin", "cos")[i % 2]) for i, case in enumerate(OFF_BY_A_VALUE)])
def test_a_scaling_parameter_off_by_a_value_is_named_with_both_values(case: str, kind: str) -> None:
    build, phrases, causes = OFF_BY_A_VALUE[case]
    cache = build(kind)
    text, found = diagnosis_of(cache.table, **cache.arguments)
    for phrase in phrases:
        assert phrase in text, (case, kind, text)
    assert found == causes, (case, kind, text)
    assert_rope_call_reproduces(text, cache.table, kind)


# LongRoPE's per-pair factors of another length (transformers' own init function): the config's other list on
# every row, named with the config given; read pair by pair without it.
OTHER_LIST: Dict[str, Tuple[int, Any, str, str]] = {
    # short_factor on 8192 rows, past L0 4096 (a cache computed at the module's init, before the switch).
    "short-factor-past-L0": (
        8192,
        None,
        "with its short_factor on all 8192 rows, where long_factor applies (past original_max_position_embeddings 4096)",
        "1 to 1.49219",
    ),
    # long_factor on 2048 rows, up to L0 (a cache computed for the longest sequence, used for a short one).
    "long-factor-up-to-L0": (
        2048,
        8192,
        "with its long_factor on all 2048 rows, where short_factor applies (up to original_max_position_embeddings 4096)",
        "1 to 4.9375",
    ),
}


@pytest.mark.parametrize("case, kind", [(case, ("cos", "sin")[i % 2]) for i, case in enumerate(OTHER_LIST)])
def test_longrope_factors_of_another_length_are_named_and_read(case: str, kind: str) -> None:
    seq_len, length, phrase, span = OTHER_LIST[case]
    cache = rc.longrope_factors_of_another_length(kind, seq_len, length)
    text, found = diagnosis_of(cache.table, **cache.arguments)
    assert phrase in text and found == {"scaling:" + phrase.split(" ")[2]}, text
    assert_rope_call_reproduces(text, cache.table, kind)
    # Without the config, the factors are read pair by pair, with the attention factor sqrt(1 + ln 4 / ln 4096).
    text, found = diagnosis_of(cache.table, kind=kind, dtype="float32")
    read = f"with longrope's per-pair factors read from the table (64 numbers from {span}; attention factor 1.08012);"
    assert read in text and found == {"scaling"}, text
    assert_rope_call_reproduces(text, cache.table, kind)


def test_a_longrope_cache_of_its_own_length_passes() -> None:
    for seq_len, length in ((2048, None), (8192, 8192)):
        cache = rc.longrope_factors_of_another_length("cos", seq_len, length)
        report = compare_rope(cache.table, **cache.arguments)
        assert report.ok and report.diagnosis is None, (seq_len, str(report))


# Issue 29 families 3 and 4 in the narrow formats: transformers' module computes in float32 and returns its
# cache in the input's dtype (a float16 or bfloat16 model's). name -> (the cache, what is given to the check,
# the phrase, the causes).
NARROW: Dict[str, Tuple[Any, Any, str, Set[str]]] = {
    "yarn:attention-factor-where-config-says-1": (
        lambda dtype: rc.transformers_cache("yarn", "cos", 4096, dtype=dtype),
        lambda arguments: dict(arguments, scaling=dict(arguments["scaling"], attention_factor=1.0)),
        "with attention factor 1.13863 (the yarn default) instead of 1",
        {"attention_factor"},
    ),
    "dynamic:base-at-factor-times-length": (
        lambda dtype: rc.dynamic_at_length("sin", 4096, 8192, dtype=dtype),
        lambda arguments: arguments,
        f"with dynamic NTK's base computed for 8192 positions (base {dynamic_base(8192)}),"
        f" not for the table's 4096 (base {dynamic_base(4096)})",
        {"scaling:length"},
    ),
    "packed": (
        lambda dtype: rc.transformers_cache(
            "llama3", "cos", 2048, positions=[r % 1024 for r in range(2048)], dtype=dtype
        ),
        lambda arguments: {key: value for key, value in arguments.items() if key != "positions"},
        "with 2 runs of consecutive positions: rows 0 to 1023 at positions 0 to 1023, rows 1024 to 2047 at positions 0 to 1023",
        {"positions"},
    ),
    "offset": (
        lambda dtype: rc.transformers_cache(
            "default", "sin", 1024, positions=[r + 500 for r in range(1024)], dtype=dtype
        ),
        lambda arguments: {key: value for key, value in arguments.items() if key != "positions"},
        "with rows 0 to 1023 at positions 500 to 1523 (an offset of 500)",
        {"positions"},
    ),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", list(NARROW))
def test_a_mistake_in_a_cache_stored_narrow_is_named(case: str, dtype: str) -> None:
    build, given, phrase, causes = NARROW[case]
    cache = build(dtype)
    assert cache.arguments["dtype"] == dtype and str(cache.table.dtype) == "torch." + dtype
    text, found = diagnosis_of(cache.table, **given(cache.arguments))
    assert phrase in text and found == causes, (case, dtype, text)
    if "positions=positions" not in text:
        assert_rope_call_reproduces(text, cache.table, cache.arguments["kind"])


@pytest.mark.parametrize("case", ["yarn:attention-factor-where-config-says-1", "packed"])
def test_a_mistake_in_a_cache_is_named_by_check_file(case: str, tmp_path: Any, capsys: Any) -> None:
    """--check FILE --rope KIND on a float16 .npy file, with the config as --rope-scaling where the case gives one."""
    import json

    numpy = need("numpy")
    build, given, phrase, _ = NARROW[case]
    cache = build("float16")
    arguments = given(cache.arguments)
    path = tmp_path / "cache.npy"
    numpy.save(path, cache.table.numpy())
    options = ["--check", str(path), "--rope", arguments["kind"], "--base", str(arguments["base"])]
    if arguments.get("scaling"):
        options += ["--rope-scaling", json.dumps(arguments["scaling"])]
    status, out, err = run_main(capsys, *options)
    assert status == 1 and not err and "float16" in out.splitlines()[0], (out, err)
    assert phrase in out[out.index("Diagnosis: ") :], out


def test_the_call_printed_for_a_longer_cache_is_its_first_rows() -> None:
    """The dynamic case's call is rope(L, ...)[i][:n]: with another length than the rows', it is refused here."""
    cache = rc.dynamic_at_length("cos", 4096, 8192)
    text, _ = diagnosis_of(cache.table, **cache.arguments)
    assert "rope(8192, 128, scaling={'rope_type': 'dynamic'" in text and ")[0][:4096]" in text, text
    with pytest.raises(AssertionError):
        assert_rope_call_reproduces(text.replace("rope(8192,", "rope(4096,"), cache.table, "cos")


@pytest.mark.parametrize("kind", ["cos", "sin"])
def test_a_right_cache_of_each_variant_gets_no_story(kind: str) -> None:
    """The fit is only for failing caches: each variant's own cache, checked with its config, passes with no cause."""
    for rope_type in ("default", "linear", "yarn", "llama3"):
        cache = rc.transformers_cache(rope_type, kind, 2048)
        report = compare_rope(cache.table, **cache.arguments)
        assert report.ok and report.diagnosis is None and tuple(report.causes) == (), (rope_type, str(report))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_right_cache_stored_narrow_passes_in_its_format(dtype: str) -> None:
    """transformers' module returns its float32 cache in the input's dtype: each variant's passes in that format."""
    for rope_type in ("default", "linear", "yarn", "llama3", "dynamic", "longrope"):
        cache = rc.transformers_cache(rope_type, "cos", 1024, dtype=dtype)
        report = compare_rope(cache.table, **cache.arguments)
        assert report.ok and report.diagnosis is None, (rope_type, dtype, str(report))


def test_a_precision_mistake_is_not_read_as_another_setup() -> None:
    """inv_freq rounded to float16 reads as a base near 10000 that no simple setup matches: the step is named."""
    cache = rc.single_step("inv_freq", "float16", "cos")
    report = compare_rope(cache.table, **cache.arguments)
    assert not report.ok and tuple(report.causes) == ("inv_freq:float16",), str(report)


def test_a_cache_no_setup_explains_says_so() -> None:
    """Cosines of angles from a geometric law with a kink no variant has: no setup is claimed.

    Every seventh pair twice as fast: per-pair factors of 1/2, which no LongRoPE has (its factors stretch
    wavelengths, none below 1; a kink that halves frequencies is read as LongRoPE's factors 1 and 2).
    """
    h, rows = 32, 1024
    frequencies = [10000.0 ** (-k / h) * (2.0 if k % 7 == 3 else 1.0) for k in range(h)]
    table = [[math.cos(p * w) for w in frequencies + frequencies] for p in range(rows)]
    report = compare_rope(table)
    assert not report.ok and report.diagnosis is not None
    assert "The call that reproduces it" not in report.diagnosis, report.diagnosis


# ---------------------------------------------------------------------------------------------------
# The pairs layout: a half-width cache, one column per pair.
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cos", "sin"])
def test_a_half_width_cache_passes_with_layout_pairs(kind: str) -> None:
    """torchtune's and Meta's shape: transformers' own cache cut to one column per pair, checked as such."""
    cache = rc.one_column_per_pair("yarn", kind, 4096)
    assert tuple(cache.table.shape) == (4096, 64)
    report = compare_rope(cache.table, **cache.arguments)
    assert report.ok, str(report)
    assert "RoPE " + kind + " cache (pairs layout" in str(report)


def test_a_full_width_cache_checked_as_pairs_is_read_as_what_it_is() -> None:
    table = rope(1024, 64, dtype="float32")[0]
    report = compare_rope(table, layout="pairs", dtype="float32")
    assert not report.ok and report.diagnosis is not None
    assert set(report.causes) == {"layout"} and "in the half layout (head_dim 64)" in report.diagnosis, report.diagnosis


# ---------------------------------------------------------------------------------------------------
# Issue 29, family 3 for caches: rows at other positions than 0, 1, 2, ..., read back row by row.
# ---------------------------------------------------------------------------------------------------

# name -> (the positions transformers' module was given, the kind checked, the phrase the story must hold)
ROWS_AT: Dict[str, Tuple[List[int], str, str]] = {
    # Position ids restarting with each packed document of 1024 tokens.
    "packed": (
        [r % 1024 for r in range(4096)],
        "cos",
        "with 4 runs of consecutive positions: rows 0 to 1023 at positions 0 to 1023,"
        " rows 1024 to 2047 at positions 0 to 1023, rows 2048 to 3071 at positions 0 to 1023, and 1 more run",
    ),
    # An index slip that gives every row one position.
    "broadcast": ([37] * 2048, "sin", "with every row at position 37 (one position given to every row)"),
    # Positions starting at an offset (a cache built for a continuation).
    "offset": (
        [r + 1000 for r in range(2048)],
        "cos",
        "with rows 0 to 2047 at positions 1000 to 3047 (an offset of 1000)",
    ),
}


@pytest.mark.parametrize("case", list(ROWS_AT))
def test_rows_at_other_positions_are_read_back(case: str) -> None:
    positions, kind, phrase = ROWS_AT[case]
    cache = rc.transformers_cache("llama3", kind, len(positions), positions=positions)
    checked = {key: value for key, value in cache.arguments.items() if key != "positions"}  # as a user forgets them
    text, found = diagnosis_of(cache.table, **checked)
    assert phrase in text and found == {"positions"}, text
    assert "positions=positions" in text and "--positions X,X,..." in text, text
    seq_len, head_dim, keywords, index, _ = printed_rope_call(text)
    report = compare_rope(cache.table, kind=kind, positions=positions, **keywords)
    assert report.ok and (seq_len, head_dim) == tuple(cache.table.shape), str(report)
