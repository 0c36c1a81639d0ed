# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared by the torch tests: small models, captured once per session."""
import functools

import torch

from hyperoffload.models import build

MODELS = ["llama-tiny", "gpt2-tiny", "moe-tiny"]


@functools.lru_cache(maxsize=None)
def model(name):
    m, x = build(name, prompt_len=8, decode_steps=3)
    with torch.no_grad():
        ref = m(*x)
    return m, x, ref


def same(a, b):
    """torch.equal on every tensor of two output structures."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b
