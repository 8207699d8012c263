"""Rules of the public functions and of the module's header that the mutation run found untested."""

import builtins
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

import pe_reference
from pe_reference import derivation

ROOT = Path(__file__).resolve().parent.parent


def test_derivation_refuses_d_model_0_by_naming_d_model() -> None:
    with pytest.raises(ValueError, match="^d_model must be at least 1, got 0$"):
        derivation(0, 0, 0)


def test_importing_the_module_loads_neither_typing_nor_argparse() -> None:
    # MicroPython has neither: the annotations' imports run only under a type checker, argparse only in main().
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import pe_reference; "
        "print(sorted(m for m in ('typing', 'argparse') if m in sys.modules))"
    )
    process = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(ROOT)], capture_output=True, text=True, check=False
    )
    assert (process.returncode, process.stdout, process.stderr) == (0, "[]\n", "")


def test_without_brokenpipeerror_a_class_never_raised_stands_in_for_it() -> None:
    # MicroPython has no BrokenPipeError: the module, run where the name is missing, catches a class nothing raises.
    names: Dict[str, object] = {name: getattr(builtins, name) for name in dir(builtins) if name != "BrokenPipeError"}
    namespace: Dict[str, object] = {"__builtins__": names, "__name__": "pe_reference_without_brokenpipeerror"}
    path = Path(pe_reference.__file__)
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102 (the module itself)
    assert namespace["_BROKEN_PIPE"] is namespace["_NeverRaised"]
    assert pe_reference._BROKEN_PIPE is BrokenPipeError


def test_the_portable_gcd_for_runtimes_without_math_gcd_agrees_with_math_gcd() -> None:
    # MicroPython's math has no gcd: the module then uses its own, which must give the same numbers.
    generator = random.Random(14)
    pairs = [(0, 0), (0, 5), (5, 0), (-12, 18), (12, -18), (2**100 * 3, 2**90 * 9), (1, 1)]
    pairs += [(generator.randrange(-(10**30), 10**30), generator.randrange(-(10**30), 10**30)) for _ in range(200)]
    for a, b in pairs:
        assert pe_reference._gcd_portable(a, b) == math.gcd(a, b), (a, b)
