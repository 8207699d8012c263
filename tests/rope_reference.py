"""An independent reference for RoPE: the real-number definitions of docs/rope.md ("The scaling variants"), in mpmath.

Nothing here uses pe_reference.  Every number a caller gives (base, positions, the scaling dict's
numbers, x) is taken exactly: an int as itself, a float as the binary number it holds, a str as a
decimal or "n/m", a Fraction as itself.  Values are computed at PRECISION bits or more (more for large
angles and for results much smaller than their terms), so their error is far below the 2**-500 of a
last place that tests/reference.round_to asks of a value it rounds.  A value that is rational is
returned as a Fraction (exactly: position 0, a rational attention factor), any other as an mpmath.mpf.

Each variant follows transformers 5.23's modeling_rope_utils.py, read as real-number arithmetic:
  default   LlamaRotaryEmbedding.compute_default_rope_parameters  w_k = base**(-2k/d)
  linear    _compute_linear_scaling_rope_parameters              w_k / factor
  dynamic   _compute_dynamic_ntk_parameters (+ dynamic_rope_update: only when L > L0)
  yarn      _compute_yarn_parameters (find_correction_dim / find_correction_range / linear_ramp_factor, get_mscale)
  llama3    _compute_llama3_parameters
  longrope  _compute_longrope_parameters (+ dynamic_rope_update's longrope_frequency_update: long set when L > L0)
L is the largest position of the table plus one (HF: max(position_ids) + 1).
"""

import math
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple, Union

import mpmath

from tests import reference

PRECISION = 600
GUARD = 32  # extra bits, and the loss (in bits) past which a value is computed again at higher precision

Number = Union[int, float, str, Fraction]
Value = Union[Fraction, "mpmath.mpf"]

KINDS = ("default", "linear", "dynamic", "yarn", "llama3", "longrope")
KEYS = {
    "rope_type",
    "type",
    "rope_theta",
    "factor",
    "original_max_position_embeddings",
    "max_position_embeddings",
    "low_freq_factor",
    "high_freq_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "attention_factor",
    "truncate",
    "short_factor",
    "long_factor",
}


def exact(x: Number) -> Fraction:
    """A number as the fraction it stands for (Fraction(float) is the float's binary value)."""
    if isinstance(x, bool) or not isinstance(x, (int, float, str, Fraction)):
        raise TypeError(f"not a number: {x!r}")
    return Fraction(x)


def mpf(x: Fraction) -> "mpmath.mpf":
    """x at the working precision (exact when its denominator is a power of two that fits)."""
    return mpmath.mpf(x.numerator) / x.denominator


def _bits(x: Fraction) -> int:
    """An integer n with |x| < 2**n (n >= 0)."""
    return max(0, (abs(x.numerator) // x.denominator + 1).bit_length())


class Rope:
    """head_dim d, base and a scaling dict (HF rope_parameters form), resolved to exact numbers."""

    def __init__(
        self, head_dim: int, base: Optional[Number] = None, scaling: Optional[Dict[str, object]] = None
    ) -> None:
        if head_dim < 2 or head_dim % 2:
            raise ValueError("head_dim must be even and >= 2")
        scaling = dict(scaling or {})
        unknown = set(scaling) - KEYS
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}")
        self.d = head_dim
        self.h = head_dim // 2
        self.kind = str(scaling.get("rope_type", scaling.get("type", "default")))
        if self.kind not in KINDS:
            raise ValueError(f"unknown rope_type {self.kind!r}")
        theta = scaling.get("rope_theta")
        if theta is not None and base is not None and exact(theta) != exact(base):  # type: ignore[arg-type]
            raise ValueError("rope_theta and base disagree")
        self.base = exact(base if base is not None else theta if theta is not None else 10000)  # type: ignore[arg-type]
        self.raw = scaling
        self._attention: Optional[Value] = None
        self._frequencies: Dict[Tuple[int, Optional[Fraction]], List["mpmath.mpf"]] = {}
        self._scales: Dict[Optional[Fraction], int] = {}

    def get(self, key: str) -> Optional[Fraction]:
        value = self.raw.get(key)
        return None if value is None else exact(value)  # type: ignore[arg-type]

    def need(self, key: str) -> Fraction:
        value = self.get(key)
        if value is None:
            raise ValueError(f"{self.kind} needs {key}")
        return value

    def factor_or_ratio(self, default: Optional[Fraction]) -> Fraction:
        """factor, else max_position_embeddings / L0 (HF yarn and longrope), else default."""
        factor = self.get("factor")
        if factor is not None:
            return factor
        top = self.get("max_position_embeddings")
        if top is not None:
            return top / self.need("original_max_position_embeddings")
        if default is None:
            raise ValueError(f"{self.kind} needs factor")
        return default

    def l0(self) -> Fraction:
        """L0: dynamic reads max_position_embeddings (original_... when that is absent); the others original_..."""
        if self.kind == "dynamic":
            top = self.get("max_position_embeddings")
            return top if top is not None else self.need("original_max_position_embeddings")
        return self.need("original_max_position_embeddings")

    # ----- frequencies, at the working precision -----------------------------------------------------------

    def _plain(self, base: "mpmath.mpf", k: int) -> "mpmath.mpf":
        """base**(-2k/d): HF's 1.0 / (base ** (arange(0, dim, 2) / dim))."""
        return mpmath.power(base, -mpf(Fraction(2 * k, self.d)))

    def frequencies(self, length: Optional[Fraction] = None) -> List["mpmath.mpf"]:
        """w_0 .. w_{h-1} at the working precision; length is L (dynamic and longrope look at it)."""
        base = mpf(self.base)
        plain = [self._plain(base, k) for k in range(self.h)]
        if self.kind == "default":
            return plain
        if self.kind == "linear":  # _compute_linear_scaling_rope_parameters: inv_freq /= factor
            factor = mpf(self.need("factor"))
            return [w / factor for w in plain]
        if self.kind == "dynamic":  # _compute_dynamic_ntk_parameters, recomputed only when L > L0
            L0, factor = self.l0(), self.need("factor")
            if length is None or length <= L0:
                return plain
            grown = mpf(factor * length / L0 - (factor - 1)) ** mpf(Fraction(self.d, self.d - 2))
            base2 = base * grown
            return [self._plain(base2, k) for k in range(self.h)]
        if self.kind == "yarn":
            return self._yarn(plain)
        if self.kind == "llama3":
            return self._llama3(plain)
        # longrope: _compute_longrope_parameters; w_k = base**(-2k/d) / ext_k
        L0 = self.l0()
        key = "long_factor" if length is not None and length > L0 else "short_factor"
        ext = self.raw.get(key)
        if not isinstance(ext, (list, tuple)) or len(ext) != self.h:
            raise ValueError(f"longrope needs {key}: {self.h} numbers")
        return [w / mpf(exact(e)) for w, e in zip(plain, ext)]

    def yarn_range(self) -> Tuple[Fraction, Fraction]:
        """(low, high) of find_correction_range, floor/ceil decided on the real values (no cd is an integer:
        that would make pi algebraic), then max(low, 0), min(high, d - 1), and high += 1/1000 if equal."""
        L0 = self.l0()
        beta_fast = self.get("beta_fast") or Fraction(32)  # HF: `or 32`
        beta_slow = self.get("beta_slow") or Fraction(1)  # HF: `or 1`
        truncate = self.raw.get("truncate", True)
        ends = []
        with mpmath.workprec(PRECISION):
            for n, rounding in ((beta_fast, mpmath.floor), (beta_slow, mpmath.ceil)):
                # find_correction_dim: dim * ln(L0 / (n * 2 pi)) / (2 ln base)
                cd = self.d * mpmath.log(mpf(L0 / n) / (2 * mpmath.pi)) / (2 * mpmath.log(mpf(self.base)))
                if truncate:
                    assert abs(cd - mpmath.nint(cd)) > mpmath.ldexp(1, -PRECISION // 2), "correction dim at an integer"
                    ends.append(Fraction(int(rounding(cd))))
                else:
                    # HF keeps a float here; the real number is what the definition uses.
                    ends.append(_to_fraction(cd))
        low, high = max(ends[0], Fraction(0)), min(ends[1], Fraction(self.d - 1))
        if low == high:
            high += Fraction(1, 1000)
        return low, high

    def _yarn(self, plain: List["mpmath.mpf"]) -> List["mpmath.mpf"]:
        """_compute_yarn_parameters: w_k * ((1 - ramp_k) + ramp_k / factor), ramp_k = clamp((k-low)/(high-low), 0, 1)."""
        factor = self.factor_or_ratio(None)
        low, high = self.yarn_range()
        out = []
        for k, w in enumerate(plain):
            ramp = min(max((k - low) / (high - low), Fraction(0)), Fraction(1))
            out.append(w * mpf((1 - ramp) + ramp / factor))
        return out

    def _llama3(self, plain: List["mpmath.mpf"]) -> List["mpmath.mpf"]:
        """_compute_llama3_parameters: by the real wavelength 2 pi / w against L0/low_freq_factor and L0/high_freq_factor."""
        factor, low_ff, high_ff, L0 = (
            self.need(key)
            for key in ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
        )
        out = []
        for w in plain:
            wavelength = 2 * mpmath.pi / w
            for threshold in (L0 / low_ff, L0 / high_ff):  # never equal: 2 pi base**t is transcendental
                assert abs(wavelength - mpf(threshold)) > mpmath.ldexp(wavelength, -PRECISION // 2)
            if wavelength > mpf(L0 / low_ff):
                out.append(w / mpf(factor))
            elif wavelength < mpf(L0 / high_ff):
                out.append(w)
            else:
                smooth = (mpf(L0) / wavelength - mpf(low_ff)) / mpf(high_ff - low_ff)
                out.append((1 - smooth) * w / mpf(factor) + smooth * w)
        return out

    # ----- attention factor --------------------------------------------------------------------------------

    def attention_factor(self) -> Value:
        """A: 1 unless yarn (get_mscale) or longrope (sqrt(1 + ln f / ln L0)) set it; attention_factor wins."""
        if self._attention is None:
            self._attention = self._attention_factor()
        return self._attention

    def _attention_factor(self) -> Value:
        given = self.get("attention_factor")
        if self.kind not in ("yarn", "longrope"):
            return Fraction(1)
        if given is not None:
            return given
        if self.kind == "yarn":
            factor = self.factor_or_ratio(None)
            mscale, mscale_all_dim = self.get("mscale"), self.get("mscale_all_dim")
            if factor <= 1 or (mscale and mscale_all_dim and mscale == mscale_all_dim):
                return Fraction(1)

            def get_mscale(m: Fraction) -> "mpmath.mpf":  # 1 if s <= 1 else 0.1 * m * ln(s) + 1
                return mpf(Fraction(1, 10) * m) * mpmath.log(mpf(factor)) + 1

            with mpmath.workprec(PRECISION + GUARD):
                if mscale and mscale_all_dim:
                    return get_mscale(mscale) / get_mscale(mscale_all_dim)
                return get_mscale(Fraction(1))
        factor = self.factor_or_ratio(Fraction(1))
        if factor <= 1:
            return Fraction(1)
        with mpmath.workprec(PRECISION + GUARD):
            return mpmath.sqrt(1 + mpmath.log(mpf(factor)) / mpmath.log(mpf(self.l0())))

    # ----- values ------------------------------------------------------------------------------------------

    def _at(self, precision: int, length: Optional[Fraction]) -> List["mpmath.mpf"]:
        """The frequencies at a given precision (cached: a table computes them once)."""
        key = (precision, length)
        if key not in self._frequencies:
            with mpmath.workprec(precision):
                self._frequencies[key] = self.frequencies(length)
        return self._frequencies[key]

    def _scale(self, length: Optional[Fraction]) -> int:
        """Bits of the largest frequency (w can pass 1 when a factor is below 1); mpmath.mag(x) >= log2|x|."""
        return max(0, max(int(mpmath.mag(w)) for w in self._at(PRECISION, length)))

    def _evaluate(
        self,
        p: Fraction,
        k: int,
        length: Fraction,
        terms: Sequence[Tuple[Fraction, Fraction]] = ((Fraction(1), Fraction(0)), (Fraction(0), Fraction(1))),
    ) -> List["mpmath.mpf"]:
        """u cos(p w_k) + v sin(p w_k) for each (u, v) of terms (not both 0; p != 0), to PRECISION bits relative.

        The angle's error is |p w_k| 2**-precision, so a result's relative error is about
        |p w_k| max(|u|, |v|) 2**-precision / |result|: the precision grows by the bits of both.  One
        precision serves a whole table (from the larger of p and L), so its frequencies are computed once."""
        extra = 0
        if length not in self._scales:
            self._scales[length] = self._scale(length)
        while True:
            precision = PRECISION + GUARD + max(_bits(p), _bits(length)) + self._scales[length] + extra
            with mpmath.workprec(precision):
                c, s = mpmath.cos_sin(mpf(p) * self._at(precision, length)[k])
                values = [
                    c if u == 1 and v == 0 else s if u == 0 and v == 1 else mpf(u) * c + mpf(v) * s for u, v in terms
                ]
                # mpmath.mag(x) is within one of log2|x|, rounded up.
                loss = max(
                    int(mpmath.mag(mpf(max(abs(u), abs(v))))) - int(mpmath.mag(value)) + 2
                    for (u, v), value in zip(terms, values)
                )
                if loss <= extra + GUARD:
                    return values
            extra = -(-(loss + GUARD) // 128) * 128  # in steps of 128 bits: few precisions, few frequency lists

    def _times_a(self, value: Value) -> Value:
        """A * value: a Fraction when both are rational."""
        A = self.attention_factor()
        if isinstance(value, Fraction) and isinstance(A, Fraction):
            return A * value
        if value == 0:
            return Fraction(0)
        with mpmath.workprec(PRECISION + GUARD):
            return (mpf(A) if isinstance(A, Fraction) else A) * (mpf(value) if isinstance(value, Fraction) else value)

    def cos_sin(self, position: Number, length: Optional[Number] = None) -> List[Tuple[Value, Value]]:
        """(A cos(p w_k), A sin(p w_k)) for k = 0 .. h-1; length L defaults to p + 1."""
        p = exact(position)
        L = exact(length) if length is not None else p + 1
        if p == 0:
            return [(self._times_a(Fraction(1)), Fraction(0))] * self.h
        out: List[Tuple[Value, Value]] = []
        for k in range(self.h):
            c, s = self._evaluate(p, k, L)
            out.append((self._times_a(c), self._times_a(s)))
        return out

    def table(self, positions: Sequence[Number], layout: str = "half") -> Tuple[List[List[Value]], List[List[Value]]]:
        """(cos, sin): rows for positions, columns laid out as rope's (L = largest position + 1)."""
        L = max(exact(p) for p in positions) + 1
        cos, sin = [], []
        for p in positions:
            pairs = self.cos_sin(p, L)
            cos.append([pairs[column_pair(c, self.d, layout)][0] for c in range(self.d)])
            sin.append([pairs[column_pair(c, self.d, layout)][1] for c in range(self.d)])
        return cos, sin

    def rotate(
        self, x: Sequence[Number], position: Number, layout: str = "half", length: Optional[Number] = None
    ) -> List[Value]:
        """apply_rope's row: out[a] = A (x_a cos t - x_b sin t), out[b] = A (x_b cos t + x_a sin t), t = p w_j,
        pairs (a, b) = (j, j + h) in the half layout, (2j, 2j + 1) interleaved.  HF: apply_rotary_pos_emb / rotate_half."""
        assert len(x) == self.d
        p = exact(position)
        L = exact(length) if length is not None else p + 1
        xs = [exact(v) for v in x]
        out: List[Value] = [Fraction(0)] * self.d
        for j in range(self.h):
            a, b = (j, j + self.h) if layout == "half" else (2 * j, 2 * j + 1)
            if p == 0:
                out[a], out[b] = self._times_a(xs[a]), self._times_a(xs[b])
            elif xs[a] != 0 or xs[b] != 0:
                out[a], out[b] = (self._times_a(v) for v in self._evaluate(p, j, L, ((xs[a], -xs[b]), (xs[b], xs[a]))))
        return out


def _to_fraction(x: "mpmath.mpf") -> Fraction:
    """An mpmath binary number as the exact fraction it is."""
    man, exp = mpmath.mpf(x).man_exp  # the magnitude's: man_exp drops the sign
    magnitude = Fraction(int(man)) * (Fraction(2) ** int(exp))
    return -magnitude if x < 0 else magnitude


def column_pair(column: int, head_dim: int, layout: str) -> int:
    """The pair a column uses: c % h in the half layout (cat(freqs, freqs)), c // 2 interleaved."""
    if layout == "half":
        return column % (head_dim // 2)
    if layout == "interleaved":
        return column // 2
    raise ValueError(f"unknown layout {layout!r}")


def frequencies(
    head_dim: int,
    base: Optional[Number] = None,
    scaling: Optional[Dict[str, object]] = None,
    length: Optional[Number] = None,
) -> List["mpmath.mpf"]:
    """w_0 .. w_{h-1} at PRECISION bits."""
    with mpmath.workprec(PRECISION):
        return Rope(head_dim, base, scaling).frequencies(None if length is None else exact(length))


def attention_factor(
    head_dim: int, base: Optional[Number] = None, scaling: Optional[Dict[str, object]] = None
) -> Value:
    return Rope(head_dim, base, scaling).attention_factor()


def rounded(value: Value, dtype: str) -> float:
    """Round to nearest, ties to even, into dtype, as tests/reference.round_to does, but in integers (round_to
    takes about 80 us, too slow for the 10**5 values here; test_rounded_is_reference_round_to checks the two
    agree).  An mpf is a 600-bit approximation: it must not be within 2**-500 of a last place from a tie; a
    Fraction is exact and may be one.  Past the format's largest number the result is infinity."""
    precision, emin, exponent_bits = reference.FORMATS[dtype]
    if not value:
        return 0.0
    if isinstance(value, Fraction):  # |value| = man / den * 2**exp exactly
        negative, man, den, exp = value < 0, abs(value.numerator), value.denominator, 0
        e = man.bit_length() - den.bit_length()  # 2**(e-1) < |value| < 2**(e+1)
        if man << max(0, -e) < den << max(0, e):
            e -= 1
    else:
        negative, man, exp, _ = value._mpf_  # mpmath's (sign, mantissa, exponent, bit count)
        den, e = 1, exp + man.bit_length() - 1  # 2**e <= |value| < 2**(e+1)
    quantum = max(e, emin) - precision + 1
    # |value| / 2**quantum = whole + rest / unit
    numerator, unit = (man << max(0, exp - quantum)), den << max(0, quantum - exp)
    whole, rest = divmod(numerator, unit)
    if not isinstance(value, Fraction):
        assert abs(2 * rest - unit) << 499 > unit, "reference too close to a tie"  # |rest/unit - 1/2| > 2**-500
    if 2 * rest > unit or (2 * rest == unit and whole % 2 == 1):
        whole += 1
    emax = 2 ** (exponent_bits - 1) - 1
    result = math.inf if quantum + whole.bit_length() - 1 > emax else math.ldexp(whole, quantum)
    return -result if negative else result
