"""RoPE caches for the tests: the reported precision bugs rebuilt in torch, and transformers' own caches.

Test-only. Imported without torch: torch is imported when a builder first uses it, so a test that
calls one skips without it; the builders under "Built by transformers' own code" import transformers
inside, so a test of those should also be marked ``@pytest.mark.peers("transformers")``.

Each bug builder is written here from the bug's description (the issue or pull request named in its
docstring), step by step in the dtypes the description gives; no code is copied from those projects.
It returns a Cache: the faulty table (a 2-D torch tensor, one row a position, head_dim columns) and
the keyword arguments of pe_reference.compare_rope that describe what the code meant to compute
(kind, dtype, base, layout, scaling, and positions when the rows are not 0, 1, 2, ...). So
``compare_rope(case.table, **case.arguments)`` checks the cache against what it should have held.

The figures in the docstrings ("max error") are |table - true value| over the whole table, the true
value computed in float64 (angle = p * base**(-2k/d) in float64, then cos or sin), measured with
torch 2.13.0+cpu; the worst element is given as [row, column] (column c of a half-layout table
uses pair c % (head_dim/2)). Cos and sin tables are both built by every builder (kind="cos" or
"sin"); the figures are for the cos table unless they say otherwise.

Steps of a RoPE cache, as the cause keys of compare_rope name them: positions (the row's position
as the code holds it), inv_freq (the frequencies w_k), angles (p * w_k), output (cos/sin values).
"""

import math
from typing import Any, Dict, NamedTuple, Optional, Sequence, Tuple

from tests.helpers import peer

# Imported when a builder first uses it: a test that calls one skips without torch (tests.helpers.peer).
torch = peer("torch")


class Cache(NamedTuple):
    """A cache as some code built it, and compare_rope's arguments for what it meant to compute."""

    table: Any  # torch tensor, rows x head_dim
    arguments: Dict[str, Any]  # keyword arguments of compare_rope (kind, dtype, base, ...)


def rows_of(cache: Cache, rows: Sequence[int]) -> Cache:
    """Some rows of a cache, with the positions argument that says which rows they are."""
    positions = cache.arguments.get("positions")
    held = list(range(cache.table.shape[0])) if positions is None else list(positions)
    index = torch.tensor(list(rows), dtype=torch.int64)
    arguments = dict(cache.arguments, positions=[held[r] for r in rows])
    return Cache(cache.table.index_select(0, index), arguments)


def _inv_freq(head_dim: int, base: float) -> Any:
    """1 / base ** (2k / head_dim) in float32: the exponent grid 0, 2, 4, ... divided by head_dim."""
    exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).to(torch.float32) / head_dim
    return 1.0 / (base**exponents)


def _half(angles: Any) -> Any:
    """The half layout (rotate_half): the angles of the h pairs, then the same again."""
    return torch.cat((angles, angles), dim=-1)


def _trig(angles: Any, kind: str) -> Any:
    if kind not in ("cos", "sin"):
        raise ValueError(f"kind is 'cos' or 'sin', not {kind!r}")
    return angles.cos() if kind == "cos" else angles.sin()


# ---------------------------------------------------------------------------------------------------
# The reported bugs, rebuilt from their descriptions.
# ---------------------------------------------------------------------------------------------------


def gpt_neox_1003(kind: str = "cos", seq_len: int = 2048, head_dim: int = 32, base: float = 10000.0) -> Cache:
    """EleutherAI/gpt-neox#1003: the rotary cache computed in the model's precision, fp16.

    The issue's reproducer: head dim 32, base 1e4, 2048 positions; inv_freq made in float32 then
    cast to fp16 (the module runs in fp16), positions made with the type of inv_freq (fp16),
    angles by an outer product (einsum) of the two fp16 tensors (an fp16 result), [freqs | freqs],
    cos and sin of that fp16 tensor: so the cache itself is fp16 (checked as dtype="float16").
    Positions 0..2047 are all exact in fp16, so only the inv_freq and angles steps change anything:
    inv_freq[1] is 0.5625 (true 0.562341), angle [1857, 1] is 1045.0 (float32 1044.2678).

    Measured: max |cos - true| = 0.78188 at [2008, 1] (fp16 0.5625, true -0.21938); the issue's 0.7819
    is the same table maximum, taken against the float32 cache. At [1857, 1] the error is 0.7149
    (fp16 -0.40820, true 0.30671). Sin: max 0.74619 at [1944, 1].
    """
    inv_freq = _inv_freq(head_dim, base).to(torch.float16)
    positions = torch.arange(seq_len).to(inv_freq.dtype)
    angles = torch.einsum("i,j->ij", positions, inv_freq)
    table = _trig(_half(angles), kind)
    return Cache(table, {"kind": kind, "dtype": "float16", "base": base, "layout": "half"})


def candle_3520(kind: str = "cos", seq_len: int = 16384, head_dim: int = 128, base: float = 1e6) -> Cache:
    """huggingface/candle#3520 (a pull request): qwen2's RoPE tables built in bf16.

    The PR's description: inv_freq and the positions t are cast to the model dtype (bf16) before the
    matmul t x inv_freq, and sin/cos are taken of the bf16 product. Qwen2's rope_theta is 1e6 and its
    head dim 128, which this uses; 16384 positions, so that 15962 is included. candle keeps a table of
    h = head_dim/2 columns and its rope kernel (the non-interleaved one) uses column j for both j and
    j + h: the returned table is that [cos | cos] (half layout), in bf16 (checked as dtype="bfloat16").

    bf16 holds 15962 as 15936 (spacing 64 in [8192, 16384); its neighbours are 15936 and 16000 --
    not 15968 as the PR says). Row 15962 column 0 is bf16(cos(15936)) = -0.267578125 where
    cos(15962) = -0.90802.

    Measured: max |cos - true| = 2.0 at [5241, 3] (1.0 where the true value is -1.0); sin 2.0 at
    [6935, 6]. Row 15990 is row 16000 (15990 is held as 16000).
    """
    inv_freq = _inv_freq(head_dim, base).to(torch.bfloat16)
    positions = torch.arange(seq_len).to(torch.bfloat16)
    angles = torch.matmul(positions[:, None], inv_freq[None, :])
    table = _trig(_half(angles), kind)
    return Cache(table, {"kind": kind, "dtype": "bfloat16", "base": base, "layout": "half"})


def sglang_jax_1472(kind: str = "cos", seq_len: int = 4096, head_dim: int = 128, base: float = 1e6) -> Cache:
    """sgl-project/sglang-jax#1472 (fix #1473): inv_freq cast to bf16 before a float32 einsum.

    Head dim 128, positions 0..4095; the base is not in the issue's excerpt: 1e6 (Qwen3's), the base
    for which a proxy of the reported symptom (72 of 128 outputs differing at position 4095) comes
    closest. Only inv_freq is rounded: positions, angles, cos and sin are float32, so the table is
    float32 (dtype="float32").

    Measured: max |cos - true| = 1.9995 at [3372, 2]; sin 2.0 at [3326, 2]. (The issue's 72/128
    mismatched outputs at position 4095 concern rotated bf16 vectors whose input is not given.)
    """
    inv_freq = _inv_freq(head_dim, base).to(torch.bfloat16).to(torch.float32)
    positions = torch.arange(seq_len, dtype=torch.float32)
    angles = torch.einsum("i,j->ij", positions, inv_freq)
    return Cache(_trig(_half(angles), kind), {"kind": kind, "dtype": "float32", "base": base, "layout": "half"})


def tt_metal_54516(kind: str = "cos", seq_len: int = 5120, head_dim: int = 64, base: float = 10000.0) -> Cache:
    """tenstorrent/tt-metal#54516: a reference model built in bf16, so its inv_freq buffer is bf16.

    Rope head dim 64, base 1e4, positions 0..5119. inv_freq[1] becomes 0.75 (true 0.74989421), the
    largest inv_freq error 4.37e-4 (the issue's ~4.4e-4). Positions and angles float32, cos and sin
    float32: the table is float32 (dtype="float32"), only the inv_freq step is rounded.

    Measured: max |cos - true| = 1.7958 at [5116, 7]; sin 1.7955 at [5104, 7].
    """
    inv_freq = _inv_freq(head_dim, base).to(torch.bfloat16)
    positions = torch.arange(seq_len, dtype=torch.float32)
    angles = positions[:, None] * inv_freq.to(torch.float32)[None, :]
    return Cache(_trig(_half(angles), kind), {"kind": kind, "dtype": "float32", "base": base, "layout": "half"})


def megatron_535(kind: str = "cos", seq_len: int = 32768, head_dim: int = 128, base: float = 10000.0) -> Cache:
    """NVIDIA/Megatron-LM#535: with fp16 the inv_freq buffer is fp16, and seq.type_as(inv_freq) makes the positions fp16.

    32768 positions, head dim 128, base 1e4. inv_freq made in float32, then the buffer is fp16; the
    positions 0..32767 cast to fp16 (spacing 16 in [16384, 32768): 32760..32767 all become 32768);
    the outer product (einsum) of the two fp16 tensors is fp16, and the cos and sin taken of those
    fp16 angles (as the rotary apply does) are fp16: the table is fp16 (dtype="float16").

    Measured: 6145 distinct rows (as many as distinct fp16 positions), the last 64 rows only 5;
    max |cos - true| = 2.0 at [6512, 1]; sin 2.0 at [18196, 5].
    """
    inv_freq = _inv_freq(head_dim, base).to(torch.float16)
    positions = torch.arange(seq_len).type_as(inv_freq)
    angles = torch.einsum("i,j->ij", positions, inv_freq)
    return Cache(_trig(_half(angles), kind), {"kind": kind, "dtype": "float16", "base": base, "layout": "half"})


def vllm_883(
    kind: str = "cos", seq_len: int = 4096, head_dim: int = 128, base: float = 1e6, fixed: bool = False
) -> Cache:
    """vllm-project/vllm#883, fixed by #1004 ("Use FP32 in RoPE initialization"): the cos/sin cache made under fp16.

    vLLM sets the default dtype to fp16 while it builds the model; the cache's inv_freq was made with
    no dtype, so base ** (arange / d) ran in fp16: 1e6 is beyond fp16 (max 65504) and becomes inf,
    inv_freq = 1 / inf ** (2k/d) = [1, 0, 0, ...] (63 zeros of 64). Positions float32, angles float32
    (inv_freq taken to float32), cos and sin float32, the cache then stored in the default dtype fp16
    (dtype="float16"). CodeLlama's base 1e6, head dim 128, 4096 positions.

    fixed=True: #1004's fix, inv_freq made in float32 (so the whole cache is float32), then stored in
    fp16: that cache should pass a float16 check.

    Measured: max |cos - true| = 2.0 at [1644, 29] (cos 1 where the true value is -1); sin 1.0 at
    [3362, 21]. Fixed: 4.54e-4 at [4083, 1] (cos), 4.32e-4 at [3973, 3] (sin), below an fp16 ulp.
    """
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32 if fixed else torch.float16)
    try:
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2) / head_dim))
    finally:
        torch.set_default_dtype(previous)
    positions = torch.arange(seq_len).float()
    angles = torch.einsum("i,j->ij", positions, inv_freq.float())
    table = _trig(_half(angles), kind).to(torch.float16)
    return Cache(table, {"kind": kind, "dtype": "float16", "base": base, "layout": "half"})


def kekzl_imp_1325(
    kind: str = "cos", seq_len: int = 131072, head_dim: int = 8, base: float = 10000.0, fixed: bool = False
) -> Cache:
    """kekzl/imp#1325 (closing #1316): CUDA --use_fast_math sin/cos, whose argument reduction is float32.

    Head dim 8, theta 1e4, positions 0..131071. The angle is formed in float32 (exact for pair 0,
    whose frequency is 1), then reduced by a float32 2*pi, in float32 (turns = round(angle / 2pi),
    angle - turns * 2pi, two float32 roundings, no fused multiply-add), and the float32 sin/cos of
    the reduced angle taken. This emulates the reduction, not __sinf's hardware approximation.
    The table is float32 (dtype="float32").

    fixed=True: the PR's fix, the angle formed in float64 and reduced mod 2*pi there (float64 sin/cos
    do it), the result rounded to float32: that cache should pass.

    Measured: max |cos - true| = 7.449e-3 at [128675, 0]; sin 7.498e-3 at [130750, 0] (about one
    float32 ulp of the angle, 2**-7 there); at position 131071 1.47e-3 (cos) and 2.09e-3 (sin), at 40
    1.1e-7 (the PR, on CUDA and for rotated vectors: 1.0e-2 at 131071, 3.0e-6 at 40). The first row
    outside the float32 tolerance is 16875 (cos); 53289 of the 131072 rows have such an element.
    The same float32 angles with torch's own float32 sin/cos (no fast-math reduction) stay within
    5.86e-4, and pass. Fixed: 3.0e-8.
    """
    if fixed:
        inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
        angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * inv_freq[None, :]
        return Cache(
            _trig(_half(angles), kind).to(torch.float32),
            {"kind": kind, "dtype": "float32", "base": base, "layout": "half"},
        )
    inv_freq = _inv_freq(head_dim, base)
    angles = torch.arange(seq_len, dtype=torch.float32)[:, None] * inv_freq[None, :]
    two_pi = torch.tensor(2 * math.pi, dtype=torch.float32)
    turns = torch.round(angles / two_pi)
    reduced = angles - turns * two_pi
    return Cache(_trig(_half(reduced), kind), {"kind": kind, "dtype": "float32", "base": base, "layout": "half"})


STEPS = ("positions", "inv_freq", "angles", "output")


def single_step(
    step: str, to: str, kind: str = "cos", seq_len: int = 4096, head_dim: int = 64, base: float = 10000.0
) -> Cache:
    """A float32 default cache (base 1e4, head dim 64, 4096 positions) with one step rounded to fp16 or bf16.

    step is one of STEPS: the positions, the frequencies, the angles or the cos/sin values are
    rounded to ``to`` ("float16" or "bfloat16") and taken back to float32; every other step is
    float32. The table is float32 and is checked as float32, so the rounded step is the one cause:
    "<step>:<format>".

    Measured, max |cos - true| (sin within a few percent): positions fp16 0.95885 at [2307, 0], bf16
    1.9949 at [3980, 1]; inv_freq fp16 0.63686 at [4086, 2], bf16 1.5551 at [4081, 7]; angles fp16
    0.95885 at [2307, 0], bf16 1.9997 at [3676, 2]; output fp16 3.34e-4 at [3428, 1], bf16 2.03e-3 at
    [3775, 2]. Output rounding fails the float32 check only where the angle is small (there the
    float32 tolerance 2**-19 (1 + |angle|) is below half an fp16 ulp).
    """
    if step not in STEPS:
        raise ValueError(f"step is one of {STEPS}, not {step!r}")
    assert to in ("float16", "bfloat16"), to
    reduced = getattr(torch, to)  # torch's names for them are pe_reference's

    def rounded(x: Any, here: str) -> Any:
        return x.to(reduced).to(torch.float32) if here == step else x

    positions = rounded(torch.arange(seq_len, dtype=torch.float32), "positions")
    inv_freq = rounded(_inv_freq(head_dim, base), "inv_freq")
    angles = rounded(positions[:, None] * inv_freq[None, :], "angles")
    table = rounded(_trig(_half(angles), kind), "output")
    return Cache(table, {"kind": kind, "dtype": "float32", "base": base, "layout": "half"})


# ---------------------------------------------------------------------------------------------------
# Built by transformers' own code.
# ---------------------------------------------------------------------------------------------------

# rope_parameters for LlamaConfig, per rope_type (head dim 128), and the max_position_embeddings each uses.
ROPE_PARAMETERS: Dict[str, Dict[str, Any]] = {
    "default": {"rope_type": "default", "rope_theta": 10000.0},
    "linear": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
    # dynamic: max_position_embeddings is L0, and the base grows once max(position) + 1 > L0.
    "dynamic": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 4.0},
    "yarn": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 4096},
    "llama3": {
        "rope_type": "llama3",
        "rope_theta": 500000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    # Llama 4 Scout's, as Meta's llama-models defaults them: equal factors (transformers warns, and computes).
    "llama4": {
        "rope_type": "llama3",
        "rope_theta": 500000.0,
        "factor": 16.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
    },
    "longrope": {
        "rope_type": "longrope",
        "rope_theta": 10000.0,
        "factor": 4.0,
        "original_max_position_embeddings": 4096,
        # Multiples of 1/128, so that transformers' float32 copies of them are the same numbers.
        "short_factor": [1.0 + k / 128 for k in range(64)],
        "long_factor": [1.0 + k / 16 for k in range(64)],
    },
}
MAX_POSITION_EMBEDDINGS = {
    "default": 16384,
    "linear": 16384,
    "dynamic": 2048,
    "yarn": 16384,
    "llama3": 131072,
    "llama4": 131072,
    "longrope": 16384,
}


def transformers_llama(
    rope_type: str = "default",
    seq_len: int = 4096,
    *,
    positions: Optional[Sequence[int]] = None,
    head_dim: int = 128,
    base: Optional[float] = None,
    max_position_embeddings: Optional[int] = None,
    parameters: Optional[Dict[str, Any]] = None,
    dtype: str = "float32",
) -> Tuple[Any, Any, float, Dict[str, Any]]:
    """transformers' LlamaRotaryEmbedding: (cos, sin, base, scaling), float32 (or ``dtype``), rows the positions.

    Built as the recipe of transformers 5.23 goes: a LlamaConfig with head_dim and a flat
    rope_parameters dict (ROPE_PARAMETERS[rope_type], the base replaced by ``base`` if given, or
    ``parameters`` as given), LlamaRotaryEmbedding(config), called once on a float32 tensor (a
    ``dtype`` one: the module computes in float32 and returns its result in the input's dtype) with
    position_ids = positions (default 0..seq_len-1). cos and sin are the module's own output,
    seq_len x head_dim tensors (half layout). ``scaling`` is the rope_parameters dict as
    the config holds it after its standardisation, in compare_rope's form (plus
    max_position_embeddings for "dynamic", which reads L0 from there).

    A single call: the dynamic module's cache depends on its call history, and one call with
    positions whose largest is L-1 gives the cache for length L.
    """
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rope_parameters = dict(ROPE_PARAMETERS[rope_type] if parameters is None else parameters)
    if base is not None:
        rope_parameters["rope_theta"] = float(base)
    if max_position_embeddings is None:
        max_position_embeddings = MAX_POSITION_EMBEDDINGS.get(rope_type, 16384)
    config = LlamaConfig(
        hidden_size=4 * head_dim,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=rope_parameters,
    )
    module = LlamaRotaryEmbedding(config)
    rows = list(range(seq_len)) if positions is None else list(positions)
    position_ids = torch.tensor(rows, dtype=torch.int64)[None, :]
    with torch.no_grad():
        cos, sin = module(torch.zeros(1, len(rows), head_dim, dtype=getattr(torch, dtype)), position_ids)
    scaling: Dict[str, Any] = dict(config.rope_parameters or {})
    if scaling.get("rope_type") == "dynamic":
        scaling["max_position_embeddings"] = max_position_embeddings
    return cos[0], sin[0], float(scaling["rope_theta"]), scaling


def transformers_cache(rope_type: str = "default", kind: str = "cos", seq_len: int = 4096, **options: Any) -> Cache:
    """transformers_llama's cos or sin table as a Cache, checked in its dtype (float32 unless dtype= says) with its base and scaling."""
    positions = options.get("positions")
    dtype = options.get("dtype", "float32")
    cos, sin, base, scaling = transformers_llama(rope_type, seq_len, **options)
    arguments: Dict[str, Any] = {"kind": kind, "dtype": dtype, "base": base, "layout": "half", "scaling": scaling}
    if positions is not None:
        arguments["positions"] = list(positions)
    return Cache(cos if kind == "cos" else sin, arguments)


def gptj(kind: str = "cos", seq_len: int = 4096, head_dim: int = 64) -> Cache:
    """transformers' GPT-J rotary cache, interleaved: built and spread over the columns by GPT-J's own functions.

    create_sinusoidal_positions(seq_len, head_dim) gives [sin | cos] (h columns each; base 10000
    hard-coded); GPT-J's apply_rotary_pos_emb repeats each of sin and cos twice along the last
    dimension (column c uses pair c // 2) before it multiplies. To read the cos table as the
    function spreads it, it is applied to ones with a zero sin: ones * cos + rotate_every_two(ones)
    * 0 = cos. For the sin table, to (1, -1, 1, -1, ...) with a zero cos: rotate_every_two gives
    ones, times sin. Both exact (products by +-1 and 0). Float32 (dtype="float32").
    """
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb, create_sinusoidal_positions

    sincos = create_sinusoidal_positions(seq_len, head_dim)
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    # GPT-J's shapes: tensor [batch, seq, heads, head_dim], sin and cos [batch, seq, head_dim / 2].
    sin, cos = sin[None], cos[None]
    with torch.no_grad():
        if kind == "cos":
            ones = torch.ones(1, seq_len, 1, head_dim, dtype=torch.float32)
            table = apply_rotary_pos_emb(ones, torch.zeros_like(sin), cos)
        elif kind == "sin":
            signs = torch.tensor([1.0, -1.0], dtype=torch.float32).repeat(head_dim // 2).expand(1, seq_len, 1, head_dim)
            table = apply_rotary_pos_emb(signs, sin, torch.zeros_like(cos))
        else:
            raise ValueError(f"kind is 'cos' or 'sin', not {kind!r}")
    return Cache(table[0, :, 0, :], {"kind": kind, "dtype": "float32", "base": 10000.0, "layout": "interleaved"})


# ---------------------------------------------------------------------------------------------------
# Mistakes made on transformers' caches.
# ---------------------------------------------------------------------------------------------------


def other_layout(which: str = "half", kind: str = "cos", seq_len: int = 4096) -> Cache:
    """transformers#25199: a cache of one layout checked as the other (the cause "layout").

    which="half": transformers' Llama cache (half layout, rotate_half, head dim 128) said to be
    interleaved; which="interleaved": GPT-J's interleaved cache (head dim 64) said to be half.
    """
    if which == "half":
        cache = transformers_cache("default", kind, seq_len)
        return Cache(cache.table, dict(cache.arguments, layout="interleaved"))
    cache = gptj(kind, seq_len)
    return Cache(cache.table, dict(cache.arguments, layout="half"))


def yarn_attention_factor(mistake: str = "missing", kind: str = "cos", seq_len: int = 4096) -> Cache:
    """transformers' yarn cache (factor 4, L0 4096, head dim 128; A = 0.1 ln 4 + 1 = 1.1386) with A missing or twice.

    missing: the module's own forward with its attention_scaling set to 1.0 (the frequencies are
    yarn's, the factor A is not applied). twice: the module's output multiplied by A once more
    (in float32). Checked with the yarn scaling as float32: "attention_factor:missing" / ":twice".

    Measured: max error 0.139 missing (A - 1, where cos is 1), 0.158 twice (A**2 - A).
    """
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    if mistake not in ("missing", "twice"):
        raise ValueError(f"mistake is 'missing' or 'twice', not {mistake!r}")
    head_dim = 128
    config = LlamaConfig(
        hidden_size=4 * head_dim,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=MAX_POSITION_EMBEDDINGS["yarn"],
        rope_parameters=dict(ROPE_PARAMETERS["yarn"]),
    )
    module = LlamaRotaryEmbedding(config)
    factor = module.attention_scaling
    if mistake == "missing":
        module.attention_scaling = 1.0
    position_ids = torch.arange(seq_len, dtype=torch.int64)[None, :]
    with torch.no_grad():
        cos, sin = module(torch.zeros(1, seq_len, head_dim, dtype=torch.float32), position_ids)
    table = (cos if kind == "cos" else sin)[0]
    if mistake == "twice":
        table = table * factor
    scaling: Dict[str, Any] = dict(config.rope_parameters or {})
    arguments = {
        "kind": kind,
        "dtype": "float32",
        "base": float(scaling["rope_theta"]),
        "layout": "half",
        "scaling": scaling,
    }
    return Cache(table, arguments)


def scaling_missing(kind: str = "cos", seq_len: int = 4096) -> Cache:
    """A llama3-scaled model (base 5e5, factor 8, L0 8192) whose cache was built without the scaling.

    transformers' default cache with base 5e5, checked with the llama3 rope_parameters: "scaling".
    """
    cache = transformers_cache("default", kind, seq_len, base=500000.0)
    _, _, base, scaling = transformers_llama("llama3", 1)
    return Cache(cache.table, dict(cache.arguments, base=base, scaling=scaling))


def scaling_other(kind: str = "cos", seq_len: int = 4096) -> Cache:
    """A dynamic-NTK model (factor 4, L0 = max_position_embeddings 2048) whose cache was built with linear scaling.

    transformers' linear cache (factor 4) for 4096 positions, checked with the dynamic
    rope_parameters, for which max(position) + 1 = 4096 > L0 grows the base: "scaling".
    """
    cache = transformers_cache("linear", kind, seq_len)
    _, _, base, scaling = transformers_llama("dynamic", 1)
    return Cache(cache.table, dict(cache.arguments, base=base, scaling=scaling))


def other_base(kind: str = "cos", seq_len: int = 4096) -> Cache:
    """transformers' default cache with base 5e5 (head dim 128), checked as base 1e4: "base"."""
    cache = transformers_cache("default", kind, seq_len, base=500000.0)
    return Cache(
        cache.table, dict(cache.arguments, base=10000.0, scaling={"rope_type": "default", "rope_theta": 10000.0})
    )


# ---------------------------------------------------------------------------------------------------
# Caches that differ from what is asked in several ways at once (issue 25), and scaling parameters off
# by a value (issue 29, family 4): built by x-transformers' and transformers' own modules.
# ---------------------------------------------------------------------------------------------------


def x_transformers_rotary(
    kind: str = "cos", seq_len: int = 4096, head_dim: int = 64, base: float = 10000.0, interpolation_factor: float = 1.0
) -> Any:
    """x-transformers' RotaryEmbedding: its angles (interleaved: each pair's angle twice), then cos or sin, float32.

    The module gives the angles ``t * inv_freq / interpolation_factor`` (a linear scaling), each
    repeated for the two columns of its pair; the attention layer takes their cos and sin.
    """
    from x_transformers.x_transformers import RotaryEmbedding

    module = RotaryEmbedding(head_dim, base=base, interpolation_factor=interpolation_factor)
    with torch.no_grad():
        angles, _ = module.forward_from_seq_len(seq_len)
    return _trig(angles[0], kind)


def dynamic_at_length(kind: str = "cos", seq_len: int = 4096, length: int = 8192, dtype: str = "float32") -> Cache:
    """transformers' dynamic NTK cache (factor 4, L0 2048) for ``length`` positions, its first seq_len rows.

    The base computed at the wrong length: at factor * L0 always, or kept from an earlier, longer
    sequence. Checked as a dynamic cache of seq_len rows, whose base is that of seq_len.
    """
    cache = transformers_cache("dynamic", kind, length, dtype=dtype)
    return Cache(cache.table[:seq_len], cache.arguments)


def yarn_attention_where_config_says_one(kind: str = "cos", seq_len: int = 4096) -> Cache:
    """transformers' yarn cache (factor 4, L0 4096) with its default attention factor 0.1 ln 4 + 1, where the
    config says ``attention_factor: 1.0``: checked with that config."""
    cache = transformers_cache("yarn", kind, seq_len)
    return Cache(cache.table, dict(cache.arguments, scaling=dict(cache.arguments["scaling"], attention_factor=1.0)))


def rotary_embedding_torch(
    kind: str = "cos", seq_len: int = 4096, head_dim: int = 64, theta: float = 10000.0, interpolate_factor: float = 1.0
) -> Any:
    """rotary-embedding-torch's RotaryEmbedding (freqs_for="lang"): its angles for the positions it makes, cos or sin.

    The module's own get_seq_pos (positions divided by interpolate_factor, in float32) and forward
    (times its float32 frequencies, each angle repeated for its pair's two columns: interleaved).
    """
    from rotary_embedding_torch import RotaryEmbedding

    module = RotaryEmbedding(head_dim, theta=theta, interpolate_factor=interpolate_factor)
    with torch.no_grad():
        angles = module(module.get_seq_pos(seq_len, dtype=torch.float32), seq_len=seq_len)
    return _trig(angles, kind)


def one_column_per_pair(rope_type: str = "default", kind: str = "cos", seq_len: int = 4096, **options: Any) -> Cache:
    """transformers' Llama cache cut to its first head_dim / 2 columns: one column per pair, as torchtune keeps
    its cache and Meta's freqs_cis (its real and imaginary parts) holds it. Checked with layout="pairs"."""
    cache = transformers_cache(rope_type, kind, seq_len, **options)
    half = cache.table.shape[1] // 2
    return Cache(cache.table[:, :half].contiguous(), dict(cache.arguments, layout="pairs"))


def meta_freqs_cis(seq_len: int = 4096, head_dim: int = 128, theta: float = 500000.0) -> Tuple[Any, Any]:
    """Meta's Llama precompute_freqs_cis, re-typed (its package needs fairscale, whose source build pulls a CUDA
    torch): float32 frequencies 1 / theta ** (arange(0, d, 2) / d), float32 angles outer(t, freqs), and
    freqs_cis = polar(1, angles), complex64. Returns (real, imag): the cos and sin caches, one column per pair."""
    frequencies = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), frequencies).float()
    freqs_cis = torch.polar(torch.ones_like(angles), angles)
    return freqs_cis.real, freqs_cis.imag


def longrope_factors_of_another_length(kind: str = "cos", seq_len: int = 8192, length: Optional[int] = None) -> Cache:
    """A LongRoPE cache whose per-pair factors are those of another length (issue 29, family 4).

    transformers' own ROPE_INIT_FUNCTIONS["longrope"] (ROPE_PARAMETERS["longrope"], L0 4096) gives
    inv_freq and the attention factor for ``length`` (None: short_factor, as at the module's init);
    the cache of seq_len rows is then cos or sin of outer(positions, inv_freq) in float32, [cos | cos]
    (half layout), times the attention factor. With seq_len > L0 and length None it holds short_factor
    where the config calls for long_factor (a cache computed before the switch); with seq_len <= L0 and
    a length past L0 it holds long_factor where short_factor applies. Checked with the config.
    """
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    parameters = dict(ROPE_PARAMETERS["longrope"])
    config = LlamaConfig(
        hidden_size=512,
        num_attention_heads=4,
        head_dim=128,
        max_position_embeddings=MAX_POSITION_EMBEDDINGS["longrope"],
        rope_parameters=parameters,
    )
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["longrope"](config, None, seq_len=length)
    angles = torch.arange(seq_len, dtype=torch.float32)[:, None] * inv_freq.to(torch.float32)[None, :]
    table = _trig(_half(angles), kind) * attention_factor
    scaling = dict(config.rope_parameters or {})
    return Cache(
        table,
        {"kind": kind, "dtype": "float32", "base": float(scaling["rope_theta"]), "layout": "half", "scaling": scaling},
    )
