# Types of pe_reference for the users of the installed distribution.
#
# PEP 561 gives no way to mark a single-module distribution as typed
# (python/typing#1333), so the wheel carries this stub-only package beside
# pe_reference.py.  CI checks it against the module with mypy.stubtest and
# type-checks a consumer project with it.
import os
from fractions import Fraction
from typing import Any, Dict, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union, overload

from typing_extensions import Unpack

__version__: str
__all__ = (
    "Convention",
    "PRESETS",
    "Report",
    "apply_rope",
    "assert_close",
    "compare",
    "compare_rope",
    "derivation",
    "encoding",
    "main",
    "rope",
    "rows",
    "value",
)
DEFAULT_BASE: float

_DType = Literal["float64", "float32", "bfloat16", "float16"]
_Preset = Literal[
    "paper",
    "tensor2tensor",
    "fairseq",
    "tf-tutorial",
    "guided-diffusion",
    "xlm",
    "keras-hub",
    "tatp22",
    "marian",
    "gpt-j",
    "transformer-xl",
    "whisper",
    "m2m100",
    "diffusers",
    "pyg",
    "mlx",
]
# The grid presets: a 2-D or 3-D grid's tables (seq_len a shape).
_GridPreset = Literal[
    "mae",
    "diffusers-2d",
    "sd3",
    "timm-sincos2d",
    "rt-detr",
    "detr",
    "deformable-detr",
    "tatp22-2d",
    "tatp22-3d",
    "diffusers-3d",
    "cogvideox",
]
_Layout = Literal["interleaved", "sin-cos", "cos-sin"]
_Spacing = Literal["paper", "tensor2tensor"]
_Odd = Literal["sine", "zero", "error", "round-up"]
# An exact number: an int, a float, a Fraction, or a decimal or fraction string ("999.5", "1/3").
_Number = Union[int, float, Fraction, str]
# A number as a Convention gives it back: an int, a float when exact, else a decimal or fraction string.
_Shown = Union[int, float, str]

class _AxisFields(TypedDict, total=False):
    """A Convention's fields as keywords of the table functions (None: not given), but positions."""

    layout: Optional[_Layout]
    spacing: Optional[_Spacing]
    shift: Optional[_Number]
    base: Optional[_Number]
    angle_scale: Optional[_Number]
    full_turns: Optional[bool]
    start: Optional[_Number]
    step: Optional[_Number]
    descending: Optional[bool]
    odd: Optional[_Odd]
    scale: Optional[_Number]

class _Fields(_AxisFields, total=False):
    """A Convention's fields as keywords of the table functions, and preset."""

    preset: Optional[_Preset]
    positions: Optional[Sequence[_Number]]

class _GridFields(_AxisFields, total=False):
    """A grid's keywords: a Convention's fields for every axis, a grid preset or any, the grid's fields."""

    preset: Optional[Union[_Preset, _GridPreset]]
    axis_order: Optional[str]
    split: Optional[str]
    arrangement: Optional[Literal["axes", "functions"]]
    normalize: Optional[bool]
    epsilon: Optional[_Number]
    position_scale: Optional[Union[_Number, Sequence[_Number]]]
    prefix: Optional[int]

class _CompareFields(_GridFields, total=False):
    """compare()'s keywords: a sequence's (positions) or a grid's."""

    positions: Optional[Sequence[_Number]]

class _Changes(TypedDict, total=False):
    layout: _Layout
    spacing: _Spacing
    shift: _Number
    base: _Number
    angle_scale: _Number
    full_turns: bool
    start: _Number
    step: _Number
    descending: bool
    positions: Optional[Sequence[_Number]]
    odd: _Odd
    scale: _Number

class Convention:
    def __init__(
        self,
        *,
        layout: _Layout = ...,
        spacing: _Spacing = ...,
        shift: _Number = ...,
        base: _Number = ...,
        angle_scale: _Number = ...,
        full_turns: bool = ...,
        start: _Number = ...,
        step: _Number = ...,
        descending: bool = ...,
        positions: Optional[Sequence[_Number]] = ...,
        odd: _Odd = ...,
        scale: _Number = ...,
    ) -> None: ...
    @property
    def layout(self) -> str: ...
    @property
    def spacing(self) -> str: ...
    @property
    def shift(self) -> _Shown: ...
    @property
    def base(self) -> _Shown: ...
    @property
    def angle_scale(self) -> _Shown: ...
    @property
    def full_turns(self) -> bool: ...
    @property
    def start(self) -> _Shown: ...
    @property
    def step(self) -> _Shown: ...
    @property
    def descending(self) -> bool: ...
    @property
    def positions(self) -> Optional[Tuple[_Shown, ...]]: ...
    @property
    def odd(self) -> str: ...
    @property
    def scale(self) -> _Shown: ...
    def replace(self, **changes: Unpack[_Changes]) -> Convention: ...
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
    uncheckable: Optional[str]
    coarse: int
    unjudged: int
    coarse_from: Optional[Tuple[int, int]]
    unjudged_from: Optional[Tuple[int, int]]
    subject: str
    rule: Optional[str]
    causes: Tuple[str, ...]
    dtype_origin: Optional[str]
    narrower: Optional[str]
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
    ) -> None: ...
    @property
    def ok(self) -> bool: ...
    @property
    def count(self) -> int: ...
    def headline(self) -> str: ...
    def tolerance(self) -> str: ...

@overload
def encoding(
    seq_len: int,
    d_model: int,
    *,
    exact: bool = ...,
    dtype: _DType = ...,
    convention: Optional[Convention] = ...,
    **fields: Unpack[_Fields],
) -> List[List[float]]: ...
@overload
def encoding(
    seq_len: Union[Tuple[int, ...], List[int]],
    d_model: int,
    *,
    exact: bool = ...,
    dtype: _DType = ...,
    convention: Optional[Convention] = ...,
    **fields: Unpack[_GridFields],
) -> List[List[float]]: ...
@overload
def rows(
    seq_len: int,
    d_model: int,
    *,
    exact: bool = ...,
    dtype: _DType = ...,
    convention: Optional[Convention] = ...,
    **fields: Unpack[_Fields],
) -> Iterator[List[float]]: ...
@overload
def rows(
    seq_len: Union[Tuple[int, ...], List[int]],
    d_model: int,
    *,
    exact: bool = ...,
    dtype: _DType = ...,
    convention: Optional[Convention] = ...,
    **fields: Unpack[_GridFields],
) -> Iterator[List[float]]: ...
def value(
    pos: int,
    dim: int,
    d_model: int,
    *,
    exact: bool = ...,
    dtype: _DType = ...,
    convention: Optional[Convention] = ...,
    **fields: Unpack[_Fields],
) -> float: ...
def derivation(pos: int, dim: int, d_model: int, *, base: float = ...) -> str: ...
def compare(
    actual: object,
    *,
    dtype: Optional[_DType] = ...,
    atol: Optional[float] = ...,
    ulps: Optional[float] = ...,
    convention: Optional[Convention] = ...,
    grid: Optional[Union[Tuple[int, ...], List[int]]] = ...,
    **fields: Unpack[_CompareFields],
) -> Report: ...
def assert_close(actual: object, *, kind: Optional[Literal["cos", "sin", "rotated"]] = ..., **options: Any) -> None: ...
def main(argv: Optional[Sequence[str]] = ...) -> int: ...

_RopeLayout = Literal["half", "interleaved", "pairs"]
# A model's rope parameters as HF transformers writes them (config.rope_parameters).
_Scaling = Mapping[str, Any]
# A row's position, or (several axes: axes_dim, scaling's mrope_section) a row of one per axis; or an array.
_RopePositions = Union[Sequence[_Number], Sequence[Sequence[_Number]], Any]
# A model's config.json: its path, or the dict it holds.
_Config = Union[str, "os.PathLike[str]", Mapping[str, Any]]

def rope(
    seq_len: int,
    head_dim: Optional[int] = ...,
    *,
    base: Optional[_Number] = ...,
    layout: _RopeLayout = ...,
    scaling: Optional[_Scaling] = ...,
    positions: Optional[_RopePositions] = ...,
    exact: bool = ...,
    dtype: _DType = ...,
    axes_dim: Optional[Sequence[int]] = ...,
    config: Optional[_Config] = ...,
) -> Tuple[List[List[float]], List[List[float]]]: ...
def apply_rope(
    x: Any,
    *,
    base: Optional[_Number] = ...,
    layout: _RopeLayout = ...,
    scaling: Optional[_Scaling] = ...,
    positions: Optional[_RopePositions] = ...,
    exact: bool = ...,
    dtype: _DType = ...,
    axes_dim: Optional[Sequence[int]] = ...,
) -> List[List[float]]: ...
def compare_rope(
    actual: Any,
    *,
    kind: Literal["cos", "sin", "rotated"] = ...,
    x: Optional[Any] = ...,
    base: Optional[_Number] = ...,
    layout: _RopeLayout = ...,
    scaling: Optional[_Scaling] = ...,
    positions: Optional[_RopePositions] = ...,
    dtype: Optional[_DType] = ...,
    atol: Optional[float] = ...,
    ulps: Optional[float] = ...,
    axes_dim: Optional[Sequence[int]] = ...,
    config: Optional[_Config] = ...,
) -> Report: ...
