"""Peer tables shared by the test modules: built by torch, as frameworks build them.

torch is an optional test dependency, imported when a builder first uses it: a test that calls
one skips without it (tests.helpers.peer).
"""

import math
from typing import Any

from tests.helpers import peer

torch = peer("torch")


def paper_torch_float32(seq_len: int, d_model: int) -> Any:
    """The usual torch module: float32 positions, exp-form frequencies (seeds 003 and 004 do the same)."""
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    table = torch.zeros(seq_len, d_model)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table
