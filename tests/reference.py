"""An independent reference for exact mode: mpmath at 600 bits, rounded by exact comparisons.

Nothing here uses pe_reference.  The rounding to a format is done on
mpmath's binary floating-point numbers, whose comparisons are exact, and
checks that the 600-bit value is far enough from a rounding boundary
(2**-500 of a last place) for its rounding to be the true one's.
"""

import struct
from typing import Dict, List, Optional, Tuple, Union

import mpmath

PRECISION = 600
# name: (bits of precision, smallest normal exponent, exponent bits)
FORMATS: Dict[str, Tuple[int, int, int]] = {
    "float64": (53, -1022, 11),
    "float32": (24, -126, 8),
    "bfloat16": (8, -126, 8),
    "float16": (11, -14, 5),
}


def frequency(pair: int, d_model: int, base: Union[int, float]) -> "mpmath.mpf":
    with mpmath.workprec(PRECISION):
        return mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * pair) / d_model)


def element(
    pos: int, dim: int, d_model: int, base: Union[int, float], w: "Optional[mpmath.mpf]" = None
) -> "mpmath.mpf":
    """sin or cos of pos * base**(-2i/d_model) at 600 bits (more for large angles)."""
    extra = max(0, int(pos).bit_length() + 40)
    with mpmath.workprec(PRECISION + extra):
        if w is None or extra > 40 + 30:
            w = mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * (dim // 2)) / d_model)
        angle = mpmath.mpf(pos) * w
        result = mpmath.sin(angle) if dim % 2 == 0 else mpmath.cos(angle)
    return result


def distance(x: float, value: "mpmath.mpf") -> "mpmath.mpf":
    """|x - value| at 600 bits: a float's distance to a reference value, whatever mpmath's global precision."""
    with mpmath.workprec(PRECISION):
        return abs(mpmath.mpf(x) - value)


def round_to(value: "Union[mpmath.mpf, float, str]", dtype: str, exact: bool = False) -> float:
    """Round to nearest, ties to even, into dtype; return the float that holds it.

    ``value`` approximates a transcendental number unless ``exact``: then it
    must be decisive (not within 2**-500 of a last place from a tie).  An
    exact value may be a tie, and goes to the even neighbour.  A float or a
    decimal string is read exactly (at 664 bits, not mpmath's global precision).
    """
    precision, emin, _ = FORMATS[dtype]
    with mpmath.workprec(PRECISION + 64):
        if not isinstance(value, mpmath.mpf):
            value = mpmath.mpf(value)
        if value == 0:
            return 0.0
        magnitude = abs(value)
        exponent = int(mpmath.floor(mpmath.log(magnitude, 2)))
        while magnitude >= mpmath.ldexp(1, exponent + 1):
            exponent += 1
        while magnitude < mpmath.ldexp(1, exponent):
            exponent -= 1
        quantum = max(exponent, emin) - precision + 1
        scaled = mpmath.ldexp(magnitude, -quantum)
        whole = int(mpmath.floor(scaled))
        fraction = scaled - whole
        if exact:
            if fraction > 0.5 or (fraction == 0.5 and whole % 2 == 1):
                whole += 1
        else:
            # The reference must be decisive: far from the midpoint.
            assert abs(fraction - mpmath.mpf(0.5)) > mpmath.ldexp(1, -500), "reference too close to a tie"
            if fraction > 0.5:
                whole += 1
        result = float(mpmath.ldexp(whole, quantum))
    return -result if value < 0 else result


def bits(x: float, dtype: str) -> int:
    """IEEE bit pattern of x (exactly representable) in dtype, via struct and numpy-free arithmetic."""
    if dtype == "float64":
        return int(struct.unpack("<Q", struct.pack("<d", x))[0])
    if dtype == "float32":
        return int(struct.unpack("<I", struct.pack("<f", x))[0])
    if dtype == "float16":
        return int(struct.unpack("<H", struct.pack("<e", x))[0])
    # bfloat16: the upper half of the float32 pattern, which holds x exactly.
    pattern = int(struct.unpack("<I", struct.pack("<f", x))[0])
    assert pattern & 0xFFFF == 0
    return pattern >> 16


def expected(pos: int, dim: int, d_model: int, base: Union[int, float], dtype: str) -> float:
    return round_to(element(pos, dim, d_model, base), dtype)


def from_bits(pattern: int, dtype: str) -> float:
    if dtype == "float64":
        return float(struct.unpack("<d", struct.pack("<Q", pattern))[0])
    if dtype == "float32":
        return float(struct.unpack("<f", struct.pack("<I", pattern))[0])
    if dtype == "float16":
        return float(struct.unpack("<e", struct.pack("<H", pattern))[0])
    return float(struct.unpack("<f", struct.pack("<I", pattern << 16))[0])


def neighbours(x: float, dtype: str) -> Tuple[float, float]:
    """The numbers of dtype just below and just above x (x representable and finite)."""
    width = {"float64": 64, "float32": 32, "bfloat16": 16, "float16": 16}[dtype]
    sign = 1 << (width - 1)
    pattern = bits(x, dtype)
    # Order the patterns along the number line: negative ones count down from zero.
    ordinal = -(pattern - sign) if pattern & sign else pattern
    if x == 0.0:
        ordinal = 0

    def back(o: int) -> float:
        return from_bits(o if o >= 0 else sign | -o, dtype)

    return back(ordinal - 1), back(ordinal + 1)


def convention_table(preset: str, seq_len: int, d_model: int, base: float = 10000.0) -> List[List["mpmath.mpf"]]:
    """Each framework's table at 600 bits, written from its definition (not from pe_reference)."""
    with mpmath.workprec(PRECISION):
        b = mpmath.mpf(base)
        if preset == "paper":
            # Interleaved; exponent 2i/d with the odd width itself.
            def column(pos: int, j: int) -> "mpmath.mpf":
                angle = pos * b ** (-mpmath.mpf(2 * (j // 2)) / d_model)
                return mpmath.sin(angle) if j % 2 == 0 else mpmath.cos(angle)

            return [[column(pos, j) for j in range(d_model)] for pos in range(seq_len)]
        half = d_model // 2
        first = 2 if preset == "fairseq" else 0
        if preset in ("tensor2tensor", "fairseq"):
            increment = mpmath.log(b) / max(half - 1, 1)
            frequencies = [mpmath.exp(-increment * i) for i in range(half)]
        else:
            frequencies = [mpmath.exp(-mpmath.log(b) * i / half) for i in range(half)]
        table = []
        for pos in range(first, first + seq_len):
            sines = [mpmath.sin(pos * w) for w in frequencies]
            cosines = [mpmath.cos(pos * w) for w in frequencies]
            row = cosines + sines if preset == "guided-diffusion" else sines + cosines
            table.append(row + [mpmath.mpf(0)] * (d_model % 2))
        return table
