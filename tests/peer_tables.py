"""Peer tables shared by the test modules: built by torch, as frameworks build them.

torch is an optional test dependency; import this module only after
need("torch") (tests.helpers).
"""

import math
from typing import Any

import torch


def paper_torch_float32(seq_len: int, d_model: int) -> Any:
    """The usual torch module: float32 positions, exp-form frequencies (seeds 003 and 004 do the same)."""
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    table = torch.zeros(seq_len, d_model)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table
