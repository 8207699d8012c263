"""Each framework's table, built by its own code where it installs, checked with its preset and diagnosed without.

Done when a framework's table passes compare(..., preset=NAME) in its own dtype (float32), and, checked
without naming a convention, is diagnosed as NAME or as the family of presets NAME belongs to. The
builders are in tests/framework_tables.py; the frameworks are test-only dependencies (.ci/run installs
transformers, diffusers, torch_geometric and positional-encodings; the others are written out there).
"""

from typing import Any, Dict, List

import pytest

from tests.helpers import assert_call_reproduces, need

numpy: Any = need("numpy")
need("torch")
need("transformers")
need("diffusers")
need("torch_geometric")
need("positional_encodings")

from pe_reference import PRESETS, compare  # noqa: E402
from tests import framework_tables as built  # noqa: E402

TIMESTEPS = [999.5, 0.3, 17.0, 500.25, 1.0, 0.0, 981.0, 3.75]


def float32(values: List[float]) -> List[float]:
    """The timesteps as the framework holds them: its float32 numbers, taken exactly."""
    return [float(x) for x in numpy.asarray(values, dtype=numpy.float32)]


# name -> (builder, its keyword arguments, the fields that describe its data, the widths it takes)
CASES: Dict[str, List[Any]] = {
    "marian": [lambda d: built.marian(100, d), {}, (16, 15)],
    "xlm": [lambda d: built.xlm(100, d), {}, (16, 15)],
    "m2m100": [lambda d: built.m2m100(100, d), {}, (16, 15)],
    "fairseq": [lambda d: built.fairseq(100, d), {}, (16, 15)],
    "whisper": [lambda d: built.whisper(100, d), {}, (16,)],
    "whisper-500": [lambda d: built.whisper(100, d, max_timescale=500), {"base": 500}, (16,)],
    "gpt-j": [lambda d: built.gptj(100, d), {}, (16,)],
    "transformer-xl": [lambda d: built.transformer_xl(100, d), {}, (16,)],
    "tatp22": [lambda d: built.tatp22(100, d), {}, (16, 15)],
    "keras-hub": [lambda d: built.keras_hub(100, d), {}, (16, 15)],
    "keras-hub-1000": [
        lambda d: built.keras_hub(100, d, max_wavelength=1000, start_index=5),
        {"base": 1000, "start": 5},
        (16,),
    ],
    "tensor2tensor": [lambda d: built.tensor2tensor(100, d), {}, (16, 15)],
    "guided-diffusion": [lambda d: built.guided_diffusion(TIMESTEPS, d), {"positions": float32(TIMESTEPS)}, (16, 15)],
    "diffusers": [lambda d: built.diffusers(TIMESTEPS, d), {"positions": float32(TIMESTEPS)}, (16, 15)],
    "diffusers-unet": [
        lambda d: built.diffusers(TIMESTEPS, d, flip_sin_to_cos=True, downscale_freq_shift=0),
        {"positions": float32(TIMESTEPS), "layout": "cos-sin", "shift": 0},
        (16,),
    ],
    "diffusers-scaled": [
        lambda d: built.diffusers(TIMESTEPS, d, downscale_freq_shift=0.5, scale=2.0),
        {"positions": float32(TIMESTEPS), "shift": "0.5", "angle_scale": 2},
        (16,),
    ],
    "pyg": [lambda d: built.pyg([float(p) for p in range(100)], d), {}, (16,)],
    "pyg-granularity": [
        lambda d: built.pyg([float(p) for p in range(100)], d, granularity=0.5),
        {"step": 2},
        (16,),
    ],
    "mlx": [lambda d: built.mlx(float32(TIMESTEPS), d), {"positions": float32(TIMESTEPS)}, (16,)],
    "mlx-turns": [
        lambda d: built.mlx([float(p) for p in range(40)], d, full_turns=True, cos_first=True, scale=1.0),
        {"full_turns": True, "layout": "cos-sin", "scale": 1},
        (16,),
    ],
}


def preset_of(case: str) -> str:
    return case if case in PRESETS else case.rsplit("-", 1)[0] if case.rsplit("-", 1)[0] in PRESETS else "diffusers"


@pytest.mark.parametrize("case", list(CASES))
def test_a_framework_table_passes_with_its_preset(case: str) -> None:
    make, fields, widths = CASES[case]
    for d_model in widths:
        table = make(d_model)
        assert table.dtype == numpy.float32
        report = compare(table, preset=preset_of(case), dtype="float32", **fields)
        assert report.ok, f"{case} d_model {d_model}\n{report}"
        # The same with the columns in another order does not pass: the check can tell.
        layout = str(PRESETS[preset_of(case)].replace(**fields).layout)
        other = {"interleaved": "sin-cos", "sin-cos": "cos-sin", "cos-sin": "interleaved"}[layout]
        assert not compare(table, preset=preset_of(case), dtype="float32", **dict(fields, layout=other)).ok, case


# Variants no preset makes (a shift of 0.5 and a scaled angle; MLX in full turns): checked with their fields above.
VARIANTS = ("diffusers-scaled", "mlx-turns")


@pytest.mark.parametrize("case", [case for case in CASES if case not in VARIANTS])
def test_a_framework_table_is_diagnosed_without_its_name(case: str) -> None:
    make, fields, widths = CASES[case]
    # The data of the table (its positions, its base) are given; the convention is not.
    data = {name: fields[name] for name in ("positions", "base", "step", "start") if name in fields}
    name = preset_of(case)
    for d_model in widths:
        table = make(d_model)
        report = compare(table, dtype="float32", **data)
        # Its convention, with the data (base, step, start) set back to the preset's.
        expected = PRESETS[name].replace(**{k: v for k, v in fields.items() if k not in data})
        family = expected._presets(d_model)
        assert family, (case, d_model)
        if report.ok:
            # The paper's own table: nothing to diagnose.
            assert "paper" in family, (case, d_model, str(report))
            continue
        diagnosis = report.diagnosis or ""
        assert diagnosis.startswith("Diagnosis: the table follows "), (case, d_model, diagnosis)
        assert "it reproduces every element. The call that reproduces it: " in diagnosis, (case, d_model, diagnosis)
        assert_call_reproduces(diagnosis, table, **data)
        named = diagnosis.split("(preset ", 1)[1].split(")", 1)[0]
        assert [n for n in family if n in named] == family, (case, d_model, family, diagnosis)
