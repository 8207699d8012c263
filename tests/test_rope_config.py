"""A model's config.json in place of rope()'s keywords: read as transformers reads it, checked against its caches.

Each family's config is written from the model's public values (the LongRoPE lists excepted: multiples of
1/128, not Phi-3's own numbers, so that transformers' float32 copies are the same numbers). The caches are
transformers' own rotary modules built from the same config, float32 (peers); the rest needs nothing.
"""

import json
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from pe_reference import compare_rope, rope
from tests.helpers import run_main

LLAMA_31 = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "head_dim": 128,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}
QWEN_25 = {
    "model_type": "qwen2",
    "hidden_size": 3584,
    "num_attention_heads": 28,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rope_scaling": None,
}
# Qwen2.5's long-context recipe: YaRN over its 32768 positions, with the old "type" key.
QWEN_25_YARN = dict(
    QWEN_25,
    max_position_embeddings=131072,
    rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
)
# Phi-3 mini 128k: LongRoPE, its original length outside rope_scaling (transformers reads it from there).
PHI_3 = {
    "model_type": "phi3",
    "hidden_size": 3072,
    "num_attention_heads": 32,
    "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096,
    "rope_theta": 10000.0,
    "rope_scaling": {
        "type": "longrope",
        "short_factor": [1.0 + k / 128 for k in range(48)],
        "long_factor": [1.0 + 3 * k / 16 for k in range(48)],
    },
}
MISTRAL = {
    "model_type": "mistral",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "head_dim": 128,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
}
# Dynamic NTK in transformers 5's spelling, rope_parameters holding the base: past 4096 positions the base grows.
DYNAMIC = {
    "model_type": "llama",
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "max_position_embeddings": 4096,
    "rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0},
}
# Partial rotary: GPT-NeoX (Pythia) rotates a quarter of each 64-wide head, Phi-2 0.4 of each 80-wide one.
GPT_NEOX = {
    "model_type": "gpt_neox",
    "hidden_size": 512,
    "num_attention_heads": 8,
    "max_position_embeddings": 2048,
    "rotary_pct": 0.25,
    "rotary_emb_base": 10000,
}
PHI_2 = {
    "model_type": "phi",
    "hidden_size": 2560,
    "num_attention_heads": 32,
    "max_position_embeddings": 2048,
    "partial_rotary_factor": 0.4,
    "rope_theta": 10000.0,
}
# Llama 4 Scout: its text model's config, equal llama3 factors (Meta's llama-models defaults).
LLAMA_4_SCOUT = {
    "model_type": "llama4",
    "text_config": {
        "model_type": "llama4_text",
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "head_dim": 128,
        "max_position_embeddings": 10485760,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 16.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    },
}

# name -> (config, its rotated width, rows of the cache checked, the kind checked, the config's base)
FAMILIES: Dict[str, Tuple[Dict[str, Any], int, int, str]] = {
    "llama-3.1": (LLAMA_31, 128, 8192, "cos"),
    "qwen2.5": (QWEN_25, 128, 8192, "sin"),
    "qwen2.5-yarn": (QWEN_25_YARN, 128, 32768, "cos"),
    "phi-3-longrope": (PHI_3, 96, 8192, "sin"),
    "mistral": (MISTRAL, 128, 8192, "cos"),
    "dynamic-ntk": (DYNAMIC, 128, 8192, "sin"),
    "gpt-neox": (GPT_NEOX, 16, 4096, "cos"),
    "phi-2": (PHI_2, 32, 4096, "sin"),
    "llama-4-scout": (LLAMA_4_SCOUT, 128, 8192, "cos"),
}

# model_type -> the module of transformers that holds its rotary embedding, and the class's name.
ROTARY_CLASSES = {
    "llama": ("transformers.models.llama.modeling_llama", "LlamaRotaryEmbedding"),
    "qwen2": ("transformers.models.qwen2.modeling_qwen2", "Qwen2RotaryEmbedding"),
    "phi3": ("transformers.models.phi3.modeling_phi3", "Phi3RotaryEmbedding"),
    "mistral": ("transformers.models.mistral.modeling_mistral", "MistralRotaryEmbedding"),
    "gpt_neox": ("transformers.models.gpt_neox.modeling_gpt_neox", "GPTNeoXRotaryEmbedding"),
    "phi": ("transformers.models.phi.modeling_phi", "PhiRotaryEmbedding"),
    "llama4_text": ("transformers.models.llama4.modeling_llama4", "Llama4TextRotaryEmbedding"),
}


def transformers_cache(config: Dict[str, Any], seq_len: int, kind: str) -> Tuple[Any, str]:
    """transformers' own cos or sin cache for a config.json's dict, float32: (the cache, its layout).

    The model's configuration class reads the dict (CONFIG_MAPPING[model_type]), its rotary module is built
    from it and called once on positions 0 .. seq_len - 1, as the model's forward does.  Llama 4's module
    returns cos + i sin of each pair (freqs_cis): one column per pair, the pairs layout.
    """
    import importlib

    import torch
    from transformers import CONFIG_MAPPING

    given = config.get("text_config", config)
    fields = {key: value for key, value in given.items() if key != "model_type"}
    made = CONFIG_MAPPING[given["model_type"]](**fields)
    module_name, class_name = ROTARY_CLASSES[given["model_type"]]
    rotary = getattr(importlib.import_module(module_name), class_name)(made)
    x = torch.zeros(1, seq_len, 1, dtype=torch.float32)
    positions = torch.arange(seq_len)[None]
    with torch.no_grad():
        if given["model_type"] == "llama4_text":
            freqs = rotary(x, positions)[0]
            return (freqs.real if kind == "cos" else freqs.imag).contiguous(), "pairs"
        cos, sin = rotary(x, positions)
    return (cos if kind == "cos" else sin)[0], "half"


@pytest.mark.peers("torch", "transformers")
@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_reproduces_transformers_cache_from_its_config(family: str) -> None:
    config, width, seq_len, kind = FAMILIES[family]
    cache, layout = transformers_cache(config, seq_len, kind)
    assert cache.shape[1] * (2 if layout == "pairs" else 1) == width, cache.shape
    report = compare_rope(cache, kind=kind, layout=layout, config=config)
    assert report.ok, f"{family}\n{report}"
    assert report.dtype == "float32"


@pytest.mark.peers("torch", "transformers")
def test_a_config_whose_scaling_was_left_out_is_named() -> None:
    # Llama 3.1's cache computed without its rope_scaling fails its config, and the story says the scaling.
    plain = dict(LLAMA_31, rope_scaling=None)
    cache, _ = transformers_cache(plain, 16384, "cos")
    report = compare_rope(cache, config=LLAMA_31)
    assert not report.ok and report.diagnosis is not None
    assert "without its llama3 scaling; it reproduces every element" in report.diagnosis, report
    assert report.causes == ("scaling",), report


@pytest.mark.parametrize(
    "config, width",
    [
        (LLAMA_31, 128),
        (QWEN_25, 128),
        (PHI_3, 96),
        (GPT_NEOX, 16),
        (PHI_2, 32),
        (LLAMA_4_SCOUT, 128),
        (DYNAMIC, 128),
    ],
    ids=["llama", "qwen", "phi3", "neox", "phi2", "scout", "dynamic"],
)
def test_the_rotated_width_is_read_as_transformers_reads_it(config: Dict[str, Any], width: int) -> None:
    # head_dim, or hidden_size // num_attention_heads, times partial_rotary_factor (rotary_pct), truncated.
    cos, sin = rope(2, config=config)
    assert len(cos[0]) == len(sin[0]) == width


def test_a_config_gives_the_same_cache_as_its_keywords(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA_31), encoding="utf-8")
    keywords = rope(64, 128, base=500000, scaling=LLAMA_31["rope_scaling"])
    assert rope(64, config=str(path)) == keywords
    assert rope(64, 128, config=path) == keywords
    # Phi-3's own original_max_position_embeddings: LongRoPE's factor is 131072 / 4096, its attention factor
    # sqrt(1 + ln 32 / ln 4096), and past 4096 positions the long factors.
    scaling: Dict[str, Any] = dict(PHI_3["rope_scaling"])  # type: ignore[call-overload]
    scaling.update(original_max_position_embeddings=4096, max_position_embeddings=131072)
    assert rope(4100, config=PHI_3)[0][-1] == rope(4100, 96, scaling=scaling)[0][-1]


def test_the_command_line_takes_a_config(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT_NEOX), encoding="utf-8")
    cache = tmp_path / "cos.csv"
    cache.write_text("\n".join(",".join(repr(x) for x in row) for row in rope(32, 16)[0]) + "\n", encoding="utf-8")
    status, out, err = run_main(capsys, "--check", str(cache), "--rope", "cos", "--config", str(path))
    assert status == 0 and "within tolerance" in out, out + err
    # A cache of the whole head where the config rotates a quarter of it: refused, naming both widths.
    wide = tmp_path / "wide.csv"
    wide.write_text("\n".join(",".join(repr(x) for x in row) for row in rope(32, 64)[0]) + "\n", encoding="utf-8")
    status, out, err = run_main(capsys, "--check", str(wide), "--rope", "cos", "--config", str(path))
    assert status == 2 and "the table's head_dim must be the config's rotated width 16" in err, err
    status, out, err = run_main(capsys, "4", "--rope", "cos", "--config", str(path), "--format", "csv")
    assert status == 0 and len(out.splitlines()[0].split(",")) == 16, out + err
    status, out, err = run_main(capsys, "4", "--rope", "cos", "--config", str(tmp_path / "missing.json"))
    assert status == 2 and out == "" and err.count("\n") == 1 and "config must be a readable file" in err, err
    status, out, err = run_main(capsys, "--check", str(cache), "--rope", "cos", "--config", str(path), "--base", "5")
    assert status == 2 and "--config gives the base and the rope parameters" in err, err


@pytest.mark.parametrize(
    "config, error, message",
    [
        ("/no/such/config.json", ValueError, "config must be a readable file, got '/no/such/config.json'"),
        (42, TypeError, "config must be a path to a config.json or a dict, got int 42"),
        ({"hidden_size": 64}, ValueError, "config must give head_dim, or hidden_size and num_attention_heads"),
        ({"head_dim": 64, "rope_scaling": [1, 2]}, ValueError, "config['rope_scaling'] must be a JSON object"),
        (
            {"head_dim": 64, "rope_parameters": {"full_attention": {}, "sliding_attention": {}}},
            ValueError,
            "one per layer type (full_attention, sliding_attention)",
        ),
        (
            {"head_dim": 64, "rope_scaling": {"type": "llama3", "factor": 8}},
            ValueError,
            "config's rope parameters as rope()'s scaling: scaling for rope_type llama3 needs 'low_freq_factor'",
        ),
        ({"head_dim": 64, "partial_rotary_factor": 1.5}, ValueError, "partial_rotary_factor must be in (0, 1]"),
        ({"head_dim": 10, "partial_rotary_factor": 0.5}, ValueError, "must be even and at least 2, got 5"),
    ],
)
def test_a_config_that_cannot_be_used_is_refused_naming_the_field(config: Any, error: Any, message: str) -> None:
    with pytest.raises(error) as caught:
        rope(4, config=config)
    assert message in str(caught.value)


def test_a_config_and_its_keywords_are_not_both_given() -> None:
    with pytest.raises(ValueError, match="config gives the base and the scaling: give base or config, got both"):
        rope(4, config=MISTRAL, base=10000)
    with pytest.raises(ValueError, match=r"head_dim must be the config's rotated width 16 \(hidden_size 512"):
        rope(4, 64, config=GPT_NEOX)
    with pytest.raises(ValueError, match="the table's head_dim must be the config's rotated width 128"):
        compare_rope(rope(4, 64)[0], config=MISTRAL)
    with pytest.raises(TypeError, match="head_dim must be given, or a model's config, got neither"):
        rope(4)
