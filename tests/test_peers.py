"""Tables made by numpy and torch, as the seed documents and the frameworks make them, checked.

numpy and torch are optional test dependencies: these tests are skipped
without them (CI installs both).  The implementations below are written
from each convention's definition; none is pe_reference's.
"""

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pe_reference import compare
from tests.helpers import need, subprocess_environment

numpy: Any = need("numpy")
torch: Any = need("torch")

from tests.peer_tables import paper_torch_float32  # noqa: E402  (after the skip)


def seed_000_numpy(seq_len: int, d_model: int) -> Any:
    """Seed 000's mistake: the cosine of odd column j uses 10000**(j/d), in float32."""
    position = numpy.arange(seq_len, dtype=numpy.float32)[:, None]
    table = numpy.zeros((seq_len, d_model), dtype=numpy.float32)
    table[:, 0::2] = numpy.sin(position / numpy.power(10000, numpy.arange(0, d_model, 2) / d_model))
    table[:, 1::2] = numpy.cos(position / numpy.power(10000, numpy.arange(1, d_model, 2) / d_model))
    return table


def seed_000_torch(seq_len: int, d_model: int) -> Any:
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    table = torch.zeros(seq_len, d_model)
    table[:, 0::2] = torch.sin(
        position * torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    )
    table[:, 1::2] = torch.cos(
        position * torch.exp(torch.arange(1, d_model, 2).float() * (-math.log(10000.0) / d_model))
    )
    return table


def paper_loops(seq_len: int, d_model: int) -> Any:
    """Element by element in float64, then a float32 tensor (seed 001's first version)."""
    table = numpy.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for j in range(d_model):
            angle = pos / 10000 ** ((2 * (j // 2)) / d_model)
            table[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return torch.tensor(table, dtype=torch.float32)


def paper_torch_stacked(seq_len: int, d_model: int) -> Any:
    """Sines and cosines stacked then flattened to interleave them (seed 003's way)."""
    position = torch.arange(seq_len, dtype=torch.float32).reshape(-1, 1)
    divisor = torch.pow(10000, torch.arange(0, d_model, 2).float() / d_model)
    stacked = torch.stack([torch.sin(position / divisor), torch.cos(position / divisor)], dim=2)
    return torch.flatten(stacked, start_dim=1, end_dim=2)


def tensor2tensor_numpy(seq_len: int, d_model: int, start: int = 0) -> Any:
    """tensor2tensor's get_timing_signal_1d in numpy float64: [sin | cos], increment log(base)/(h-1)."""
    half = d_model // 2
    increment = math.log(10000.0) / max(half - 1, 1)
    inverse = numpy.exp(numpy.arange(half) * -increment)
    scaled = numpy.arange(start, start + seq_len)[:, None] * inverse[None, :]
    table = numpy.concatenate([numpy.sin(scaled), numpy.cos(scaled)], axis=1)
    return numpy.pad(table, [[0, 0], [0, d_model % 2]])


def tf_tutorial_numpy(seq_len: int, d_model: int) -> Any:
    depth = d_model / 2
    rates = 1 / (10000 ** (numpy.arange(depth)[None, :] / depth))
    angles = numpy.arange(seq_len)[:, None] * rates
    return numpy.concatenate([numpy.sin(angles), numpy.cos(angles)], axis=-1)


def guided_diffusion_torch(seq_len: int, d_model: int) -> Any:
    """OpenAI guided-diffusion's timestep_embedding: [cos | sin], exp(-log(base) i / half), zero column for odd d."""
    half = d_model // 2
    frequencies = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    arguments = torch.arange(seq_len, dtype=torch.float32)[:, None] * frequencies[None]
    table = torch.cat([torch.cos(arguments), torch.sin(arguments)], dim=-1)
    if d_model % 2:
        table = torch.cat([table, torch.zeros_like(table[:, :1])], dim=-1)
    return table


def test_seed_000_is_diagnosed() -> None:
    for table in (seed_000_numpy(64, 16), seed_000_torch(64, 16)):
        report = compare(table, dtype="float32")
        assert not report.ok and report.max_abs_error > 0.5
        assert "odd column index in the exponent" in str(report.diagnosis)


@pytest.mark.parametrize("make", [paper_loops, paper_torch_float32, paper_torch_stacked])
def test_correct_float32_tables_pass_as_float32(make: Any) -> None:
    table = make(512, 64)
    report = compare(table, dtype="float32")
    assert report.ok, str(report)


def test_float32_table_against_float64_names_the_float32_pipeline() -> None:
    table = paper_torch_float32(2048, 64)
    # In its own dtype the float32 table passes; against float64, given, it is a float32 pipeline.
    assert compare(table).ok
    report = compare(table, dtype="float64")
    assert not report.ok
    assert report.diagnosis == (
        "Diagnosis: every value of the table is a float32 number, and float64 was asked: checked as float32"
        " (dtype='float32'), it passes; its values were rounded to float32."
    )


@pytest.mark.parametrize(
    "make, preset, dtype",
    [
        (lambda: tensor2tensor_numpy(50, 16), "tensor2tensor", "float64"),
        (lambda: tensor2tensor_numpy(50, 15), "tensor2tensor", "float64"),
        (lambda: tensor2tensor_numpy(50, 16, start=2), "fairseq", "float64"),
        (lambda: tf_tutorial_numpy(50, 16), "tf-tutorial", "float64"),
        (lambda: guided_diffusion_torch(50, 16), "guided-diffusion", "float32"),
        (lambda: guided_diffusion_torch(50, 17), "guided-diffusion", "float32"),
    ],
)
def test_framework_conventions(make: Any, preset: str, dtype: str) -> None:
    table = make()
    report = compare(table, dtype=dtype)
    assert not report.ok
    assert f"(preset {preset}" in str(report.diagnosis), report.diagnosis
    assert compare(table, dtype=dtype, preset=preset).ok


def test_check_a_saved_torch_table(tmp_path: Path) -> None:
    environment = subprocess_environment()
    path = tmp_path / "diffusion.npy"
    numpy.save(path, guided_diffusion_torch(100, 32).numpy())

    def run(*args: str) -> "subprocess.CompletedProcess[str]":
        command = [sys.executable, "-m", "pe_reference", "--check", str(path), *args]
        return subprocess.run(command, capture_output=True, text=True, env=environment)

    mismatch = run("--dtype", "float32")
    assert mismatch.returncode == 1 and "(preset guided-diffusion)" in mismatch.stdout
    assert run("--dtype", "float32", "--preset", "guided-diffusion").returncode == 0
