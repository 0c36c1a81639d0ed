# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hugging Face style config.json for the example models.

Keys are the ones such files use.  An unknown key is an error (a typo must
not silently change a model); a missing key takes the family's default.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Optional, Union


class ConfigError(ValueError):
    """A config.json that no model can be built from."""


# Defaults per family: Llama-2-style, GPT-2-style, Mixtral-style (tiny).
FAMILIES: Dict[str, Dict[str, Any]] = {
    "llama": dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=None, head_dim=None, intermediate_size=688,
                  vocab_size=1000, tie_word_embeddings=False, hidden_act="silu",
                  max_position_embeddings=2048, rms_norm_eps=1e-5, rope_theta=10000.0,
                  sliding_window=None, num_local_experts=0, num_experts_per_tok=0),
    "gpt2": dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=None, head_dim=None, intermediate_size=1024,
                 vocab_size=1000, tie_word_embeddings=True, hidden_act="gelu",
                 max_position_embeddings=1024, layer_norm_epsilon=1e-5,
                 sliding_window=None, num_local_experts=0, num_experts_per_tok=0),
    "mixtral": dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=None, intermediate_size=512,
                    vocab_size=1000, tie_word_embeddings=False, hidden_act="silu",
                    max_position_embeddings=2048, rms_norm_eps=1e-5, rope_theta=10000.0,
                    sliding_window=None, num_local_experts=4, num_experts_per_tok=2),
}
# Keys every family accepts and ignores (bookkeeping in published files).
IGNORED = {"model_type", "architectures", "torch_dtype", "transformers_version",
           "_name_or_path", "bos_token_id", "eos_token_id", "initializer_range"}
ACTS = {"silu", "gelu", "gelu_new", "relu"}


@dataclass
class ModelConfig:
    model_type: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool
    hidden_act: str
    max_position_embeddings: int
    norm_eps: float
    rope_theta: float
    sliding_window: Optional[int]
    num_local_experts: int
    num_experts_per_tok: int

    @property
    def kv_dim(self) -> int:
        return self.num_key_value_heads * self.head_dim


def load_config(src: Union[str, os.PathLike, Dict[str, Any]]) -> ModelConfig:
    """Read a config.json (path or dict) into a checked ModelConfig."""
    where = "config"
    if isinstance(src, dict):
        raw = dict(src)
    else:
        where = os.fspath(src)
        try:
            with open(src, encoding="utf-8") as f:
                raw = json.load(f)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{where}: not JSON: {e}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: the top level must be an object")
    mtype = raw.get("model_type", "llama")
    if mtype not in FAMILIES:
        raise ConfigError(f"{where}: model_type {mtype!r} is not one of "
                          f"{', '.join(sorted(FAMILIES))}")
    vals = dict(FAMILIES[mtype])
    for key, v in raw.items():
        if key in IGNORED:
            continue
        if key not in vals:
            raise ConfigError(f"{where}: unknown key {key!r} for model_type {mtype!r} "
                              f"(known: {', '.join(sorted(vals))})")
        vals[key] = v
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                "intermediate_size", "vocab_size", "max_position_embeddings"):
        if not isinstance(vals[key], int) or isinstance(vals[key], bool) or vals[key] < 1:
            raise ConfigError(f"{where}: {key} must be a positive integer (got {vals[key]!r})")
    hidden, heads = vals["hidden_size"], vals["num_attention_heads"]
    head_dim = vals["head_dim"]
    if head_dim is None:
        if hidden % heads:
            raise ConfigError(f"{where}: hidden_size {hidden} is not divisible by "
                              f"num_attention_heads {heads}; set head_dim")
        head_dim = hidden // heads
    kv = vals["num_key_value_heads"] or heads
    if heads % kv:
        raise ConfigError(f"{where}: num_attention_heads {heads} is not a multiple of "
                          f"num_key_value_heads {kv}")
    if vals["hidden_act"] not in ACTS:
        raise ConfigError(f"{where}: hidden_act {vals['hidden_act']!r} is not one of "
                          f"{', '.join(sorted(ACTS))}")
    experts, topk = vals["num_local_experts"], vals["num_experts_per_tok"]
    if experts and not 1 <= topk <= experts:
        raise ConfigError(f"{where}: num_experts_per_tok {topk} must be in 1..{experts}")
    if mtype == "mixtral" and not experts:
        raise ConfigError(f"{where}: a mixtral model needs num_local_experts >= 1")
    if mtype == "gpt2" and kv != heads:
        raise ConfigError(f"{where}: gpt2 has no grouped-query attention "
                          f"(num_key_value_heads must equal num_attention_heads)")
    return ModelConfig(
        model_type=mtype, hidden_size=hidden, num_hidden_layers=vals["num_hidden_layers"],
        num_attention_heads=heads, num_key_value_heads=kv, head_dim=head_dim,
        intermediate_size=vals["intermediate_size"], vocab_size=vals["vocab_size"],
        tie_word_embeddings=bool(vals["tie_word_embeddings"]), hidden_act=vals["hidden_act"],
        max_position_embeddings=vals["max_position_embeddings"],
        norm_eps=float(vals.get("rms_norm_eps", vals.get("layer_norm_epsilon", 1e-5))),
        rope_theta=float(vals.get("rope_theta", 10000.0)),
        sliding_window=vals["sliding_window"], num_local_experts=experts,
        num_experts_per_tok=topk)


__all__ = ["ConfigError", "ModelConfig", "load_config", "FAMILIES"]
