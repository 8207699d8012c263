"""A consumer of the installed pe_reference: mypy --strict must pass with its stubs."""

from fractions import Fraction
from typing import Iterator, List, Optional, Tuple, Union

from pe_reference import PRESETS, Convention, Report, assert_close, compare, derivation, encoding, rows, value

table: List[List[float]] = encoding(4, 4, exact=True, dtype="float32", preset="tensor2tensor")
stream: Iterator[List[float]] = rows(1000, 16, layout="cos-sin", start=2, odd="zero")
element: float = value(10**9, 511, 512, exact=True, spacing="tensor2tensor")
text: str = derivation(1, 2, 4, base=500000.0)
report: Report = compare(table, dtype="float32", atol=1e-6, ulps=2)
passed: bool = report.ok
worst: Optional[Tuple[int, int, float, float]] = report.worst
assert_close(encoding(8, 8), preset="paper")
diffusion: List[List[float]] = encoding(2, 8, preset="diffusers", positions=[999.5, "0.3"], shift=0, exact=True)
mlx: Convention = PRESETS["mlx"].replace(full_turns=True, scale=1, step=Fraction(1, 2))
shown: Union[int, float, str] = mlx.step
grid: List[List[float]] = encoding((16, 16), 64, preset="mae", exact=True, dtype="float32", prefix=1)
video: Iterator[List[float]] = rows([8, 16, 16], 1920, preset="cogvideox", position_scale=(1, "8/15", "8/15"))
