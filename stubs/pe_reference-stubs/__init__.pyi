# Types of pe_reference for the users of the installed distribution.
#
# PEP 561 gives no way to mark a single-module distribution as typed
# (python/typing#1333), so the wheel carries this stub-only package beside
# pe_reference.py.  CI checks it against the module with mypy.stubtest and
# type-checks a consumer project with it.
from typing import Dict, Iterator, List, Literal, Optional, Sequence, Tuple

__version__: str
__all__ = ["Convention", "PRESETS", "Report", "assert_close", "compare", "derivation", "encoding", "main", "rows", "value"]
DEFAULT_BASE: float

_DType = Literal["float64", "float32", "bfloat16", "float16"]
_Preset = Literal[
    "paper", "tensor2tensor", "fairseq", "tf-tutorial", "guided-diffusion", "xlm", "keras-hub", "marian", "gpt-j", "whisper", "m2m100"
]
_Layout = Literal["interleaved", "sin-cos", "cos-sin"]
_Spacing = Literal["paper", "tensor2tensor"]
_Odd = Literal["sine", "zero", "error"]

class Convention:
    def __init__(self, layout: _Layout = ..., spacing: _Spacing = ..., start: int = ..., odd: _Odd = ...) -> None: ...
    @property
    def layout(self) -> str: ...
    @property
    def spacing(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def odd(self) -> str: ...
    def replace(
        self,
        *,
        layout: Optional[_Layout] = ...,
        spacing: Optional[_Spacing] = ...,
        start: Optional[int] = ...,
        odd: Optional[_Odd] = ...,
    ) -> Convention: ...
    def __eq__(self, other: object) -> bool: ...
    def __ne__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

PRESETS: Dict[str, Convention]

class Report:
    shape: Tuple[int, int]
    convention: str
    dtype: str
    atol: Optional[float]
    ulps: Optional[float]
    failures: int
    max_abs_error: float
    max_ulp_error: float
    worst: Optional[Tuple[int, int, float, float]]
    diagnosis: Optional[str]
    not_finite: List[Tuple[int, int, float]]
    not_finite_count: int
    unrepresentable: Optional[str]
    def __init__(
        self,
        shape: Tuple[int, int],
        convention: str,
        dtype: str,
        atol: Optional[float],
        ulps: Optional[float],
        failures: int,
        max_abs_error: float,
        max_ulp_error: float,
        worst: Optional[Tuple[int, int, float, float]],
        diagnosis: Optional[str],
        not_finite: Sequence[Tuple[int, int, float]] = ...,
        not_finite_count: int = ...,
        unrepresentable: Optional[str] = ...,
    ) -> None: ...
    @property
    def ok(self) -> bool: ...
    @property
    def count(self) -> int: ...
    def tolerance(self) -> str: ...

def encoding(
    seq_len: int,
    d_model: int,
    *,
    base: float = ...,
    exact: bool = ...,
    dtype: _DType = ...,
    preset: Optional[_Preset] = ...,
    layout: Optional[_Layout] = ...,
    spacing: Optional[_Spacing] = ...,
    start: Optional[int] = ...,
    odd: Optional[_Odd] = ...,
    convention: Optional[Convention] = ...,
) -> List[List[float]]: ...
def rows(
    seq_len: int,
    d_model: int,
    *,
    base: float = ...,
    exact: bool = ...,
    dtype: _DType = ...,
    preset: Optional[_Preset] = ...,
    layout: Optional[_Layout] = ...,
    spacing: Optional[_Spacing] = ...,
    start: Optional[int] = ...,
    odd: Optional[_Odd] = ...,
    convention: Optional[Convention] = ...,
) -> Iterator[List[float]]: ...
def value(
    pos: int,
    dim: int,
    d_model: int,
    *,
    base: float = ...,
    exact: bool = ...,
    dtype: _DType = ...,
    preset: Optional[_Preset] = ...,
    layout: Optional[_Layout] = ...,
    spacing: Optional[_Spacing] = ...,
    start: Optional[int] = ...,
    odd: Optional[_Odd] = ...,
    convention: Optional[Convention] = ...,
) -> float: ...
def derivation(pos: int, dim: int, d_model: int, *, base: float = ...) -> str: ...
def compare(
    actual: object,
    *,
    base: float = ...,
    dtype: _DType = ...,
    atol: Optional[float] = ...,
    ulps: Optional[float] = ...,
    preset: Optional[_Preset] = ...,
    layout: Optional[_Layout] = ...,
    spacing: Optional[_Spacing] = ...,
    start: Optional[int] = ...,
    odd: Optional[_Odd] = ...,
    convention: Optional[Convention] = ...,
) -> Report: ...
def assert_close(
    actual: object,
    *,
    base: float = ...,
    dtype: _DType = ...,
    atol: Optional[float] = ...,
    ulps: Optional[float] = ...,
    preset: Optional[_Preset] = ...,
    layout: Optional[_Layout] = ...,
    spacing: Optional[_Spacing] = ...,
    start: Optional[int] = ...,
    odd: Optional[_Odd] = ...,
    convention: Optional[Convention] = ...,
) -> None: ...
def main(argv: Optional[Sequence[str]] = ...) -> int: ...
