# SPDX-License-Identifier: LGPL-2.1-or-later
"""Example models from Hugging Face style config.json files, with seeded
random weights (no downloads): ``build("llama-tiny")`` or a path."""
from __future__ import annotations

import os
from typing import Any, Dict, Tuple, Union

import torch

from .config import ConfigError, ModelConfig, load_config
from .decoder import Decode, Decoder, Prefill

CONFIG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs")


def config_path(name: str) -> str:
    """The path of a shipped config ("llama-tiny", "gpt2-tiny", "moe-tiny", "llama-1b")."""
    return os.path.join(CONFIG_DIR, name + ".json")


def build(config: Union[str, Dict[str, Any]], prompt_len: int = 8, decode_steps: int = 3,
          batch: int = 1, seed: int = 0) -> Tuple[Decoder, Tuple[torch.Tensor]]:
    """(module, example_inputs) for a config name, path or dict."""
    if isinstance(config, str) and not os.path.exists(config):
        config = config_path(config)
    cfg = load_config(config)
    gen = torch.random.fork_rng()
    with gen:
        torch.manual_seed(seed)
        model = Decoder(cfg, prompt_len, decode_steps, batch).eval()
        ids = torch.randint(0, cfg.vocab_size, (batch, prompt_len))
    for p in model.parameters():
        p.requires_grad_(False)
    return model, (ids,)


__all__ = ["build", "config_path", "load_config", "ConfigError", "ModelConfig", "Decoder",
           "Prefill", "Decode"]
