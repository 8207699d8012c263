"""Framework tables for the tests: each framework's sinusoidal table, built as that framework builds it.

Test-only. Imported without numpy and torch: they are imported when a builder first uses them (a
test that calls one skips without them). Where the framework itself is installed (transformers,
diffusers, torch_geometric, positional_encodings), the builder calls the framework's own code,
imported inside the builder, so a test should also be marked ``@pytest.mark.peers`` with that
framework. Where it cannot be installed
(Transformer-XL, keras-hub, MLX, tensor2tensor, fairseq, guided-diffusion), the builder redoes the
framework's operations one by one, in the dtypes its source uses; its docstring names that source file.
The numpy builders use numpy's float32 sin, cos, exp and power, not the framework's own kernels,
so a value can differ from the framework's by an ulp or so; the angles are formed as the source forms them.

Every builder returns a numpy array, rows x columns, in the dtype the framework produces
(float32 throughout, as the frameworks give it by default).
"""

import math
from typing import Any, Callable, Optional, Sequence

from tests.helpers import peer

np = peer("numpy")
torch = peer("torch")

# ---------------------------------------------------------------------------------------------------
# Built by the framework's own code.
# ---------------------------------------------------------------------------------------------------


def marian(seq_len: int, d_model: int) -> Any:
    """transformers MarianSinusoidalPositionalEmbedding, rows 0..seq_len-1.

    In transformers v5 the module's weight starts random (nn.Embedding init); the model's _init_weights
    copies create_weight() into it. This does the same copy, then looks positions 0..seq_len-1 up
    through the module's forward. Angles in float64 (numpy), sin and cos in float64, rounded to float32;
    layout [sin of the even-index angles | cos of the odd-index angles].
    """
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    module = MarianSinusoidalPositionalEmbedding(seq_len, d_model)
    create_weight: Callable[[], Any] = module.create_weight  # untyped in transformers
    with torch.no_grad():
        module.weight.copy_(create_weight())
    return module(torch.Size((1, seq_len))).numpy()


def xlm(seq_len: int, d_model: int) -> Any:
    """transformers XLM create_sinusoidal_embeddings, written into a float32 table (interleaved)."""
    from transformers.models.xlm import modeling_xlm

    create: Callable[[int, int, Any], Any] = modeling_xlm.create_sinusoidal_embeddings  # untyped in transformers
    return create(seq_len, d_model, torch.empty(seq_len, d_model)).numpy()


def m2m100(seq_len: int, d_model: int, padding_idx: int = 1) -> Any:
    """transformers M2M100SinusoidalPositionalEmbedding.get_embedding, rows of the first seq_len real tokens.

    Real tokens take positions padding_idx+1, padding_idx+2, ...; the rows up to padding_idx are skipped
    (the row at padding_idx is zeroed by get_embedding).
    """
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    first = padding_idx + 1
    table = M2M100SinusoidalPositionalEmbedding.get_embedding(first + seq_len, d_model, padding_idx)
    return table[first:].numpy()


def whisper(seq_len: int, d_model: int, max_timescale: float = 10000) -> Any:
    """transformers Whisper sinusoids(length, channels, max_timescale): [sin | cos], float32."""
    from transformers.models.whisper.modeling_whisper import sinusoids

    return sinusoids(seq_len, d_model, max_timescale).numpy()


def gptj(seq_len: int, d_model: int) -> Any:
    """transformers GPT-J create_sinusoidal_positions(num_pos, dim): [sin | cos], float32 (d+1 columns for odd d)."""
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    return create_sinusoidal_positions(seq_len, d_model).numpy()


def diffusers(
    timesteps: Sequence[float],
    d_model: int,
    flip_sin_to_cos: bool = False,
    downscale_freq_shift: float = 1,
    scale: float = 1,
    max_period: int = 10000,
) -> Any:
    """diffusers get_timestep_embedding on a float32 tensor of timesteps: one row a timestep."""
    from diffusers.models.embeddings import get_timestep_embedding

    steps = torch.tensor(list(timesteps), dtype=torch.float32)
    table = get_timestep_embedding(
        steps,
        d_model,
        flip_sin_to_cos=flip_sin_to_cos,
        downscale_freq_shift=downscale_freq_shift,
        scale=scale,
        max_period=max_period,
    )
    return table.numpy()


def pyg(positions: Sequence[float], d_model: int, base_freq: float = 1e-4, granularity: float = 1.0) -> Any:
    """torch_geometric.nn.PositionalEncoding applied to a float32 tensor of positions: [sin | cos]."""
    from torch_geometric.nn import PositionalEncoding

    encoding = PositionalEncoding(d_model, base_freq=base_freq, granularity=granularity)
    with torch.no_grad():
        table = encoding(torch.tensor(list(positions), dtype=torch.float32))
    return table.numpy()


def tatp22(seq_len: int, d_model: int) -> Any:
    """positional_encodings (tatp22) torch_encodings.PositionalEncoding1D on zeros (1, seq_len, d_model)."""
    from positional_encodings.torch_encodings import PositionalEncoding1D

    encoding = PositionalEncoding1D(d_model)
    with torch.no_grad():
        table = encoding(torch.zeros(1, seq_len, d_model))
    return table[0].numpy()


# ---------------------------------------------------------------------------------------------------
# Written here, operation by operation, after the framework's source (the framework cannot be installed).
# ---------------------------------------------------------------------------------------------------


def transformer_xl(klen: int, d_model: int, clamp_len: int = 1000) -> Any:
    """Transformer-XL relative positional embedding, as HF transformers v4 built it (float32, torch).

    Follows huggingface/transformers src/transformers/models/transfo_xl/modeling_transfo_xl.py
    (PositionalEmbedding and TransfoXLModel.forward; the model was removed from recent transformers):
    inv_freq = 1 / 10000 ** (arange(0.0, d, 2.0) / d), positions klen-1 down to 0 (float32), clamped
    to clamp_len when clamp_len > 0 (TransfoXLConfig default 1000), outer product, [sin | cos].
    Odd d gives d+1 columns.
    """
    inv_freq = 1 / (10000 ** (torch.arange(0.0, d_model, 2.0) / d_model))
    positions = torch.arange(klen - 1, -1, -1.0, dtype=torch.float32)
    if clamp_len > 0:
        positions = positions.clamp(max=clamp_len)
    angles = torch.outer(positions, inv_freq)
    return torch.cat([angles.sin(), angles.cos()], dim=-1).numpy()


def keras_hub(seq_len: int, d_model: int, max_wavelength: float = 10000, start_index: int = 0) -> Any:
    """keras_hub SinePositionEncoding, in float32 (the layer's default compute dtype), with numpy.

    Follows keras-team/keras-hub keras_hub/src/layers/modeling/sine_position_encoding.py (call):
    positions float32(arange + start_index); min_freq float32(1 / max_wavelength); timescales =
    min_freq ** (float32(2 * (i // 2)) / float32(d)); angles = positions x timescales; interleaved by
    masks: sin(angles) * (1 - i % 2) + cos(angles) * (i % 2). Odd d is handled (last column a sine).
    """
    f32 = np.float32
    index = np.arange(d_model)
    positions = (np.arange(seq_len) + start_index).astype(f32)
    min_freq = f32(1 / max_wavelength)
    timescales = np.power(min_freq, (2 * (index // 2)).astype(f32) / f32(d_model))
    angles = positions[:, None] * timescales[None, :]
    cos_mask = (index % 2).astype(f32)
    sin_mask = f32(1) - cos_mask
    table = np.sin(angles) * sin_mask + np.cos(angles) * cos_mask
    return table.astype(f32)


def mlx(
    positions: Sequence[float],
    d_model: int,
    min_freq: float = 0.0001,
    max_freq: float = 1.0,
    scale: Optional[float] = None,
    cos_first: bool = False,
    full_turns: bool = False,
) -> Any:
    """MLX nn.SinusoidalPositionalEncoding applied to float32 positions, in float32, with numpy.

    Follows ml-explore/mlx python/mlx/nn/layers/positional_encoding.py (SinusoidalPositionalEncoding):
    one_zero = 1 - arange(d // 2) / (d // 2 - 1) (float32), sigmas = exp(one_zero * (log max_freq -
    log min_freq) + log min_freq), times 2 pi if full_turns; y = x * sigmas; [sin | cos] (or [cos | sin]);
    times scale (default sqrt(2 / d); MLX takes `scale or default`, so 0 also means the default) when
    scale != 1. Python scalars join float32 arrays as float32 (MLX's weak scalars). Odd d gives d-1
    columns; d of 2 or 3 divides 0 by 0 and gives NaN, as MLX does.
    """
    f32 = np.float32
    half = d_model // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        one_zero = f32(1) - np.arange(half).astype(f32) / f32(half - 1)
    log_min = math.log(min_freq)
    log_max = math.log(max_freq)
    sigmas = np.exp(one_zero * f32(log_max - log_min) + f32(log_min))
    if full_turns:
        sigmas = sigmas * f32(2 * math.pi)
    scale_value = scale or (2 / d_model) ** 0.5
    y = np.asarray(positions, dtype=f32)[:, None] * sigmas[None, :]
    parts = [np.cos(y), np.sin(y)] if cos_first else [np.sin(y), np.cos(y)]
    table = np.concatenate(parts, axis=-1)
    if scale_value != 1:
        table = table * f32(scale_value)
    return table.astype(f32)


def tensor2tensor(
    seq_len: int,
    d_model: int,
    min_timescale: float = 1.0,
    max_timescale: float = 1.0e4,
    start_index: int = 0,
) -> Any:
    """tensor2tensor get_timing_signal_1d, in float32 as TensorFlow computes it, with numpy.

    Follows tensorflow/tensor2tensor tensor2tensor/layers/common_attention.py (get_timing_signal_1d,
    final form with start_index and the max(n - 1, 1) guard): positions float32(arange + start_index);
    log_inc = float32(log(max / min)) / max(float32(n) - 1, 1) with n = d // 2, divided in float32;
    inv_timescales = min_timescale * exp(float32(arange(n)) * -log_inc); [sin | cos], then a zero column
    for odd d. min_timescale multiplies the inverse timescales (so it is a frequency factor, not a timescale).
    """
    f32 = np.float32
    positions = (np.arange(seq_len) + start_index).astype(f32)
    num_timescales = d_model // 2
    log_increment = f32(math.log(float(max_timescale) / float(min_timescale))) / np.maximum(
        f32(num_timescales) - f32(1), f32(1)
    )
    inv_timescales = f32(min_timescale) * np.exp(np.arange(num_timescales).astype(f32) * -log_increment)
    scaled_time = positions[:, None] * inv_timescales[None, :]
    table = np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)
    table = np.pad(table, [(0, 0), (0, d_model % 2)])
    return table.astype(f32)


def fairseq(seq_len: int, d_model: int, padding_idx: int = 1) -> Any:
    """fairseq SinusoidalPositionalEmbedding.get_embedding (float32, torch), rows of the first seq_len real tokens.

    Follows facebookresearch/fairseq fairseq/modules/sinusoidal_positional_embedding.py (get_embedding):
    step = log(10000) / (d // 2 - 1) in Python floats; freq = exp(float32 arange(d // 2) * -step);
    angles = float32 arange(num) x freq; [sin | cos]; zero column for odd d; row padding_idx zeroed.
    Real tokens take positions padding_idx+1, ... (utils.make_positions), so rows up to padding_idx are skipped.
    d of 2 or 3 raises ZeroDivisionError, as fairseq does.
    """
    first = padding_idx + 1
    num_embeddings = first + seq_len
    half = d_model // 2
    step = math.log(10000) / (half - 1)
    freq = torch.exp(torch.arange(half, dtype=torch.float) * -step)
    angles = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * freq.unsqueeze(0)
    table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1).view(num_embeddings, -1)
    if d_model % 2 == 1:
        table = torch.cat([table, torch.zeros(num_embeddings, 1)], dim=1)
    table[padding_idx, :] = 0
    return table[first:].numpy()


def guided_diffusion(timesteps: Sequence[float], d_model: int, max_period: int = 10000) -> Any:
    """OpenAI guided-diffusion timestep_embedding (float32, torch): one row a timestep, [cos | sin].

    Follows openai/guided-diffusion guided_diffusion/nn.py (timestep_embedding): freqs =
    exp(-log(max_period) * float32 arange(d // 2) / (d // 2)); args = float32(t) x freqs; [cos | sin];
    a zero column for odd d.
    """
    steps = torch.tensor(list(timesteps), dtype=torch.float32)
    half = d_model // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half)
    args = steps[:, None].float() * freqs[None]
    table = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if d_model % 2:
        table = torch.cat([table, torch.zeros_like(table[:, :1])], dim=-1)
    return table.numpy()
