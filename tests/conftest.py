"""Shared helpers: an independent high-precision reference built on mpmath."""

import mpmath

# 300 bits: far beyond float64, so a reference value's own error is invisible.
mpmath.mp.prec = 300


def exact_element(pos: int, dim: int, d_model: int, base: float = 10000.0) -> "mpmath.mpf":
    """The true real PE(pos, dim): sin or cos of pos / base**(2i/d_model), i = dim // 2."""
    pair = dim // 2
    angle = mpmath.mpf(pos) / mpmath.power(mpmath.mpf(base), mpmath.mpf(2 * pair) / d_model)
    return mpmath.sin(angle) if dim % 2 == 0 else mpmath.cos(angle)
