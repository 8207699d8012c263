"""RoPE caches checked with compare_rope: the reported precision bugs are caught and explained, transformers' caches pass.

The caches are built in tests/rope_cases.py: each reported bug rebuilt in torch from its description,
and transformers' own LlamaRotaryEmbedding and GPT-J code. For a faulty cache the check must fail and
name, in ``report.causes``, exactly the steps or mistakes that explain it (a cause that changes nothing
in the table, such as fp16 positions below 2048, is not named). For transformers' float32 caches the
check must pass, at lengths where a float32 computation can.

Measured (torch 2.13.0+cpu, transformers 5.23.0): transformers' default float32 cache (head dim 128)
errs against the true value by at most about 2.3 units of 2**-24 * (1 + |angle|) at 131072 positions
(bases 1e4, 5e5 and 1e6): the float32 rounding of the angle plus inv_freq's 1-ulp errors times the
position. In absolute terms that passes 2**-10 from about position 12451 (base 5e5) to 17178 (1e4) on,
which the default rule allows: it judges elements past angle 511 to their own allowance (counted as
coarse) and leaves those past 32767 unjudged, so the cache passes at every length up to 131072.

Every figure of error below is |table - true value| over the whole table, the true value in float64.
"""

import math
from typing import Any, Callable, Dict, List, Set, Tuple

import pytest

from tests.helpers import need

torch: Any = need("torch")
need("transformers")

import pe_reference  # noqa: E402
from tests import rope_cases as rc  # noqa: E402  (after the skips)


def check(cache: rc.Cache) -> Any:
    """compare_rope's report on a cache, with the arguments that say what it meant to compute."""
    return pe_reference.compare_rope(cache.table, **cache.arguments)


def every(step: int, n: int, *also: int) -> List[int]:
    """Rows 0, step, 2 step, ... below n, the last row, and the rows named."""
    return sorted(set(range(0, n, step)) | {n - 1} | set(also))


def true_table(cache: rc.Cache) -> Any:
    """The true default-RoPE values (no scaling) of a cache's rows, float64, in its layout."""
    arguments = cache.arguments
    held = arguments.get("positions")
    positions = torch.tensor(list(range(cache.table.shape[0])) if held is None else held, dtype=torch.float64)
    head_dim = cache.table.shape[1]
    inv_freq = arguments["base"] ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = positions[:, None] * inv_freq[None, :]
    if arguments["layout"] == "half":
        angles = torch.cat((angles, angles), dim=-1)
    else:
        angles = torch.repeat_interleave(angles, 2, dim=-1)
    return angles.cos() if arguments["kind"] == "cos" else angles.sin()


def worst(cache: rc.Cache) -> Tuple[float, int, int]:
    """(max |table - true|, its position, its column)."""
    error = (cache.table.double() - true_table(cache)).abs()
    flat = int(error.argmax())
    row, column = divmod(flat, error.shape[1])
    held = cache.arguments.get("positions")
    return float(error.max()), row if held is None else held[row], column


# ---------------------------------------------------------------------------------------------------
# The builders reproduce the reported symptoms (no compare_rope needed).
# ---------------------------------------------------------------------------------------------------


def test_gpt_neox_1003_reproduces_the_issue() -> None:
    # The issue's float32 cache, to compare with as the issue does.
    inv_freq = rc._inv_freq(32, 10000.0)
    angles32 = torch.outer(torch.arange(2048, dtype=torch.float32), inv_freq)
    assert angles32[1857, 1].item() == pytest.approx(1044.2678, abs=1e-4)
    half = rc.gpt_neox_1003("cos")
    assert half.table.dtype == torch.float16
    difference = (half.table.float() - torch.cat((angles32, angles32), dim=-1).cos()).abs()
    assert difference.max().item() == pytest.approx(0.7819, abs=1e-4)
    # The table maximum is at [2008, 1], not at [1857, 1] (0.715 there).
    assert divmod(int(difference.argmax()), 32) == (2008, 1)
    assert difference[1857, 1].item() == pytest.approx(0.7149, abs=1e-4)
    assert worst(half) == pytest.approx((0.78188, 2008, 1), abs=1e-4)


def test_candle_3520_holds_15962_as_15936() -> None:
    assert torch.tensor(15962.0).to(torch.bfloat16).item() == 15936.0
    cache = rc.candle_3520("cos")
    assert cache.table.dtype == torch.bfloat16
    # Row 15962 of pair 0 (frequency 1) is cos(15936), not cos(15962) = -0.908.
    assert cache.table[15962, 0].item() == torch.tensor(math.cos(15936)).to(torch.bfloat16).item() == -0.267578125
    assert cache.table[15990, 0].item() == cache.table[16000, 0].item()  # 15990 is held as 16000
    assert worst(cache)[0] == pytest.approx(2.0, abs=1e-3)


def test_tt_metal_54516_inv_freq_error() -> None:
    inv_freq = rc._inv_freq(64, 10000.0)
    assert inv_freq[1].item() == pytest.approx(0.7498942, abs=1e-7)
    assert inv_freq.to(torch.bfloat16)[1].item() == 0.75
    exact = 10000.0 ** (-torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    assert (inv_freq.to(torch.bfloat16).double() - exact).abs().max().item() == pytest.approx(4.37e-4, abs=1e-6)
    assert worst(rc.tt_metal_54516("cos"))[0] == pytest.approx(1.7958, abs=1e-3)


def test_megatron_535_merges_the_last_positions() -> None:
    cache = rc.megatron_535("cos")
    table = cache.table.float()
    assert torch.unique(table, dim=0).shape[0] == 6145  # distinct fp16 positions in 0..32767
    assert torch.unique(table[-64:], dim=0).shape[0] == 5
    assert torch.equal(table[32760], table[32767])  # both held as 32768


def test_vllm_883_inv_freq_overflows() -> None:
    cache = rc.vllm_883("cos")
    # base ** (2k/d) in fp16: 1e6 is inf, so every pair but the first has frequency 0 (cos 1).
    assert bool((cache.table[:, 1:64] == 1).all())
    assert worst(cache)[0] == pytest.approx(2.0, abs=1e-6)
    fixed = rc.vllm_883("cos", fixed=True)
    assert worst(fixed)[0] == pytest.approx(4.54e-4, abs=1e-6)


def test_imp_1325_error_grows_with_the_position() -> None:
    cache = rc.kekzl_imp_1325("cos")
    error, position, column = worst(cache)
    assert error == pytest.approx(7.449e-3, abs=1e-6) and (position, column) == (128675, 0)
    # Small where the angle is small, as the PR reports (3e-6 at position 40 there).
    early = rc.rows_of(cache, range(0, 41))
    assert worst(early)[0] < 3e-6
    assert worst(rc.kekzl_imp_1325("cos", fixed=True))[0] < 3e-8


# ---------------------------------------------------------------------------------------------------
# Faulty caches: the check fails and names what explains them.
# ---------------------------------------------------------------------------------------------------

# name -> (builder of the cache for a kind, the kind checked, the causes that explain it). Each case is
# checked with one kind (the diagnosis costs about 2 s a table); cos and sin alternate across the cases,
# and every case gave the same causes for both kinds when run with both.
FAULTY: Dict[str, Tuple[Callable[[str], rc.Cache], str, Set[str]]] = {
    # Positions 0..2047 are exact in fp16: that step changes nothing, so it is not a cause.
    "gpt-neox#1003": (rc.gpt_neox_1003, "cos", {"inv_freq:float16", "angles:float16"}),
    # All three needed: leaving out the bf16 positions, inv_freq or angles leaves 15%, 16% or 44% of
    # these elements beyond 2**-18 (1 + |angle|) + an ulp of bf16 of the table (up to 1.98 apart).
    "candle#3520": (
        lambda kind: rc.rows_of(rc.candle_3520(kind), every(11, 16384, 15962, 15990)),
        "cos",
        {"positions:bfloat16", "inv_freq:bfloat16", "angles:bfloat16"},
    ),
    "sglang-jax#1472": (
        lambda kind: rc.rows_of(rc.sglang_jax_1472(kind), every(5, 4096)),
        "sin",
        {"inv_freq:bfloat16"},
    ),
    "tt-metal#54516": (lambda kind: rc.rows_of(rc.tt_metal_54516(kind), every(5, 5120)), "cos", {"inv_freq:bfloat16"}),
    # All three needed: leaving out the fp16 positions, inv_freq or angles leaves 22%, 27% or 73% of
    # these elements beyond 2**-18 (1 + |angle|) + an ulp of fp16 of the table (up to 1.98 apart); the
    # positions matter in the rows whose position fp16 does not hold (most rows beyond 2048).
    "megatron#535": (
        lambda kind: rc.rows_of(rc.megatron_535(kind), every(13, 32768, *range(32704, 32768))),
        "cos",
        {"positions:float16", "inv_freq:float16", "angles:float16"},
    ),
    # The inv_freq step computed in fp16: the base 1e6 itself overflows, so w = [1, 0, 0, ...]. No
    # rounding of the true w_k to fp16 gives that (they are all normal fp16 numbers): the cause is
    # the inv_freq step done in fp16 arithmetic, base included.
    "vllm#883": (lambda kind: rc.rows_of(rc.vllm_883(kind), every(5, 4096)), "cos", {"inv_freq:float16"}),
    "layout:half-as-interleaved": (
        lambda kind: rc.rows_of(rc.other_layout("half", kind), every(5, 4096)),
        "cos",
        {"layout"},
    ),
    "layout:interleaved-as-half": (
        lambda kind: rc.rows_of(rc.other_layout("interleaved", kind), every(5, 4096)),
        "sin",
        {"layout"},
    ),
    "yarn:attention-factor-missing": (
        lambda kind: rc.rows_of(rc.yarn_attention_factor("missing", kind), every(5, 4096)),
        "cos",
        {"attention_factor:missing"},
    ),
    "yarn:attention-factor-twice": (
        lambda kind: rc.rows_of(rc.yarn_attention_factor("twice", kind), every(5, 4096)),
        "sin",
        {"attention_factor:twice"},
    ),
    "llama3:scaling-missing": (lambda kind: rc.rows_of(rc.scaling_missing(kind), every(5, 4096)), "cos", {"scaling"}),
    "dynamic:linear-instead": (lambda kind: rc.rows_of(rc.scaling_other(kind), every(5, 4096)), "sin", {"scaling"}),
    "base:5e5-as-1e4": (lambda kind: rc.rows_of(rc.other_base(kind), every(5, 4096)), "sin", {"base"}),
}


def single(step: str, to: str) -> Callable[[str], rc.Cache]:
    return lambda kind: rc.rows_of(rc.single_step(step, to, kind), every(5, 4096))


# Each step rounded on its own, in a float32 default cache (base 1e4, head dim 64, 4096 positions;
# every fifth row checked): fp16 with the cos table, bf16 with the sin table.
for _step in rc.STEPS:
    FAULTY[f"single:{_step}:float16"] = (single(_step, "float16"), "cos", {f"{_step}:float16"})
    FAULTY[f"single:{_step}:bfloat16"] = (single(_step, "bfloat16"), "sin", {f"{_step}:bfloat16"})


@pytest.mark.parametrize("case", list(FAULTY))
def test_a_faulty_cache_fails_and_is_explained(case: str) -> None:
    build, kind, causes = FAULTY[case]
    cache = build(kind)
    report = check(cache)
    assert not report.ok, f"{case} {kind}\n{report}"
    assert set(report.causes) == causes, f"{case} {kind}: causes {report.causes}, expected {sorted(causes)}\n{report}"


# ---------------------------------------------------------------------------------------------------
# Caches that should pass.
# ---------------------------------------------------------------------------------------------------

# name -> (builder of the cache for a kind, the kinds checked)
PASSING: Dict[str, Tuple[Callable[[str], rc.Cache], Tuple[str, ...]]] = {
    "transformers:default": (lambda kind: rc.transformers_cache("default", kind, 4096), ("cos", "sin")),
    "transformers:linear": (lambda kind: rc.transformers_cache("linear", kind, 4096), ("cos",)),
    # L0 = 2048: 4096 positions grow the base (base' = 1e4 * 5 ** (128/126)).
    "transformers:dynamic": (lambda kind: rc.transformers_cache("dynamic", kind, 4096), ("sin",)),
    "transformers:yarn": (lambda kind: rc.transformers_cache("yarn", kind, 4096), ("cos",)),
    "transformers:llama3": (lambda kind: rc.transformers_cache("llama3", kind, 4096), ("sin",)),
    # Positions up to L0 = 4096 use the short factors; beyond, the long ones.
    "transformers:longrope-short": (lambda kind: rc.transformers_cache("longrope", kind, 4096), ("cos",)),
    "transformers:longrope-long": (
        lambda kind: rc.transformers_cache("longrope", kind, positions=every(7, 6144)),
        ("sin",),
    ),
    "transformers:gpt-j": (lambda kind: rc.gptj(kind, 4096), ("cos", "sin")),
    # A float32 cache stored in fp16: within the tolerance everywhere (max error 4.5e-4).
    "vllm#1004-fixed": (lambda kind: rc.vllm_883(kind, fixed=True), ("cos",)),
    # Float32 argument reduction (CUDA fast math): its errors (at most 7.5e-3, at angles past 128000) are
    # about one float32 ulp of the angle, as forming the angle in float32 makes them: transformers' own
    # float32 cache errs as much there. Past 32767, where float32 holds the angle to 2**-9 at best, the
    # default rule does not judge an element; below, the errors are within the rule.
    "imp#1325": (lambda kind: rc.rows_of(rc.kekzl_imp_1325(kind), every(13, 131072, 128675, 130750)), ("cos",)),
    "imp#1325-fixed": (
        lambda kind: rc.rows_of(rc.kekzl_imp_1325(kind, fixed=True), every(13, 131072, 128675, 130750)),
        ("sin",),
    ),
}


@pytest.mark.parametrize("case, kind", [(case, kind) for case, (_, kinds) in PASSING.items() for kind in kinds])
def test_a_right_cache_passes(case: str, kind: str) -> None:
    cache = PASSING[case][0](kind)
    report = check(cache)
    assert report.ok, f"{case} {kind}\n{report}"
    assert tuple(report.causes) == (), f"{case} {kind}: {report.causes}"


@pytest.mark.parametrize("base", [10000.0, 500000.0, 1e6])
def test_transformers_default_float32_passes_up_to_8192(base: float) -> None:
    """Transformers' default float32 cache (head dim 128) passes at positions below 8192 (every eleventh row checked).

    Its first element beyond 2**-10 is at position 17178 (base 1e4), 12451 (5e5), 15444 (1e6).
    """
    cache = rc.rows_of(rc.transformers_cache("default", "cos", 8192, base=base), every(11, 8192))
    report = check(cache)
    assert report.ok, f"base {base}\n{report}"


@pytest.mark.parametrize("base", [10000.0, 500000.0, 1e6])
def test_transformers_default_float32_passes_at_131072(base: float) -> None:
    """At 131072 positions transformers' float32 cache passes, its elements past angle 511 counted as coarse.

    Its errors (the float32 rounding of the angle, and inv_freq's 1-ulp errors times the position) are
    about 2.3 units of 2**-24 * (1 + |angle|) at most: within the rule's 32, at every angle. Rows every
    97th and the last 64 are checked, with their positions.
    """
    rows = every(97, 131072, *range(131008, 131072))
    cache = rc.rows_of(rc.transformers_cache("default", "cos", 131072, base=base), rows)
    report = check(cache)
    assert report.ok, f"base {base}\n{report}"
    assert report.coarse > 0 and report.coarse_from is not None
    assert report.unjudged < report.count / 10


def test_transformers_bfloat16_cache_is_not_blamed_on_a_step_it_did_not_take() -> None:
    """Transformers' cache of a bf16 model (float32 computation, one rounding to bf16 at the end), 256 positions.

    Nothing in its making is a mistake: it is the float32 cache rounded once to bfloat16, the
    declared format, and every position below 256 is exact in fp16 and bf16 alike. Where the
    float32 value lies near a bf16 rounding midpoint the result is one bf16 ulp (2**-8 in
    [0.5, 1)) from the correctly rounded value, above the cap 2**-10: measured, 2 elements of
    256 x 128 (max error 0.0039). Whether that passes is the tolerance's business; a diagnosis
    must not explain it by a step that did not happen (positions rounded to fp16, say, which
    changes none of these positions).
    """
    cache = rc.transformers_cache("default", "cos", 256, dtype="bfloat16")
    assert cache.table.dtype == torch.bfloat16
    report = check(cache)
    assert report.ok or tuple(report.causes) == (), f"{report.causes}\n{report}"
